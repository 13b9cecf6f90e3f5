// SPDX-License-Identifier: MIT
// The checks of exercise 04 (send bandwidth). Correctness only: every
// message arrives whole and in order, the send queue is never over-posted,
// inline data, selective signaling and lists of work requests are used.
// Speed is measured by bench/ex04_throughput.sh against ib_send_bw, never
// asserted here.
//
// This program contains no student code. It starts the student's program
// (subject_04_throughput.cpp and their throughput.cpp) and judges from
// outside: the work requests the program hands to the device (the tracer
// sees each list, its flags and each message's sequence number) and the
// packets QP A sent and QP B received in order (the kernel's PSNs).
#include <infiniband/verbs.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "grade/feedback.hpp"
#include "grade/peer.hpp"
#include "grade/student.hpp"
#include "lab/check.hpp"
#include "lab/device.hpp"
#include "lab/verbs.hpp"
#include "support/catch.hpp"

using lab::grade::expect;
using lab::grade::Message;
using lab::grade::PostedRequest;
using lab::grade::StudentProgram;

namespace {

constexpr std::uint32_t kPsnMask = 0xffffff;
constexpr std::uint32_t kSendDepth = 128;   // tp::Pair::kSendDepth
constexpr std::size_t kMaxMessage = 65536;  // tp::Pair::kMaxMessage

struct Stream {
    std::uint32_t inline_bytes = 128;
    std::size_t message_size = 64;
    std::size_t count = 10000;
    std::uint32_t signal_every = 16;
    std::uint32_t batch = 16;
};

// What the check saw of one stream.
struct Seen {
    std::vector<PostedRequest> sends;    // on QP A
    std::uint32_t sent_packets = 0;      // A's send PSN moved by this much
    std::uint32_t received_packets = 0;  // B's expected PSN moved by this much
    std::size_t b_received = 0;          // what B (given code in the program) counted
    std::string b_error;
    std::string failure;  // the program could not finish the stream
};

struct PsnPair {
    std::uint32_t a_sq = 0, b_rq = 0;
    bool found = false;
};

// A's next send PSN and B's next expected PSN, from one look at the kernel.
PsnPair psns(pid_t pid, std::uint32_t qp_a) {
    PsnPair psn;
    for (const auto& qp : lab::grade::kernel_qps(pid)) {
        if (qp.qp_num == qp_a) {
            psn.a_sq = qp.sq_psn;
            psn.found = true;
        } else if (qp.remote_qp_num == qp_a && qp.type == "RC") {
            psn.b_rq = qp.rq_psn;
        }
    }
    return psn;
}

Seen run_stream(const Stream& stream) {
    Seen seen;
    StudentProgram program("stream");
    program.send(Message{"stream"}
                     .add(stream.inline_bytes)
                     .add(stream.message_size)
                     .add(stream.count)
                     .add(stream.signal_every)
                     .add(stream.batch));
    PsnPair before;
    const Message ready = program.watch(lab::grade::kSends, [&](const Message& message) {
        before = psns(program.pid(), static_cast<std::uint32_t>(message.number(1)));
    });
    const auto qp_a = static_cast<std::uint32_t>(ready.number(1));
    try {
        const Message done = program.receive("streamed");
        seen.b_received = done.number(1);
        seen.b_error = done.text(3);
        const PsnPair after = psns(program.pid(), qp_a);
        seen.sent_packets = (after.a_sq - before.a_sq) & kPsnMask;
        seen.received_packets = (after.b_rq - before.b_rq) & kPsnMask;

        for (auto& request : program.tracer().take_requests()) {
            if (request.queue == PostedRequest::Queue::send && request.qp_num == qp_a) {
                seen.sends.push_back(std::move(request));
            }
        }
        program.send({"checked"});
        program.finish();
    } catch (const lab::grade::ProgramFailed& failure) {
        seen.failure = failure.what();
    }
    return seen;
}

std::uint32_t packets_per_message(std::size_t size) {
    const lab::Context context = lab::open_device("");
    const ibv_port_attr port = lab::query_port(context.get(), 1);
    const std::size_t mtu = std::stoul(std::string(lab::mtu_name(port.active_mtu)));
    return static_cast<std::uint32_t>((size + mtu - 1) / mtu);
}

std::size_t lists_of(const std::vector<PostedRequest>& sends) {
    std::size_t lists = 0;
    for (std::size_t i = 0; i < sends.size(); ++i) {
        lists += i == 0 || sends[i].call != sends[i - 1].call ? 1 : 0;
    }
    return lists;
}

std::size_t longest_list(const std::vector<PostedRequest>& sends) {
    std::size_t longest = 0;
    for (const auto& send : sends) {
        longest = std::max(longest, send.position + 1);
    }
    return longest;
}

std::size_t count_flag(const std::vector<PostedRequest>& sends, unsigned flag) {
    return static_cast<std::size_t>(
        std::count_if(sends.begin(), sends.end(),
                      [&](const auto& send) { return (send.send_flags & flag) != 0; }));
}

// The first send whose sequence number, size or opcode is wrong; sends.size() when none.
std::size_t first_wrong_message(const std::vector<PostedRequest>& sends, std::size_t size) {
    for (std::size_t k = 0; k < sends.size(); ++k) {
        std::uint64_t stamp = ~0ULL;
        if (sends[k].head.size() >= sizeof stamp) {
            std::memcpy(&stamp, sends[k].head.data(), sizeof stamp);
        }
        if (stamp != k || sends[k].length() != size || sends[k].opcode != IBV_WR_SEND) {
            return k;
        }
    }
    return sends.size();
}

// The checks every stream shares: it finished, every message went out and
// arrived, in order, stamped with its number.
bool streamed_whole(const Stream& stream, const Seen& seen) {
    if (!expect(seen.failure.empty(), {"stream_sends returns once B has every message",
                                       seen.failure, "every wait needs a deadline"})) {
        return false;
    }
    const std::size_t wrong = first_wrong_message(seen.sends, stream.message_size);
    const std::uint32_t packets =
        static_cast<std::uint32_t>(stream.count) * packets_per_message(stream.message_size);
    bool ok = expect(
        seen.sends.size() == stream.count,
        {std::to_string(stream.count) + " sends posted on QP A",
         std::to_string(seen.sends.size()) + " posted", "one send per message, each posted once"});
    ok = expect(wrong == seen.sends.size(),
                {"send k carries message k: " + std::to_string(stream.message_size) +
                     " bytes, stamped k (Pair::stamp)",
                 "send " + std::to_string(wrong) + " does not",
                 "message k lives in pair.send_slot(k % kSendDepth); stamp it, then post it"}) &&
         ok;
    ok = expect(seen.sent_packets == packets && seen.received_packets == packets,
                {std::to_string(packets) + " packets sent by A and received in order by B",
                 std::to_string(seen.sent_packets) + " sent, " +
                     std::to_string(seen.received_packets) + " received in order" +
                     (seen.b_error.empty() ? "" : " (B: " + seen.b_error + ")"),
                 "a slot may be reused only after its send completed"}) &&
         ok;
    return ok;
}

// Options stream_sends must refuse.
struct BadOptions {
    std::size_t size;
    std::uint32_t signal_every, batch;
};

// Each of @p cases refused with a lab::Error "stream_sends: ..." before
// anything is posted (the tracer sees every send the program posts).
void expect_refused(std::initializer_list<BadOptions> cases, const std::string& hint) {
    StudentProgram program("refuse");
    program.watch(lab::grade::kSends);
    for (const BadOptions bad : cases) {
        program.send(Message{"options"}.add(bad.size).add(bad.signal_every).add(bad.batch));
        const std::string refused = program.receive("refused").text(1);
        const auto posted = program.tracer().take_requests();
        const std::string options = "message_size " + std::to_string(bad.size) + ", signal_every " +
                                    std::to_string(bad.signal_every) + ", batch " +
                                    std::to_string(bad.batch);
        expect(refused.rfind("stream_sends: ", 0) == 0 &&
                   refused.find("TODO") == std::string::npos && posted.empty(),
               {"stream_sends refuses " + options +
                    " with a lab::Error \"stream_sends: ...\", before posting anything",
                refused.empty() ? "no error (" + std::to_string(posted.size()) + " sends posted)"
                                : "\"" + refused + "\"" +
                                      (posted.empty() ? ""
                                                      : " after " + std::to_string(posted.size()) +
                                                            " sends were posted"),
                hint});
    }
    program.send({"end"});
    program.receive("ended");
    program.finish();
}

}  // namespace

TEST_CASE("granted_inline reports at least the inline data asked for", "[ex04]") {
    StudentProgram program("granted_inline");
    const Message granted = program.receive("granted");
    program.finish();
    // The check's own QPs, asked for the same on the same device, say what is granted.
    lab::grade::Peer peer;
    lab::QueueSizes sizes;
    sizes.send_wr = kSendDepth;
    sizes.recv_wr = 1;
    const auto granted_for = [&](std::uint32_t inline_bytes) {
        sizes.inline_data = inline_bytes;
        const lab::QueuePair qp = peer.create_rc_qp(sizes);
        ibv_qp_attr attr{};
        ibv_qp_init_attr init{};
        lab::check(ibv_query_qp(qp.get(), &attr, IBV_QP_CAP, &init), "ibv_query_qp");
        return static_cast<std::int64_t>(init.cap.max_inline_data);
    };
    const std::int64_t with_128 = granted_for(128);
    const std::int64_t with_0 = granted_for(0);
    expect(granted.signed_number(1) == with_128 && granted.signed_number(2) == with_0,
           {"max_inline_data as ibv_query_qp reports it: " + std::to_string(with_128) +
                " for a QP that asked for 128 bytes, " + std::to_string(with_0) +
                " for one that asked for none",
            std::to_string(granted.signed_number(1)) + " and " +
                std::to_string(granted.signed_number(2)),
            "ibv_query_qp(qp, &attr, IBV_QP_CAP, &init_attr) fills init_attr.cap"});
}

TEST_CASE("stream_sends: small messages, inline, one signaled in 16, lists of 16", "[ex04]") {
    Stream stream;
    stream.message_size = 64;
    stream.count = 5000;
    const Seen seen = run_stream(stream);
    if (!streamed_whole(stream, seen)) {
        return;
    }
    expect(count_flag(seen.sends, IBV_SEND_INLINE) == 5000,
           {"every 64-byte send inline (the QP grants at least 128 bytes)",
            std::to_string(count_flag(seen.sends, IBV_SEND_INLINE)) + " inline",
            "IBV_SEND_INLINE when the message fits granted_inline()"});
    expect(count_flag(seen.sends, IBV_SEND_SIGNALED) == (5000 + 15) / 16,
           {"313 signaled sends: every 16th and the last",
            std::to_string(count_flag(seen.sends, IBV_SEND_SIGNALED)) + " signaled",
            "IBV_SEND_SIGNALED only when (k + 1) % signal_every == 0 or k is the last"});
    expect(longest_list(seen.sends) == 16 && lists_of(seen.sends) < 5000 / 4,
           {"lists of up to 16 work requests per ibv_post_send",
            std::to_string(lists_of(seen.sends)) + " calls, the longest with " +
                std::to_string(longest_list(seen.sends)) + " requests",
            "link the requests with wr.next and post the list with one post_list()"});
}

TEST_CASE("stream_sends: large messages are not inline; odd counts and batches", "[ex04]") {
    Stream stream;
    stream.message_size = 8192 + 5;
    stream.count = 1000;
    stream.signal_every = 7;
    stream.batch = 5;
    const Seen seen = run_stream(stream);
    if (!streamed_whole(stream, seen)) {
        return;
    }
    expect(count_flag(seen.sends, IBV_SEND_INLINE) == 0,
           {"no inline sends: 8197 bytes do not fit the granted inline size",
            std::to_string(count_flag(seen.sends, IBV_SEND_INLINE)) + " inline",
            "inline only when message_size <= granted_inline()"});
    expect(count_flag(seen.sends, IBV_SEND_SIGNALED) == 1000 / 7 + 1,
           {"143 signaled sends: the 142 multiples of 7 and the last",
            std::to_string(count_flag(seen.sends, IBV_SEND_SIGNALED)) + " signaled",
            "(k + 1) % signal_every == 0, or k + 1 == count"});
    expect(longest_list(seen.sends) == 5,
           {"lists of up to 5 (batch 5)",
            "the longest had " + std::to_string(longest_list(seen.sends)),
            "never more than options.batch requests per list"});
}

TEST_CASE("stream_sends: one signaled completion per full send queue never over-posts", "[ex04]") {
    // Signal only every 128th: the queue fills completely between completions.
    Stream stream;
    stream.inline_bytes = 0;
    stream.message_size = 256;
    stream.count = 3000;
    stream.signal_every = kSendDepth;
    stream.batch = 32;
    const Seen seen = run_stream(stream);
    if (!streamed_whole(stream, seen)) {
        return;
    }
    expect(count_flag(seen.sends, IBV_SEND_INLINE) == 0,
           {"no inline sends (this QP asked for no inline data)",
            std::to_string(count_flag(seen.sends, IBV_SEND_INLINE)) + " inline",
            "granted_inline() of this QP is below 256"});
}

TEST_CASE("stream_sends refuses options that cannot work, before posting", "[ex04][bad-input]") {
    expect_refused({{4, 16, 16},
                    {kMaxMessage + 1, 16, 16},
                    {64, 0, 16},
                    {64, 16, 0},
                    {64, 16, kSendDepth + 1}},
                   "check the options first: size 8 .. kMaxMessage, signal_every and batch 1 .. "
                   "kSendDepth");
}

// The instructor's own checks (tests/exercises/hidden/04_throughput.cpp), where this
// checkout has them: the student edition leaves them out (./lab export --student).
#ifdef LAB_HIDDEN_CHECKS
#include LAB_HIDDEN_CHECKS
#endif

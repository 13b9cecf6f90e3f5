// SPDX-License-Identifier: MIT
// The checks of exercise 01 (non-contiguous data with scatter/gather entries).
//
// This program contains no student code. Each check starts the student's
// program (subject_01_noncontiguous_sge.cpp and their sge.cpp) and moves
// real bytes through the device with it:
//   - the one-sided functions (gather_write, scatter_read, copy_write,
//     read_copy) run on a QP of the program connected to a QP of this check,
//     so an RDMA WRITE lands in the check's own memory and an RDMA READ
//     reads it;
//   - the two-sided ones run on the program's loopback pair (A sends, B
//     receives), and the kernel's packet sequence numbers show that the
//     messages crossed the device.
// The check compares every byte (the blocks that should arrive, the bytes
// around them that must stay untouched; the program's buffers are read from
// outside), and the tracer shows the work requests as the program posted
// them: zero copy means one SGE per block, at the block, max_sge per request.
#include <infiniband/verbs.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "grade/feedback.hpp"
#include "grade/peer.hpp"
#include "grade/student.hpp"
#include "lab/check.hpp"
#include "lab/device.hpp"
#include "support/catch.hpp"

using lab::grade::expect;
using lab::grade::Message;
using lab::grade::PostedRequest;
using lab::grade::StudentProgram;

namespace {

constexpr std::byte kUntouched{0xEE};
constexpr std::size_t kGuard = 64;
constexpr std::uint32_t kPsnMask = 0xffffff;
constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

struct Layout {
    std::size_t block_size = 0, block_num = 0, stride = 0;
    [[nodiscard]] std::size_t payload() const { return block_size * block_num; }
    [[nodiscard]] std::size_t extent() const {
        return block_num == 0 ? 0 : (block_num - 1) * stride + block_size;
    }
    [[nodiscard]] std::string text() const {
        return std::to_string(block_num) + (block_num == 1 ? " block of " : " blocks of ") +
               std::to_string(block_size) + " B every " + std::to_string(stride) + " B";
    }
};

// The layouts every operation must move byte-exactly.
const std::vector<Layout> kLayouts = {
    {64, 1, 64},           // a single block
    {64, 16, 64},          // stride equal to block_size: the data is contiguous
    {64, 16, 128},         // the plain case
    {7, 45, 13},           // odd sizes: nothing is aligned
    {1, 100, 3},           // one-byte blocks, more than max_sge of them
    {100, 33, 256},        // max_sge + 1 on rxe: two work requests
    {32, 64, 48},          // exactly 2 × max_sge on rxe
    {3, 1000, 5},          // many work requests
    {4096, 40, 5000},      // page-sized blocks, unaligned stride
    {65536 + 3, 3, 70001}  // blocks larger than the path MTU
};

// The QPs every data check runs on: the device's own max_sge, and 4 SGEs
// with 2 outstanding requests, where even small layouts need many requests.
struct QueueOptions {
    std::uint32_t sge_count, depth;
};
const std::vector<QueueOptions> kQueues = {{0, 128}, {4, 2}};

// Byte i of a run's source data (the program uses the same): never kUntouched.
std::byte pattern(std::uint64_t seed, std::size_t i) {
    return static_cast<std::byte>((i * 131 + i / 97 + seed + 1) % 233);
}

// The first position where @p bytes differ from the packed form of the
// source (kUntouched after it); npos when all is right.
std::size_t first_wrong_packed(const Layout& layout, std::uint64_t seed, const std::string& bytes) {
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        const std::byte expected =
            i < layout.payload()
                ? pattern(seed, (i / layout.block_size) * layout.stride + i % layout.block_size)
                : kUntouched;
        if (static_cast<std::byte>(bytes[i]) != expected) {
            return i;
        }
    }
    return std::string::npos;
}

// The first position where @p bytes differ from the source inside the
// blocks, or from kUntouched in the gaps and after the last block.
std::size_t first_wrong_strided(const Layout& layout, std::uint64_t seed,
                                const std::string& bytes) {
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        const bool in_block = i < layout.extent() && i % layout.stride < layout.block_size;
        if (static_cast<std::byte>(bytes[i]) != (in_block ? pattern(seed, i) : kUntouched)) {
            return i;
        }
    }
    return std::string::npos;
}

std::string wrong_text(std::size_t at, const std::string& bytes) {
    if (at == std::string::npos) {
        return "every byte right";
    }
    if (bytes.empty()) {
        return "the buffer could not be read";
    }
    char value[8];
    std::snprintf(value, sizeof value, "0x%02x", static_cast<unsigned char>(bytes[at]));
    return "byte " + std::to_string(at) + " is " + value +
           (static_cast<std::byte>(bytes[at]) == kUntouched ? " (untouched)" : "");
}

// The check's memory: what a one-sided function writes into or reads from.
struct Target {
    std::vector<std::byte> bytes;
    lab::MemoryRegion mr;
    Target(const lab::grade::Peer& peer, std::size_t size, std::optional<Layout> packed_source,
           std::uint64_t seed)
        : bytes(size + kGuard, kUntouched), mr(peer.register_memory(bytes, kAccess)) {
        if (packed_source) {
            const Layout& l = *packed_source;
            for (std::size_t i = 0; i < l.payload(); ++i) {
                bytes[i] = pattern(seed, (i / l.block_size) * l.stride + i % l.block_size);
            }
        }
    }
    [[nodiscard]] std::string text() const {
        return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
    }
};

// One session with the student's program (see the subject's "session").
class Session {
  public:
    explicit Session(unsigned watch) : program_("session") { program_.watch(watch); }

    void endpoint(const QueueOptions& options) {
        program_.send(Message{"endpoint"}.add(options.sge_count).add(options.depth));
        lab::QueueSizes sizes;
        sizes.send_wr = sizes.recv_wr = 16;
        qp_ = peer_.create_rc_qp(sizes);
        peer_.connect(program_, qp_.get());
        const Message reply = program_.receive("endpoint");
        program_qp_ = static_cast<std::uint32_t>(reply.number(1));
        max_sge_ = reply.number(2);
        // An RDMA READ takes at most the device's max_sge_rd (equal to max_sge on rxe).
        max_read_sge_ = std::min<std::size_t>(max_sge_, reply.number(4));
    }
    void loopback(const QueueOptions& options) {
        program_.send(Message{"loopback"}.add(options.sge_count).add(options.depth));
        const Message reply = program_.receive("loopback");
        qp_a_ = static_cast<std::uint32_t>(reply.number(1));
        qp_b_ = static_cast<std::uint32_t>(reply.number(2));
        max_sge_ = std::min(reply.number(3), reply.number(4));
        max_read_sge_ = max_sge_;
    }
    // Run @p op; "done" with the program's buffer addresses, or "refused".
    Message run(const std::string& op, const Layout& layout, std::uint64_t seed,
                const Target* target, std::size_t strided_size, std::size_t packed_size,
                bool refuse = false) {
        program_.send(Message{"run", op}
                          .add(layout.block_size)
                          .add(layout.block_num)
                          .add(layout.stride)
                          .add(seed)
                          .add(target ? reinterpret_cast<std::uint64_t>(target->bytes.data()) : 0)
                          .add(target ? target->mr->rkey : 0)
                          .add(target ? target->bytes.size() - kGuard : 0)
                          .add(strided_size)
                          .add(packed_size)
                          .add(refuse ? "refuse" : "run"));
        return program_.receive(refuse ? "refused" : "done");
    }
    // B's expected PSN, from the kernel (the loopback's receiver).
    std::uint32_t receiver_psn() {
        for (const auto& qp : lab::grade::kernel_qps(program_.pid())) {
            if (qp.qp_num == qp_b_) {
                return qp.rq_psn;
            }
        }
        return 0;
    }
    std::vector<PostedRequest> posted() { return program_.tracer().take_requests(); }
    std::string read(std::uint64_t address, std::size_t size) {
        return lab::grade::read_program_memory(program_.pid(), address, size);
    }
    void end() {
        program_.send({"end"});
        program_.receive("ended");
        program_.finish();
    }
    [[nodiscard]] const lab::grade::Peer& peer() const { return peer_; }
    [[nodiscard]] std::uint32_t program_qp() const { return program_qp_; }
    [[nodiscard]] std::uint32_t qp_a() const { return qp_a_; }
    [[nodiscard]] std::uint32_t qp_b() const { return qp_b_; }
    [[nodiscard]] std::size_t max_sge() const { return max_sge_; }
    /// The SGEs one request may carry: max_sge, or for an RDMA READ at most max_sge_rd.
    [[nodiscard]] std::size_t max_sge(bool reading) const {
        return reading ? max_read_sge_ : max_sge_;
    }
    [[nodiscard]] std::size_t mtu() const {
        return std::stoul(std::string(lab::mtu_name(peer_.port_attr().active_mtu)));
    }

  private:
    StudentProgram program_;
    lab::grade::Peer peer_{256};
    lab::QueuePair qp_;
    std::uint32_t program_qp_ = 0, qp_a_ = 0, qp_b_ = 0;
    std::size_t max_sge_ = 0;
    std::size_t max_read_sge_ = 0;
};

std::vector<PostedRequest> on_queue(const std::vector<PostedRequest>& requests, std::uint32_t qp,
                                    PostedRequest::Queue queue) {
    std::vector<PostedRequest> found;
    for (const auto& request : requests) {
        if (request.qp_num == qp && request.queue == queue) {
            found.push_back(request);
        }
    }
    return found;
}

std::size_t sge_count(const std::vector<PostedRequest>& requests) {
    std::size_t total = 0;
    for (const auto& request : requests) {
        total += request.sges.size();
    }
    return total;
}

// Zero copy: SGE j (counting across the requests in order) is block j of the
// buffer at @p base, and no request has more than @p max_sge.
std::string zero_copy_problem(const std::vector<PostedRequest>& requests, const Layout& layout,
                              std::uint64_t base, std::size_t max_sge) {
    const std::size_t wanted = (layout.block_num + max_sge - 1) / max_sge;
    if (requests.size() != wanted || sge_count(requests) != layout.block_num) {
        return std::to_string(requests.size()) + " work request(s) with " +
               std::to_string(sge_count(requests)) + " SGEs in all";
    }
    std::size_t block = 0;
    for (const auto& request : requests) {
        if (request.sges.size() > max_sge) {
            return "a request with " + std::to_string(request.sges.size()) + " SGEs";
        }
        for (const ibv_sge& sge : request.sges) {
            if (sge.addr != base + block * layout.stride || sge.length != layout.block_size) {
                return "SGE " + std::to_string(block) + " is not block " + std::to_string(block);
            }
            ++block;
        }
    }
    return {};
}

bool sges_are_one(const std::vector<PostedRequest>& requests) {
    return std::all_of(requests.begin(), requests.end(),
                       [](const auto& r) { return r.sges.size() == 1; });
}

std::string zero_copy_expected(const Layout& layout, std::size_t max_sge) {
    return std::to_string((layout.block_num + max_sge - 1) / max_sge) +
           " work request(s), one SGE per block (" + std::to_string(layout.block_num) +
           "), at most " + std::to_string(max_sge) + " per request";
}

// One RDMA write or read of the layouts, zero copy or packed (copy_*): every
// layout on both queue options.
void one_sided(const std::string& op, bool reading, bool zero_copy) {
    Session session(lab::grade::kSends);
    const ibv_wr_opcode opcode = reading ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
    for (const QueueOptions& queue : zero_copy ? kQueues : std::vector<QueueOptions>{kQueues[0]}) {
        session.endpoint(queue);
        std::uint64_t seed = 0;
        for (const Layout& layout : kLayouts) {
            INFO(op << " of " << layout.text() << ", SGEs per request "
                    << session.max_sge(reading));
            ++seed;
            const Target target(session.peer(), layout.payload(),
                                reading ? std::optional<Layout>(layout) : std::nullopt, seed);
            const Message done =
                session.run(op, layout, seed, &target, layout.extent(), layout.payload());
            const auto requests =
                on_queue(session.posted(), session.program_qp(), PostedRequest::Queue::send);
            const bool right_opcode =
                std::all_of(requests.begin(), requests.end(),
                            [&](const auto& r) { return r.opcode == opcode; });
            if (zero_copy) {
                const std::string problem =
                    zero_copy_problem(requests, layout, done.number(1), session.max_sge(reading));
                expect(problem.empty() && right_opcode,
                       {zero_copy_expected(layout, session.max_sge(reading)) + " of " +
                            (reading ? "IBV_WR_RDMA_READ" : "IBV_WR_RDMA_WRITE"),
                        problem.empty() ? "another opcode" : problem,
                        "block_sges gives the SGEs; request i takes the next max_send_sge of them "
                        "(a READ: min(max_send_sge, max_sge_rd)) and starts at the remote "
                        "address where request i - 1 stopped"});
            } else {
                const std::uint64_t staging = done.number(2);
                expect(requests.size() == 1 && right_opcode && requests[0].sges.size() == 1 &&
                           requests[0].sges[0].addr == staging &&
                           requests[0].sges[0].length == layout.payload(),
                       {std::string("one ") + (reading ? "RDMA read" : "RDMA write") +
                            " of one SGE over the " + std::to_string(layout.payload()) +
                            " bytes of the staging buffer",
                        std::to_string(requests.size()) + " request(s) with " +
                            std::to_string(sge_count(requests)) + " SGE(s)",
                        "the baseline packs (or unpacks) with the CPU and moves one contiguous "
                        "buffer"});
            }
            if (reading) {
                const std::string destination =
                    session.read(done.number(1), layout.extent() + kGuard);
                const std::size_t wrong = first_wrong_strided(layout, seed, destination);
                expect(wrong == std::string::npos,
                       {"every block read into its place, the gaps and the bytes after untouched",
                        wrong_text(wrong, destination),
                        "each SGE of the read says where the bytes land"});
            } else {
                const std::size_t wrong = first_wrong_packed(layout, seed, target.text());
                expect(wrong == std::string::npos,
                       {"the blocks packed at the check's buffer, nothing written after them",
                        wrong_text(wrong, target.text()),
                        "the remote side is packed: each request writes where the one before "
                        "stopped"});
                const std::string source = session.read(done.number(1), layout.extent());
                std::size_t changed = std::string::npos;
                for (std::size_t i = 0; i < source.size() && changed == std::string::npos; ++i) {
                    changed = static_cast<std::byte>(source[i]) == pattern(seed, i) ? changed : i;
                }
                expect(
                    changed == std::string::npos && !source.empty(),
                    {"the source buffer unchanged", "byte " + std::to_string(changed) + " changed",
                     "the source is read, never written"});
            }
        }
    }
    session.end();
}

// SEND/RECV on the loopback pair, zero copy or packed, on @p layouts.
void two_sided(const std::string& op, bool zero_copy,
               const std::vector<Layout>& layouts = kLayouts) {
    Session session(lab::grade::kSends | lab::grade::kReceives);
    for (const QueueOptions& queue : zero_copy ? kQueues : std::vector<QueueOptions>{kQueues[0]}) {
        session.loopback(queue);
        std::uint64_t seed = 100;
        for (const Layout& layout : layouts) {
            INFO(op << " of " << layout.text() << ", max_sge " << session.max_sge());
            ++seed;
            const std::uint32_t psn_before = session.receiver_psn();
            const Message done =
                session.run(op, layout, seed, nullptr, layout.extent(), layout.payload());
            const std::uint32_t received_packets = (session.receiver_psn() - psn_before) & kPsnMask;
            const auto posted = session.posted();
            const auto sends = on_queue(posted, session.qp_a(), PostedRequest::Queue::send);
            const auto receives = on_queue(posted, session.qp_b(), PostedRequest::Queue::receive);
            std::uint32_t packets = 0;
            for (const auto& send : sends) {
                packets += static_cast<std::uint32_t>(
                    std::max<std::size_t>(1, (send.length() + session.mtu() - 1) / session.mtu()));
            }
            const std::uint64_t destination_address = zero_copy ? done.number(2) : done.number(4);
            if (zero_copy) {
                const std::string send_problem =
                    zero_copy_problem(sends, layout, done.number(1), session.max_sge());
                const std::string receive_problem =
                    zero_copy_problem(receives, layout, destination_address, session.max_sge());
                expect(
                    send_problem.empty() && receive_problem.empty(),
                    {zero_copy_expected(layout, session.max_sge()) + ", on both sides",
                     "sends: " + (send_problem.empty() ? "right" : send_problem) +
                         "; receives: " + (receive_problem.empty() ? "right" : receive_problem),
                     "send i and receive i carry the same blocks: split both at min(max_send_sge, "
                     "max_recv_sge)"});
            } else {
                expect(sends.size() == 1 && receives.size() == 1 && sges_are_one(sends) &&
                           sges_are_one(receives),
                       {"one send of one SGE into one receive of one SGE",
                        std::to_string(sends.size()) + " send(s), " +
                            std::to_string(receives.size()) + " receive(s), " +
                            std::to_string(sge_count(sends) + sge_count(receives)) + " SGEs",
                        "pack into send_staging, transfer, unpack from receive_staging"});
            }
            expect(
                !sends.empty() && received_packets == packets,
                {std::to_string(packets) + " packets received by B in order",
                 std::to_string(received_packets), "transfer_messages sends through the device"});
            const std::string destination =
                session.read(destination_address, layout.extent() + kGuard);
            const std::size_t wrong = first_wrong_strided(layout, seed, destination);
            expect(wrong == std::string::npos,
                   {"every block in its place at the receiver, the gaps untouched",
                    wrong_text(wrong, destination), ""});
        }
    }
    session.end();
}

}  // namespace

TEST_CASE("block_sges: one SGE per block, at the block's address", "[ex01]") {
    StudentProgram program("block_sges");
    for (const Layout& layout : kLayouts) {
        program.send(Message{"layout"}
                         .add(layout.block_size)
                         .add(layout.block_num)
                         .add(layout.stride)
                         .add(layout.extent())
                         .add("run"));
        const Message sges = program.receive("sges");
        const std::uint64_t base = sges.number(1);
        const std::size_t count = (sges.size() - 2) / 3;
        std::size_t wrong = count;
        for (std::size_t i = 0; i < count && wrong == count; ++i) {
            if (sges.number(2 + 3 * i) != base + i * layout.stride ||
                sges.number(3 + 3 * i) != layout.block_size || sges.number(4 + 3 * i) != 0x1234) {
                wrong = i;
            }
        }
        expect(count == layout.block_num && wrong == count,
               {layout.text() + ": one SGE per block: the block's address, block_size bytes, "
                                "the buffer's lkey",
                count != layout.block_num ? std::to_string(count) + " SGEs"
                                          : "SGE " + std::to_string(wrong) + " differs",
                "SGE i: addr = buffer start + i × stride, length = block_size, lkey"});
    }
    program.send(Message{"layout"}.add(64).add(2).add(64).add(100).add("refuse"));
    const Message refused = program.receive("refused");
    expect(refused.text(1).find("the blocks span 128") != std::string::npos,
           {"2 blocks of 64 B on a 100-byte buffer refused (\"the blocks span 128 bytes ...\")",
            "\"" + refused.text(1) + "\"", "validate_layout first"});
    program.send({"end"});
    program.receive("ended");
    program.finish();
}

TEST_CASE("pack copies every block, back to back, and nothing else", "[ex01]") {
    StudentProgram program("pack");
    std::uint64_t seed = 7;
    for (const Layout& layout : kLayouts) {
        ++seed;
        program.send(Message{"layout"}
                         .add(layout.block_size)
                         .add(layout.block_num)
                         .add(layout.stride)
                         .add(seed)
                         .add(layout.extent())
                         .add(layout.payload())
                         .add("run"));
        const Message done = program.receive("done");
        const std::string packed = lab::grade::read_program_memory(program.pid(), done.number(1),
                                                                   layout.payload() + kGuard);
        const std::size_t wrong = first_wrong_packed(layout, seed, packed);
        expect(wrong == std::string::npos,
               {layout.text() + ": the blocks back to back, nothing after them",
                wrong_text(wrong, packed), "block i goes to i × block_size"});
    }
    program.send(Message{"layout"}.add(64).add(4).add(32).add(1).add(1024).add(1024).add("refuse"));
    const Message refused = program.receive("refused");
    expect(refused.text(1).find("stride 32") != std::string::npos,
           {"a stride of 32 for 64-byte blocks refused", "\"" + refused.text(1) + "\"",
            "validate_layout first"});
    program.send({"end"});
    program.receive("ended");
    program.finish();
}

TEST_CASE("unpack puts every block in its place and leaves the gaps alone", "[ex01]") {
    StudentProgram program("unpack");
    std::uint64_t seed = 20;
    for (const Layout& layout : kLayouts) {
        ++seed;
        // The program fills its packed buffer with pattern(seed, i): block b, byte o is
        // pattern(seed, b × block_size + o).
        program.send(Message{"layout"}
                         .add(layout.block_size)
                         .add(layout.block_num)
                         .add(layout.stride)
                         .add(seed)
                         .add(layout.payload())
                         .add(layout.extent())
                         .add("run"));
        const Message done = program.receive("done");
        const std::string strided = lab::grade::read_program_memory(program.pid(), done.number(1),
                                                                    layout.extent() + kGuard);
        std::size_t wrong = std::string::npos;
        for (std::size_t i = 0; i < strided.size() && wrong == std::string::npos; ++i) {
            const bool in_block = i < layout.extent() && i % layout.stride < layout.block_size;
            const std::byte expected =
                in_block
                    ? pattern(seed, (i / layout.stride) * layout.block_size + i % layout.stride)
                    : kUntouched;
            wrong = static_cast<std::byte>(strided[i]) == expected ? wrong : i;
        }
        expect(wrong == std::string::npos && !strided.empty(),
               {layout.text() + ": every block in its place, the gaps untouched",
                wrong_text(wrong, strided), "block i goes back to i × stride"});
    }
    program.send(Message{"layout"}.add(64).add(4).add(64).add(1).add(100).add(1024).add("refuse"));
    const Message refused = program.receive("refused");
    expect(refused.text(1).find("packed buffer has 100") != std::string::npos,
           {"256 bytes of payload from a 100-byte packed buffer refused",
            "\"" + refused.text(1) + "\"", "validate_layout first"});
    program.send({"end"});
    program.receive("ended");
    program.finish();
}

TEST_CASE("query_limits reports what the QP was given", "[ex01][rxe]") {
    StudentProgram program("query_limits");
    const Message limits = program.receive("limits");
    program.finish();
    const lab::Context context = lab::open_device("");
    ibv_device_attr device{};
    lab::check(ibv_query_device(context.get(), &device), "ibv_query_device");
    for (std::size_t pair = 0; pair < 2; ++pair) {
        const std::size_t at = 1 + 8 * pair;
        const auto asked_send_sge = limits.number(at), asked_recv_sge = limits.number(at + 1);
        const auto asked_send_wr = limits.number(at + 2), asked_recv_wr = limits.number(at + 3);
        const auto send_sge = limits.number(at + 4), recv_sge = limits.number(at + 5);
        const auto send_wr = limits.number(at + 6), recv_wr = limits.number(at + 7);
        expect(
            send_sge >= asked_send_sge && recv_sge >= asked_recv_sge && send_wr >= asked_send_wr &&
                recv_wr >= asked_recv_wr &&
                send_sge <= static_cast<std::uint64_t>(device.max_sge) &&
                send_wr <= static_cast<std::uint64_t>(device.max_qp_wr),
            {"at least what the QP asked for (send SGEs " + std::to_string(asked_send_sge) +
                 ", send WRs " + std::to_string(asked_send_wr) + "), at most the device's limits",
             "send SGEs " + std::to_string(send_sge) + ", receive SGEs " +
                 std::to_string(recv_sge) + ", send WRs " + std::to_string(send_wr) +
                 ", receive WRs " + std::to_string(recv_wr),
             "ibv_query_qp(qp, &attr, IBV_QP_CAP, &init_attr) fills init_attr.cap"});
    }
}

TEST_CASE("gather_write: zero-copy, every layout byte-exact", "[ex01][rxe]") {
    one_sided("gather_write", false, true);
}

TEST_CASE("scatter_read: zero-copy, every layout byte-exact", "[ex01][rxe]") {
    one_sided("scatter_read", true, true);
}

TEST_CASE("gather_send_scatter_recv: zero-copy, every layout byte-exact", "[ex01][rxe]") {
    two_sided("gather_send_scatter_recv", true);
}

TEST_CASE("copy_write: pack, then one RDMA write of one SGE, byte-exact", "[ex01][rxe]") {
    one_sided("copy_write", false, false);
}

TEST_CASE("read_copy: one RDMA read of one SGE, then unpack, byte-exact", "[ex01][rxe]") {
    one_sided("read_copy", true, false);
}

TEST_CASE("copy_send_recv: pack, one send into one receive, unpack, byte-exact", "[ex01][rxe]") {
    two_sided("copy_send_recv", false);
}

TEST_CASE("bad layouts are refused before anything is posted", "[ex01][rxe][bad-input]") {
    struct Case {
        Layout layout;
        std::string expected;
    };
    const std::vector<Case> cases = {
        {{0, 8, 64}, "block_size is 0"},
        {{64, 0, 64}, "block_num is 0"},
        {{64, 8, 32}, "stride 32 is smaller than block_size 64"},
        {{64, 40, 128}, "the strided buffer has 4096"},  // 40 blocks span 5056 bytes
        {{64, 17, 64}, "the packed buffer has 1024"},    // 1088 bytes of payload
    };
    Session session(lab::grade::kSends | lab::grade::kReceives);
    session.endpoint(kQueues[0]);
    session.loopback(kQueues[0]);
    const Target remote(session.peer(), 1024, std::nullopt, 0);
    for (const std::string op : {"gather_write", "scatter_read", "copy_write", "read_copy",
                                 "copy_send_recv", "gather_send_scatter_recv"}) {
        for (const Case& bad : cases) {
            if (op == "gather_send_scatter_recv" &&
                bad.expected.find("packed") != std::string::npos) {
                continue;  // SEND/RECV has no packed buffer
            }
            const Message refused = session.run(op, bad.layout, 1, &remote, 4096, 1024, true);
            const auto posted = session.posted();
            expect(refused.text(1).find(bad.expected) != std::string::npos && posted.empty(),
                   {op + " refuses " + bad.layout.text() + " (\"" + bad.expected +
                        "\"), before posting anything",
                    "\"" + refused.text(1) + "\"" +
                        (posted.empty() ? "" : ", " + std::to_string(posted.size()) + " posted"),
                    "validate_layout before anything else"});
        }
    }
    // Nothing reached the device: the check's buffer is untouched, and the QPs still work.
    expect(std::all_of(remote.bytes.begin(), remote.bytes.end(),
                       [](std::byte b) { return b == kUntouched; }),
           {"the check's buffer untouched", "bytes were written into it", ""});
    const Layout good{64, 8, 128};
    const Target target(session.peer(), good.payload(), std::nullopt, 3);
    session.run("gather_write", good, 3, &target, good.extent(), good.payload());
    expect(first_wrong_packed(good, 3, target.text()) == std::string::npos,
           {"a good gather_write still works afterwards", "it does not", ""});
    session.end();
}

// The instructor's own checks (tests/exercises/hidden/01_noncontiguous_sge.cpp), where this
// checkout has them: the student edition leaves them out (./lab export --student).
#ifdef LAB_HIDDEN_CHECKS
#include LAB_HIDDEN_CHECKS
#endif

// SPDX-License-Identifier: MIT
// The checks of exercise 03 (SRQ server).
//
// This program contains no student code. Each check starts the student's
// program (subject_03_srq_server.cpp and their srq.cpp) as the server and
// plays the clients: RC QPs of its own, connected to the server's QPs with
// rnr_retry 0, so that a client's send completes successfully only when a
// receive was waiting for it in the server's SRQ. It also sees the receives
// and SRQ limits the server posts (tracer) and reads the server's slots.
#include <infiniband/verbs.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "grade/feedback.hpp"
#include "grade/peer.hpp"
#include "grade/student.hpp"
#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/verbs.hpp"
#include "support/catch.hpp"

using lab::grade::expect;
using lab::grade::Message;
using lab::grade::PostedRequest;
using lab::grade::StudentProgram;

namespace {

constexpr std::size_t kSlotSize = 64;

// The check's clients, one per server QP.
struct Clients {
    lab::grade::Peer peer{256};
    std::vector<lab::QueuePair> qps;
    std::vector<std::byte> memory = std::vector<std::byte>(4096);
    lab::MemoryRegion mr = peer.register_memory(memory, IBV_ACCESS_LOCAL_WRITE);
    std::uint64_t slots = 0;  // the server's slot memory, in its address space

    explicit Clients(StudentProgram& program) {
        const std::size_t count = program.receive("server").number(1);
        for (std::size_t i = 0; i < count && i < 16; ++i) {
            qps.push_back(peer.create_rc_qp());
            peer.connect(program, qps.back().get(), 0);
        }
        slots = program.receive("slots").number(1);
    }
    // Send @p text from client @p client; the status of its completion.
    ibv_wc_status send(std::size_t client, const std::string& text) {
        std::copy(text.begin(), text.end(), reinterpret_cast<char*>(memory.data()));
        lab::post_send(qps.at(client).get(), std::span(memory).first(text.size()), mr->lkey);
        return lab::grade::next_completion(peer.cq(), std::chrono::seconds(5)).status;
    }
    std::string slot(StudentProgram& program, std::size_t index, std::size_t length) const {
        return lab::grade::read_program_memory(program.pid(), slots + index * kSlotSize, length);
    }
};

std::string status_text(ibv_wc_status status) {
    return std::string("\"") + ibv_wc_status_str(status) + "\"";
}

}  // namespace

TEST_CASE("create_srq: an SRQ with room for the receives asked for", "[ex03]") {
    StudentProgram program("create_srq");
    Clients clients(program);
    const auto limit = program.receive("limit").number(1);
    std::size_t accepted = 0;
    ibv_wc_status failed = IBV_WC_SUCCESS;
    for (std::size_t i = 0; i < 32; ++i) {
        const ibv_wc_status status = clients.send(0, "m" + std::to_string(i));
        accepted += status == IBV_WC_SUCCESS ? 1 : 0;
        failed = status == IBV_WC_SUCCESS ? failed : status;
    }
    program.receive("received");
    expect(accepted == 32,
           {"32 messages, each finding one of the 32 receives posted to the SRQ",
            std::to_string(accepted) + " found one" +
                (failed == IBV_WC_SUCCESS ? "" : "; the others ended in " + status_text(failed)),
            "ibv_srq_init_attr.attr.max_wr is how many receives the SRQ holds"});
    expect(limit == 0, {"a new SRQ with no limit armed (srq_limit 0)",
                        "srq_limit " + std::to_string(limit), "set only max_wr and max_sge"});
    program.send({"checked"});
    program.finish();
}

TEST_CASE("create_server_qp: clients' messages land in the SRQ's buffers", "[ex03]") {
    StudentProgram program("create_server_qp");
    Clients clients(program);
    const ibv_wc_status first = clients.send(0, "to QP 0");
    const ibv_wc_status second = clients.send(1, "to QP 1");
    expect(first == IBV_WC_SUCCESS && second == IBV_WC_SUCCESS,
           {"each client's message finds a receive of the SRQ",
            "the sends ended in " + status_text(first) + " and " + status_text(second),
            "ibv_qp_init_attr.srq = the SRQ: the QP then takes its receives from there"});
    if (first != IBV_WC_SUCCESS || second != IBV_WC_SUCCESS) {
        return;
    }
    const Message received = program.receive("received");
    std::set<std::string> landed;
    for (std::size_t i = 0; i < 2; ++i) {
        landed.insert(
            clients.slot(program, received.number(2 + 3 * i), received.number(3 + 3 * i)));
    }
    expect(landed == std::set<std::string>{"to QP 0", "to QP 1"},
           {"\"to QP 0\" and \"to QP 1\" in the SRQ's slots, completed on the server's CQ",
            "other bytes", "the QP's send and receive CQ is the one it is given"});
    program.send({"checked"});
    program.finish();
}

TEST_CASE("post_srq_receives: every client's messages arrive, each in its own slot", "[ex03]") {
    StudentProgram program("post_srq_receives");
    program.watch(lab::grade::kSharedReceives);
    Clients clients(program);
    program.send({"post"});
    program.receive("posted");
    const auto posted = program.tracer().take_requests();
    std::size_t accepted = 0;
    for (int round = 0; round < 4; ++round) {
        for (std::size_t c = 0; c < 3; ++c) {
            accepted += clients.send(c, "c" + std::to_string(c) + " r" + std::to_string(round)) ==
                                IBV_WC_SUCCESS
                            ? 1
                            : 0;
        }
    }
    std::size_t wrong = posted.size();
    for (std::size_t i = 0; i < posted.size() && wrong == posted.size(); ++i) {
        const auto& r = posted[i];
        if (r.wr_id != 100 + i || r.sges.size() != 1 ||
            r.sges[0].addr != clients.slots + i * kSlotSize || r.sges[0].length != kSlotSize) {
            wrong = i;
        }
    }
    expect(posted.size() == 12 && wrong == posted.size(),
           {"12 receives on the SRQ: receive i with wr_id 100 + i and one SGE over slot i "
            "(64 bytes at offset 64 i)",
            posted.size() != 12 ? std::to_string(posted.size()) + " receives"
                                : "receive " + std::to_string(wrong) + " differs",
            "one ibv_recv_wr per slot, linked by next"});
    expect(accepted == 12, {"the 12 messages of 3 clients all find a receive",
                            std::to_string(accepted) + " did", ""});
    if (accepted == 12) {
        program.receive("received");
        std::set<std::string> landed;
        for (std::size_t i = 0; i < 12; ++i) {
            landed.insert(clients.slot(program, i, 5));
        }
        expect(landed.size() == 12, {"each message in its own slot",
                                     std::to_string(landed.size()) + " different slots", ""});
    }
    program.send({"refuse"});
    const std::string refused = program.receive("refused").text(1);
    const auto more = program.tracer().take_requests();
    expect(refused.find("do not fit") != std::string::npos && more.empty(),
           {"65 slots of 64 bytes in 4096 refused: a lab::Error saying they \"do not fit\", "
            "nothing posted",
            refused.empty() ? "no error"
                            : "\"" + refused + "\"" + (more.empty() ? "" : " after posting"),
            "check count × slot_size against the buffer first"});
    program.send({"checked"});
    program.finish();
}

TEST_CASE("arm_srq_limit sets the SRQ limit", "[ex03]") {
    StudentProgram program("arm_srq_limit");
    program.watch(lab::grade::kSrqChanges);
    const Message armed = program.receive("armed");
    const auto changes = program.tracer().take_srq_changes();
    const auto limits = [&] {
        std::string text;
        for (const auto& change : changes) {
            text += (text.empty() ? "" : ", ") + std::to_string(change.attr.srq_limit) +
                    ((change.mask & IBV_SRQ_LIMIT) ? "" : " (without IBV_SRQ_LIMIT)");
        }
        return text.empty() ? std::string("no ibv_modify_srq") : "ibv_modify_srq with " + text;
    }();
    expect(changes.size() == 2 && changes[0].attr.srq_limit == 4 &&
               changes[1].attr.srq_limit == 9 && (changes[0].mask & IBV_SRQ_LIMIT) &&
               (changes[1].mask & IBV_SRQ_LIMIT) && armed.number(1) == 4 && armed.number(2) == 9,
           {"ibv_modify_srq with srq_limit 4, then 9 (mask IBV_SRQ_LIMIT)", limits,
            "attr.srq_limit and the mask IBV_SRQ_LIMIT"});
    program.send({"checked"});
    program.finish();
}

TEST_CASE("wait_for_srq_limit: the event comes once, below the limit, and disarms it", "[ex03]") {
    StudentProgram program("wait_for_srq_limit");
    Clients clients(program);
    // 8 posted, limit 4: after 4 receives 4 are left, not yet below the limit.
    for (int i = 0; i < 4; ++i) {
        clients.send(0, "m");
    }
    program.send(Message{"wait short"}.add(300));
    const Message first = program.receive("waited");
    expect(first.text(1) == "none" && first.number(2) < 3000,
           {"no event while 4 receives are left: false after about 300 ms",
            first.text(1) == "none" ? "false after " + std::to_string(first.number(2)) + " ms"
                                    : "an event",
            "poll() on context->async_fd with the time left; give up at the deadline"});
    clients.send(0, "m");  // 3 left: below the limit
    program.send(Message{"wait long"}.add(3000));
    const Message second = program.receive("waited");
    expect(
        second.text(1) == "event",
        {"IBV_EVENT_SRQ_LIMIT_REACHED for this SRQ once 3 receives are left", "no event within 3 s",
         "ibv_get_async_event after poll(); compare event.element.srq; ibv_ack_async_event"});
    expect(second.number(3) == 0,
           {"the limit disarmed after the event (srq_limit 0)",
            "srq_limit " + std::to_string(second.number(3)), "the device disarms it itself"});
    program.send({"checked"});
    program.finish();
}

TEST_CASE("a limit above the SRQ's size is refused by ibv_modify_srq", "[ex03][bad-input]") {
    StudentProgram program("limit_above_size");
    const std::string refused = program.receive("refused").text(1);
    program.finish();
    expect(refused.find("ibv_modify_srq") != std::string::npos,
           {"a limit of 100000 on a 16-receive SRQ refused, with a lab::Error naming "
            "ibv_modify_srq",
            refused.empty() ? "no error" : "\"" + refused + "\"",
            "check ibv_modify_srq's result with lab::check(result, \"ibv_modify_srq\")"});
}

// The instructor's own checks (tests/exercises/hidden/03_srq_server.cpp), where this
// checkout has them: the student edition leaves them out (./lab export --student).
#ifdef LAB_HIDDEN_CHECKS
#include LAB_HIDDEN_CHECKS
#endif

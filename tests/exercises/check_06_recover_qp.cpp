// SPDX-License-Identifier: MIT
// The checks of exercise 06 (recover a QP): one per function the student
// writes. This program contains no student code. Each check starts the
// student's program (subject_06_recover_qp.cpp linked with their
// recover.cpp), runs one scenario in it, and judges from outside: the
// completion statuses the student's drain returned, the QPs' states and PSNs
// as the kernel reports them, the QP changes the tracer saw, and the bytes a
// write delivers afterwards.
#include <infiniband/verbs.h>

#include <algorithm>
#include <string>
#include <vector>

#include "grade/feedback.hpp"
#include "grade/peer.hpp"
#include "grade/student.hpp"
#include "lab/check.hpp"
#include "lab/verbs.hpp"
#include "support/catch.hpp"

using lab::grade::expect;
using lab::grade::Message;
using lab::grade::StudentProgram;

namespace {

const lab::grade::KernelQp* find_qp(const std::vector<lab::grade::KernelQp>& qps,
                                    std::uint32_t qp_num) {
    const auto found =
        std::find_if(qps.begin(), qps.end(), [&](const auto& qp) { return qp.qp_num == qp_num; });
    return found == qps.end() ? nullptr : &*found;
}

}  // namespace

TEST_CASE("drain_after_fault: the error completion first, then the flushed ones", "[ex06]") {
    StudentProgram program("drain_after_fault");
    program.watch();
    std::string error;
    std::vector<int> statuses;
    try {
        const Message seen = program.receive("seen");
        for (std::size_t i = 1; i < seen.size(); ++i) {
            statuses.push_back(static_cast<int>(seen.number(i)));
        }
    } catch (const lab::grade::ProgramFailed& failure) {
        error = failure.what();
    }
    std::string got;
    for (const int status : statuses) {
        got += std::string(got.empty() ? "" : ", ") +
               ibv_wc_status_str(static_cast<ibv_wc_status>(status));
    }
    expect(error.empty() && statuses.size() == 3 && statuses[0] == IBV_WC_REM_ACCESS_ERR &&
               statuses[1] == IBV_WC_WR_FLUSH_ERR && statuses[2] == IBV_WC_WR_FLUSH_ERR,
           {"3 completions: remote access error, then two flushed (IBV_WC_WR_FLUSH_ERR)",
            !error.empty() ? error : "completions: " + (got.empty() ? "none" : got),
            "poll until every work request posted has completed: after the error the QP is "
            "in ERR and each request behind it completes flushed"});
    if (error.empty()) {
        program.send({"checked"});
        program.finish();
    }
}

namespace {

// The recover_qp scenario with new PSNs @p psn_a and @p psn_b: both QPs back
// in RTS at exactly those PSNs, and a write that delivers again.
void recover_with_psns(std::uint32_t psn_a, std::uint32_t psn_b) {
    StudentProgram program("recover_qp");
    const Message ready = program.watch();
    const auto qp_a = static_cast<std::uint32_t>(ready.number(1));
    const auto qp_b = static_cast<std::uint32_t>(ready.number(2));
    program.send(Message{"psns"}.add(psn_a).add(psn_b));
    std::string error, received;
    std::vector<lab::grade::KernelQp> qps;
    try {
        program.receive("recovered");
        qps = lab::grade::kernel_qps(program.pid());
        program.send({"write"});
        received = program.receive("received").text(1);
    } catch (const lab::grade::ProgramFailed& failure) {
        error = failure.what();
    }
    const auto* a = find_qp(qps, qp_a);
    const auto* b = find_qp(qps, qp_b);
    expect(
        error.empty() && a != nullptr && b != nullptr && a->state == "RTS" && b->state == "RTS" &&
            a->sq_psn == psn_a && b->rq_psn == psn_a && b->sq_psn == psn_b && a->rq_psn == psn_b,
        {"A and B back in RTS, A sending from " + std::to_string(psn_a) +
             " (B expects it), B from " + std::to_string(psn_b) + " (A expects it)",
         !error.empty() ? error
         : a == nullptr || b == nullptr
             ? "the kernel does not list both QPs"
             : "A in " + a->state + " sending from " + std::to_string(a->sq_psn) + ", expecting " +
                   std::to_string(a->rq_psn) + "; B in " + b->state + " sending from " +
                   std::to_string(b->sq_psn) + ", expecting " + std::to_string(b->rq_psn),
         "from ERR only RESET leads out: ibv_modify_qp to IBV_QPS_RESET, then INIT, RTR "
         "(the peer's QPN and PSN), RTS (your own PSN)"});
    expect(error.empty() && received == "after the recovery",
           {"an RDMA write A -> B delivers \"after the recovery\"",
            !error.empty() ? error : "B's buffer holds \"" + received + "\"",
            "both QPs must be recovered, each pointed at the other"});
    if (error.empty()) {
        program.send({"checked"});
        program.finish();
    }
}

}  // namespace

TEST_CASE("recover_qp: ERR -> RESET -> RTS with the new PSNs, and a write delivers again",
          "[ex06]") {
    recover_with_psns(lab::random_psn(), lab::random_psn());
}

TEST_CASE("pause_send_queue: RTS -> SQD with notify, SQ_DRAINED awaited, back to RTS", "[ex06]") {
    StudentProgram program("pause_send_queue");
    const Message ready = program.watch();
    const auto qp_a = static_cast<std::uint32_t>(ready.number(1));
    std::string error, received;
    try {
        program.receive("resumed");
        program.send({"write"});
        received = program.receive("received").text(1);
    } catch (const lab::grade::ProgramFailed& failure) {
        error = failure.what();
    }
    const auto changes = program.tracer().take_qp_changes();
    bool sqd_with_notify = false;
    bool back_to_rts = false;
    for (const auto& change : changes) {
        if (change.qp_num != qp_a || (change.mask & IBV_QP_STATE) == 0) {
            continue;
        }
        if (change.attr.qp_state == IBV_QPS_SQD) {
            sqd_with_notify = (change.mask & IBV_QP_EN_SQD_ASYNC_NOTIFY) != 0 &&
                              change.attr.en_sqd_async_notify != 0;
        } else if (change.attr.qp_state == IBV_QPS_RTS && sqd_with_notify) {
            back_to_rts = true;
        }
    }
    expect(sqd_with_notify,
           {"ibv_modify_qp(A) to IBV_QPS_SQD with IBV_QP_EN_SQD_ASYNC_NOTIFY set",
            !error.empty() ? error : "no such change of QP A",
            "attr.qp_state = IBV_QPS_SQD, attr.en_sqd_async_notify = 1, mask IBV_QP_STATE | "
            "IBV_QP_EN_SQD_ASYNC_NOTIFY"});
    expect(
        error.empty() && back_to_rts && received == "after the pause",
        {"A back in RTS after IBV_EVENT_SQ_DRAINED, and a write A -> B delivers again",
         !error.empty() ? error
                        : std::string(back_to_rts ? "A back in RTS" : "A not moved back to RTS") +
                              ", B's buffer holds \"" + received + "\"",
         "poll() async_fd, ibv_get_async_event, ibv_ack_async_event, then ibv_modify_qp to "
         "IBV_QPS_RTS"});
    if (error.empty()) {
        program.send({"checked"});
        program.finish();
    }
}

// The instructor's own checks (tests/exercises/hidden/06_recover_qp.cpp), where this
// checkout has them: the student edition leaves them out (./lab export --student).
#ifdef LAB_HIDDEN_CHECKS
#include LAB_HIDDEN_CHECKS
#endif

// SPDX-License-Identifier: MIT
// Exercise 06, your part: drain the CQ after a fault, recover the QP, pause
// the send queue. README.md explains the task.
//
// Every function below is a TODO. Each one ends in todo(...), which throws
// "TODO: <function> is not written yet"; replace that line with your code.
// Run the checks with `./lab grade --exercises 06` and read what fails.
#include <infiniband/verbs.h>

#include <chrono>
#include <string>
#include <vector>

#include "lab/check.hpp"
#include "lab/verbs.hpp"
#include "recover.hpp"

namespace recover {

namespace {

// Marks an unwritten function; the arguments are only there so that the
// skeleton compiles without "unused parameter" warnings.
template <typename... Unused>
[[noreturn]] void todo(std::string_view function, const Unused&... /*unused*/) {
    throw lab::Error("TODO: " + std::string(function) +
                     " is not written yet (exercise 06, recover.cpp)");
}

}  // namespace

std::vector<ibv_wc> drain_after_fault(ibv_cq* cq, int expected, std::chrono::milliseconds timeout) {
    // TODO: loop on ibv_poll_cq(cq, 1, &wc) until `expected` completions came
    // or `timeout` passed (std::chrono::steady_clock); keep each one, error or
    // not. A negative result is an error: lab::check(result, "ibv_poll_cq").
    todo("drain_after_fault", cq, expected, timeout);
}

void recover_qp(ibv_qp* qp, const lab::LocalPort& local, const lab::PeerAddress& peer,
                std::uint32_t my_psn) {
    // TODO: ibv_modify_qp(qp, &attr, IBV_QP_STATE) with attr.qp_state =
    // IBV_QPS_RESET (from ERR, RESET is the only way out), then
    // lab::move_to_init(qp, local.port, kAccess), lab::move_to_rtr(qp, local,
    // peer) and lab::move_to_rts(qp, my_psn, 16, 0, 2, 12).
    todo("recover_qp", qp, local, peer, my_psn);
}

void pause_send_queue(ibv_context* context, ibv_qp* qp, std::chrono::milliseconds timeout) {
    // TODO: ibv_modify_qp to IBV_QPS_SQD with attr.en_sqd_async_notify = 1
    // (mask IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY); wait for POLLIN on
    // context->async_fd within `timeout` (lab::Deadline's wait_until_ready,
    // lab/wait.hpp, also polls again after EINTR); ibv_get_async_event, check it is
    // IBV_EVENT_SQ_DRAINED for this qp, ibv_ack_async_event; then
    // ibv_modify_qp back to IBV_QPS_RTS (mask IBV_QP_STATE).
    todo("pause_send_queue", context, qp, timeout);
}

}  // namespace recover

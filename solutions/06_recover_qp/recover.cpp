// SPDX-License-Identifier: MIT
// Exercise 06, the reference solution: drain the CQ after a fault, recover
// the QP (RESET -> INIT -> RTR -> RTS), pause the send queue (SQD).
#include <infiniband/verbs.h>
#include <poll.h>

#include <chrono>
#include <string>
#include <vector>

#include "lab/check.hpp"
#include "lab/verbs.hpp"
#include "lab/wait.hpp"
#include "recover.hpp"

namespace recover {

std::vector<ibv_wc> drain_after_fault(ibv_cq* cq, int expected, std::chrono::milliseconds timeout) {
    std::vector<ibv_wc> seen;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (static_cast<int>(seen.size()) < expected &&
           std::chrono::steady_clock::now() < deadline) {
        ibv_wc wc{};
        const int polled = ibv_poll_cq(cq, 1, &wc);
        if (polled < 0) {
            lab::check(polled, "ibv_poll_cq");
        }
        if (polled == 1) {
            seen.push_back(wc);
        }
    }
    return seen;
}

void recover_qp(ibv_qp* qp, const lab::LocalPort& local, const lab::PeerAddress& peer,
                std::uint32_t my_psn) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_RESET;
    lab::check(ibv_modify_qp(qp, &attr, IBV_QP_STATE), "ibv_modify_qp(RESET)");
    lab::move_to_init(qp, local.port, kAccess);
    lab::move_to_rtr(qp, local, peer);
    lab::move_to_rts(qp, my_psn, 16, 0, 2, 12);
}

void pause_send_queue(ibv_context* context, ibv_qp* qp, std::chrono::milliseconds timeout) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_SQD;
    attr.en_sqd_async_notify = 1;
    lab::check(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY),
               "ibv_modify_qp(SQD)");
    // One timeout for all the events read; a poll(2) that a signal interrupts
    // (EINTR) is polled again by the Deadline, not taken for the end of the wait.
    lab::Deadline deadline(timeout);
    for (;;) {
        if (!deadline.wait_until_ready(context->async_fd, POLLIN)) {
            throw lab::Error("no IBV_EVENT_SQ_DRAINED within the timeout");
        }
        ibv_async_event event{};
        lab::check(ibv_get_async_event(context, &event), "ibv_get_async_event");
        const bool drained = event.event_type == IBV_EVENT_SQ_DRAINED && event.element.qp == qp;
        ibv_ack_async_event(&event);
        if (drained) {
            break;
        }
    }
    attr = ibv_qp_attr{};
    attr.qp_state = IBV_QPS_RTS;
    lab::check(ibv_modify_qp(qp, &attr, IBV_QP_STATE), "ibv_modify_qp(RTS)");
}

}  // namespace recover

// SPDX-License-Identifier: MIT
// Exercise 03, your part: a shared receive queue and its limit event.
// README.md explains the task. Every function ends in todo(...), which throws
// "TODO: <function> is not written yet"; replace it with your code.
#include <poll.h>

#include <string>
#include <vector>

#include "lab/check.hpp"
#include "srq.hpp"

namespace srq {

namespace {

// Marks an unwritten function; the arguments only silence "unused parameter".
template <typename... Unused>
[[noreturn]] void todo(std::string_view function, const Unused&... /*unused*/) {
    throw lab::Error("TODO: " + std::string(function) +
                     " is not written yet (exercise 03, srq.cpp)");
}

}  // namespace

lab::SharedReceiveQueue create_srq(ibv_pd* pd, std::uint32_t max_wr) {
    // TODO: ibv_srq_init_attr with attr.max_wr and attr.max_sge = 1;
    // ibv_create_srq(pd, &init); lab::check_ptr.
    todo("create_srq", pd, max_wr);
}

lab::QueuePair create_server_qp(ibv_pd* pd, ibv_cq* cq, ibv_srq* shared) {
    // TODO: an RC QP whose ibv_qp_init_attr.srq is the SRQ
    // (lab::create_rc_qp takes an srq argument).
    todo("create_server_qp", pd, cq, shared);
}

void post_srq_receives(ibv_srq* shared, const LocalBuffer& slots, std::size_t slot_size,
                       std::size_t count, std::uint64_t first_wr_id) {
    // TODO: refuse slots that do not fit (lab::Error) before posting; then one
    // ibv_recv_wr per slot (one SGE, wr_id = first_wr_id + i), linked by next,
    // posted with one ibv_post_srq_recv.
    todo("post_srq_receives", shared, slots, slot_size, count, first_wr_id);
}

void arm_srq_limit(ibv_srq* shared, std::uint32_t limit) {
    // TODO: ibv_modify_srq with attr.srq_limit and the mask IBV_SRQ_LIMIT.
    todo("arm_srq_limit", shared, limit);
}

bool wait_for_srq_limit(ibv_context* context, ibv_srq* shared, std::chrono::milliseconds timeout) {
    // TODO: until the deadline: poll() context->async_fd for POLLIN; on data,
    // ibv_get_async_event; note whether it is IBV_EVENT_SRQ_LIMIT_REACHED for
    // this SRQ (event.element.srq); ibv_ack_async_event; return true if so.
    // Return false at the deadline. Never call ibv_get_async_event without
    // poll() first: it blocks until an event comes, maybe forever.
    todo("wait_for_srq_limit", context, shared, timeout);
}

}  // namespace srq

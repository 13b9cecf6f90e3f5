// SPDX-License-Identifier: MIT
// Exercise 03, your part: a shared receive queue and its limit event.
// README.md explains the task. Every function ends in todo(...), which throws
// "TODO: <function> is not written yet"; replace it with your code.
#include <poll.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "lab/check.hpp"
#include "srq.hpp"

namespace srq {

lab::SharedReceiveQueue create_srq(ibv_pd* pd, std::uint32_t max_wr) {
    ibv_srq_init_attr setup;
    std::memset(&setup, 0, sizeof setup);
    setup.attr.max_sge = 1;
    setup.attr.max_wr = max_wr;
    ibv_srq* queue = ibv_create_srq(pd, &setup);
    if (!queue) {
        lab::check(-1, "ibv_create_srq", "the device refused the SRQ size");
    }
    return lab::SharedReceiveQueue(queue);
}

lab::QueuePair create_server_qp(ibv_pd* pd, ibv_cq* cq, ibv_srq* shared) {
    // No receive queue of its own: everything arrives through the SRQ.
    auto sizes = lab::QueueSizes{};
    sizes.recv_sge = 0;
    sizes.recv_wr = 0;
    return lab::create_rc_qp(pd, cq, cq, sizes, shared);
}

void post_srq_receives(ibv_srq* shared, const LocalBuffer& slots, std::size_t slot_size,
                       std::size_t count, std::uint64_t first_wr_id) {
    if (slot_size == 0) {
        throw lab::Error("post_srq_receives: a slot of 0 bytes");
    }
    if (count > slots.bytes.size() / slot_size) {
        throw lab::Error("post_srq_receives: " + std::to_string(count) +
                         " slots overflow the buffer");
    }
    // Post them one at a time: simpler to get right than a chain.
    for (std::size_t slot = 0; slot < count; ++slot) {
        ibv_sge piece;
        piece.addr = reinterpret_cast<std::uint64_t>(&slots.bytes[slot * slot_size]);
        piece.length = static_cast<std::uint32_t>(slot_size);
        piece.lkey = slots.lkey;
        ibv_recv_wr request;
        std::memset(&request, 0, sizeof request);
        request.wr_id = first_wr_id + slot;
        request.num_sge = 1;
        request.sg_list = &piece;
        ibv_recv_wr* failed = nullptr;
        lab::check(ibv_post_srq_recv(shared, &request, &failed), "ibv_post_srq_recv");
    }
}

void arm_srq_limit(ibv_srq* shared, std::uint32_t limit) {
    ibv_srq_attr wanted;
    std::memset(&wanted, 0, sizeof wanted);
    wanted.srq_limit = limit;
    if (ibv_modify_srq(shared, &wanted, IBV_SRQ_LIMIT) != 0) {
        throw lab::Error("ibv_modify_srq: could not arm the limit " + std::to_string(limit));
    }
}

bool wait_for_srq_limit(ibv_context* context, ibv_srq* shared, std::chrono::milliseconds timeout) {
    // Wait in slices of at most 50 ms, so that the deadline is never overshot by much.
    const auto give_up = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        const auto now = std::chrono::steady_clock::now();
        if (now >= give_up) {
            return false;
        }
        const auto slice = std::min<std::chrono::milliseconds::rep>(
            50, std::chrono::duration_cast<std::chrono::milliseconds>(give_up - now).count() + 1);
        struct pollfd one = {context->async_fd, POLLIN, 0};
        const int ready = poll(&one, 1, static_cast<int>(slice));
        if (ready == -1) {
            lab::check(-1, "poll");
        }
        if (ready == 0 || !(one.revents & POLLIN)) {
            continue;
        }
        struct ibv_async_event got;
        lab::check(ibv_get_async_event(context, &got), "ibv_get_async_event");
        const bool is_limit = got.event_type == IBV_EVENT_SRQ_LIMIT_REACHED;
        const bool is_ours = got.element.srq == shared;
        ibv_ack_async_event(&got);
        if (is_limit && is_ours) {
            return true;
        }
    }
}

}  // namespace srq

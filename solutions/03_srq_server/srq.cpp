// SPDX-License-Identifier: MIT
// Exercise 03, reference solution: a shared receive queue and its limit event.
#include <poll.h>

#include <string>
#include <vector>

#include "lab/check.hpp"
#include "srq.hpp"

namespace srq {

lab::SharedReceiveQueue create_srq(ibv_pd* pd, std::uint32_t max_wr) {
    ibv_srq_init_attr init{};
    init.attr.max_wr = max_wr;
    init.attr.max_sge = 1;
    return lab::SharedReceiveQueue(lab::check_ptr(ibv_create_srq(pd, &init), "ibv_create_srq",
                                                  "is max_wr above the device's max_srq_wr?"));
}

lab::QueuePair create_server_qp(ibv_pd* pd, ibv_cq* cq, ibv_srq* shared) {
    // With an SRQ the QP has no receive queue of its own: recv_wr and
    // recv_sge are ignored, receives are posted to the SRQ.
    lab::QueueSizes sizes;
    sizes.recv_wr = 0;
    sizes.recv_sge = 0;
    return lab::create_rc_qp(pd, cq, cq, sizes, shared);
}

void post_srq_receives(ibv_srq* shared, const LocalBuffer& slots, std::size_t slot_size,
                       std::size_t count, std::uint64_t first_wr_id) {
    if (slot_size == 0 || count > slots.bytes.size() / slot_size) {
        throw lab::Error("post_srq_receives: " + std::to_string(count) + " slots of " +
                         std::to_string(slot_size) + " bytes do not fit in " +
                         std::to_string(slots.bytes.size()) + " bytes");
    }
    std::vector<ibv_sge> sges(count);
    std::vector<ibv_recv_wr> wrs(count);
    for (std::size_t i = 0; i < count; ++i) {
        sges[i] = {reinterpret_cast<std::uint64_t>(slots.bytes.data() + i * slot_size),
                   static_cast<std::uint32_t>(slot_size), slots.lkey};
        wrs[i].wr_id = first_wr_id + i;
        wrs[i].sg_list = &sges[i];
        wrs[i].num_sge = 1;
        wrs[i].next = i + 1 < count ? &wrs[i + 1] : nullptr;
    }
    if (count == 0) {
        return;
    }
    ibv_recv_wr* bad_wr = nullptr;
    lab::check(ibv_post_srq_recv(shared, wrs.data(), &bad_wr), "ibv_post_srq_recv",
               "more receives than the SRQ's max_wr?");
}

void arm_srq_limit(ibv_srq* shared, std::uint32_t limit) {
    ibv_srq_attr attr{};
    attr.srq_limit = limit;
    lab::check(ibv_modify_srq(shared, &attr, IBV_SRQ_LIMIT), "ibv_modify_srq(srq_limit)",
               "the limit must not exceed the SRQ's max_wr");
}

bool wait_for_srq_limit(ibv_context* context, ibv_srq* shared, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            return false;
        }
        pollfd ready{context->async_fd, POLLIN, 0};
        const int found = ::poll(&ready, 1, static_cast<int>(left.count()));
        lab::check(found < 0 ? -1 : 0, "poll(async_fd)");
        if (found == 0) {
            return false;
        }
        ibv_async_event event{};
        lab::check(ibv_get_async_event(context, &event), "ibv_get_async_event");
        const bool ours =
            event.event_type == IBV_EVENT_SRQ_LIMIT_REACHED && event.element.srq == shared;
        ibv_ack_async_event(&event);  // every event read must be acknowledged
        if (ours) {
            return true;
        }
    }
}

}  // namespace srq

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

lab::SharedReceiveQueue create_srq(ibv_pd* pd, std::uint32_t max_wr) {
    ibv_srq_init_attr init{};
    init.attr.max_wr = max_wr;
    init.attr.max_sge = 1;
    ibv_srq* created = lab::check_ptr(ibv_create_srq(pd, &init), "ibv_create_srq");
    return lab::SharedReceiveQueue(created);
}

lab::QueuePair create_server_qp(ibv_pd* pd, ibv_cq* cq, ibv_srq* shared) {
    lab::QueueSizes sizes;
    sizes.recv_wr = 0;  // the SRQ holds the receives
    sizes.recv_sge = 0;
    return lab::create_rc_qp(pd, cq, cq, sizes, shared);
}

void post_srq_receives(ibv_srq* shared, const LocalBuffer& slots, std::size_t slot_size,
                       std::size_t count, std::uint64_t first_wr_id) {
    if (slot_size == 0 || slot_size * count > slots.bytes.size()) {
        throw lab::Error("post_srq_receives: the slots do not fit in the buffer");
    }
    if (count == 0) {
        return;
    }
    std::vector<ibv_sge> sge(count);
    std::vector<ibv_recv_wr> wr(count);
    for (std::size_t i = 0; i < count; i++) {
        sge[i].addr = reinterpret_cast<std::uintptr_t>(slots.bytes.data()) + i * slot_size;
        sge[i].length = static_cast<std::uint32_t>(slot_size);
        sge[i].lkey = slots.lkey;
        wr[i] = {};
        wr[i].wr_id = first_wr_id + i;
        wr[i].sg_list = &sge[i];
        wr[i].num_sge = 1;
        if (i > 0) {
            wr[i - 1].next = &wr[i];
        }
    }
    ibv_recv_wr* bad = nullptr;
    lab::check(ibv_post_srq_recv(shared, &wr[0], &bad), "ibv_post_srq_recv");
}

void arm_srq_limit(ibv_srq* shared, std::uint32_t limit) {
    ibv_srq_attr attr{};
    attr.srq_limit = limit;
    lab::check(ibv_modify_srq(shared, &attr, IBV_SRQ_LIMIT), "ibv_modify_srq");
}

bool wait_for_srq_limit(ibv_context* context, ibv_srq* shared, std::chrono::milliseconds timeout) {
    using clock = std::chrono::steady_clock;
    const clock::time_point end = clock::now() + timeout;
    while (clock::now() < end) {
        auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(end - clock::now());
        pollfd fd{};
        fd.fd = context->async_fd;
        fd.events = POLLIN;
        int n = poll(&fd, 1, static_cast<int>(remaining.count()) + 1);
        if (n < 0) {
            throw lab::Error("poll on the async fd failed");
        }
        if (n == 0) {
            break;
        }
        ibv_async_event event;
        lab::check(ibv_get_async_event(context, &event), "ibv_get_async_event");
        bool limit_reached =
            event.event_type == IBV_EVENT_SRQ_LIMIT_REACHED && event.element.srq == shared;
        ibv_ack_async_event(&event);
        if (limit_reached) {
            return true;
        }
    }
    return false;
}

}  // namespace srq

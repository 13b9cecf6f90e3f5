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

// One receive per slot, chained in the order they are posted.
struct ReceiveList {
    std::vector<ibv_sge> entries;
    std::vector<ibv_recv_wr> requests;
};

ReceiveList build_receives(const LocalBuffer& slots, std::size_t slot_size, std::size_t count,
                           std::uint64_t first_wr_id) {
    ReceiveList list;
    list.entries.reserve(count);
    list.requests.resize(count);
    std::byte* at = slots.bytes.data();
    for (std::size_t k = 0; k < count; ++k, at += slot_size) {
        list.entries.push_back(ibv_sge{reinterpret_cast<std::uint64_t>(at),
                                       static_cast<std::uint32_t>(slot_size), slots.lkey});
    }
    for (std::size_t k = count; k-- > 0;) {
        ibv_recv_wr& request = list.requests[k];
        request.wr_id = first_wr_id + k;
        request.sg_list = &list.entries[k];
        request.num_sge = 1;
        request.next = (k + 1 == count) ? nullptr : &list.requests[k + 1];
    }
    return list;
}

}  // namespace

lab::SharedReceiveQueue create_srq(ibv_pd* pd, std::uint32_t max_wr) {
    ibv_srq_init_attr attributes{.srq_context = nullptr,
                                 .attr = {.max_wr = max_wr, .max_sge = 1, .srq_limit = 0}};
    return lab::SharedReceiveQueue(
        lab::check_ptr(ibv_create_srq(pd, &attributes), "ibv_create_srq", "max_wr too large?"));
}

lab::QueuePair create_server_qp(ibv_pd* pd, ibv_cq* cq, ibv_srq* shared) {
    return lab::create_rc_qp(pd, cq, cq, lab::QueueSizes{.recv_wr = 0, .recv_sge = 0}, shared);
}

void post_srq_receives(ibv_srq* shared, const LocalBuffer& slots, std::size_t slot_size,
                       std::size_t count, std::uint64_t first_wr_id) {
    const std::size_t capacity = slot_size == 0 ? 0 : slots.bytes.size() / slot_size;
    if (capacity < count || slot_size == 0) {
        throw lab::Error("post_srq_receives: only " + std::to_string(capacity) +
                         " slots fit, asked for " + std::to_string(count));
    }
    ReceiveList list = build_receives(slots, slot_size, count, first_wr_id);
    if (list.requests.empty()) {
        return;
    }
    ibv_recv_wr* first_bad = nullptr;
    const int rc = ibv_post_srq_recv(shared, list.requests.data(), &first_bad);
    lab::check(rc, "ibv_post_srq_recv", "is the SRQ full?");
}

void arm_srq_limit(ibv_srq* shared, std::uint32_t limit) {
    ibv_srq_attr change{.max_wr = 0, .max_sge = 0, .srq_limit = limit};
    lab::check(ibv_modify_srq(shared, &change, IBV_SRQ_LIMIT), "ibv_modify_srq",
               "limit above max_wr?");
}

bool wait_for_srq_limit(ibv_context* context, ibv_srq* shared, std::chrono::milliseconds timeout) {
    auto left = timeout;
    const auto started = std::chrono::steady_clock::now();
    bool seen = false;
    while (!seen && left.count() > 0) {
        pollfd watch{.fd = context->async_fd, .events = POLLIN, .revents = 0};
        if (::poll(&watch, 1, static_cast<int>(left.count())) <= 0) {
            return false;  // nothing came in time (or poll failed)
        }
        ibv_async_event what{};
        if (ibv_get_async_event(context, &what) == 0) {
            seen = what.event_type == IBV_EVENT_SRQ_LIMIT_REACHED && what.element.srq == shared;
            ibv_ack_async_event(&what);
        }
        left = timeout - std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now() - started);
    }
    return seen;
}

}  // namespace srq

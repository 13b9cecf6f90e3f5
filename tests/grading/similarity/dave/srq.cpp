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

using Millis = std::chrono::milliseconds;

Millis until(std::chrono::steady_clock::time_point deadline) {
    auto rest = std::chrono::duration_cast<Millis>(deadline - std::chrono::steady_clock::now());
    return rest.count() < 0 ? Millis(0) : rest;
}

}  // namespace

lab::SharedReceiveQueue create_srq(ibv_pd* pd, std::uint32_t max_wr) {
    ibv_srq_init_attr a = {};
    a.attr = ibv_srq_attr{max_wr, 1, 0};
    return lab::SharedReceiveQueue{lab::check_ptr(ibv_create_srq(pd, &a), "ibv_create_srq")};
}

lab::QueuePair create_server_qp(ibv_pd* pd, ibv_cq* cq, ibv_srq* shared) {
    lab::QueueSizes q{};
    q.recv_wr = q.recv_sge = 0;
    return lab::create_rc_qp(pd, cq, cq, q, shared);
}

void post_srq_receives(ibv_srq* shared, const LocalBuffer& slots, std::size_t slot_size,
                       std::size_t count, std::uint64_t first_wr_id) {
    const bool fits = slot_size > 0 && slots.bytes.size() >= count * slot_size;
    if (!fits) {
        throw lab::Error("post_srq_receives: bad slot size or count");
    }
    std::vector<std::pair<ibv_recv_wr, ibv_sge>> posts(count);
    ibv_recv_wr* head = nullptr;
    // Walk from the last slot to the first, pushing each in front of the chain.
    for (std::size_t j = count; j > 0; --j) {
        auto& [wr, sge] = posts[j - 1];
        sge = ibv_sge{reinterpret_cast<std::uint64_t>(slots.bytes.data() + (j - 1) * slot_size),
                      static_cast<std::uint32_t>(slot_size), slots.lkey};
        wr = ibv_recv_wr{first_wr_id + (j - 1), head, &sge, 1};
        head = &wr;
    }
    if (head != nullptr) {
        ibv_recv_wr* bad_one = nullptr;
        int err = ibv_post_srq_recv(shared, head, &bad_one);
        lab::check(err, "ibv_post_srq_recv", "too many receives for the SRQ?");
    }
}

void arm_srq_limit(ibv_srq* shared, std::uint32_t limit) {
    ibv_srq_attr a{0, 0, limit};
    lab::check(ibv_modify_srq(shared, &a, IBV_SRQ_LIMIT), "ibv_modify_srq(IBV_SRQ_LIMIT)");
}

bool wait_for_srq_limit(ibv_context* context, ibv_srq* shared, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    pollfd pfd{context->async_fd, POLLIN, 0};
    int got = 0;
    while ((got = ::poll(&pfd, 1, static_cast<int>(until(deadline).count()))) > 0) {
        ibv_async_event ev{};
        if (ibv_get_async_event(context, &ev) != 0) {
            break;
        }
        const ibv_event_type type = ev.event_type;
        ibv_srq* from = ev.element.srq;
        ibv_ack_async_event(&ev);
        if (type == IBV_EVENT_SRQ_LIMIT_REACHED && from == shared) {
            return true;
        }
        if (until(deadline).count() == 0) {
            break;
        }
    }
    if (got < 0) {
        lab::check(-1, "poll(async_fd)");
    }
    return false;
}

}  // namespace srq

// SPDX-License-Identifier: MIT
// Exercise 06, the given part: resources, connecting, the writes that fault,
// and the program's steps in order. Nothing to change here.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <optional>
#include <span>
#include <string>

#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/device.hpp"
#include "lab/verbs.hpp"
#include "recover.hpp"

namespace recover {

Resources create_resources(const std::string& device, std::uint8_t port) {
    Resources r;
    r.context = lab::open_device(device);
    r.port = port;
    const ibv_port_attr attr = lab::query_port(r.context.get(), port);
    const lab::GidChoice gid = lab::choose_gid(r.context.get(), port, std::nullopt);
    r.local = lab::LocalPort{port, gid.index, attr.active_mtu};
    r.gid = gid.gid;
    r.lid = attr.lid;
    r.pd = lab::alloc_pd(r.context.get());
    // Each QP has a CQ of its own, with an entry for every work request the QP may
    // hold: a completion of each can be waiting at once.
    const lab::QueueSizes sizes;  // 64 sends and 64 receives, one SGE each
    const int entries = int(sizes.send_wr + sizes.recv_wr);
    r.cq_a = lab::create_cq(r.context.get(), entries);
    r.cq_b = lab::create_cq(r.context.get(), entries);
    r.qp_a = lab::create_rc_qp(r.pd.get(), r.cq_a.get(), r.cq_a.get(), sizes);
    r.qp_b = lab::create_rc_qp(r.pd.get(), r.cq_b.get(), r.cq_b.get(), sizes);
    r.memory_a.assign(kBufferSize, std::byte{0});
    r.memory_b.assign(kBufferSize, std::byte{0});
    r.mr_a = lab::register_memory(r.pd.get(), r.memory_a, kAccess);
    r.mr_b = lab::register_memory(r.pd.get(), r.memory_b, kAccess);
    return r;
}

lab::PeerAddress address_of(const Resources& resources, ibv_qp* qp, std::uint32_t psn) {
    return lab::PeerAddress{qp->qp_num, psn, resources.lid, resources.gid};
}

void connect(Resources& r, std::uint32_t psn_a, std::uint32_t psn_b) {
    lab::move_to_init(r.qp_a.get(), r.port, kAccess);
    lab::move_to_init(r.qp_b.get(), r.port, kAccess);
    lab::move_to_rtr(r.qp_a.get(), r.local, address_of(r, r.qp_b.get(), psn_b));
    lab::move_to_rtr(r.qp_b.get(), r.local, address_of(r, r.qp_a.get(), psn_a));
    // Few, short retries: a fault shows at once.
    lab::move_to_rts(r.qp_a.get(), psn_a, 16, 0, 2, 12);
    lab::move_to_rts(r.qp_b.get(), psn_b, 16, 0, 2, 12);
}

void post_writes(Resources& r, int count, std::uint32_t first_rkey) {
    for (int i = 0; i < count; ++i) {
        lab::post_rdma(r.qp_a.get(), IBV_WR_RDMA_WRITE, std::span(r.memory_a).first(64),
                       r.mr_a->lkey, reinterpret_cast<std::uint64_t>(r.memory_b.data()),
                       i == 0 ? first_rkey : r.mr_b->rkey, IBV_SEND_SIGNALED,
                       static_cast<std::uint64_t>(i + 1));
    }
}

std::string write_greeting(Resources& r, std::string_view text) {
    constexpr std::uint64_t kGreetingId = 100;  // the fault's writes have wr_id 1, 2, ...
    const std::size_t length = std::min(text.size(), kBufferSize - 1);
    std::memcpy(r.memory_a.data(), text.data(), length);
    lab::post_rdma(r.qp_a.get(), IBV_WR_RDMA_WRITE, std::span(r.memory_a).first(length),
                   r.mr_a->lkey, reinterpret_cast<std::uint64_t>(r.memory_b.data()), r.mr_b->rkey,
                   IBV_SEND_SIGNALED, kGreetingId);
    // The next completion is the greeting's only if none was left from before.
    const ibv_wc wc =
        lab::wait_for_completion(r.cq_a.get(), "RDMA write A -> B", std::chrono::seconds(5));
    if (wc.wr_id != kGreetingId) {
        throw lab::Error("RDMA write A -> B: the completion of wr_id " + std::to_string(wc.wr_id) +
                         " came instead of the greeting's (wr_id 100) (hint: one left from before "
                         "the recovery: empty the CQ before the QP is used again)");
    }
    return {reinterpret_cast<const char*>(r.memory_b.data()), length};
}

}  // namespace recover

// SPDX-License-Identifier: MIT
// Exercise 07, solved: a region, a type 2 window bound to part of it, and the
// two ways of revoking the window.
#include <string>

#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/verbs.hpp"
#include "window.hpp"

namespace mw {

lab::MemoryRegion register_region(ibv_pd* pd, std::span<std::byte> region) {
    // No remote access of its own: the region's rkey opens nothing to a peer.
    // IBV_ACCESS_MW_BIND lets windows be bound to it; IBV_ACCESS_LOCAL_WRITE is
    // what a window that lets the peer write needs under it.
    return lab::register_memory(pd, region, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
}

MemoryWindow allocate_window(ibv_pd* pd) {
    return MemoryWindow(lab::check_ptr(ibv_alloc_mw(pd, IBV_MW_TYPE_2), "ibv_alloc_mw",
                                       "the device must support type 2 windows "
                                       "(IBV_DEVICE_MEM_WINDOW_TYPE_2A or _2B)"));
}

std::uint32_t bind_window(ibv_qp* qp, ibv_cq* cq, ibv_mw* window, ibv_mr* region,
                          std::span<std::byte> part) {
    // A type 2 window gets a new key at every bind: the rkey's top 24 bits
    // name the window, the low 8 bits are ours to change, so an old key dies.
    const std::uint32_t rkey = ibv_inc_rkey(window->rkey);
    ibv_send_wr wr{};
    wr.wr_id = 1;
    wr.opcode = IBV_WR_BIND_MW;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.bind_mw.mw = window;
    wr.bind_mw.rkey = rkey;
    wr.bind_mw.bind_info.mr = region;
    wr.bind_mw.bind_info.addr = reinterpret_cast<std::uint64_t>(part.data());
    wr.bind_mw.bind_info.length = part.size();
    wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
    ibv_send_wr* bad_wr = nullptr;
    lab::check(ibv_post_send(qp, &wr, &bad_wr), "ibv_post_send",
               "IBV_WR_BIND_MW needs an RC (or UC) QP in RTS");
    lab::wait_for_completion(cq, "bind of the memory window");
    return rkey;
}

void invalidate_window(ibv_qp* qp, ibv_cq* cq, std::uint32_t rkey) {
    ibv_send_wr wr{};
    wr.wr_id = 2;
    wr.opcode = IBV_WR_LOCAL_INV;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.invalidate_rkey = rkey;
    ibv_send_wr* bad_wr = nullptr;
    lab::check(ibv_post_send(qp, &wr, &bad_wr), "ibv_post_send");
    lab::wait_for_completion(cq, "local invalidate of the memory window");
}

std::uint32_t wait_for_invalidation(ibv_cq* cq) {
    const ibv_wc wc = lab::wait_for_completion(cq, "receive of the send with invalidate");
    if (wc.opcode != IBV_WC_RECV || (wc.wc_flags & invalidation_flags(cq->context)) == 0) {
        throw lab::Error("the receive completion carries no invalidation (opcode " +
                         std::to_string(wc.opcode) + ", wc_flags " + std::to_string(wc.wc_flags) +
                         "): was the message sent with IBV_WR_SEND_WITH_INV?");
    }
    return wc.invalidated_rkey;
}

}  // namespace mw

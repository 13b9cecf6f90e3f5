// SPDX-License-Identifier: MIT
// Exercise 07, your part: a region, a type 2 window bound to part of it, and
// the two ways of revoking the window. README.md explains the task. Every
// function ends in todo(...), which throws "TODO: <function> is not written
// yet"; replace it with your code.
#include <string>

#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "window.hpp"

namespace mw {

namespace {

// Marks an unwritten function; the arguments only silence "unused parameter".
template <typename... Unused>
[[noreturn]] void todo(std::string_view function, const Unused&... /*unused*/) {
    throw lab::Error("TODO: " + std::string(function) +
                     " is not written yet (exercise 07, window.cpp)");
}

}  // namespace

lab::MemoryRegion register_region(ibv_pd* pd, std::span<std::byte> region) {
    // TODO: ibv_reg_mr with IBV_ACCESS_LOCAL_WRITE and IBV_ACCESS_MW_BIND, and
    // no IBV_ACCESS_REMOTE_*: the peer gets in only through the window.
    // lab::register_memory does the call and its error check.
    todo("register_region", pd, region);
}

MemoryWindow allocate_window(ibv_pd* pd) {
    // TODO: ibv_alloc_mw(pd, IBV_MW_TYPE_2); lab::check_ptr; wrap it in a MemoryWindow.
    todo("allocate_window", pd);
}

std::uint32_t bind_window(ibv_qp* qp, ibv_cq* cq, ibv_mw* window, ibv_mr* region,
                          std::span<std::byte> part) {
    // TODO: one signaled ibv_send_wr with opcode IBV_WR_BIND_MW; in wr.bind_mw:
    // mw = window, rkey = ibv_inc_rkey(window->rkey) (a new key, the one the
    // peer gets), bind_info.mr = region, bind_info.addr/length = part,
    // bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE. ibv_post_send on
    // qp; lab::wait_for_completion on cq; return the new rkey.
    todo("bind_window", qp, cq, window, region, part);
}

void invalidate_window(ibv_qp* qp, ibv_cq* cq, std::uint32_t rkey) {
    // TODO: one signaled ibv_send_wr with opcode IBV_WR_LOCAL_INV and
    // invalidate_rkey = rkey; ibv_post_send; lab::wait_for_completion.
    todo("invalidate_window", qp, cq, rkey);
}

std::uint32_t wait_for_invalidation(ibv_cq* cq) {
    // TODO: lab::wait_for_completion (it throws if the receive failed); the
    // completion must be an IBV_WC_RECV whose wc_flags have a bit of
    // invalidation_flags(cq->context) (window.hpp says why rxe's differ); return
    // wc.invalidated_rkey.
    // Otherwise throw lab::Error saying what came instead.
    todo("wait_for_invalidation", cq);
}

}  // namespace mw

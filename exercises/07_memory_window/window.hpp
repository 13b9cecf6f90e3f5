// SPDX-License-Identifier: MIT
/**
 * @file window.hpp
 * @brief Exercise 07: lend a peer a narrow window of a larger region with a
 *        type 2 memory window, then take it back.
 *
 * Do not change this file or given.cpp: ./lab grade uses the course's own copies.
 * The program (main.cpp) connects two RC QPs of one process: the owner, whose
 * region is lent, and the peer, which writes into it through the window.
 */
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lab/check.hpp"
#include "lab/resources.hpp"

namespace mw {

// ---------------------------------------------------------------------------
// Given (given.cpp).
// ---------------------------------------------------------------------------

/// Bytes in the owner's region.
inline constexpr std::size_t kRegionSize = 16 * 1024;
/// Where the window starts in the region, and how many bytes it lends.
inline constexpr std::size_t kWindowOffset = 4096;
inline constexpr std::size_t kWindowLength = 1024;

/// Frees a memory window with ibv_dealloc_mw (a warning on stderr if that fails).
struct WindowDeleter {
    void operator()(ibv_mw* window) const noexcept {
        lab::warn_if_failed(ibv_dealloc_mw(window), "ibv_dealloc_mw");
    }
};
/// Owns a memory window from ibv_alloc_mw.
using MemoryWindow = std::unique_ptr<ibv_mw, WindowDeleter>;

/// rxe's vendor_id in ibv_query_device (the kernel's RXE_VENDOR_ID).
inline constexpr std::uint32_t kRxeVendorId = 0xffffff;
/// The kernel's IB_WC_WITH_INVALIDATE, as rxe hands it to user space unconverted.
inline constexpr unsigned kRxeWithInvalidate = 1U << 2;

/**
 * @brief The wc_flags bits that say a receive completion carried an invalidation,
 *        on the device of @p context.
 *
 * The standard bit is IBV_WC_WITH_INV (1 << 3). rxe, on kernels 6.1 and 6.12,
 * sets the kernel's own IB_WC_WITH_INVALIDATE instead, which is 1 << 2. On any
 * other device that bit is IBV_WC_IP_CSUM_OK (a received IP packet's checksum
 * was good) and says nothing about an invalidation, so it counts on rxe only.
 */
inline unsigned invalidation_flags(ibv_context* context) {
    ibv_device_attr attr{};
    lab::check(ibv_query_device(context, &attr), "ibv_query_device");
    const unsigned standard = IBV_WC_WITH_INV;
    return attr.vendor_id == kRxeVendorId ? standard | kRxeWithInvalidate : standard;
}

/// Everything the program creates, in creation order (so destroyed in reverse).
struct Resources {
    lab::Context context;
    std::uint8_t port = 1;
    lab::ProtectionDomain pd;
    lab::CompletionQueue owner_cq;
    lab::CompletionQueue peer_cq;
    lab::QueuePair owner_qp;  ///< connected to peer_qp, in RTS
    lab::QueuePair peer_qp;
    std::vector<std::byte> region;       ///< the owner's kRegionSize bytes
    std::vector<std::byte> peer_memory;  ///< what the peer writes from
    lab::MemoryRegion peer_mr;
};

/// Open @p device (empty: the first), a PD, two CQs, two RC QPs connected to each other.
Resources create_resources(const std::string& device, std::uint8_t port);

/// The peer's RDMA write of @p text to @p address with @p rkey; returns its completion status.
ibv_wc_status peer_write(Resources& resources, std::uint64_t address, std::uint32_t rkey,
                         std::string_view text);

/// The peer's IBV_WR_SEND_WITH_INV of @p text that invalidates @p rkey at the owner.
void peer_send_with_invalidate(Resources& resources, std::uint32_t rkey, std::string_view text);

/**
 * @brief The whole program: region, window, writes in and out, both ways of revoking it.
 * Prints each step to @p out; throws lab::Error at the first failure.
 */
void run(const std::string& device, std::uint8_t port, std::ostream& out);

// ---------------------------------------------------------------------------
// Yours to write (window.cpp).
// ---------------------------------------------------------------------------

/// Register the whole @p region: the device may write it, windows may be bound to it, and
/// it grants no remote access of its own.
lab::MemoryRegion register_region(ibv_pd* pd, std::span<std::byte> region);

/// A type 2 memory window in @p pd (bound later by a work request).
MemoryWindow allocate_window(ibv_pd* pd);

/**
 * @brief Bind @p window to @p part of @p region (registered by register_region) for remote
 *        writes, by posting IBV_WR_BIND_MW on @p qp; wait on @p cq for its completion.
 * @return the window's new rkey: the one to give the peer.
 */
std::uint32_t bind_window(ibv_qp* qp, ibv_cq* cq, ibv_mw* window, ibv_mr* region,
                          std::span<std::byte> part);

/// Revoke the window of @p rkey by posting IBV_WR_LOCAL_INV on @p qp; wait on @p cq.
void invalidate_window(ibv_qp* qp, ibv_cq* cq, std::uint32_t rkey);

/**
 * @brief Wait on @p cq for the completion of a receive (already posted) that the peer's
 *        IBV_WR_SEND_WITH_INV consumed.
 * @return the rkey the send invalidated, as the completion reports it.
 * @throws lab::Error when the completion failed or carries no invalidation.
 */
std::uint32_t wait_for_invalidation(ibv_cq* cq);

}  // namespace mw

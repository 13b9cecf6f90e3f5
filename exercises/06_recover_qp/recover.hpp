// SPDX-License-Identifier: MIT
/**
 * @file recover.hpp
 * @brief Exercise 06: after a fault, drain the CQ, bring the QP back
 *        (ERR -> RESET -> INIT -> RTR -> RTS), and pause the send queue (SQD).
 *
 * Do not change this file or given.cpp: ./lab grade uses the course's own copies.
 */
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lab/resources.hpp"
#include "lab/verbs.hpp"

namespace recover {

// ---------------------------------------------------------------------------
// Given (given.cpp).
// ---------------------------------------------------------------------------

/// Bytes in each QP's buffer.
inline constexpr std::size_t kBufferSize = 4096;

/// The access flags of the QPs and the buffers.
inline constexpr int kAccess =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

/// Two RC QPs of one process (A and B), each with its CQ and buffer.
struct Resources {
    lab::Context context;
    std::uint8_t port = 1;
    lab::ProtectionDomain pd;
    lab::CompletionQueue cq_a;
    lab::CompletionQueue cq_b;
    lab::QueuePair qp_a;
    lab::QueuePair qp_b;
    std::vector<std::byte> memory_a;
    std::vector<std::byte> memory_b;
    lab::MemoryRegion mr_a;
    lab::MemoryRegion mr_b;
    lab::LocalPort local{};  ///< port, GID index and path MTU both QPs use
    ibv_gid gid{};           ///< the GID at local.gid_index
    std::uint16_t lid = 0;
};

/// Open @p device (empty: the first), a PD, two CQs, two RC QPs, two registered buffers.
Resources create_resources(const std::string& device, std::uint8_t port);

/// QP @p qp's address for its peer's RTR, starting at @p psn.
lab::PeerAddress address_of(const Resources& resources, ibv_qp* qp, std::uint32_t psn);

/// Connect A and B (RESET -> RTS), A starting at @p psn_a and B at @p psn_b.
void connect(Resources& resources, std::uint32_t psn_a, std::uint32_t psn_b);

/// Post @p count signaled RDMA writes from A into B's buffer; the first one uses
/// @p first_rkey (a wrong one makes a fault), the others B's real rkey.
void post_writes(Resources& resources, int count, std::uint32_t first_rkey);

/// RDMA write of @p text from A into B's buffer, waited for; returns what B's buffer holds.
std::string write_greeting(Resources& resources, std::string_view text);

// ---------------------------------------------------------------------------
// Yours (recover.cpp).
// ---------------------------------------------------------------------------

/**
 * @brief Poll @p cq until @p expected completions arrived (or @p timeout passed);
 * return them in the order they came. After a fault: the error first, then the
 * work requests behind it, flushed (IBV_WC_WR_FLUSH_ERR).
 */
std::vector<ibv_wc> drain_after_fault(ibv_cq* cq, int expected, std::chrono::milliseconds timeout);

/**
 * @brief Bring @p qp (in ERR) back to RTS: RESET, INIT (@p local's port,
 * kAccess), RTR towards @p peer (its QPN and the PSN it will send from), RTS
 * sending from @p my_psn.
 */
void recover_qp(ibv_qp* qp, const lab::LocalPort& local, const lab::PeerAddress& peer,
                std::uint32_t my_psn);

/**
 * @brief Pause @p qp's send queue: RTS -> SQD with IBV_QP_EN_SQD_ASYNC_NOTIFY,
 * wait (at most @p timeout) for IBV_EVENT_SQ_DRAINED on @p context's async_fd,
 * acknowledge it, and move back to RTS.
 */
void pause_send_queue(ibv_context* context, ibv_qp* qp, std::chrono::milliseconds timeout);

}  // namespace recover

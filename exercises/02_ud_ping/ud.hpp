// SPDX-License-Identifier: MIT
/**
 * @file ud.hpp
 * @brief Exercise 02: unreliable datagrams (UD) — ping between two UD QPs.
 *
 * Do not change this file or given.cpp: ./lab grade uses the course's own copies.
 *
 * A UD QP is not connected to anyone. Every send names its destination in the
 * work request: an address handle (ibv_create_ah, from the peer's GID), the
 * peer's QP number and its Q_Key. A receiver accepts only datagrams whose
 * Q_Key matches its own. Every receive buffer starts with 40 bytes for the
 * GRH (global route header) the device puts there, the payload follows.
 * A message is at most one packet: no larger than the path MTU. And nothing
 * is retried: a datagram that finds no receive posted is silently dropped.
 */
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "lab/device.hpp"
#include "lab/resources.hpp"

namespace ud {

// ---------------------------------------------------------------------------
// Given (given.cpp).
// ---------------------------------------------------------------------------

/// Bytes the device writes before the payload of every UD receive: the GRH.
inline constexpr std::size_t kGrhBytes = 40;

/// A registered buffer (or a part of one) and its lkey.
struct LocalBuffer {
    std::span<std::byte> bytes;
    std::uint32_t lkey = 0;
};

/// The device, port and GID a UD program talks from, a PD and two CQs (for QP A and QP B).
struct Device {
    lab::Context context;
    std::uint8_t port = 1;
    ibv_port_attr port_attr{};  ///< active_mtu is the largest UD message
    lab::GidChoice gid{};       ///< lab::choose_gid's choice
    lab::ProtectionDomain pd;
    lab::CompletionQueue cq_a;
    lab::CompletionQueue cq_b;
};

/// Open @p device (empty: the first) on @p port; CQs of 64 entries.
Device open(const std::string& device, std::uint8_t port);

/// The largest UD payload the port carries: its active_mtu in bytes (1024 on rxe).
std::size_t max_payload(const Device& device);

/// Register @p bytes for local write.
lab::MemoryRegion register_buffer(const Device& device, std::span<std::byte> bytes);

// ---------------------------------------------------------------------------
// Yours (ud.cpp).
// ---------------------------------------------------------------------------

/// ibv_create_qp of type IBV_QPT_UD on @p cq (send and receive), 32 WRs, 1 SGE each way.
lab::QueuePair create_ud_qp(ibv_pd* pd, ibv_cq* cq);

/**
 * @brief RESET → INIT → RTR → RTS for a UD QP.
 *
 * UD needs no peer: INIT takes the P_Key index (0), the port and the Q_Key;
 * RTR only the state; RTS the send PSN (@p sq_psn).
 */
void bring_up(ibv_qp* qp, std::uint8_t port, std::uint32_t qkey, std::uint32_t sq_psn);

/// ibv_create_ah for the peer with GID @p peer_gid, from our GID index @p sgid_index.
lab::AddressHandle create_ah(ibv_pd* pd, std::uint8_t port, int sgid_index,
                             const ibv_gid& peer_gid);

/**
 * @brief Post one receive whose single SGE covers all of @p slot (GRH + payload).
 * @p slot must hold more than kGrhBytes, else lab::Error before anything is posted.
 */
void post_ud_receive(ibv_qp* qp, const LocalBuffer& slot, std::uint64_t wr_id);

/**
 * @brief Post one signaled UD send of @p message to QP @p remote_qpn through @p ah.
 * A message longer than @p max_payload bytes (the path MTU) is refused with a
 * lab::Error naming both sizes, before anything is posted.
 */
void post_ud_send(ibv_qp* qp, ibv_ah* ah, std::uint32_t remote_qpn, std::uint32_t remote_qkey,
                  const LocalBuffer& message, std::size_t max_payload, std::uint64_t wr_id);

/// The payload of a received datagram: @p slot without the GRH, wc.byte_len − 40 bytes.
std::span<const std::byte> payload_of(const ibv_wc& wc, std::span<const std::byte> slot);

}  // namespace ud

// SPDX-License-Identifier: MIT
/**
 * @file srq.hpp
 * @brief Exercise 03: one server, several clients, one shared receive queue (SRQ).
 *
 * Do not change this file or given.cpp: ./lab grade uses the course's own copies.
 *
 * A server with one RC QP per client would need receives posted on every QP,
 * sized for the busiest client. With an SRQ, all the server's QPs take their
 * receives from one pool: the server posts to the SRQ, any client's message
 * consumes the next receive, and the completion's qp_num says whose it was.
 * When the pool runs low, the SRQ limit event (IBV_EVENT_SRQ_LIMIT_REACHED)
 * tells the server to post more, before clients hit "receiver not ready".
 */
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "lab/device.hpp"
#include "lab/resources.hpp"
#include "lab/verbs.hpp"

namespace srq {

// ---------------------------------------------------------------------------
// Given (given.cpp).
// ---------------------------------------------------------------------------

/// The device, its port and GID, a PD.
struct Device {
    lab::Context context;
    std::uint8_t port = 1;
    lab::LocalPort local;  ///< port, GID index, path MTU for connecting QPs
    ibv_gid gid{};
    lab::ProtectionDomain pd;
};

/// Open @p device (empty: the first) on @p port.
Device open(const std::string& device, std::uint8_t port);

/// Bring @p server_qp and @p client_qp (both in RESET) to RTS, connected to each other.
void connect_pair(const Device& device, ibv_qp* server_qp, ibv_qp* client_qp);

/// A registered buffer and its lkey.
struct LocalBuffer {
    std::span<std::byte> bytes;
    std::uint32_t lkey = 0;
};

// ---------------------------------------------------------------------------
// Yours (srq.cpp).
// ---------------------------------------------------------------------------

/// ibv_create_srq on @p pd with room for @p max_wr receives of one SGE each.
lab::SharedReceiveQueue create_srq(ibv_pd* pd, std::uint32_t max_wr);

/// An RC QP whose receives come from @p shared (send and receive completions on @p cq).
lab::QueuePair create_server_qp(ibv_pd* pd, ibv_cq* cq, ibv_srq* shared);

/**
 * @brief Post @p count receives on @p shared: receive i covers bytes
 *        [i × slot_size, (i + 1) × slot_size) of @p slots and has wr_id = first_wr_id + i.
 * Throws lab::Error, before posting anything, when the slots do not fit in @p slots.
 */
void post_srq_receives(ibv_srq* shared, const LocalBuffer& slots, std::size_t slot_size,
                       std::size_t count, std::uint64_t first_wr_id);

/// Arm the SRQ limit: an event when fewer than @p limit receives are left (ibv_modify_srq).
void arm_srq_limit(ibv_srq* shared, std::uint32_t limit);

/**
 * @brief Wait up to @p timeout for IBV_EVENT_SRQ_LIMIT_REACHED on @p shared.
 *
 * Reads the context's asynchronous events (ibv_get_async_event, without
 * blocking forever: poll() on context->async_fd first), acknowledges every
 * event it reads (ibv_ack_async_event), and returns true when the limit
 * event for @p shared came, false when the time ran out.
 */
bool wait_for_srq_limit(ibv_context* context, ibv_srq* shared, std::chrono::milliseconds timeout);

}  // namespace srq

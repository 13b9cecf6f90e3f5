// SPDX-License-Identifier: MIT
/**
 * @file verbs.hpp
 * @brief Steps 4 to 9 of the verbs flow in one call each, for the lessons after they were taught.
 *
 * Lesson 02 teaches ibv_alloc_pd and ibv_reg_mr, lesson 03 ibv_create_cq,
 * lesson 04 ibv_create_qp, the RESET → INIT → RTR → RTS walk and posting one
 * receive and one send (a QP connected to itself). From then on
 * a lesson that teaches something else calls these instead of repeating
 * them. Each one checks its verb and throws a lab::Error with a hint.
 */
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "lab/resources.hpp"

namespace lab {

/// Step 4 (lesson 02): ibv_alloc_pd.
ProtectionDomain alloc_pd(ibv_context* context);

/**
 * @brief Step 5 (lesson 02): ibv_reg_mr over @p buffer with @p access flags.
 *
 * A failure with ENOMEM names the memlock limit (ulimit -l), its usual cause.
 */
MemoryRegion register_memory(ibv_pd* pd, std::span<std::byte> buffer, int access);

/**
 * @brief @p size bytes of @p storage that start on a page boundary (lesson 02).
 *
 * Resizes @p storage to @p size plus one page (sysconf(_SC_PAGESIZE): 4 KiB on
 * x86-64; 4, 16 or 64 KiB on arm64) and returns the part that starts at its
 * first page boundary. Lesson 02 needs one for a region at iova 0; lesson 06
 * for a message of a page that lies in one page, as ibv_rc_pingpong's does.
 */
std::span<std::byte> page_aligned(std::vector<std::byte>& storage, std::size_t size);

/// Step 6 (lesson 03): ibv_create_cq with @p entries entries, optionally tied to @p channel.
CompletionQueue create_cq(ibv_context* context, int entries, ibv_comp_channel* channel = nullptr);

/// Sizes of a queue pair's two work queues (lesson 04).
struct QueueSizes {
    std::uint32_t send_wr = 64;     ///< max_send_wr: outstanding send-queue work requests
    std::uint32_t recv_wr = 64;     ///< max_recv_wr: outstanding posted receives
    std::uint32_t send_sge = 1;     ///< max_send_sge: scatter/gather entries per send
    std::uint32_t recv_sge = 1;     ///< max_recv_sge: scatter/gather entries per receive
    std::uint32_t inline_data = 0;  ///< max_inline_data: bytes a send may carry inline
};

/**
 * @brief Step 7 (lesson 04): the ibv_qp_init_attr of a reliable-connected (RC)
 *        QP, as create_rc_qp() passes it to ibv_create_qp (and lesson 11 to
 *        rdma_create_qp).
 * @param srq a shared receive queue, or nullptr for the QP's own receive queue.
 * @param sq_sig_all true: every send completes with a CQE; false: only IBV_SEND_SIGNALED ones.
 */
ibv_qp_init_attr rc_qp_init_attr(ibv_cq* send_cq, ibv_cq* recv_cq, const QueueSizes& sizes,
                                 ibv_srq* srq = nullptr, bool sq_sig_all = false);

/**
 * @brief Step 7 (lesson 04): ibv_create_qp for a reliable-connected (RC) QP.
 * @param srq a shared receive queue, or nullptr for the QP's own receive queue.
 * @param sq_sig_all true: every send completes with a CQE; false: only IBV_SEND_SIGNALED ones.
 */
QueuePair create_rc_qp(ibv_pd* pd, ibv_cq* send_cq, ibv_cq* recv_cq, const QueueSizes& sizes,
                       ibv_srq* srq = nullptr, bool sq_sig_all = false);

/// What one side must know of the other to connect an RC QP (exchanged in lesson 05).
struct PeerAddress {
    std::uint32_t qp_num = 0;  ///< the peer's QP number
    std::uint32_t psn = 0;     ///< the first packet sequence number the peer will send
    std::uint16_t lid = 0;     ///< the peer's LID (InfiniBand; 0 on RoCE)
    ibv_gid gid{};             ///< the peer's GID (RoCE: its IP address)
};

/// The local side of a connection: port, GID index and path MTU (lesson 04).
struct LocalPort {
    std::uint8_t port = 1;            ///< HCA port number
    int gid_index = 0;                ///< from lab::choose_gid
    ibv_mtu path_mtu = IBV_MTU_1024;  ///< the port's active_mtu
};

/// The path MTU two sides agree on: the smaller of their active MTUs (lesson 05).
[[nodiscard]] constexpr ibv_mtu agreed_mtu(ibv_mtu mine, ibv_mtu theirs) noexcept {
    return mine < theirs ? mine : theirs;
}

/// RESET → INIT (lesson 04): port, P_Key index 0, and the remote access the QP grants.
void move_to_init(ibv_qp* qp, std::uint8_t port, int access_flags);

/**
 * @brief INIT → RTR (lesson 04): the path to the peer, its QPN and PSN, the
 *        path MTU and the responder resources (max_dest_rd_atomic).
 * @param min_rnr_timer how long the peer is told to wait before retrying a
 *        send that found no receive posted (encoded; 12 ≈ 0.64 ms).
 */
void move_to_rtr(ibv_qp* qp, const LocalPort& local, const PeerAddress& peer,
                 std::uint8_t max_dest_rd_atomic = 16, std::uint8_t min_rnr_timer = 12);

/**
 * @brief RTR → RTS (lesson 04): the local send PSN, timeouts and retry counts.
 * @param rnr_retry 7 means retry forever; 0 turns a missing receive into
 *        IBV_WC_RNR_RETRY_EXC_ERR at once (lesson 06 shows it).
 * @param retry_count resends of a packet that is not acknowledged within
 *        @p timeout, before the send fails with IBV_WC_RETRY_EXC_ERR. 6, not 7:
 *        the standard counts 7 as seven, but rxe counts it as "for ever"
 *        (rxe_comp.c decrements only values below 7), and a sender to a dead
 *        peer would never give up.
 * @param timeout 4.096 µs × 2^timeout without an ACK before a resend (17: 537 ms).
 *        Hardware answers in microseconds and 14 (67 ms) is usual there; two
 *        emulated VMs on a busy host took longer than 7 × 67 ms to answer, so
 *        the course waits 537 ms per try: about 4 s before a send gives up.
 */
void move_to_rts(ibv_qp* qp, std::uint32_t local_psn, std::uint8_t max_rd_atomic = 16,
                 std::uint8_t rnr_retry = 7, std::uint8_t retry_count = 6,
                 std::uint8_t timeout = 17);

/**
 * @brief Step 9 (lesson 04): ibv_post_recv of one receive into @p buffer.
 * @param wr_id comes back in the receive's completion.
 */
void post_receive(ibv_qp* qp, std::span<std::byte> buffer, std::uint32_t lkey,
                  std::uint64_t wr_id = 0);

/**
 * @brief Step 9 (lesson 04): ibv_post_send of one IBV_WR_SEND of @p message.
 * @param send_flags IBV_SEND_SIGNALED asks for a completion (the course's QPs
 *        are created with sq_sig_all off); add IBV_SEND_FENCE, IBV_SEND_INLINE...
 * @param wr_id comes back in the send's completion.
 */
void post_send(ibv_qp* qp, std::span<const std::byte> message, std::uint32_t lkey,
               unsigned send_flags = IBV_SEND_SIGNALED, std::uint64_t wr_id = 0);

/**
 * @brief Step 9 (lessons 07 and 09): ibv_post_send of one IBV_WR_RDMA_WRITE or
 *        IBV_WR_RDMA_READ between @p local and the peer's @p remote_addr.
 * @param opcode IBV_WR_RDMA_WRITE (local → remote) or IBV_WR_RDMA_READ (remote → local,
 *        which needs IBV_ACCESS_LOCAL_WRITE on the local region).
 * @param rkey the peer's key for the region @p remote_addr lies in.
 * @param send_flags IBV_SEND_SIGNALED asks for a completion; add IBV_SEND_INLINE, ...
 */
void post_rdma(ibv_qp* qp, ibv_wr_opcode opcode, std::span<const std::byte> local,
               std::uint32_t lkey, std::uint64_t remote_addr, std::uint32_t rkey,
               unsigned send_flags = IBV_SEND_SIGNALED, std::uint64_t wr_id = 0);

/// The QP state name as the specification spells it (lesson 04): RESET, INIT, RTR, RTS, SQD,
/// SQE, ERR.
const char* qp_state_name(ibv_qp_state state);

/// A random 24-bit starting PSN, as ibv_rc_pingpong uses (lesson 05 says why).
std::uint32_t random_psn();

}  // namespace lab

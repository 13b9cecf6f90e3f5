// SPDX-License-Identifier: MIT
/**
 * @file throughput.hpp
 * @brief Exercise 04: send bandwidth — inline data, selective signaling, lists of work requests.
 *
 * Do not change this file or given.cpp: ./lab grade uses the course's own copies.
 */
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lab/resources.hpp"

namespace tp {

// ---------------------------------------------------------------------------
// Given (given.cpp).
// ---------------------------------------------------------------------------

/// What post_list() saw (the checks read it).
struct Counters {
    std::size_t lists = 0;              ///< ibv_post_send calls
    std::size_t requests = 0;           ///< work requests posted
    std::size_t inline_requests = 0;    ///< of them with IBV_SEND_INLINE
    std::size_t signaled_requests = 0;  ///< of them with IBV_SEND_SIGNALED
    std::size_t longest_list = 0;       ///< most requests in one ibv_post_send
};

/// The counters of this process; assign {} to reset them.
Counters& counters();

/// Send side and receive side of a loopback RC connection, A → B.
class Pair {
  public:
    static constexpr std::uint32_t kSendDepth = 128;     ///< max_send_wr of A
    static constexpr std::uint32_t kReceiveDepth = 512;  ///< receives B keeps posted
    static constexpr std::size_t kMaxMessage = 65536;    ///< largest message

    /// Open @p device (empty: the first), connect A to B; A asks for @p inline_bytes of inline
    /// data.
    Pair(const std::string& device, std::uint32_t inline_bytes);

    ibv_qp* sender() const noexcept { return qp_a_.get(); }
    ibv_cq* send_cq() const noexcept { return cq_a_.get(); }
    /// Start of A's send buffer: kSendDepth slots of kMaxMessage bytes, registered.
    std::byte* send_slot(std::size_t slot) noexcept {
        return send_memory_.data() + slot * kMaxMessage;
    }
    std::uint32_t send_lkey() const noexcept { return send_mr_->lkey; }

    /**
     * @brief Let B work: poll its CQ (without waiting), check each message,
     *        re-post its receive. Call it often while sending.
     *
     * Message number k must carry k in its first 8 bytes (see stamp()); a
     * message out of order, of the wrong size or with a failed status is recorded.
     */
    void keep_receiving();

    /// Write @p sequence into the first 8 bytes of @p message (at least 8 bytes).
    static void stamp(std::byte* message, std::uint64_t sequence);

    std::size_t received_messages() const noexcept { return received_; }
    std::size_t received_bytes() const noexcept { return received_bytes_; }
    /// Empty when every message arrived whole and in order, else what went wrong first.
    const std::string& receive_error() const noexcept { return receive_error_; }
    /// The size every message is expected to have (set before streaming).
    void expect_size(std::size_t bytes) noexcept { expected_size_ = bytes; }

  private:
    void post_receive(std::size_t slot);
    lab::Context context_;
    lab::ProtectionDomain pd_;
    lab::CompletionQueue cq_a_, cq_b_;
    lab::QueuePair qp_a_, qp_b_;
    std::vector<std::byte> send_memory_, receive_memory_;
    lab::MemoryRegion send_mr_, receive_mr_;
    std::size_t received_ = 0, received_bytes_ = 0, expected_size_ = 0;
    std::string receive_error_;
};

/**
 * @brief ibv_post_send of the list starting at @p first, counted in counters().
 * Use it instead of ibv_post_send. Throws lab::Error when the post fails.
 */
void post_list(ibv_qp* qp, ibv_send_wr* first);

// ---------------------------------------------------------------------------
// Yours (throughput.cpp).
// ---------------------------------------------------------------------------

/// The max_inline_data @p qp was granted (ibv_query_qp, IBV_QP_CAP).
std::uint32_t granted_inline(ibv_qp* qp);

/// How to stream.
struct StreamOptions {
    std::size_t message_size = 64;    ///< bytes per message, 8 … Pair::kMaxMessage
    std::size_t count = 10000;        ///< messages
    std::uint32_t signal_every = 16;  ///< one signaled send every this many (and the last)
    std::uint32_t batch = 16;         ///< work requests per ibv_post_send
};

/**
 * @brief Send @p options.count messages from A to B as fast as the device allows.
 *
 * Message k is stamped with k (Pair::stamp). Sends are IBV_SEND_INLINE when
 * the message fits granted_inline(); only every signal_every-th send (and
 * the last) is signaled; sends are posted in linked lists of up to batch
 * through post_list(); never more than Pair::kSendDepth are outstanding.
 * Calls pair.keep_receiving() while it waits, and returns when every send
 * has completed and B has received every message (10 s deadline).
 * Throws lab::Error for options that cannot work (a size below 8 or above
 * kMaxMessage, signal_every or batch 0 or above kSendDepth) before posting.
 */
void stream_sends(Pair& pair, const StreamOptions& options);

}  // namespace tp

// SPDX-License-Identifier: MIT
/**
 * @file sge.hpp
 * @brief Exercise 01: moving non-contiguous data with scatter/gather entries.
 *
 * Do not change this file: ./lab grade uses the course's own copy. The first part
 * is given (implemented in given.cpp), the second part is yours (sge.cpp).
 *
 * A layout describes non-contiguous data in a buffer: block_num blocks of
 * block_size bytes, the start of each block stride bytes after the start of
 * the one before. Its packed form is the same blocks back to back.
 *
 * @code
 *   strided:  [blk0]....[blk1]....[blk2]....      stride = 10, block_size = 6
 *   packed:   [blk0][blk1][blk2]
 * @endcode
 */
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lab/resources.hpp"

namespace sge {

// ---------------------------------------------------------------------------
// Given: layouts, buffers, posting and waiting, a connected pair of QPs.
// ---------------------------------------------------------------------------

/// block_num blocks of block_size bytes, one every stride bytes.
struct Layout {
    std::size_t block_size = 0;  ///< bytes in each block
    std::size_t block_num = 0;   ///< number of blocks
    std::size_t stride = 0;      ///< distance from one block's start to the next block's start

    /// Bytes of data: block_size × block_num (the size of the packed form).
    [[nodiscard]] std::size_t payload_bytes() const noexcept { return block_size * block_num; }
    /// Bytes from the first block's start to the last block's end.
    [[nodiscard]] std::size_t extent_bytes() const noexcept {
        return block_num == 0 ? 0 : (block_num - 1) * stride + block_size;
    }
};

/// "100 blocks of 64 B every 128 B".
std::string describe(const Layout& layout);

/**
 * @brief Refuse a layout that cannot work, before anything is posted.
 *
 * Throws lab::Error, naming @p what and the problem, when block_size or
 * block_num is zero, stride is smaller than block_size (blocks would
 * overlap), a block does not fit an SGE's 32-bit length, the sizes overflow,
 * or the strided extent is larger than @p strided_bytes or the payload larger
 * than @p packed_bytes.
 * @param strided_bytes size of the buffer holding the strided form.
 * @param packed_bytes size of the buffer (local or remote) holding the packed form.
 */
void validate_layout(const Layout& layout, std::size_t strided_bytes, std::size_t packed_bytes,
                     std::string_view what);

/// Local memory: a buffer registered with ibv_reg_mr, and its lkey.
struct LocalBuffer {
    std::span<std::byte> bytes;  ///< the whole registered buffer
    std::uint32_t lkey = 0;      ///< ibv_mr::lkey
};

/// The peer's memory, as the peer announced it (address, rkey, length).
struct RemoteBuffer {
    std::uint64_t addr = 0;  ///< start address in the peer's address space
    std::uint32_t rkey = 0;  ///< ibv_mr::rkey of the peer's region
    std::size_t length = 0;  ///< bytes we may access from addr on
};

/// What limits the work requests one QP accepts (its ibv_qp_cap).
struct QueueLimits {
    std::uint32_t max_send_wr = 0;   ///< send work requests outstanding at once
    std::uint32_t max_recv_wr = 0;   ///< receive work requests outstanding at once
    std::uint32_t max_send_sge = 0;  ///< SGEs in one send work request
    std::uint32_t max_recv_sge = 0;  ///< SGEs in one receive work request
};

/// One connected RC QP, its CQ (for sends and receives) and its limits.
struct Endpoint {
    ibv_qp* qp = nullptr;  ///< connected, in RTS
    ibv_cq* cq = nullptr;  ///< send_cq and recv_cq of qp
    QueueLimits limits;    ///< what qp was created with
    /// The device's ibv_device_attr::max_sge_rd: the SGEs one RDMA READ may carry.
    std::uint32_t max_sge_rd = 0;
};

/**
 * @brief Post @p wrs (each with its own sg_list) on @p endpoint and wait until all complete.
 *
 * Links the requests into lists of at most max_send_wr (the send queue never
 * holds more than it was sized for), posts each list with one ibv_post_send,
 * every request signaled, and waits for all completions with a deadline.
 * A failed completion throws lab::Error naming @p what and its status.
 * The next pointers of @p wrs are overwritten.
 */
void post_sends_and_wait(const Endpoint& endpoint, std::span<ibv_send_wr> wrs,
                         std::string_view what);

/**
 * @brief Carry messages from @p sender to @p receiver: send i lands in receive i.
 *
 * @p sends and @p receives must have the same length. In rounds of at most
 * max_recv_wr (receiver) and max_send_wr (sender) messages: post the
 * receives first (a send that finds no receive is an RNR error), then the
 * sends, then wait for every send and receive completion. Checks that each
 * receive got as many bytes as its send carried. Sets the opcode of every
 * send to IBV_WR_SEND; overwrites wr_id, next and (sends) send_flags.
 */
void transfer_messages(const Endpoint& sender, std::span<ibv_send_wr> sends,
                       const Endpoint& receiver, std::span<ibv_recv_wr> receives);

/// What post_sends_and_wait() and transfer_messages() have posted so far (the checks read it).
struct PostCounters {
    std::size_t send_requests = 0;     ///< send work requests posted
    std::size_t send_sges = 0;         ///< SGEs in them
    std::size_t receive_requests = 0;  ///< receive work requests posted
    std::size_t receive_sges = 0;      ///< SGEs in them
    std::size_t largest_num_sge = 0;   ///< the most SGEs one work request had
};

/// The counters of this process; assign {} to reset them.
PostCounters& post_counters();

/// Sum of the lengths of @p sges.
std::size_t total_length(std::span<const ibv_sge> sges);

/// How to open the loopback pair.
struct LoopbackOptions {
    std::string device;               ///< empty: the first device
    std::uint8_t port = 1;            ///< port of that device
    std::optional<int> gid_index;     ///< empty: lab::choose_gid decides
    std::uint32_t queue_depth = 128;  ///< max_send_wr and max_recv_wr of both QPs
    std::uint32_t sge_count = 0;      ///< max_send_sge and max_recv_sge; 0: the device's max_sge
};

/**
 * @brief Two RC QPs on one device, connected to each other (A ↔ B) in one process.
 *
 * Everything a two-process program has, without the TCP exchange: each QP
 * is moved to RTR with the other's QPN, PSN and GID. Data goes through the
 * device (on rxe: through the kernel's RoCE v2 stack and back).
 */
class Loopback {
  public:
    explicit Loopback(const LoopbackOptions& options = {});

    /// Register @p bytes for local write and remote read and write.
    lab::MemoryRegion register_buffer(std::span<std::byte> bytes);

    [[nodiscard]] const Endpoint& a() const noexcept { return a_; }  ///< the first QP
    [[nodiscard]] const Endpoint& b() const noexcept { return b_; }  ///< the second QP
    [[nodiscard]] ibv_context* context() const noexcept { return context_.get(); }
    [[nodiscard]] const ibv_device_attr& device_attr() const noexcept { return device_attr_; }

  private:
    lab::Context context_;
    ibv_device_attr device_attr_{};
    lab::ProtectionDomain pd_;
    lab::CompletionQueue cq_a_;
    lab::CompletionQueue cq_b_;
    lab::QueuePair qp_a_;
    lab::QueuePair qp_b_;
    Endpoint a_;
    Endpoint b_;
};

/// A registered buffer as a RemoteBuffer, as if its owner had sent us address, rkey and length.
RemoteBuffer as_remote(const ibv_mr* mr);
/// A registered buffer as a LocalBuffer.
LocalBuffer as_local(const ibv_mr* mr);

// ---------------------------------------------------------------------------
// Yours (sge.cpp): every function below.
// ---------------------------------------------------------------------------

/// The limits @p qp really has: ibv_query_qp with IBV_QP_CAP.
QueueLimits query_limits(ibv_qp* qp);

/// One SGE per block of @p layout in @p buffer: address, block_size, lkey.
std::vector<ibv_sge> block_sges(const Layout& layout, const LocalBuffer& buffer);

/// Copy the blocks of @p strided, back to back, into @p packed (the CPU's gather).
void pack(const Layout& layout, std::span<const std::byte> strided, std::span<std::byte> packed);

/// Copy @p packed block by block to their places in @p strided (the CPU's scatter).
void unpack(const Layout& layout, std::span<const std::byte> packed, std::span<std::byte> strided);

/**
 * @brief Zero-copy gather-WRITE: the blocks of @p source, packed, into @p target.
 *
 * RDMA writes whose SGEs point at the blocks; at most max_send_sge SGEs per
 * work request, each request writing where the previous one stopped.
 */
void gather_write(const Endpoint& local, const Layout& layout, const LocalBuffer& source,
                  const RemoteBuffer& target);

/**
 * @brief Zero-copy scatter-READ: the packed bytes at @p source into the blocks of @p destination.
 *
 * RDMA reads whose SGEs point at the blocks; at most min(max_send_sge,
 * max_sge_rd) SGEs per work request (a READ has its own limit, max_sge_rd,
 * which is 1 on some devices), each request reading where the previous one stopped.
 */
void scatter_read(const Endpoint& local, const Layout& layout, const LocalBuffer& destination,
                  const RemoteBuffer& source);

/**
 * @brief Zero-copy gather-SEND / scatter-RECV: the blocks of @p source on
 *        @p sender into the blocks of @p destination on @p receiver (same layout).
 */
void gather_send_scatter_recv(const Endpoint& sender, const LocalBuffer& source,
                              const Endpoint& receiver, const LocalBuffer& destination,
                              const Layout& layout);

/// Baseline of gather_write: pack into @p staging with the CPU, then one RDMA write of one SGE.
void copy_write(const Endpoint& local, const Layout& layout, const LocalBuffer& source,
                const LocalBuffer& staging, const RemoteBuffer& target);

/// Baseline of scatter_read: one RDMA read of one SGE into @p staging, then unpack with the CPU.
void read_copy(const Endpoint& local, const Layout& layout, const LocalBuffer& destination,
               const LocalBuffer& staging, const RemoteBuffer& source);

/// Baseline of gather_send_scatter_recv: pack, one send of one SGE into one receive of one SGE,
/// unpack.
void copy_send_recv(const Endpoint& sender, const LocalBuffer& source,
                    const LocalBuffer& send_staging, const Endpoint& receiver,
                    const LocalBuffer& receive_staging, const LocalBuffer& destination,
                    const Layout& layout);

}  // namespace sge

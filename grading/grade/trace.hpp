// SPDX-License-Identifier: MIT
/**
 * @file trace.hpp
 * @brief See the work requests a student's program really hands to the device.
 *
 * Some things a check must know leave no trace at the peer: how many
 * scatter/gather entries a work request had, whether a send was inline or
 * signaled, how many requests one ibv_post_send carried. Counting them inside
 * the student's program would let the program count for itself. So the check
 * watches from outside, the way a debugger does: it attaches to the program
 * with ptrace and puts a breakpoint on the entry of the provider's post_send,
 * post_recv and post_srq_recv (the functions ibv_post_send and friends call)
 * and on libibverbs' ibv_modify_qp and ibv_modify_srq. At each stop it reads the work requests
 * (or the QP attributes) from the program's memory, then lets it go on.
 *
 * x86-64 and arm64 (int3 or brk #0 as the breakpoint): the micro-VM runs the
 * host's architecture.
 */
#pragma once

#include <infiniband/verbs.h>
#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace lab::grade {

/// One work request as the program posted it.
struct PostedRequest {
    enum class Queue { send, receive, shared_receive };
    Queue queue = Queue::send;
    std::size_t call = 0;      ///< which ibv_post_* call (counted from 0 for the whole run)
    std::size_t position = 0;  ///< its place in that call's list
    std::uint32_t qp_num = 0;  ///< the QP it was posted on (0 for an SRQ)
    std::uint64_t wr_id = 0;
    ibv_wr_opcode opcode = IBV_WR_SEND;  ///< send queue only
    unsigned send_flags = 0;             ///< send queue only
    std::vector<ibv_sge> sges;
    std::uint64_t remote_addr = 0;      ///< RDMA operations
    std::uint32_t rkey = 0;             ///< RDMA operations
    std::uint32_t remote_qpn = 0;       ///< UD sends
    std::uint32_t remote_qkey = 0;      ///< UD sends
    std::uint32_t invalidate_rkey = 0;  ///< IBV_WR_LOCAL_INV and IBV_WR_SEND_WITH_INV
    std::uint32_t bind_rkey = 0;        ///< IBV_WR_BIND_MW: the window's new rkey
    std::uint64_t bind_addr = 0;        ///< IBV_WR_BIND_MW: the first byte the window covers
    std::uint64_t bind_length = 0;      ///< IBV_WR_BIND_MW: how many bytes
    unsigned bind_access = 0;           ///< IBV_WR_BIND_MW: mw_access_flags
    std::string head;                   ///< sends: the first bytes of the message, read at the post

    /// Bytes its SGEs cover.
    [[nodiscard]] std::uint64_t length() const;
};

/// One call of ibv_modify_qp as the program made it.
struct QpChange {
    std::uint32_t qp_num = 0;
    int mask = 0;        ///< attr_mask
    ibv_qp_attr attr{};  ///< only the fields in mask mean anything
};

/// One call of ibv_modify_srq as the program made it.
struct SrqChange {
    int mask = 0;  ///< srq_attr_mask
    ibv_srq_attr attr{};
};

/// @p size bytes of process @p pid's memory at @p address (empty when unreadable).
std::string read_program_memory(pid_t pid, std::uint64_t address, std::size_t size);

/// What a Tracer watches: a breakpoint costs a stop of the program each time it is hit.
enum Watch : unsigned {
    kSends = 1,           ///< ibv_post_send
    kReceives = 2,        ///< ibv_post_recv
    kSharedReceives = 4,  ///< ibv_post_srq_recv
    kQpChanges = 8,       ///< ibv_modify_qp
    kSrqChanges = 16,     ///< ibv_modify_srq
    kEverything = 31,
};

/// Watches one running program (see the file comment).
class Tracer {
  public:
    /// Attach to @p pid and set the breakpoints @p watch asks for; returns when they are in
    /// place. The program must already have opened the RDMA device (so that the provider is
    /// loaded).
    Tracer(pid_t pid, unsigned watch);
    /// Detaches (or finds the program gone).
    ~Tracer();
    Tracer(const Tracer&) = delete;
    Tracer& operator=(const Tracer&) = delete;

    /// The work requests seen since the last call.
    std::vector<PostedRequest> take_requests();
    /// The ibv_modify_qp calls seen since the last call.
    std::vector<QpChange> take_qp_changes();
    /// The ibv_modify_srq calls seen since the last call.
    std::vector<SrqChange> take_srq_changes();
    /// Empty while all is well; what went wrong with the tracing otherwise.
    [[nodiscard]] std::string problem();

  private:
    void run();
    pid_t pid_;
    unsigned watch_;
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable armed_changed_;
    bool armed_ = false;
    std::string problem_;
    std::vector<PostedRequest> requests_;
    std::vector<QpChange> qp_changes_;
    std::vector<SrqChange> srq_changes_;
};

}  // namespace lab::grade

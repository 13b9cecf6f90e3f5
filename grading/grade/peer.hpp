// SPDX-License-Identifier: MIT
/**
 * @file peer.hpp
 * @brief The check's own side of the RDMA traffic, and what the kernel says about the program's
 * QPs.
 *
 * A check is the peer the student's program talks to: it opens the same
 * device, makes its own protection domain, completion queue, queue pairs and
 * memory, and connects them to the program's. What arrives there, and the
 * completions its own work requests get, are facts the program cannot make
 * up. The kernel's resource tracking (RDMA netlink) adds the state
 * and packet sequence numbers of the program's own QPs.
 */
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "lab/device.hpp"
#include "lab/resources.hpp"
#include "lab/verbs.hpp"

namespace lab::grade {

class StudentProgram;
class Message;

/// The check's RDMA resources on the first device, port 1.
class Peer {
  public:
    /// Open the device, a PD and one CQ of @p cq_entries for everything.
    explicit Peer(int cq_entries = 1024);

    [[nodiscard]] ibv_context* context() const noexcept { return context_.get(); }
    [[nodiscard]] ibv_pd* pd() const noexcept { return pd_.get(); }
    [[nodiscard]] ibv_cq* cq() const noexcept { return cq_.get(); }
    [[nodiscard]] const ibv_port_attr& port_attr() const noexcept { return port_attr_; }
    [[nodiscard]] const lab::GidChoice& gid() const noexcept { return gid_; }
    /// Port, GID index and path MTU for connecting.
    [[nodiscard]] lab::LocalPort local() const noexcept;

    /// An RC QP on the peer's CQ.
    lab::QueuePair create_rc_qp(const lab::QueueSizes& sizes = {}) const;
    /// Register @p bytes with @p access.
    lab::MemoryRegion register_memory(std::span<std::byte> bytes, int access) const;

    /**
     * @brief Connect @p qp to the program's QP: receive its "address", send ours, go to RTS.
     *
     * The program's side (connect_to_check in subject_main.hpp) does the mirror image.
     * @param rnr_retry 0: a send that finds no receive posted fails at once.
     */
    void connect(StudentProgram& program, ibv_qp* qp, std::uint8_t rnr_retry = 7) const;

  private:
    lab::Context context_;
    ibv_port_attr port_attr_{};
    lab::GidChoice gid_{};
    lab::ProtectionDomain pd_;
    lab::CompletionQueue cq_;
};

/// A queue pair as the kernel's resource tracking reports it.
struct KernelQp {
    std::uint32_t qp_num = 0;
    std::uint32_t remote_qp_num = 0;  ///< 0 when not connected
    std::string type;                 ///< "RC", "UD", ...
    std::string state;                ///< "RESET", "INIT", "RTR", "RTS", "ERR", ...
    std::uint32_t rq_psn = 0;
    std::uint32_t sq_psn = 0;
};

/// The QPs process @p pid owns now, as the kernel's resource tracking says
/// (RDMA netlink, what `rdma resource show qp` shows).
std::vector<KernelQp> kernel_qps(pid_t pid);

/// Poll @p cq for one completion, up to @p timeout; throws lab::Error when none comes.
ibv_wc next_completion(ibv_cq* cq, std::chrono::milliseconds timeout);

}  // namespace lab::grade

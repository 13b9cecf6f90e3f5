// SPDX-License-Identifier: MIT
/**
 * @file connection.hpp
 * @brief Exercise 05: a connection with five classic mistakes. Find them by
 *        their error messages and fix them in connection.cpp.
 *
 * Do not change this file or given.cpp: ./lab grade uses the course's own copies.
 * The program (main.cpp) connects two RC QPs of one process (A and B) and
 * tries an RDMA write from A into B's buffer and a send from A to B.
 */
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "lab/resources.hpp"

namespace fix {

// ---------------------------------------------------------------------------
// Given (given.cpp).
// ---------------------------------------------------------------------------

/// Bytes in each QP's buffer.
inline constexpr std::size_t kBufferSize = 4096;

/// Everything the program creates, in creation order (so destroyed in reverse).
struct Resources {
    lab::Context context;
    std::uint8_t port = 1;
    lab::ProtectionDomain pd;
    lab::CompletionQueue cq_a;
    lab::CompletionQueue cq_b;
    lab::QueuePair qp_a;  ///< created in RESET; connect() brings it to RTS
    lab::QueuePair qp_b;
    std::vector<std::byte> memory_a;
    std::vector<std::byte> memory_b;
    lab::MemoryRegion mr_a;  ///< memory_a, registered with memory_access_flags()
    lab::MemoryRegion mr_b;  ///< memory_b, registered with memory_access_flags()
};

/// Open @p device (empty: the first), a PD, two CQs, two RC QPs, two registered buffers.
Resources create_resources(const std::string& device, std::uint8_t port);

/// RDMA write of @p text from A's buffer into B's buffer; returns what B's buffer then holds.
std::string write_greeting(Resources& resources, std::string_view text);

/**
 * @brief The whole program: create, choose GID and MTU, connect, write, send.
 * Prints each step to @p out; throws lab::Error at the first failure.
 */
void run(const std::string& device, std::uint8_t port, std::ostream& out);

// ---------------------------------------------------------------------------
// Yours to fix (connection.cpp). Each function has one mistake.
// ---------------------------------------------------------------------------

/// The index of the GID both QPs talk from: on RoCE, the IPv4-mapped RoCE v2 entry.
int choose_gid_index(ibv_context* context, std::uint8_t port);

/// The path MTU for the QPs: what the port can really carry.
ibv_mtu choose_path_mtu(ibv_context* context, std::uint8_t port);

/// The access flags buffers are registered with: local write, and the peer may write into them.
int memory_access_flags();

/// RESET → INIT → RTR → RTS for both QPs, each pointed at the other.
void connect(Resources& resources, int gid_index, ibv_mtu path_mtu);

/// Send @p text from A to B (two-sided); returns what B received.
std::string send_message(Resources& resources, std::string_view text);

}  // namespace fix

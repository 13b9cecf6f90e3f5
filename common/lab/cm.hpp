// SPDX-License-Identifier: MIT
/**
 * @file cm.hpp
 * @brief Connecting with librdmacm (lesson 11): owners, bounded event waits, hints.
 *
 * Lesson 11's main.cpp makes the rdma_cm calls in the order a server and a
 * client make them. What every rdma_cm program needs around them lives here:
 * RAII owners for the CM objects, reading one event with a deadline, turning
 * an unexpected event into one line with a hint, addresses from text, a
 * region offered in private data, the client's retry while no server listens
 * yet, and lesson 11's own flags. It is the only part of common/ that needs
 * librdmacm, so it is a library of its own (lab_cm).
 */
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lab/check.hpp"
#include "lab/resources.hpp"
#include "lab/wait.hpp"

namespace lab {

class CommandLine;
struct Options;

/// What the server's rdma_accept tells the client as private data (network byte order).
struct RegionInfo {
    std::uint64_t address;  ///< where the client may write
    std::uint32_t rkey;     ///< the key for it
    std::uint32_t length;   ///< how many bytes
};

/// The options only lesson 11 has.
struct CmOptions {
    std::string device;         ///< -d: the device the address must belong to; empty: any
    std::string bind_address;   ///< -b: the server's address to listen on; empty: all
    int hold_seconds = 0;       ///< --hold: the client waits this long before sending
    std::string reject_reason;  ///< --reject: the server refuses the client, saying this
};

/// The status of a REJECTED event after the server's rdma_reject: the IB CM's
/// reject reason 28, "consumer defined" (8, "invalid service ID", means nobody listens).
inline constexpr int kRejectedByServer = 28;

/// The longest --reject text: the IB CM's reject message carries 148 bytes of private data.
inline constexpr std::size_t kMaxRejectText = 140;

/// Adds -d, -b, --hold and --reject to @p command_line, bound to @p settings.
void add_cm_options(CommandLine& command_line, CmOptions& settings);

/// Refuses what cannot work, in one line: a --size too small for @p minimum_size
/// bytes, an unknown -d (the error lists the devices), -b on the client.
void check_cm_options(const Options& options, const CmOptions& settings, std::size_t minimum_size);

/// The hint for a failed rdma_bind_addr with @p error_number.
const char* bind_hint(int error_number);

/// The queue sizes both sides ask rdma_create_qp for: an RC QP on @p cq with
/// 8 send and 8 receive slots of one SGE each.
ibv_qp_init_attr qp_init_attr(ibv_cq* cq);

/// Destroys an event channel (rdma_destroy_event_channel).
struct DestroyEventChannel {
    /// Destroys @p channel.
    void operator()(rdma_event_channel* channel) const noexcept {
        rdma_destroy_event_channel(channel);
    }
};
/// Destroys an id (rdma_destroy_id), warning if that fails. rdma_destroy_id(3): its
/// QP must be gone and all its events acknowledged first.
struct DestroyId {
    /// Destroys @p id.
    void operator()(rdma_cm_id* id) const noexcept {
        warn_if_failed(rdma_destroy_id(id), "rdma_destroy_id");
    }
};
/// Destroys the QP that rdma_create_qp attached to an id (not the id).
struct DestroyQpOfId {
    /// Destroys the QP of @p id.
    void operator()(rdma_cm_id* id) const noexcept { rdma_destroy_qp(id); }
};
/// Owns an event channel.
using EventChannel = std::unique_ptr<rdma_event_channel, DestroyEventChannel>;
/// Owns an id.
using CmId = std::unique_ptr<rdma_cm_id, DestroyId>;
/// Owns the QP of an id.
using CmQueuePair = std::unique_ptr<rdma_cm_id, DestroyQpOfId>;

/// One CM event, copied out: rdma_ack_cm_event frees the event and its private data.
struct CmEvent {
    rdma_cm_event_type type;              ///< what happened
    int status;                           ///< the event's status (0, or an errno / reject reason)
    rdma_cm_id* id;                       ///< the id it is about (CONNECT_REQUEST: a new one)
    std::vector<std::byte> private_data;  ///< the peer's private data, if any
};

/// Set after the client's first rejected attempt, so that its retries do not flood the output
/// (a rejection by the server's rdma_reject is still printed).
extern bool cm_quiet_retries;

/**
 * @brief Reads the next event of @p channel, prints it, and acknowledges it.
 *
 * rdma_get_cm_event blocks until an event comes, which may be never (a dead
 * peer, an address nobody answers), so the channel's fd is polled first; once
 * @p deadline passes, throws an Error that names @p waiting_for.
 */
CmEvent get_cm_event(rdma_event_channel* channel, std::chrono::steady_clock::time_point deadline,
                     std::string_view waiting_for);

/// Throws one line saying what @p event means, unless it is @p expected.
void expect_event(const CmEvent& event, rdma_cm_event_type expected);

/// get_cm_event, then expect_event: the next event of @p channel must be
/// @p expected, and come before @p deadline. A timeout names @p who, if any,
/// and the event, e.g. "a client (CONNECT_REQUEST)".
CmEvent wait_for_event(rdma_event_channel* channel, std::chrono::steady_clock::time_point deadline,
                       rdma_cm_event_type expected, std::string_view who = {});

/// An IPv4 or IPv6 address with @p port, from text (numeric or a host name;
/// empty: the any address, which listens on every RDMA device).
sockaddr_storage make_address(const std::string& host, std::uint16_t port);

/// @p storage as the sockaddr the rdma_* calls take.
inline sockaddr* as_sockaddr(sockaddr_storage& storage) {
    return reinterpret_cast<sockaddr*>(&storage);
}

/// @p region and its @p rkey as the private data of an accept (network byte order).
RegionInfo region_info(std::span<std::byte> region, std::uint32_t rkey);

/// The server's region from the private data of its accept, in host byte order.
/// Over RoCE private data arrives padded; at least our bytes must be there.
RegionInfo region_from(const CmEvent& accepted);

/// Copies @p text and a terminating zero to the start of @p to.
void copy_text(std::span<std::byte> to, std::string_view text);

/// The QP's state, as ibv_query_qp reports it (e.g. "INIT").
const char* qp_state(ibv_qp* qp);

/// Prints what the CM set on the connected QP of @p id: peer, QPNs, state, the
/// source GID index, access flags, read/atomic depths and retry counts (ibv_query_qp).
void print_connection(rdma_cm_id* id);

/// rdma_cm picks the device from the address; -d (@p wanted) only checks that choice.
void check_device(rdma_cm_id* id, const std::string& wanted);

/// Everything one connection attempt of the client creates, destroyed in
/// reverse order (members are destroyed bottom to top).
struct ClientConnection {
    EventChannel channel;        ///< its events
    CmId id;                     ///< the connection's id
    ProtectionDomain pd;         ///< step 4
    MemoryRegion mr;             ///< step 5
    CompletionQueue cq;          ///< step 6
    CmQueuePair qp;              ///< step 7
    RegionInfo server_region{};  ///< from the server's private data (host byte order)
    bool connected = false;      ///< false: the server rejected us (nobody listens yet)
};

/// --hold: sleeps @p seconds connected (time to look around, or to kill a
/// side), ending at once with an error when @p peer_gone sees the peer go.
void hold_connection(const PeerWatch& peer_gone, int seconds);

/// Calls @p attempt until it connects, every 200 ms, until @p deadline passes
/// (@p timeout after the start; @p where names the server): a server started a
/// moment after the client rejects the first requests.
ClientConnection connect_with_retries(const std::function<ClientConnection()>& attempt,
                                      std::chrono::steady_clock::time_point deadline,
                                      const std::string& where, std::chrono::milliseconds timeout);

}  // namespace lab

// SPDX-License-Identifier: MIT
/**
 * @file cm_plumbing.hpp
 * @brief Lesson 11's plumbing around librdmacm: owners, bounded event waits, hints.
 *
 * main.cpp holds what the lesson teaches (the rdma_cm calls in the order a
 * server and a client make them). This header holds what every rdma_cm program
 * needs but a student can skim: RAII owners for the CM objects, reading one
 * event with a deadline, turning an unexpected event into one line with a hint,
 * addresses from text, and the client's retry while no server listens yet.
 */
#pragma once

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <poll.h>
#include <rdma/rdma_cma.h>

#include <endian.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "lab/check.hpp"
#include "lab/device.hpp"
#include "lab/options.hpp"
#include "lab/report.hpp"
#include "lab/resources.hpp"
#include "lab/wait.hpp"

namespace cm {

using Clock = std::chrono::steady_clock;

/// What the server's rdma_accept tells the client as private data (network byte order).
struct RegionInfo {
    std::uint64_t address;  ///< where the client may write
    std::uint32_t rkey;     ///< the key for it
    std::uint32_t length;   ///< how many bytes
};

/// The options only lesson 11 has.
struct LessonOptions {
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
inline void add_lesson_options(lab::CommandLine& command_line, LessonOptions& settings) {
    command_line.option("-d,--ib-dev", settings.device,
                        "RDMA device the address must belong to (rdma_cm chooses it)");
    command_line.option("-b,--bind", settings.bind_address,
                        "server: the address to listen on (default: all)");
    command_line.option("--hold", settings.hold_seconds,
                        "client: stay connected this many seconds before sending (time to look at "
                        "'rdma resource show cm_id', or to kill a side)",
                        {.min = 0, .max = 3600});
    command_line.option("--reject", settings.reject_reason,
                        "server: refuse the client with rdma_reject, this text as private data",
                        [](const std::string& text) {
                            return text.empty() || text.size() > kMaxRejectText
                                       ? "needs 1 to " + std::to_string(kMaxRejectText) +
                                             " characters"
                                       : std::string();
                        });
}

/// Refuses what cannot work, in one line: a --size too small for @p minimum_size
/// bytes, an unknown -d (the error lists the devices), -b on the client.
inline void check_lesson_options(const lab::Options& options, const LessonOptions& settings,
                                 std::size_t minimum_size) {
    if (options.size < minimum_size) {
        throw lab::Error("--size " + std::to_string(options.size) +
                         " is too small (hint: the messages need at least " +
                         std::to_string(minimum_size) + " bytes)");
    }
    if (!settings.device.empty()) {
        lab::open_device(settings.device);
    }
    if (!options.is_server() && !settings.bind_address.empty()) {
        throw lab::Error(
            "-b is for the server (hint: the client's source address follows "
            "from the route to SERVER)");
    }
}

/// The hint for a failed rdma_bind_addr with @p error_number.
inline const char* bind_hint(int error_number) {
    return error_number == EADDRNOTAVAIL || error_number == EADDRINUSE
               ? "another rdma_cm program may listen on this port (rdma_cm says so with "
                 "EADDRNOTAVAIL), or -b is not an address of this machine: choose "
                 "another -p, check -b"
               : "is -b an IP address of an RDMA device's netdev?";
}

/// The queue sizes both sides ask rdma_create_qp for (an RC QP on @p cq).
inline ibv_qp_init_attr qp_init_attr(ibv_cq* cq) {
    ibv_qp_init_attr init{};
    init.send_cq = cq;
    init.recv_cq = cq;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = 8;
    init.cap.max_recv_wr = 8;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    return init;
}

/// Destroys an event channel (rdma_destroy_event_channel).
struct DestroyEventChannel {
    /// Destroys @p channel.
    void operator()(rdma_event_channel* channel) const noexcept {
        rdma_destroy_event_channel(channel);
    }
};
/// Destroys an id (rdma_destroy_id), warning if that fails.
struct DestroyId {
    /// Destroys @p id.
    void operator()(rdma_cm_id* id) const noexcept {
        lab::warn_if_failed(rdma_destroy_id(id), "rdma_destroy_id");
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
inline bool quiet_retries = false;

/// Reads the next event of @p channel, or throws once @p deadline passes.
/// rdma_get_cm_event blocks until an event comes, which may be never (a dead
/// peer, an address nobody answers), so the channel's fd is polled first.
inline CmEvent get_cm_event(rdma_event_channel* channel, Clock::time_point deadline,
                            std::string_view waiting_for) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::max(Clock::duration::zero(), deadline - Clock::now()));
    if (!lab::Deadline(left).wait_until_ready(channel->fd, POLLIN)) {
        throw lab::Error("timed out waiting for " + std::string(waiting_for) +
                         " (hint: is the peer running, and is the address one of an RDMA "
                         "device's? raise --timeout for slow machines)");
    }
    rdma_cm_event* event = nullptr;
    lab::check(rdma_get_cm_event(channel, &event), "rdma_get_cm_event");
    CmEvent copy{event->event, event->status, event->id, {}};
    const auto* data = static_cast<const std::byte*>(event->param.conn.private_data);
    if (data != nullptr) {
        copy.private_data.assign(data, data + event->param.conn.private_data_len);
    }
    const bool repeated =
        event->event == RDMA_CM_EVENT_ADDR_RESOLVED ||
        event->event == RDMA_CM_EVENT_ROUTE_RESOLVED ||
        (event->event == RDMA_CM_EVENT_REJECTED && event->status != kRejectedByServer);
    if (!(quiet_retries && repeated)) {
        std::printf("  CM event: %s (status %d)\n", rdma_event_str(event->event), event->status);
    }
    lab::check(rdma_ack_cm_event(event), "rdma_ack_cm_event");
    return copy;
}

/// Throws one line saying what @p event means, unless it is @p expected.
inline void expect_event(const CmEvent& event, rdma_cm_event_type expected) {
    if (event.type == expected) {
        return;
    }
    std::string message = std::string("expected ") + rdma_event_str(expected) + ", got " +
                          rdma_event_str(event.type) + " (status " + std::to_string(event.status) +
                          ")";
    switch (event.type) {
        case RDMA_CM_EVENT_ADDR_ERROR:
            message +=
                " (hint: the address is not reachable from any RDMA device: use an IP "
                "address of the server's RDMA netdev, e.g. $RDMA_LAB_SERVER_ADDR)";
            break;
        case RDMA_CM_EVENT_ROUTE_ERROR:
            message += " (hint: no path to the server; check 'ip route' and the netdev's state)";
            break;
        case RDMA_CM_EVENT_UNREACHABLE:
            message += " (hint: the server did not answer the connection request)";
            break;
        case RDMA_CM_EVENT_REJECTED:
            message += " (hint: no server listens on that port, or it refused us)";
            break;
        case RDMA_CM_EVENT_CONNECT_ERROR:
            message +=
                " (hint: the server accepted, but moving our QP to RTR or RTS with its "
                "numbers failed inside rdma_get_cm_event: compare the QP sizes and "
                "responder_resources/initiator_depth with the device's limits)";
            break;
        case RDMA_CM_EVENT_DISCONNECTED:
            message += " (hint: the peer disconnected or died)";
            break;
        default:
            break;
    }
    throw lab::Error(message);
}

/// An IPv4 or IPv6 address with @p port, from text (numeric or a host name;
/// empty: the any address, which listens on every RDMA device).
inline sockaddr_storage make_address(const std::string& host, std::uint16_t port) {
    sockaddr_storage storage{};
    if (host.empty()) {
        auto& any = reinterpret_cast<sockaddr_in&>(storage);
        any.sin_family = AF_INET;
        any.sin_addr.s_addr = htonl(INADDR_ANY);
        any.sin_port = htons(port);
        return storage;
    }
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    addrinfo* found = nullptr;
    if (const int result = ::getaddrinfo(host.c_str(), nullptr, &hints, &found); result != 0) {
        throw lab::Error("cannot resolve address '" + host + "': " + ::gai_strerror(result));
    }
    std::memcpy(&storage, found->ai_addr, found->ai_addrlen);
    ::freeaddrinfo(found);
    if (storage.ss_family == AF_INET) {
        reinterpret_cast<sockaddr_in&>(storage).sin_port = htons(port);
    } else {
        reinterpret_cast<sockaddr_in6&>(storage).sin6_port = htons(port);
    }
    return storage;
}

/// @p region and its @p rkey as the private data of an accept (network byte order).
inline RegionInfo region_info(std::span<std::byte> region, std::uint32_t rkey) {
    return {htobe64(reinterpret_cast<std::uintptr_t>(region.data())), htobe32(rkey),
            htobe32(static_cast<std::uint32_t>(region.size()))};
}

/// The server's region from the private data of its accept, in host byte order.
/// Over RoCE private data arrives padded; at least our bytes must be there.
inline RegionInfo region_from(const CmEvent& accepted) {
    if (accepted.private_data.size() < sizeof(RegionInfo)) {
        throw lab::Error("the server's private data has " +
                         std::to_string(accepted.private_data.size()) + " bytes, expected " +
                         std::to_string(sizeof(RegionInfo)) +
                         " (hint: is it this lesson's server?)");
    }
    RegionInfo region{};
    std::memcpy(&region, accepted.private_data.data(), sizeof region);
    return {be64toh(region.address), be32toh(region.rkey), be32toh(region.length)};
}

/// @p storage as the sockaddr the rdma_* calls take.
inline sockaddr* as_sockaddr(sockaddr_storage& storage) {
    return reinterpret_cast<sockaddr*>(&storage);
}

/// Copies @p text and a terminating zero to the start of @p to.
inline void copy_text(std::span<std::byte> to, std::string_view text) {
    std::memcpy(to.data(), text.data(), text.size());
    to[text.size()] = std::byte{0};
}

/// The QP's state, as ibv_query_qp reports it (e.g. "INIT").
inline const char* qp_state(ibv_qp* qp) {
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    lab::check(ibv_query_qp(qp, &attr, IBV_QP_STATE, &init), "ibv_query_qp");
    return lab::qp_state_name(attr.qp_state);
}

/// Prints what the CM set on the connected QP of @p id: peer, QPNs, state, the
/// source GID index, access flags, read/atomic depths and retry counts (ibv_query_qp).
inline void print_connection(rdma_cm_id* id) {
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    lab::check(
        ibv_query_qp(id->qp, &attr,
                     IBV_QP_STATE | IBV_QP_AV | IBV_QP_DEST_QPN | IBV_QP_ACCESS_FLAGS |
                         IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_RETRY_CNT |
                         IBV_QP_RNR_RETRY | IBV_QP_MIN_RNR_TIMER | IBV_QP_TIMEOUT | IBV_QP_PATH_MTU,
                     &init),
        "ibv_query_qp");
    char peer[INET6_ADDRSTRLEN] = "?";
    const sockaddr* address = rdma_get_peer_addr(id);
    if (address->sa_family == AF_INET) {
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, peer,
                  sizeof peer);
    } else if (address->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr, peer,
                  sizeof peer);
    }
    std::printf("  connected on %s port %u to %s: our QPN 0x%06x, theirs 0x%06x, QP state %s\n",
                ibv_get_device_name(id->verbs->device), unsigned(id->port_num), peer,
                id->qp->qp_num, attr.dest_qp_num, lab::qp_state_name(attr.qp_state));
    const int access = attr.qp_access_flags;
    std::printf(
        "  set by the CM: GID index %u, access%s%s%s, max_rd_atomic %u, max_dest_rd_atomic %u, "
        "retry_cnt %u, rnr_retry %u\n",
        unsigned(attr.ah_attr.grh.sgid_index),
        access & IBV_ACCESS_REMOTE_WRITE ? " REMOTE_WRITE" : "",
        access & IBV_ACCESS_REMOTE_READ ? " REMOTE_READ" : "",
        access & IBV_ACCESS_REMOTE_ATOMIC ? " REMOTE_ATOMIC" : "", unsigned(attr.max_rd_atomic),
        unsigned(attr.max_dest_rd_atomic), unsigned(attr.retry_cnt), unsigned(attr.rnr_retry));
    // The kernel's IB CM sets min_rnr_timer 0 at RTR: the longest RNR wait, 655.36 ms.
    std::printf("  set by the CM: min_rnr_timer %u, timeout %u, path MTU %s\n",
                unsigned(attr.min_rnr_timer), unsigned(attr.timeout),
                std::string(lab::mtu_name(attr.path_mtu)).c_str());
}

/// rdma_cm picks the device from the address; -d only checks that choice.
inline void check_device(rdma_cm_id* id, const std::string& wanted) {
    if (wanted.empty() || id->verbs == nullptr) {
        return;
    }
    const std::string actual = ibv_get_device_name(id->verbs->device);
    if (actual != wanted) {
        throw lab::Error("the address belongs to RDMA device '" + actual + "', not '" + wanted +
                         "' (hint: rdma_cm chooses the device from the IP address; leave -d out "
                         "or pick an address of " +
                         wanted + ")");
    }
}

/// Everything one connection attempt of the client creates, destroyed in
/// reverse order (members are destroyed bottom to top).
struct ClientConnection {
    EventChannel channel;        ///< its events
    CmId id;                     ///< the connection's id
    lab::ProtectionDomain pd;    ///< step 4
    lab::MemoryRegion mr;        ///< step 5
    lab::CompletionQueue cq;     ///< step 6
    CmQueuePair qp;              ///< step 7
    RegionInfo server_region{};  ///< from the server's private data (host byte order)
    bool connected = false;      ///< false: the server rejected us (nobody listens yet)
};

/// --hold: sleeps @p seconds connected (time to look around, or to kill a
/// side), ending at once with an error when @p peer_gone sees the peer go.
inline void hold_connection(const lab::PeerWatch& peer_gone, int seconds) {
    if (seconds > 0) {
        std::printf("  holding the connection for %d s before sending\n", seconds);
        peer_gone.sleep_until(Clock::now() + std::chrono::seconds(seconds));
    }
}

/// Calls @p attempt until it connects, every 200 ms, until @p timeout passes: a
/// server started a moment after the client rejects the first requests.
inline ClientConnection connect_with_retries(const std::function<ClientConnection()>& attempt,
                                             Clock::time_point deadline, const std::string& where,
                                             std::chrono::milliseconds timeout) {
    const auto no_server = [&] {
        return lab::Error("no server accepted a connection at " + where + " within " +
                          std::to_string(timeout.count() / 1000) +
                          " s (hint: start the server first, and check -p)");
    };
    for (;;) {
        try {
            ClientConnection connection = attempt();
            if (connection.connected) {
                return connection;
            }
        } catch (const lab::Error&) {
            // The deadline can pass inside a retry, while it waits for an
            // answer; after a rejection the cause is still "no server".
            if (quiet_retries && Clock::now() >= deadline) {
                throw no_server();
            }
            throw;
        }
        if (Clock::now() + std::chrono::milliseconds(200) > deadline) {
            throw no_server();
        }
        if (!quiet_retries) {
            // Status 8 is the IB CM's reject reason "invalid service ID": nobody listens.
            std::printf("  rejected: no server listening yet; retrying every 200 ms\n");
            quiet_retries = true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
}

}  // namespace cm

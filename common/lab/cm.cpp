// SPDX-License-Identifier: MIT
#include "lab/cm.hpp"

#include <arpa/inet.h>
#include <endian.h>
#include <netdb.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

#include "lab/device.hpp"
#include "lab/options.hpp"
#include "lab/verbs.hpp"

namespace lab {

using Clock = std::chrono::steady_clock;

bool cm_quiet_retries = false;

void add_cm_options(CommandLine& command_line, CmOptions& settings) {
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

void check_cm_options(const Options& options, const CmOptions& settings, std::size_t minimum_size) {
    if (options.size < minimum_size) {
        throw Error("--size " + std::to_string(options.size) +
                    " is too small (hint: the messages need at least " +
                    std::to_string(minimum_size) + " bytes)");
    }
    if (!settings.device.empty()) {
        open_device(settings.device);
    }
    if (!options.is_server() && !settings.bind_address.empty()) {
        throw Error(
            "-b is for the server (hint: the client's source address follows "
            "from the route to SERVER)");
    }
}

const char* bind_hint(int error_number) {
    return error_number == EADDRNOTAVAIL || error_number == EADDRINUSE
               ? "another rdma_cm program may listen on this port (rdma_cm says so with "
                 "EADDRNOTAVAIL), or -b is not an address of this machine: choose "
                 "another -p, check -b"
               : "is -b an IP address of an RDMA device's netdev?";
}

ibv_qp_init_attr qp_init_attr(ibv_cq* cq) {
    return rc_qp_init_attr(cq, cq, {.send_wr = 8, .recv_wr = 8, .send_sge = 1, .recv_sge = 1});
}

CmEvent get_cm_event(rdma_event_channel* channel, Clock::time_point deadline,
                     std::string_view waiting_for) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::max(Clock::duration::zero(), deadline - Clock::now()));
    if (!Deadline(left).wait_until_ready(channel->fd, POLLIN)) {
        throw Error("timed out waiting for " + std::string(waiting_for) +
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
    if (!(cm_quiet_retries && repeated)) {
        std::printf("  CM event: %s (status %d)\n", rdma_event_str(event->event), event->status);
    }
    lab::check(rdma_ack_cm_event(event), "rdma_ack_cm_event");
    return copy;
}

void expect_event(const CmEvent& event, rdma_cm_event_type expected) {
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
    throw Error(message);
}

CmEvent wait_for_event(rdma_event_channel* channel, Clock::time_point deadline,
                       rdma_cm_event_type expected, std::string_view who) {
    std::string_view name = rdma_event_str(expected);  // "RDMA_CM_EVENT_ESTABLISHED"
    name.remove_prefix(std::min(name.size(), std::string_view("RDMA_CM_EVENT_").size()));
    const std::string waiting_for =
        who.empty() ? std::string(name) : std::string(who) + " (" + std::string(name) + ")";
    CmEvent event = get_cm_event(channel, deadline, waiting_for);
    expect_event(event, expected);
    return event;
}

sockaddr_storage make_address(const std::string& host, std::uint16_t port) {
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
        throw Error("cannot resolve address '" + host + "': " + ::gai_strerror(result));
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

RegionInfo region_info(std::span<std::byte> region, std::uint32_t rkey) {
    return {htobe64(reinterpret_cast<std::uintptr_t>(region.data())), htobe32(rkey),
            htobe32(static_cast<std::uint32_t>(region.size()))};
}

RegionInfo region_from(const CmEvent& accepted) {
    if (accepted.private_data.size() < sizeof(RegionInfo)) {
        throw Error("the server's private data has " +
                    std::to_string(accepted.private_data.size()) + " bytes, expected " +
                    std::to_string(sizeof(RegionInfo)) + " (hint: is it this lesson's server?)");
    }
    RegionInfo region{};
    std::memcpy(&region, accepted.private_data.data(), sizeof region);
    return {be64toh(region.address), be32toh(region.rkey), be32toh(region.length)};
}

void copy_text(std::span<std::byte> to, std::string_view text) {
    std::memcpy(to.data(), text.data(), text.size());
    to[text.size()] = std::byte{0};
}

const char* qp_state(ibv_qp* qp) {
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    lab::check(ibv_query_qp(qp, &attr, IBV_QP_STATE, &init), "ibv_query_qp");
    return qp_state_name(attr.qp_state);
}

void print_connection(rdma_cm_id* id) {
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
                id->qp->qp_num, attr.dest_qp_num, qp_state_name(attr.qp_state));
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
                std::string(mtu_name(attr.path_mtu)).c_str());
}

void check_device(rdma_cm_id* id, const std::string& wanted) {
    if (wanted.empty() || id->verbs == nullptr) {
        return;
    }
    const std::string actual = ibv_get_device_name(id->verbs->device);
    if (actual != wanted) {
        throw Error("the address belongs to RDMA device '" + actual + "', not '" + wanted +
                    "' (hint: rdma_cm chooses the device from the IP address; leave -d out "
                    "or pick an address of " +
                    wanted + ")");
    }
}

void hold_connection(const PeerWatch& peer_gone, int seconds) {
    if (seconds > 0) {
        std::printf("  holding the connection for %d s before sending\n", seconds);
        peer_gone.sleep_until(Clock::now() + std::chrono::seconds(seconds));
    }
}

ClientConnection connect_with_retries(const std::function<ClientConnection()>& attempt,
                                      Clock::time_point deadline, const std::string& where,
                                      std::chrono::milliseconds timeout) {
    const auto no_server = [&] {
        return Error("no server accepted a connection at " + where + " within " +
                     std::to_string(timeout.count() / 1000) +
                     " s (hint: start the server first, and check -p)");
    };
    for (;;) {
        try {
            ClientConnection connection = attempt();
            if (connection.connected) {
                return connection;
            }
        } catch (const Error&) {
            // The deadline can pass inside a retry, while it waits for an
            // answer; after a rejection the cause is still "no server".
            if (cm_quiet_retries && Clock::now() >= deadline) {
                throw no_server();
            }
            throw;
        }
        if (Clock::now() + std::chrono::milliseconds(200) > deadline) {
            throw no_server();
        }
        if (!cm_quiet_retries) {
            // Status 8 is the IB CM's reject reason "invalid service ID": nobody listens.
            std::printf("  rejected: no server listening yet; retrying every 200 ms\n");
            cm_quiet_retries = true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
}

}  // namespace lab

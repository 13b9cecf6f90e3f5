// Lesson 11: rdma_cm — the hello world of lessons 05/06, connected by librdmacm.
//
// Lessons 05 and 06 connected two RC QPs by hand: a TCP socket carried the QP
// number, PSN and GID, and each side walked its QP through INIT, RTR and RTS.
// The RDMA connection manager (librdmacm) does all of that: it resolves an IP
// address to a device, port and GID (rdma_resolve_addr), finds the path
// (rdma_resolve_route), exchanges QPNs and PSNs in CM messages, and moves the
// QP through its states inside rdma_connect / rdma_accept. What is left to us
// is reacting to its events, each read with rdma_get_cm_event and returned
// with rdma_ack_cm_event.
//
// The server accepts one client. Its rdma_accept carries private data: the
// address, rkey and length of a region the client may write. The client
// writes a line there with RDMA write, then sends its hello message; since an
// RC QP executes in order, by the time the server's receive completes the
// written line is in place too. Then the client disconnects.
//
// Run:   ./lab run 11_rdma_cm                       (server and client in one go)
//        11_rdma_cm [-b ADDRESS] [-p PORT]          server
//        11_rdma_cm [-p PORT] SERVER                client; SERVER is an IP address of
//                                                   the server's RDMA device (10.77.0.1
//                                                   in the micro-VM), not 127.0.0.1
//
// The ten steps: 1 device list, 2 open, 3 query, 4 PD, 5 MR, 6 CQ, 7 QP,
// 8 INIT/RTR/RTS, 9 post and poll, 10 clean up. Here rdma_cm does 1-3 (the
// device comes with the address) and 8 (the state walk comes with the connection).

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <poll.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/device.hpp"
#include "lab/options.hpp"
#include "lab/report.hpp"
#include "lab/resources.hpp"
#include "lab/verbs.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr std::string_view kHello = "hello from the client, connected by rdma_cm";
constexpr std::string_view kWritten = "this line arrived by RDMA write";
// Both lines must fit in a buffer, with their terminating zero.
constexpr std::size_t kMinimumSize = 64;

// What the server's rdma_accept tells the client, in network byte order.
// Private data is raw bytes, so the layout is fixed here.
struct RegionInfo {
    std::uint64_t address;
    std::uint32_t rkey;
    std::uint32_t length;
};

// RAII owners for the CM objects (the verbs ones come from lab/resources.hpp).
struct DestroyEventChannel {
    void operator()(rdma_event_channel* channel) const noexcept {
        rdma_destroy_event_channel(channel);
    }
};
struct DestroyId {
    void operator()(rdma_cm_id* id) const noexcept {
        lab::warn_if_failed(rdma_destroy_id(id), "rdma_destroy_id");
    }
};
// Owns the QP that rdma_create_qp attached to an id (the id itself is owned elsewhere).
struct DestroyQpOfId {
    void operator()(rdma_cm_id* id) const noexcept { rdma_destroy_qp(id); }
};
using EventChannel = std::unique_ptr<rdma_event_channel, DestroyEventChannel>;
using CmId = std::unique_ptr<rdma_cm_id, DestroyId>;
using CmQueuePair = std::unique_ptr<rdma_cm_id, DestroyQpOfId>;

// One CM event, copied out: after rdma_ack_cm_event the event (and its
// private data) is freed, so whatever we need must be copied before the ack.
struct CmEvent {
    rdma_cm_event_type type;
    int status;
    rdma_cm_id* id;  // the id the event is about (for CONNECT_REQUEST: a new one)
    std::vector<std::byte> private_data;
};

// Set after the first rejected attempt, so that the events of retries do not flood the output.
bool quiet_retries = false;

// rdma_get_cm_event blocks until an event comes, which may be never (a peer
// that died, an address nobody answers). So we poll() the channel's file
// descriptor with a deadline first, and only then read the event.
CmEvent get_cm_event(rdma_event_channel* channel, Clock::time_point deadline,
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
    const bool repeated = event->event == RDMA_CM_EVENT_ADDR_RESOLVED ||
                          event->event == RDMA_CM_EVENT_ROUTE_RESOLVED ||
                          event->event == RDMA_CM_EVENT_REJECTED;
    if (!(quiet_retries && repeated)) {
        std::printf("  CM event: %s (status %d)\n", rdma_event_str(event->event), event->status);
    }
    lab::check(rdma_ack_cm_event(event), "rdma_ack_cm_event");
    return copy;
}

// Turn an unexpected event into one line that says what it means.
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
        case RDMA_CM_EVENT_DISCONNECTED:
            message += " (hint: the peer disconnected or died)";
            break;
        default:
            break;
    }
    throw lab::Error(message);
}

// An IPv4/IPv6 address with a port, from text (numeric or a host name).
sockaddr_storage make_address(const std::string& host, std::uint16_t port) {
    sockaddr_storage storage{};
    if (host.empty()) {  // any address: listen on every RDMA device
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

sockaddr* as_sockaddr(sockaddr_storage& storage) {
    return reinterpret_cast<sockaddr*>(&storage);
}

void copy_text(std::span<std::byte> to, std::string_view text) {
    std::memcpy(to.data(), text.data(), text.size());
    to[text.size()] = std::byte{0};
}

// The queue sizes both sides ask rdma_create_qp for.
ibv_qp_init_attr qp_init_attr(ibv_cq* cq) {
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

// rdma_connect / rdma_accept parameters: how many RDMA reads and atomics may
// be outstanding each way, and the retry counts the QP gets in RTS.
rdma_conn_param connection_parameters(const void* private_data, std::uint8_t length) {
    rdma_conn_param parameters{};
    parameters.private_data = private_data;
    parameters.private_data_len = length;
    parameters.responder_resources = 1;
    parameters.initiator_depth = 1;
    parameters.retry_count = 7;
    parameters.rnr_retry_count = 7;
    return parameters;
}

void print_connection(rdma_cm_id* id) {
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    lab::check(ibv_query_qp(id->qp, &attr, IBV_QP_STATE | IBV_QP_DEST_QPN, &init), "ibv_query_qp");
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
}

// The options only this lesson has.
struct LessonOptions {
    std::string device;  // -d: the device the address must belong to; empty: any
    std::string bind_address;
    std::chrono::seconds hold;
};

// rdma_cm picks the device from the address; -d only checks that choice.
void check_device(rdma_cm_id* id, const std::string& wanted) {
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

int run_server(const lab::Options& options, const LessonOptions& settings) {
    const auto deadline = Clock::now() + options.timeout;

    // Step 1: an event channel: the file descriptor on which every CM event
    // of our ids arrives.
    EventChannel channel(
        lab::check_ptr(rdma_create_event_channel(), "rdma_create_event_channel",
                       "is the rdma_ucm module loaded (/dev/infiniband/rdma_cm)?"));

    // Step 2: an id to listen on. RDMA_PS_TCP: reliable connected, as TCP.
    rdma_cm_id* raw_id = nullptr;
    lab::check(rdma_create_id(channel.get(), &raw_id, nullptr, RDMA_PS_TCP), "rdma_create_id");
    CmId listen_id(raw_id);

    // Step 3: bind to an address and port, and listen. An id bound to one
    // address is bound to its device; the any address listens on all of them.
    sockaddr_storage bind_address = make_address(settings.bind_address, options.tcp_port);
    if (rdma_bind_addr(listen_id.get(), as_sockaddr(bind_address)) != 0) {
        const int error_number = errno;
        lab::fail("rdma_bind_addr", error_number,
                  error_number == EADDRNOTAVAIL || error_number == EADDRINUSE
                      ? "another rdma_cm program may listen on this port (rdma_cm says so with "
                        "EADDRNOTAVAIL), or -b is not an address of this machine: choose "
                        "another -p, check -b"
                      : "is -b an IP address of an RDMA device's netdev?");
    }
    check_device(listen_id.get(), settings.device);
    lab::check(rdma_listen(listen_id.get(), 1), "rdma_listen");
    std::printf("Step 3: listening on %s port %u\n",
                settings.bind_address.empty() ? "any address" : settings.bind_address.c_str(),
                unsigned(options.tcp_port));

    // A client's rdma_connect arrives as CONNECT_REQUEST with a NEW id: the
    // one for this connection (the listening id keeps listening).
    const CmEvent request = get_cm_event(channel.get(), deadline, "a client (CONNECT_REQUEST)");
    expect_event(request, RDMA_CM_EVENT_CONNECT_REQUEST);
    CmId id(request.id);
    check_device(id.get(), settings.device);
    std::printf("Step 3: connection request on device %s\n",
                ibv_get_device_name(id->verbs->device));

    // Steps 4-6 (lessons 02-03) on the device the request came in on.
    lab::ProtectionDomain pd = lab::alloc_pd(id->verbs);
    // First half: the receive buffer. Second half: the region the client writes.
    std::vector<std::byte> buffer(2 * options.size);
    const std::span<std::byte> receive_buffer = std::span(buffer).first(options.size);
    const std::span<std::byte> write_region = std::span(buffer).last(options.size);
    lab::MemoryRegion mr = lab::register_memory(
        pd.get(), buffer,
        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
    lab::CompletionQueue cq = lab::create_cq(id->verbs, 16);

    // Step 7: rdma_create_qp makes the QP (ibv_create_qp inside) and ties it
    // to the id; the CM drives its state transitions from now on (the
    // ibv_modify_qp calls of lesson 04 happen inside rdma_accept / rdma_connect).
    ibv_qp_init_attr init = qp_init_attr(cq.get());
    lab::check(rdma_create_qp(id.get(), pd.get(), &init), "rdma_create_qp");
    CmQueuePair qp(id.get());
    std::printf("Step 7: rdma_create_qp: QPN 0x%06x\n", id->qp->qp_num);

    // Post the receive before accepting: the client may send right after
    // ESTABLISHED. A QP made by rdma_create_qp takes the same ibv_post_recv
    // as any other (lab::post_receive, lesson 06).
    lab::post_receive(id->qp, receive_buffer, mr->lkey, 1);

    // (A server that does not want this client answers with rdma_reject,
    // which may carry private data too; the client then sees REJECTED.)
    // Step 8: rdma_accept moves the QP to RTR and RTS with the client's QPN
    // and PSN, and answers the request, carrying our region in private data.
    const RegionInfo region{htobe64(reinterpret_cast<std::uintptr_t>(write_region.data())),
                            htobe32(mr->rkey),
                            htobe32(static_cast<std::uint32_t>(write_region.size()))};
    rdma_conn_param accept_parameters = connection_parameters(&region, sizeof region);
    lab::check(rdma_accept(id.get(), &accept_parameters), "rdma_accept");
    std::printf(
        "Step 8: rdma_accept with private data: address 0x%llx, rkey 0x%x, length %zu\n",
        static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(write_region.data())),
        mr->rkey, write_region.size());
    expect_event(get_cm_event(channel.get(), deadline, "ESTABLISHED"), RDMA_CM_EVENT_ESTABLISHED);
    print_connection(id.get());

    // Step 9: wait for the client's message, and watch the CM channel at the
    // same time: from now on, any event there means the client disconnected
    // or died (RDMA_CM_EVENT_DISCONNECTED), the CM's way of saying "peer gone".
    const lab::PeerWatch client_gone(channel->fd, POLLIN);
    const ibv_wc wc = lab::wait_for_completion(cq.get(), "receive of the client's message",
                                               options.timeout, client_gone);
    std::printf("Step 9: received %u bytes: \"%s\"\n", wc.byte_len,
                lab::text_in(receive_buffer).c_str());
    std::printf("Step 9: the client's RDMA write left: \"%s\"\n",
                lab::text_in(write_region).c_str());

    // The client disconnects when it is done; DISCONNECTED tells us.
    expect_event(get_cm_event(channel.get(), deadline, "DISCONNECTED"), RDMA_CM_EVENT_DISCONNECTED);

    // Step 10: clean up in reverse order: the QP (rdma_destroy_qp), the CQ, MR
    // and PD, the ids (rdma_destroy_id), the event channel. Ids must be
    // destroyed only after all their events were acknowledged.
    rdma_destroy_qp(qp.release());
    cq.reset();
    mr.reset();
    pd.reset();
    lab::check(rdma_destroy_id(id.release()), "rdma_destroy_id");
    lab::check(rdma_destroy_id(listen_id.release()), "rdma_destroy_id");
    rdma_destroy_event_channel(channel.release());
    std::printf("Step 10: destroyed the QP, CQ, MR, PD, both ids and the event channel\n");
    return 0;
}

// Everything one connection attempt of the client creates, destroyed in
// reverse order (members are destroyed bottom to top).
struct ClientConnection {
    EventChannel channel;
    CmId id;
    lab::ProtectionDomain pd;
    lab::MemoryRegion mr;
    lab::CompletionQueue cq;
    CmQueuePair qp;
    RegionInfo server_region{};
    bool connected = false;
};

// Steps 1-8 of the client. A REJECTED answer (no server listening yet) ends
// the attempt with connected == false, so that the caller can retry.
ClientConnection try_to_connect(const lab::Options& options, const LessonOptions& settings,
                                std::span<std::byte> buffer, Clock::time_point deadline) {
    ClientConnection connection;

    // Step 1: the event channel.
    connection.channel.reset(lab::check_ptr(rdma_create_event_channel(),
                                            "rdma_create_event_channel",
                                            "is the rdma_ucm module loaded?"));
    // Step 2: an id for the connection.
    rdma_cm_id* raw_id = nullptr;
    lab::check(rdma_create_id(connection.channel.get(), &raw_id, nullptr, RDMA_PS_TCP),
               "rdma_create_id");
    connection.id.reset(raw_id);
    rdma_cm_id* id = raw_id;

    // Step 3: resolve the server's IP address to a local device, port and
    // GID (this is where the device gets opened: id->verbs appears), then
    // the route to it. Both answer with an event; 2000 ms is their own timeout.
    sockaddr_storage server_address = make_address(options.server, options.tcp_port);
    lab::check(rdma_resolve_addr(id, nullptr, as_sockaddr(server_address), 2000),
               "rdma_resolve_addr",
               "no route to that address: use an IP address of the server's RDMA netdev");
    expect_event(get_cm_event(connection.channel.get(), deadline, "ADDR_RESOLVED"),
                 RDMA_CM_EVENT_ADDR_RESOLVED);
    check_device(id, settings.device);
    lab::check(rdma_resolve_route(id, 2000), "rdma_resolve_route",
               "the address is not on an RDMA device (127.0.0.1 never is): use an IP address "
               "of the server's RDMA netdev, e.g. $RDMA_LAB_SERVER_ADDR");
    expect_event(get_cm_event(connection.channel.get(), deadline, "ROUTE_RESOLVED"),
                 RDMA_CM_EVENT_ROUTE_RESOLVED);

    // Steps 4-6 (lessons 02-03) on the device rdma_cm chose.
    connection.pd = lab::alloc_pd(id->verbs);
    connection.mr = lab::register_memory(connection.pd.get(), buffer, IBV_ACCESS_LOCAL_WRITE);
    connection.cq = lab::create_cq(id->verbs, 16);

    // Step 7: the QP, tied to the id.
    ibv_qp_init_attr init = qp_init_attr(connection.cq.get());
    lab::check(rdma_create_qp(id, connection.pd.get(), &init), "rdma_create_qp");
    connection.qp.reset(id);

    // Step 8: rdma_connect sends the connection request; the server's accept
    // comes back as ESTABLISHED, with its private data. Our QP is in RTS by then.
    rdma_conn_param connect_parameters = connection_parameters(nullptr, 0);
    lab::check(rdma_connect(id, &connect_parameters), "rdma_connect");
    const CmEvent answer = get_cm_event(connection.channel.get(), deadline, "ESTABLISHED");
    if (answer.type == RDMA_CM_EVENT_REJECTED) {
        return connection;
    }
    expect_event(answer, RDMA_CM_EVENT_ESTABLISHED);
    // Over RoCE private data arrives padded; at least our bytes must be there.
    if (answer.private_data.size() < sizeof(RegionInfo)) {
        throw lab::Error("the server's private data has " +
                         std::to_string(answer.private_data.size()) + " bytes, expected " +
                         std::to_string(sizeof(RegionInfo)) +
                         " (hint: is it this lesson's server?)");
    }
    RegionInfo region{};
    std::memcpy(&region, answer.private_data.data(), sizeof region);
    connection.server_region = {be64toh(region.address), be32toh(region.rkey),
                                be32toh(region.length)};
    connection.connected = true;
    return connection;
}

int run_client(const lab::Options& options, const LessonOptions& settings) {
    const std::string& server = options.server;
    const auto deadline = Clock::now() + options.timeout;
    // First half: the message we send. Second half: the line we RDMA-write.
    std::vector<std::byte> buffer(2 * options.size);
    const std::span<std::byte> message = std::span(buffer).first(options.size);
    const std::span<std::byte> line = std::span(buffer).last(options.size);
    copy_text(message, kHello);
    copy_text(line, kWritten);

    // Steps 1-8, again until a server answers or the timeout passes: a server
    // started a moment after us rejects the first requests.
    std::optional<ClientConnection> attempt;
    attempt.emplace(try_to_connect(options, settings, buffer, deadline));
    const auto no_server = [&] {
        return lab::Error("no server accepted a connection at " + server + " port " +
                          std::to_string(options.tcp_port) + " within " +
                          std::to_string(options.timeout.count() / 1000) +
                          " s (hint: start the server first, and check -p)");
    };
    while (!attempt->connected) {
        if (Clock::now() + 200ms > deadline) {
            throw no_server();
        }
        if (!quiet_retries) {
            // Status 8 is the IB CM's reject reason "invalid service ID": nobody listens.
            std::printf("  rejected: no server listening yet; retrying every 200 ms\n");
            quiet_retries = true;
        }
        attempt.reset();  // destroys the old attempt's objects, last created first
        std::this_thread::sleep_for(200ms);
        try {
            attempt.emplace(try_to_connect(options, settings, buffer, deadline));
        } catch (const lab::Error&) {
            // The deadline can pass inside a retry, while it waits for an
            // answer; after a rejection the cause is still "no server".
            if (Clock::now() >= deadline) {
                throw no_server();
            }
            throw;
        }
    }
    ClientConnection& connection = *attempt;
    rdma_cm_id* id = connection.id.get();
    print_connection(id);
    // From now on any CM event means the server disconnected or died: every
    // wait watches the channel, as lesson 05's programs watch their socket.
    const lab::PeerWatch server_gone(connection.channel->fd, POLLIN);
    if (settings.hold.count() > 0) {
        std::printf("  holding the connection for %lld s before sending\n",
                    static_cast<long long>(settings.hold.count()));
        server_gone.sleep_until(Clock::now() + settings.hold);
    }
    const RegionInfo& region = connection.server_region;
    std::printf("Step 8: the server's private data: address 0x%llx, rkey 0x%x, length %u\n",
                static_cast<unsigned long long>(region.address), region.rkey, region.length);
    if (region.length < kWritten.size() + 1) {
        throw lab::Error("the server's region is too small for the line to write");
    }

    // Step 9a: RDMA write our line into the server's region, with the
    // address and rkey its private data gave us: ibv_post_send of an
    // IBV_WR_RDMA_WRITE, as in lesson 07.
    lab::post_rdma(id->qp, IBV_WR_RDMA_WRITE, line.first(kWritten.size() + 1), connection.mr->lkey,
                   region.address, region.rkey, IBV_SEND_SIGNALED, 1);
    lab::wait_for_completion(connection.cq.get(), "RDMA write", options.timeout, server_gone);
    std::printf("Step 9: RDMA write of \"%.*s\" done\n", int(kWritten.size()), kWritten.data());

    // Step 9b: send the hello message; the server's posted receive takes it.
    // ibv_post_send of an IBV_WR_SEND, as in lesson 04.
    lab::post_send(id->qp, message.first(kHello.size() + 1), connection.mr->lkey, IBV_SEND_SIGNALED,
                   2);
    lab::wait_for_completion(connection.cq.get(), "send", options.timeout, server_gone);
    std::printf("Step 9: sent \"%.*s\"\n", int(kHello.size()), kHello.data());

    // Step 10: rdma_disconnect moves the QP to the error state and tells the
    // server; both sides then see DISCONNECTED. Then destroy in reverse order.
    lab::check(rdma_disconnect(id), "rdma_disconnect");
    expect_event(get_cm_event(connection.channel.get(), deadline, "DISCONNECTED"),
                 RDMA_CM_EVENT_DISCONNECTED);
    rdma_destroy_qp(connection.qp.release());
    connection.cq.reset();
    connection.mr.reset();
    connection.pd.reset();
    lab::check(rdma_destroy_id(connection.id.release()), "rdma_destroy_id");
    rdma_destroy_event_channel(connection.channel.release());
    std::printf("Step 10: destroyed the QP, CQ, MR, PD, the id and the event channel\n");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    lab::CommandLine command_line("Lesson 11: hello world with rdma_cm connection management",
                                  lab::kTcpPort | lab::kSize | lab::kTimeout | lab::kServerArg);
    LessonOptions settings{};
    command_line.app().add_option("-d,--ib-dev", settings.device,
                                  "RDMA device the address must belong to (rdma_cm chooses it)");
    command_line.app().add_option("-b,--bind", settings.bind_address,
                                  "server: the address to listen on (default: all)");
    int hold_seconds = 0;
    command_line.app()
        .add_option("--hold", hold_seconds,
                    "client: stay connected this many seconds before sending (time to look at "
                    "'rdma resource show cm_id', or to kill a side)")
        ->check(CLI::Range(0, 3600));
    const lab::Options options = command_line.parse(argc, argv);
    settings.hold = std::chrono::seconds(hold_seconds);

    return lab::run_main([&] {
        if (options.size < kMinimumSize) {
            throw lab::Error("--size " + std::to_string(options.size) +
                             " is too small (hint: " + "the messages need at least " +
                             std::to_string(kMinimumSize) + " bytes)");
        }
        if (!settings.device.empty()) {
            lab::open_device(settings.device);  // an unknown name fails here, with the list
        }
        if (options.is_server()) {
            return run_server(options, settings);
        }
        if (!settings.bind_address.empty()) {
            throw lab::Error(
                "-b is for the server (hint: the client's source address follows "
                "from the route to SERVER)");
        }
        return run_client(options, settings);
    });
}

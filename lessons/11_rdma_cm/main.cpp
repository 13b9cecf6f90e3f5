// SPDX-License-Identifier: MIT
// Lesson 11: rdma_cm — lessons 05/06's hello world, connected by librdmacm.
//
// Lessons 05 and 06 swapped QPN, PSN and GID over TCP and walked each QP through INIT, RTR
// and RTS by hand. Here the connection manager does it: rdma_resolve_addr finds the local
// device, port, GID and (RoCE) the neighbour's MAC, rdma_resolve_route the path;
// rdma_create_qp moves the QP to INIT; the server's rdma_accept moves its QP to RTR and RTS,
// the client's rdma_get_cm_event does so while it handles the accept (a failure there is
// RDMA_CM_EVENT_CONNECT_ERROR). The server's accept carries private data: a region the client
// writes a line into before it sends its hello. Owners, event waits, hints: lab/cm.hpp.
//
// Run: ./lab run 11_rdma_cm (both sides), or in two terminals ./lab shell PROGRAM [-b ADDRESS]
// (server) and ./lab shell PROGRAM 10.77.0.1 (client; an IP address of the server's RDMA netdev)

#include <infiniband/verbs.h>
#include <poll.h>
#include <rdma/rdma_cma.h>

#include <cerrno>
#include <cstdio>

#include "lab/cm.hpp"  // also <chrono>, <span>, <string_view>, <vector>, check.hpp, wait.hpp
#include "lab/completion.hpp"
#include "lab/options.hpp"
#include "lab/report.hpp"
#include "lab/verbs.hpp"

namespace {

constexpr std::string_view kHello = "hello from the client, connected by rdma_cm";
constexpr std::string_view kWritten = "this line arrived by RDMA write";
constexpr std::size_t kMinimumSize = 64;  // both lines fit, with their terminating zero

// responder_resources: RDMA reads/atomics we serve at once (it also decides REMOTE_READ/ATOMIC
// access); initiator_depth: those we issue. retry_count: retries after a transport timeout, 6
// (docs/devices.md#retry-cnt-7; rdma_accept ignores it). rnr_retry_count is asked of the PEER:
// how often its sends retry while we have no receive posted (7: for ever).
rdma_conn_param connection_parameters(const void* private_data, std::uint8_t length) {
    rdma_conn_param parameters{};
    parameters.private_data = private_data;
    parameters.private_data_len = length;
    parameters.responder_resources = 1;
    parameters.initiator_depth = 1;
    parameters.retry_count = 6;
    parameters.rnr_retry_count = 7;
    return parameters;
}

// Steps 1 and 2, both sides: an event channel (the file descriptor on which every CM event of
// our ids arrives) and an id on it. RDMA_PS_TCP: reliable connected, as TCP.
void create_channel_and_id(lab::EventChannel& channel, lab::CmId& id) {
    channel.reset(lab::check_ptr(rdma_create_event_channel(), "rdma_create_event_channel",
                                 "is the rdma_ucm module loaded (/dev/infiniband/rdma_cm)?"));
    rdma_cm_id* raw_id = nullptr;
    lab::check(rdma_create_id(channel.get(), &raw_id, nullptr, RDMA_PS_TCP), "rdma_create_id");
    id.reset(raw_id);
}

int run_server(const lab::Options& options, const lab::CmOptions& settings) {
    const auto deadline = std::chrono::steady_clock::now() + options.timeout;
    lab::EventChannel channel;
    lab::CmId listen_id;
    create_channel_and_id(channel, listen_id);  // steps 1-2

    // Step 3: bind to an address and port, and listen. An id bound to one address is bound to
    // its device; the any address listens on all of them.
    sockaddr_storage bind_address = lab::make_address(settings.bind_address, options.tcp_port);
    if (rdma_bind_addr(listen_id.get(), lab::as_sockaddr(bind_address)) != 0) {
        lab::fail("rdma_bind_addr", errno, lab::bind_hint(errno));
    }
    lab::check_device(listen_id.get(), settings.device);
    lab::check(rdma_listen(listen_id.get(), 1), "rdma_listen");
    std::printf("Step 3: listening on %s port %u\n",
                settings.bind_address.empty() ? "any address" : settings.bind_address.c_str(),
                unsigned(options.tcp_port));

    // A client's rdma_connect arrives as CONNECT_REQUEST with a NEW id; the listening id listens
    // on.
    const lab::CmEvent request =
        lab::wait_for_event(channel.get(), deadline, RDMA_CM_EVENT_CONNECT_REQUEST, "a client");
    lab::CmId id(request.id);
    lab::check_device(id.get(), settings.device);
    std::printf("Step 3: connection request on device %s\n",
                ibv_get_device_name(id->verbs->device));
    if (!settings.reject_reason.empty()) {
        // rdma_reject refuses the request instead; its private data says why.
        const auto& reason = settings.reject_reason;
        lab::check(rdma_reject(id.get(), reason.c_str(), std::uint8_t(reason.size() + 1)),
                   "rdma_reject");
        std::printf("Step 8: rdma_reject, private data \"%s\"\n", reason.c_str());
        return 0;
    }

    // Steps 4-6 (lessons 02-03) on the device the request came in on.
    lab::ProtectionDomain pd = lab::alloc_pd(id->verbs);
    std::vector<std::byte> buffer(2 * options.size);  // receive buffer, then write region
    const std::span<std::byte> receive_buffer = std::span(buffer).first(options.size);
    const std::span<std::byte> write_region = std::span(buffer).last(options.size);
    lab::MemoryRegion mr = lab::register_memory(
        pd.get(), buffer,
        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
    // 16: an entry for each of the QP's 8 send and 8 receive slots (lab::qp_init_attr, lesson 03).
    lab::CompletionQueue cq = lab::create_cq(id->verbs, 16);

    // Step 7: rdma_create_qp makes the QP (ibv_create_qp inside), ties it to the id and moves it
    // to INIT; the CM drives its other transitions.
    ibv_qp_init_attr init = lab::qp_init_attr(cq.get());
    lab::check(rdma_create_qp(id.get(), pd.get(), &init), "rdma_create_qp");
    lab::CmQueuePair qp(id.get());
    std::printf("Step 7: rdma_create_qp: QPN 0x%06x, state %s\n", id->qp->qp_num,
                lab::qp_state(id->qp));

    // Step 8: post the receive first (the client may send right after ESTABLISHED); then
    // rdma_accept moves the QP to RTR and RTS with the client's QPN and PSN, and answers,
    // carrying our region in private data.
    lab::post_receive(id->qp, receive_buffer, mr->lkey, 1);
    const lab::RegionInfo region = lab::region_info(write_region, mr->rkey);  // network byte order
    rdma_conn_param accept_parameters = connection_parameters(&region, sizeof region);
    lab::check(rdma_accept(id.get(), &accept_parameters), "rdma_accept");
    std::printf(
        "Step 8: rdma_accept: QP state %s; private data: address %p, rkey 0x%x, length %zu\n",
        lab::qp_state(id->qp), static_cast<void*>(write_region.data()), mr->rkey,
        write_region.size());
    lab::wait_for_event(channel.get(), deadline, RDMA_CM_EVENT_ESTABLISHED);
    lab::print_connection(id.get());

    // Step 9: wait for the client's message, watching the CM channel for an event that ends this
    // connection (DISCONNECTED: the client left or died; another client's request is not one).
    const lab::PeerWatch client_gone(channel.get(), id.get());
    const ibv_wc wc = lab::wait_for_completion(cq.get(), "receive of the client's message",
                                               options.timeout, client_gone);
    std::printf("Step 9: received %u bytes: \"%s\"\n", wc.byte_len,
                lab::text_in(receive_buffer).c_str());
    std::printf("Step 9: the client's RDMA write left: \"%s\"\n",
                lab::text_in(write_region).c_str());

    lab::wait_for_event(channel.get(), deadline, RDMA_CM_EVENT_DISCONNECTED);

    // Step 10: as we return, the owners destroy the QP, CQ, MR, PD, both ids and the channel.
    std::printf("Step 10: destroying the QP, CQ, MR, PD, both ids and the event channel\n");
    return 0;
}

// Steps 1-8 of the client; REJECTED (no server yet) returns connected == false.
lab::ClientConnection try_to_connect(const lab::Options& options, const lab::CmOptions& settings,
                                     std::span<std::byte> buffer,
                                     std::chrono::steady_clock::time_point deadline) {
    lab::ClientConnection connection;
    create_channel_and_id(connection.channel, connection.id);  // steps 1-2
    rdma_cm_id* id = connection.id.get();

    // Step 3: resolve the server's IP address to a local device, port, GID and (RoCE) the
    // neighbour's MAC: id->verbs appears. Then the route. Both answer with an event (2 s timeout).
    sockaddr_storage server_address = lab::make_address(options.server, options.tcp_port);
    lab::check(rdma_resolve_addr(id, nullptr, lab::as_sockaddr(server_address), 2000),
               "rdma_resolve_addr",
               "no route to that address: use an IP address of the server's RDMA netdev");
    lab::wait_for_event(connection.channel.get(), deadline, RDMA_CM_EVENT_ADDR_RESOLVED);
    lab::check_device(id, settings.device);
    lab::check(rdma_resolve_route(id, 2000), "rdma_resolve_route",
               "the address is not on an RDMA device (127.0.0.1 never is): use an IP address "
               "of the server's RDMA netdev, e.g. $RDMA_LAB_SERVER_ADDR");
    lab::wait_for_event(connection.channel.get(), deadline, RDMA_CM_EVENT_ROUTE_RESOLVED);

    // Steps 4-7 (lessons 02-04) on the device rdma_cm chose; the QP is tied to the id.
    connection.pd = lab::alloc_pd(id->verbs);
    connection.mr = lab::register_memory(connection.pd.get(), buffer, IBV_ACCESS_LOCAL_WRITE);
    connection.cq = lab::create_cq(id->verbs, 16);  // as the server's: 8 + 8 slots
    ibv_qp_init_attr init = lab::qp_init_attr(connection.cq.get());
    lab::check(rdma_create_qp(id, connection.pd.get(), &init), "rdma_create_qp");
    connection.qp.reset(id);

    // Step 8: rdma_connect sends the request. rdma_get_cm_event, handling the accept, moves our
    // QP to RTR and RTS, then reports ESTABLISHED.
    rdma_conn_param connect_parameters = connection_parameters(nullptr, 0);
    lab::check(rdma_connect(id, &connect_parameters), "rdma_connect");
    if (!lab::cm_quiet_retries) {
        std::printf("Step 8: rdma_connect sent the request; QP state %s until the answer\n",
                    lab::qp_state(id->qp));
    }
    const lab::CmEvent answer =
        lab::get_cm_event(connection.channel.get(), deadline, "ESTABLISHED");
    if (answer.type == RDMA_CM_EVENT_REJECTED && answer.status == lab::kRejectedByServer) {
        throw lab::Error("the server rejected us: \"" + lab::text_in(answer.private_data) +
                         "\" (its rdma_reject's private data)");
    }
    if (answer.type == RDMA_CM_EVENT_REJECTED) {
        return connection;  // status 8: nobody listens on that port yet; try again
    }
    lab::expect_event(answer, RDMA_CM_EVENT_ESTABLISHED);
    connection.server_region = lab::region_from(answer);
    connection.connected = true;
    return connection;
}

int run_client(const lab::Options& options, const lab::CmOptions& settings) {
    const auto deadline = std::chrono::steady_clock::now() + options.timeout;
    std::vector<std::byte> buffer(2 * options.size);  // the message, then the line to write
    const std::span<std::byte> message = std::span(buffer).first(options.size);
    const std::span<std::byte> line = std::span(buffer).last(options.size);
    lab::copy_text(message, kHello);
    lab::copy_text(line, kWritten);

    // Steps 1-8, again until a server answers or the timeout passes.
    lab::ClientConnection connection = lab::connect_with_retries(
        [&] { return try_to_connect(options, settings, buffer, deadline); }, deadline,
        options.server + " port " + std::to_string(options.tcp_port), options.timeout);
    rdma_cm_id* id = connection.id.get();
    lab::print_connection(id);
    // From now on every wait watches the channel for an event that ends this connection.
    const lab::PeerWatch server_gone(connection.channel.get(), connection.id.get());
    lab::hold_connection(server_gone, settings.hold_seconds);  // --hold: time to kill a side
    const lab::RegionInfo& region = connection.server_region;
    std::printf("Step 8: the server's private data: address 0x%llx, rkey 0x%x, length %u\n",
                static_cast<unsigned long long>(region.address), region.rkey, region.length);

    // Step 9a: RDMA write our line to the address and rkey of its private data (lesson 07).
    lab::post_rdma(id->qp, IBV_WR_RDMA_WRITE, line.first(kWritten.size() + 1), connection.mr->lkey,
                   region.address, region.rkey, IBV_SEND_SIGNALED, 1);
    lab::wait_for_completion(connection.cq.get(), "RDMA write", options.timeout, server_gone);
    std::printf("Step 9: RDMA write of \"%.*s\" done\n", int(kWritten.size()), kWritten.data());

    // Step 9b: send the hello message into the server's posted receive.
    lab::post_send(id->qp, message.first(kHello.size() + 1), connection.mr->lkey, IBV_SEND_SIGNALED,
                   2);
    lab::wait_for_completion(connection.cq.get(), "send", options.timeout, server_gone);
    std::printf("Step 9: sent \"%.*s\"\n", int(kHello.size()), kHello.data());

    // Step 10: rdma_disconnect moves the QP to ERR and tells the server; both sides then see
    // DISCONNECTED. The owners in lab::ClientConnection destroy QP, CQ, MR, PD, id, channel.
    lab::check(rdma_disconnect(id), "rdma_disconnect");
    lab::wait_for_event(connection.channel.get(), deadline, RDMA_CM_EVENT_DISCONNECTED);
    std::printf("Step 10: disconnected; destroying the QP, CQ, MR, PD, the id and the channel\n");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    lab::CommandLine command_line("Lesson 11: hello world with rdma_cm connection management",
                                  lab::kTcpPort | lab::kSize | lab::kTimeout | lab::kServerArg);
    lab::CmOptions settings;
    lab::add_cm_options(command_line, settings);
    const lab::Options options = command_line.parse(argc, argv);

    return lab::run_main([&] {
        lab::check_cm_options(options, settings, kMinimumSize);
        return options.is_server() ? run_server(options, settings) : run_client(options, settings);
    });
}

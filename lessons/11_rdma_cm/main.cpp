// SPDX-License-Identifier: MIT
// Lesson 11: rdma_cm — lessons 05/06's hello world, connected by librdmacm.
//
// Lessons 05 and 06 swapped QPN, PSN and GID over TCP and walked each QP
// through INIT, RTR and RTS by hand. The connection manager does it here:
// rdma_resolve_addr finds the local device, port, GID and (RoCE) the
// neighbour's MAC; rdma_resolve_route the path; rdma_create_qp moves the QP to
// INIT; the server's rdma_accept moves its QP to RTR and RTS; the client's QP
// reaches RTR and RTS inside rdma_get_cm_event, while it handles the accept (a
// failure there is RDMA_CM_EVENT_CONNECT_ERROR). The CM also sets the access
// flags: REMOTE_WRITE, plus REMOTE_READ and REMOTE_ATOMIC when the side offers
// responder_resources > 0. We react to its events (rdma_get_cm_event, then
// rdma_ack_cm_event). The server's accept carries private data: a region the
// client writes a line into before it sends its hello and disconnects.
//
// Run:   ./lab run 11_rdma_cm                 (server and client in one go)
//        ./lab shell PROGRAM [-b ADDRESS] [-p PORT]   server, in one terminal
//        ./lab shell PROGRAM [-p PORT] SERVER         client, in another; SERVER is an IP address
//                                      of the server's RDMA netdev (10.77.0.1 in the lab machine)
// Owners, bounded event waits and hints live in cm_plumbing.hpp.

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "cm_plumbing.hpp"  // also <span>, <string_view>, <vector>
#include "lab/completion.hpp"
#include "lab/options.hpp"
#include "lab/verbs.hpp"

namespace {

using namespace cm;

constexpr std::string_view kHello = "hello from the client, connected by rdma_cm";
constexpr std::string_view kWritten = "this line arrived by RDMA write";
constexpr std::size_t kMinimumSize = 64;  // both lines fit, with their terminating zero

// responder_resources: RDMA reads/atomics we serve at once (it also decides
// REMOTE_READ/ATOMIC access); initiator_depth: those we issue. retry_count:
// retries after a transport timeout (6: rxe takes 7 as "for ever", as lesson
// 04 says); rdma_accept ignores it (rdma_accept(3)). rnr_retry_count is asked
// of the PEER: how often its sends retry while we have no receive posted
// (7: for ever).
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

// Steps 1 and 2, both sides: an event channel (the file descriptor on which
// every CM event of our ids arrives) and an id on it. RDMA_PS_TCP: reliable
// connected, as TCP.
void create_channel_and_id(EventChannel& channel, CmId& id) {
    channel.reset(lab::check_ptr(rdma_create_event_channel(), "rdma_create_event_channel",
                                 "is the rdma_ucm module loaded (/dev/infiniband/rdma_cm)?"));
    rdma_cm_id* raw_id = nullptr;
    lab::check(rdma_create_id(channel.get(), &raw_id, nullptr, RDMA_PS_TCP), "rdma_create_id");
    id.reset(raw_id);
}

int run_server(const lab::Options& options, const LessonOptions& settings) {
    const auto deadline = Clock::now() + options.timeout;
    EventChannel channel;
    CmId listen_id;
    create_channel_and_id(channel, listen_id);  // steps 1-2

    // Step 3: bind to an address and port, and listen. An id bound to one
    // address is bound to its device; the any address listens on all of them.
    sockaddr_storage bind_address = make_address(settings.bind_address, options.tcp_port);
    if (rdma_bind_addr(listen_id.get(), as_sockaddr(bind_address)) != 0) {
        lab::fail("rdma_bind_addr", errno, bind_hint(errno));
    }
    check_device(listen_id.get(), settings.device);
    lab::check(rdma_listen(listen_id.get(), 1), "rdma_listen");
    std::printf("Step 3: listening on %s port %u\n",
                settings.bind_address.empty() ? "any address" : settings.bind_address.c_str(),
                unsigned(options.tcp_port));

    // A client's rdma_connect arrives as CONNECT_REQUEST with a NEW id for
    // this connection; the listening id keeps listening.
    const CmEvent request = get_cm_event(channel.get(), deadline, "a client (CONNECT_REQUEST)");
    expect_event(request, RDMA_CM_EVENT_CONNECT_REQUEST);
    CmId id(request.id);
    check_device(id.get(), settings.device);
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
    // 16: an entry for each of the QP's 8 send and 8 receive slots (qp_init_attr, lesson 03).
    lab::CompletionQueue cq = lab::create_cq(id->verbs, 16);

    // Step 7: rdma_create_qp makes the QP (ibv_create_qp inside), ties it to
    // the id and moves it to INIT; the CM drives its other transitions.
    ibv_qp_init_attr init = qp_init_attr(cq.get());
    lab::check(rdma_create_qp(id.get(), pd.get(), &init), "rdma_create_qp");
    CmQueuePair qp(id.get());
    std::printf("Step 7: rdma_create_qp: QPN 0x%06x, state %s\n", id->qp->qp_num, qp_state(id->qp));

    // Post the receive before accepting: the client may send right after
    // ESTABLISHED. The QP takes ibv_post_recv as any other (lesson 04).
    lab::post_receive(id->qp, receive_buffer, mr->lkey, 1);

    // Step 8: rdma_accept moves the QP to RTR and RTS with the client's QPN
    // and PSN, then answers, carrying our region in private data.
    const RegionInfo region = region_info(write_region, mr->rkey);  // network byte order
    rdma_conn_param accept_parameters = connection_parameters(&region, sizeof region);
    lab::check(rdma_accept(id.get(), &accept_parameters), "rdma_accept");
    std::printf(
        "Step 8: rdma_accept: QP state %s; private data: address %p, rkey 0x%x, "
        "length %zu\n",
        qp_state(id->qp), static_cast<void*>(write_region.data()), mr->rkey, write_region.size());
    expect_event(get_cm_event(channel.get(), deadline, "ESTABLISHED"), RDMA_CM_EVENT_ESTABLISHED);
    print_connection(id.get());

    // Step 9: wait for the client's message, watching the CM channel: any
    // event there now means the client disconnected or died (DISCONNECTED).
    const lab::PeerWatch client_gone(channel->fd, POLLIN);
    const ibv_wc wc = lab::wait_for_completion(cq.get(), "receive of the client's message",
                                               options.timeout, client_gone);
    std::printf("Step 9: received %u bytes: \"%s\"\n", wc.byte_len,
                lab::text_in(receive_buffer).c_str());
    std::printf("Step 9: the client's RDMA write left: \"%s\"\n",
                lab::text_in(write_region).c_str());

    expect_event(get_cm_event(channel.get(), deadline, "DISCONNECTED"), RDMA_CM_EVENT_DISCONNECTED);

    // Step 10: the owners destroy in reverse order as we return: the QP
    // (rdma_destroy_qp), CQ, MR, PD, the ids (rdma_destroy_id, only after all
    // their events were acknowledged) and the channel (rdma_destroy_event_channel).
    std::printf("Step 10: destroying the QP, CQ, MR, PD, both ids and the event channel\n");
    return 0;
}

// Steps 1-8 of the client; REJECTED (no server yet) returns connected == false.
ClientConnection try_to_connect(const lab::Options& options, const LessonOptions& settings,
                                std::span<std::byte> buffer, Clock::time_point deadline) {
    ClientConnection connection;
    create_channel_and_id(connection.channel, connection.id);  // steps 1-2
    rdma_cm_id* id = connection.id.get();

    // Step 3: resolve the server's IP address to a local device, port, GID and
    // (RoCE) the neighbour's MAC: id->verbs appears. Then the route. Both
    // answer with an event; 2000 ms is their own timeout.
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

    // Steps 4-7 (lessons 02-04) on the device rdma_cm chose; the QP is tied to the id.
    connection.pd = lab::alloc_pd(id->verbs);
    connection.mr = lab::register_memory(connection.pd.get(), buffer, IBV_ACCESS_LOCAL_WRITE);
    connection.cq = lab::create_cq(id->verbs, 16);  // as the server's: 8 + 8 slots
    ibv_qp_init_attr init = qp_init_attr(connection.cq.get());
    lab::check(rdma_create_qp(id, connection.pd.get(), &init), "rdma_create_qp");
    connection.qp.reset(id);

    // Step 8: rdma_connect sends the request. rdma_get_cm_event, handling the
    // accept, moves our QP to RTR and RTS, then reports ESTABLISHED.
    rdma_conn_param connect_parameters = connection_parameters(nullptr, 0);
    lab::check(rdma_connect(id, &connect_parameters), "rdma_connect");
    if (!quiet_retries) {
        std::printf("Step 8: rdma_connect sent the request; QP state %s until the answer\n",
                    qp_state(id->qp));
    }
    const CmEvent answer = get_cm_event(connection.channel.get(), deadline, "ESTABLISHED");
    if (answer.type == RDMA_CM_EVENT_REJECTED && answer.status == kRejectedByServer) {
        throw lab::Error("the server rejected us: \"" + lab::text_in(answer.private_data) +
                         "\" (its rdma_reject's private data)");
    }
    if (answer.type == RDMA_CM_EVENT_REJECTED) {
        return connection;  // status 8: nobody listens on that port yet; try again
    }
    expect_event(answer, RDMA_CM_EVENT_ESTABLISHED);
    connection.server_region = region_from(answer);
    connection.connected = true;
    return connection;
}

int run_client(const lab::Options& options, const LessonOptions& settings) {
    const auto deadline = Clock::now() + options.timeout;
    std::vector<std::byte> buffer(2 * options.size);  // the message, then the line to write
    const std::span<std::byte> message = std::span(buffer).first(options.size);
    const std::span<std::byte> line = std::span(buffer).last(options.size);
    copy_text(message, kHello);
    copy_text(line, kWritten);

    // Steps 1-8, again until a server answers or the timeout passes.
    ClientConnection connection = connect_with_retries(
        [&] { return try_to_connect(options, settings, buffer, deadline); }, deadline,
        options.server + " port " + std::to_string(options.tcp_port), options.timeout);
    rdma_cm_id* id = connection.id.get();
    print_connection(id);
    // From now on any CM event means the server went: every wait watches the channel.
    const lab::PeerWatch server_gone(connection.channel->fd, POLLIN);
    hold_connection(server_gone, settings.hold_seconds);  // --hold: time to kill a side
    const RegionInfo& region = connection.server_region;
    std::printf("Step 8: the server's private data: address 0x%llx, rkey 0x%x, length %u\n",
                static_cast<unsigned long long>(region.address), region.rkey, region.length);

    // Step 9a: RDMA write our line into the server's region, with the address
    // and rkey from its private data (IBV_WR_RDMA_WRITE, lesson 07).
    lab::post_rdma(id->qp, IBV_WR_RDMA_WRITE, line.first(kWritten.size() + 1), connection.mr->lkey,
                   region.address, region.rkey, IBV_SEND_SIGNALED, 1);
    lab::wait_for_completion(connection.cq.get(), "RDMA write", options.timeout, server_gone);
    std::printf("Step 9: RDMA write of \"%.*s\" done\n", int(kWritten.size()), kWritten.data());

    // Step 9b: send the hello message into the server's posted receive.
    lab::post_send(id->qp, message.first(kHello.size() + 1), connection.mr->lkey, IBV_SEND_SIGNALED,
                   2);
    lab::wait_for_completion(connection.cq.get(), "send", options.timeout, server_gone);
    std::printf("Step 9: sent \"%.*s\"\n", int(kHello.size()), kHello.data());

    // Step 10: rdma_disconnect moves the QP to the error state and tells the
    // server; both sides then see DISCONNECTED. The owners in ClientConnection
    // then destroy as the server does by hand: QP, CQ, MR, PD, id, channel.
    lab::check(rdma_disconnect(id), "rdma_disconnect");
    expect_event(get_cm_event(connection.channel.get(), deadline, "DISCONNECTED"),
                 RDMA_CM_EVENT_DISCONNECTED);
    std::printf("Step 10: disconnected; destroying the QP, CQ, MR, PD, the id and the channel\n");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    lab::CommandLine command_line("Lesson 11: hello world with rdma_cm connection management",
                                  lab::kTcpPort | lab::kSize | lab::kTimeout | lab::kServerArg);
    LessonOptions settings;
    add_lesson_options(command_line, settings);
    const lab::Options options = command_line.parse(argc, argv);

    return lab::run_main([&] {
        check_lesson_options(options, settings, kMinimumSize);
        return options.is_server() ? run_server(options, settings) : run_client(options, settings);
    });
}

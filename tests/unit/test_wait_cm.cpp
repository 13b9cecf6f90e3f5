// SPDX-License-Identifier: MIT
// The rdma_cm watch of lab::PeerWatch (wait_cm.cpp) on a real connection over
// rxe: a server, a client and a second client in one process, each id on its
// own event channel. Only an event that ends the watched connection counts as
// the peer gone; another client's CONNECT_REQUEST is refused and ends nothing.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <rdma/rdma_cma.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include "lab/check.hpp"
#include "lab/wait.hpp"
#include "support/catch.hpp"
#include "support/process.hpp"

using namespace std::chrono_literals;

namespace {

struct DestroyChannel {
    void operator()(rdma_event_channel* channel) const noexcept {
        rdma_destroy_event_channel(channel);
    }
};
struct DestroyId {
    void operator()(rdma_cm_id* id) const noexcept {
        if (id->qp != nullptr) {
            rdma_destroy_qp(id);
        }
        rdma_destroy_id(id);
    }
};
using Channel = std::unique_ptr<rdma_event_channel, DestroyChannel>;
using Id = std::unique_ptr<rdma_cm_id, DestroyId>;

// One side: a channel and an id on it.
struct Side {
    Channel channel{lab::check_ptr(rdma_create_event_channel(), "rdma_create_event_channel")};
    Id id = [this] {
        rdma_cm_id* id = nullptr;
        lab::check(rdma_create_id(channel.get(), &id, nullptr, RDMA_PS_TCP), "rdma_create_id");
        return Id(id);
    }();
};

// The next event of @p channel (5 s at most), acknowledged; its id in @p about.
rdma_cm_event_type next_event(rdma_event_channel* channel, rdma_cm_id** about = nullptr) {
    pollfd ready{channel->fd, POLLIN, 0};
    REQUIRE(::poll(&ready, 1, 5000) == 1);
    rdma_cm_event* event = nullptr;
    lab::check(rdma_get_cm_event(channel, &event), "rdma_get_cm_event");
    const rdma_cm_event_type type = event->event;
    if (about != nullptr) {
        *about = event->id;
    }
    lab::check(rdma_ack_cm_event(event), "rdma_ack_cm_event");
    return type;
}

void create_qp(rdma_cm_id* id) {
    ibv_qp_init_attr init{};
    init.qp_type = IBV_QPT_RC;
    init.cap = {4, 4, 1, 1, 0};
    lab::check(rdma_create_qp(id, nullptr, &init), "rdma_create_qp");
}

// Resolve, make a QP, send the request; the answer is left on the channel.
void start_connecting(Side& client, sockaddr_in& server) {
    lab::check(
        rdma_resolve_addr(client.id.get(), nullptr, reinterpret_cast<sockaddr*>(&server), 2000),
        "rdma_resolve_addr");
    REQUIRE(next_event(client.channel.get()) == RDMA_CM_EVENT_ADDR_RESOLVED);
    lab::check(rdma_resolve_route(client.id.get(), 2000), "rdma_resolve_route");
    REQUIRE(next_event(client.channel.get()) == RDMA_CM_EVENT_ROUTE_RESOLVED);
    create_qp(client.id.get());
    rdma_conn_param parameters{};
    parameters.retry_count = 6;
    parameters.rnr_retry_count = 7;
    lab::check(rdma_connect(client.id.get(), &parameters), "rdma_connect");
}

}  // namespace

TEST_CASE("an rdma_cm watch ends a wait on the connection's end, not on another client's request",
          "[wait]") {
    const char* address = std::getenv("RDMA_LAB_SERVER_ADDR");
    sockaddr_in server_address{};
    server_address.sin_family = AF_INET;
    server_address.sin_port = htons(static_cast<std::uint16_t>(lab::test::free_tcp_port()));
    REQUIRE(inet_pton(AF_INET, address != nullptr ? address : "10.77.0.1",
                      &server_address.sin_addr) == 1);

    Side server;
    lab::check(rdma_bind_addr(server.id.get(), reinterpret_cast<sockaddr*>(&server_address)),
               "rdma_bind_addr");
    lab::check(rdma_listen(server.id.get(), 4), "rdma_listen");
    Side client;
    start_connecting(client, server_address);
    rdma_cm_id* raw = nullptr;
    REQUIRE(next_event(server.channel.get(), &raw) == RDMA_CM_EVENT_CONNECT_REQUEST);
    const Id connection(raw);
    create_qp(connection.get());
    rdma_conn_param parameters{};
    lab::check(rdma_accept(connection.get(), &parameters), "rdma_accept");
    REQUIRE(next_event(client.channel.get()) == RDMA_CM_EVENT_ESTABLISHED);
    REQUIRE(next_event(server.channel.get()) == RDMA_CM_EVENT_ESTABLISHED);

    const lab::PeerWatch client_gone(server.channel.get(), connection.get());
    CHECK_NOTHROW(client_gone.throw_if_gone());

    // A second client's request arrives on the server's channel, for the listening id.
    Side second;
    start_connecting(second, server_address);
    CHECK_NOTHROW(client_gone.sleep_until(std::chrono::steady_clock::now() + 1500ms));
    CHECK(next_event(second.channel.get()) == RDMA_CM_EVENT_REJECTED);

    // The first client disconnects: that is the end of the watched connection.
    lab::check(rdma_disconnect(client.id.get()), "rdma_disconnect");
    const auto start = std::chrono::steady_clock::now();
    std::string error;
    try {
        client_gone.sleep_until(start + 5s);
    } catch (const lab::Error& thrown) {
        error = thrown.what();
    }
    CHECK(error.find("the peer closed the connection") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - start < 2s);
}

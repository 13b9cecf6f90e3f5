// SPDX-License-Identifier: MIT
// Lesson 11 given bad input on rxe: one clear line, a non-zero exit, no hang.
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "support/catch.hpp"
#include "support/expect.hpp"
#include "support/process.hpp"

using lab::test::check_one_error_line;
using lab::test::check_peer_death_noticed;
using lab::test::check_port_in_use;
using lab::test::check_unknown_device;
using lab::test::lesson;
using lab::test::Process;
using lab::test::run;
using lab::test::with;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

std::string server_address() {
    const char* address = std::getenv("RDMA_LAB_SERVER_ADDR");
    return address != nullptr ? address : "10.77.0.1";
}

}  // namespace

TEST_CASE("11_rdma_cm rejects bad input with one line and a non-zero exit",
          "[lesson11][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {lesson("11_rdma_cm"), "-p", port, "--timeout", "3"};

    SECTION("unknown device") {
        check_unknown_device(base);
    }
    SECTION("a --reject reason that private data cannot carry") {
        check_one_error_line(run(with(base, {"--reject", ""}), 20s), "--reject");
        check_one_error_line(run(with(base, {"--reject", std::string(141, 'x')}), 20s),
                             "needs 1 to 140 characters");
    }
    SECTION("bad sizes") {
        check_one_error_line(run(with(base, {"-s", "16"}), 20s), "--size 16 is too small");
        check_one_error_line(run(with(base, {"-s", "0"}), 20s), "--size");
    }
    SECTION("server not running: the client retries, then gives up after --timeout") {
        const auto start = Clock::now();
        const auto result = run(with(base, {server_address()}), 30s);
        check_one_error_line(result, "no server accepted a connection at " + server_address());
        CHECK(result.out.find("RDMA_CM_EVENT_REJECTED") != std::string::npos);
        CHECK(Clock::now() - start >= 2s);
        CHECK(Clock::now() - start < 15s);
    }
    SECTION("an address that is not on an RDMA device") {
        check_one_error_line(run(with(base, {"127.0.0.1"}), 20s),
                             "rdma_resolve_route failed: No such device");
    }
    SECTION("no client comes: the server gives up after --timeout") {
        check_one_error_line(run(base, 20s), "timed out waiting for a client (CONNECT_REQUEST)");
    }
    SECTION("port already in use by another rdma_cm listener") {
        // rdma_cm reports a port taken by another listener as EADDRNOTAVAIL.
        check_port_in_use(base, port, "listening on",
                          "rdma_bind_addr failed: Cannot assign requested address (hint: "
                          "another rdma_cm program may listen on this port");
    }
}

TEST_CASE("11_rdma_cm: a peer killed while connected is noticed within 2 s, in both directions",
          "[lesson11][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    Process server({lesson("11_rdma_cm"), "-p", port, "--timeout", "30"});
    REQUIRE(server.wait_for_output("listening on", 20s));
    Process client(
        {lesson("11_rdma_cm"), "-p", port, "--timeout", "30", "--hold", "30", server_address()});
    REQUIRE(client.wait_for_output("holding the connection", 20s));
    // The survivor learns it from its CM event channel (RDMA_CM_EVENT_DISCONNECTED).
    SECTION("client killed: the server's wait for the message ends") {
        check_peer_death_noticed(client, server, "the peer closed the connection");
    }
    SECTION("server killed: the holding client notices") {
        check_peer_death_noticed(server, client, "the peer closed the connection");
    }
}

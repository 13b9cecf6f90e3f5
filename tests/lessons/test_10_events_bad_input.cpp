// SPDX-License-Identifier: MIT
// Lesson 10 given bad input on rxe: one clear line, a non-zero exit, no hang.
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "support/catch.hpp"
#include "support/expect.hpp"
#include "support/process.hpp"

using lab::test::check_gid_out_of_range;
using lab::test::check_one_error_line;
using lab::test::check_peer_death_noticed;
using lab::test::check_port_in_use;
using lab::test::check_server_not_running;
using lab::test::check_unknown_device;
using lab::test::lesson;
using lab::test::Process;
using lab::test::run;
using lab::test::with;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST_CASE("10_events rejects bad input with one line and a non-zero exit",
          "[lesson10][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {lesson("10_events"), "-p", port, "--timeout", "3"};

    SECTION("unknown device") {
        check_unknown_device(base);
    }
    SECTION("GID index out of range") {
        check_gid_out_of_range(base);
    }
    SECTION("bad sizes and rates") {
        check_one_error_line(run(with(base, {"-s", "4"}), 20s), "--size 4 is too small");
        check_one_error_line(run(with(base, {"-s", "0"}), 20s), "--size");
        check_one_error_line(run(with(base, {"--rate", "0"}), 20s), "--rate");
        check_one_error_line(run(with(base, {"--solicit-every", "0"}), 20s), "--solicit-every");
        // Above the 64 receives the server keeps posted, round 3 could never end.
        check_one_error_line(run(with(base, {"--solicit-every", "65"}), 20s),
                             "--solicit-every 65 is above the 64 receives the server keeps posted");
    }
    SECTION("server not running: the client gives up after --timeout") {
        check_server_not_running(base, "could not connect to 127.0.0.1:" + port);
    }
    SECTION("TCP port already in use") {
        check_port_in_use(base, port, "waiting for a client",
                          "TCP port " + port + " is already in use");
    }
}

TEST_CASE("10_events: a peer killed in any round is noticed within 2 s, in both directions",
          "[lesson10][bad-input]") {
    // Rounds of 3 s each (3000 messages at 1000 per second). In round 1 the
    // server busy-polls; in rounds 2 and 3 it sleeps on its completion
    // channel, with events read and not yet acknowledged: a server that
    // skipped ibv_ack_cq_events on its way out would hang in ibv_destroy_cq.
    const int round = GENERATE(1, 2, 3);
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {
        lesson("10_events"), "-p", port, "--timeout", "20", "-n", "3000", "--rate", "1000"};
    Process server(base);
    REQUIRE(server.wait_for_output("waiting for a client", 20s));
    Process client(with(base, {"127.0.0.1"}));
    REQUIRE(client.wait_for_output("messages of 64 bytes per round", 30s));
    // The server reports each round when it ends: the one before ours.
    const char* previous_round = round == 1   ? nullptr
                                 : round == 2 ? "server: busy polling"
                                              : "server: events ";
    if (previous_round != nullptr) {
        REQUIRE(server.wait_for_output(previous_round, 30s));
    }
    std::this_thread::sleep_for(1s);  // well inside round `round`
    INFO("round " << round);

    SECTION("client killed: the server's wait ends, its events acknowledged") {
        check_peer_death_noticed(client, server, "the peer closed the connection");
    }
    SECTION("server killed: the client's wait for its send's completion ends") {
        check_peer_death_noticed(server, client, "the peer closed the connection");
    }
}

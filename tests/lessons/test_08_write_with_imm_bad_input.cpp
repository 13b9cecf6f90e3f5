// SPDX-License-Identifier: MIT
// Lesson 08 given bad input, on the rxe device: each case ends in one clear
// line on stderr, a non-zero exit and no hang.
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

TEST_CASE("08_write_with_imm rejects bad input with one line and a non-zero exit",
          "[lesson08][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {lesson("08_write_with_imm"), "-p", port, "--timeout",
                                           "3"};

    SECTION("unknown device") {
        check_unknown_device(base);
    }
    SECTION("GID index out of range") {
        check_gid_out_of_range(base);
    }
    SECTION("bad sizes and counts") {
        check_one_error_line(run(with(base, {"-s", "0"}), 20s), "--size");
        check_one_error_line(run(with(base, {"-s", "8"}), 20s), "--size 8 is too small");
        check_one_error_line(run(with(base, {"-n", "5000"}), 20s), "--iters 5000 is too many");
    }
    SECTION("server not running: the client gives up after --timeout") {
        check_server_not_running(base, "could not connect");
    }
    SECTION("TCP port already in use") {
        check_port_in_use(base, port, "waiting for a client", "already in use");
    }
}

TEST_CASE("08_write_with_imm: a peer killed mid-run is noticed within 2 s, in both directions",
          "[lesson08][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {
        lesson("08_write_with_imm"), "-p", port, "--timeout", "20", "-n", "1000"};
    // 1000 messages: the client is still at work when one side is killed.
    Process server(base);
    REQUIRE(server.wait_for_output("waiting for a client", 20s));
    Process client(with(base, {"127.0.0.1"}));
    REQUIRE(server.wait_for_output("QP is in RTS", 30s));
    SECTION("client killed: the server's wait for doorbells ends") {
        check_peer_death_noticed(client, server, "the peer closed the connection");
    }
    SECTION("server killed: the client fails") {
        check_peer_death_noticed(server, client, "the peer closed the connection");
    }
}

// SPDX-License-Identifier: MIT
// Lesson 05 given bad input, on the rxe device: each case ends in one clear
// line on stderr, a non-zero exit and no hang, a killed peer included.
#include <signal.h>

#include <chrono>
#include <regex>
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

TEST_CASE("05_exchange rejects bad input with one line and a non-zero exit",
          "[lesson05][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {lesson("05_exchange"), "-p", port, "--timeout", "3"};

    SECTION("unknown device") {
        check_unknown_device(base);
    }
    SECTION("GID index out of range") {
        check_gid_out_of_range(base);
    }
    SECTION("invalid size") {
        check_one_error_line(run(with(base, {"-s", "0"}), 20s), "--size");
        check_one_error_line(run(with(base, {"-s", "lots"}), 20s), "--size");
    }
    SECTION("invalid timeout") {
        check_one_error_line(run(with(base, {"--timeout", "0"}), 20s), "--timeout");
    }
    SECTION("server not running: the client gives up after --timeout") {
        const auto took = check_server_not_running(
            base, "could not connect to 127.0.0.1:" + port + " within 3.0 s");
        CHECK(took >= 2s);
    }
    SECTION("no client comes: the server gives up after --timeout") {
        check_one_error_line(run(base, 30s), "no client connected to TCP port " + port);
    }
    SECTION("TCP port already in use") {
        check_port_in_use(base, port, "waiting for a client",
                          "TCP port " + port + " is already in use");
    }
}

TEST_CASE("05_exchange: a peer killed mid-run is noticed within 2 s, in both directions",
          "[lesson05][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {lesson("05_exchange"), "-p", port, "--timeout", "20"};

    SECTION("the client holds in RTS") {
        Process server(base);
        REQUIRE(server.wait_for_output("waiting for a client", 20s));
        Process client(with(base, {"--hold", "60", "127.0.0.1"}));
        REQUIRE(client.wait_for_output("holding for 60 s", 30s));
        REQUIRE(server.wait_for_output("waiting for the peer at the barrier", 10s));
        SECTION("client killed: the server at the barrier notices") {
            check_peer_death_noticed(client, server, "the peer closed the connection");
        }
        SECTION("server killed: the holding client notices") {
            check_peer_death_noticed(server, client, "the peer closed the connection");
        }
    }
    SECTION("the server holds in RTS") {
        Process server(with(base, {"--hold", "60"}));
        REQUIRE(server.wait_for_output("waiting for a client", 20s));
        Process client(with(base, {"127.0.0.1"}));
        REQUIRE(client.wait_for_output("waiting for the peer at the barrier", 30s));
        REQUIRE(server.wait_for_output("holding for 60 s", 10s));
        SECTION("server killed: the client at the barrier notices") {
            check_peer_death_noticed(server, client, "the peer closed the connection");
        }
        SECTION("client killed: the holding server notices") {
            check_peer_death_noticed(client, server, "the peer closed the connection");
        }
    }
}

TEST_CASE("05_exchange --no-grh: RoCE refuses a path by LID alone at RTR, on both sides",
          "[lesson05][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {lesson("05_exchange"), "-p", port,
                                           "--timeout",           "20", "--no-grh"};
    Process server(base);
    REQUIRE(server.wait_for_output("waiting for a client", 20s));
    const auto client = run(with(base, {"127.0.0.1"}), 40s);
    const auto served = server.wait(30s);
    for (const auto* side : {&client, &served}) {
        INFO(side->out << side->err);
        CHECK(side->out.find("--no-grh: INIT -> RTR with is_global 0, dlid 0") !=
              std::string::npos);
        check_one_error_line(*side,
                             "ibv_modify_qp(RTR) without a GRH failed: Invalid argument (hint: "
                             "RoCE has no LIDs: set ah_attr.is_global = 1 and the peer's GID)");
        CHECK(side->out.find("is in state RTS") == std::string::npos);
    }
}

TEST_CASE("05_exchange: ibv_rc_pingpong's text message fails the server's magic check",
          "[lesson05][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    Process server({lesson("05_exchange"), "-p", port, "--timeout", "20"});
    REQUIRE(server.wait_for_output("waiting for a client", 20s));
    // The GID index the server chose: ibv_rc_pingpong takes no other way to it.
    std::smatch match;
    const std::string first_lines = server.so_far().out;
    REQUIRE(std::regex_search(first_lines, match,
                              std::regex(R"(device (\S+), port 1, GID index (\d+))")));
    const auto pingpong = run(
        {"/usr/bin/ibv_rc_pingpong", "-d", match[1], "-g", match[2], "-p", port, "127.0.0.1"}, 30s);
    const auto served = server.wait(30s);
    INFO("ibv_rc_pingpong: " << pingpong.out << pingpong.err);
    CHECK(pingpong.exit_code != 0);
    check_one_error_line(served,
                         "bad connection message: magic 0x30303030, expected 0x52564c58 (hint: "
                         "something else answered on this TCP port; check -p)");
}

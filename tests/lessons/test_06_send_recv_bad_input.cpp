// SPDX-License-Identifier: MIT
// Lesson 06 given bad input, on the rxe device: each case ends in one clear
// line on stderr, a non-zero exit and no hang, a peer killed mid-run included.
#include <arpa/inet.h>
#include <signal.h>

#include <chrono>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "lab/exchange.hpp"
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

namespace {

// What a peer would send in step 8: a made-up QP at @p program's own GID (read
// from its "local address" line), so that its RTR and RTS succeed and it goes
// on to its first barrier.
lab::ConnectionInfo made_up_peer(Process& program) {
    REQUIRE(program.wait_for_output("local address", 20s));
    std::smatch match;
    const std::string out = program.so_far().out;
    REQUIRE(std::regex_search(out, match, std::regex(R"(local address: .* GID (\S+))")));
    lab::ConnectionInfo info;
    info.address.qp_num = 0x123;
    info.address.psn = 0x456;
    REQUIRE(::inet_pton(AF_INET6, match[1].str().c_str(), info.address.gid.raw) == 1);
    return info;
}

// Close the test's end of @p peer, as a peer that died, and check that @p program
// notices within 2 s.
void close_and_check_noticed(lab::Connection peer, Process& program) {
    const auto start = Clock::now();
    static_cast<void>(lab::Connection(std::move(peer)));  // closed at the end of this line
    const lab::test::Result result = program.wait(30s);
    const std::chrono::duration<double> took = Clock::now() - start;
    std::printf("dead peer noticed in %.2f s (at a barrier)\n", took.count());
    check_one_error_line(result, "the peer closed the connection");
    CHECK(took < lab::test::kNoticeDeadPeerWithin);
}

}  // namespace

TEST_CASE("06_send_recv rejects bad input with one line and a non-zero exit",
          "[lesson06][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {lesson("06_send_recv"), "-p", port, "--timeout", "3"};

    SECTION("unknown device") {
        check_unknown_device(base);
    }
    SECTION("GID index out of range") {
        check_gid_out_of_range(base);
    }
    SECTION("invalid size") {
        check_one_error_line(run(with(base, {"-s", "0"}), 20s), "--size");
        check_one_error_line(run(with(base, {"-s", "-5"}), 20s), "--size");
    }
    SECTION("invalid iteration count") {
        check_one_error_line(run(with(base, {"-n", "0"}), 20s), "--iters");
        check_one_error_line(run(with(base, {"-n", "many"}), 20s), "--iters");
    }
    SECTION("server not running: the client gives up after --timeout") {
        check_server_not_running(base, "could not connect to 127.0.0.1:" + port + " within 3.0 s");
    }
    SECTION("TCP port already in use") {
        check_port_in_use(base, port, "waiting for a client",
                          "TCP port " + port + " is already in use");
    }
}

TEST_CASE("06_send_recv: a peer killed is noticed within 2 s, in both directions",
          "[lesson06][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    SECTION("during the ping-pong") {
        // Enough iterations to be still running when killed.
        const std::vector<std::string> base = {
            lesson("06_send_recv"), "-p", port, "--timeout", "20", "-s", "64", "-n", "10000000"};
        Process server(base);
        REQUIRE(server.wait_for_output("waiting for a client", 20s));
        Process client(with(base, {"127.0.0.1"}));
        REQUIRE(client.wait_for_output("client: ping-pong of", 30s));
        REQUIRE(server.wait_for_output("server: ping-pong of", 10s));
        std::this_thread::sleep_for(500ms);
        SECTION("client killed: the server's wait for a completion ends") {
            check_peer_death_noticed(client, server, "the peer closed the connection");
        }
        SECTION("server killed: the client's wait for a completion ends") {
            check_peer_death_noticed(server, client, "the peer closed the connection");
        }
    }
    SECTION("while the exchange waits for the peer's message") {
        // A client that connects and sends nothing, as a peer that died before its message.
        const std::vector<std::string> base = {lesson("06_send_recv"), "-p", port, "--timeout",
                                               "20"};
        Process server(base);
        REQUIRE(server.wait_for_output("waiting for a client", 20s));
        // It says when it has connected: killed before that, it would leave the
        // server waiting for a client, which is another test.
        Process silent(
            {"/bin/bash", "-c",
             "exec 3<>/dev/tcp/127.0.0.1/" + port + " && echo connected && exec sleep 60"});
        REQUIRE(silent.wait_for_output("connected", 20s));
        std::this_thread::sleep_for(500ms);  // the server is in the exchange, waiting
        check_peer_death_noticed(silent, server, "the peer closed the connection");
    }
}

TEST_CASE("06_send_recv: a peer that dies at a barrier is noticed within 2 s, in both directions",
          "[lesson06][bad-input]") {
    // The test plays the peer: it sends a well-formed step-8 message, then closes
    // its socket while the lesson waits at its first barrier ("both QPs are in RTS").
    const int port = lab::test::free_tcp_port();
    const std::vector<std::string> base = {lesson("06_send_recv"), "-p", std::to_string(port),
                                           "--timeout", "20"};
    SECTION("the client dies at the barrier: the server notices") {
        Process server(base);
        REQUIRE(server.wait_for_output("waiting for a client", 20s));
        const lab::ConnectionInfo info = made_up_peer(server);
        lab::Connection client = lab::Connection::connect_to("127.0.0.1", std::uint16_t(port), 20s);
        client.exchange(info, 20s);
        REQUIRE(server.wait_for_output("remote address", 20s));
        std::this_thread::sleep_for(500ms);  // RTR, RTS, and into the barrier
        close_and_check_noticed(std::move(client), server);
    }
    SECTION("the server dies at the barrier: the client notices") {
        Process client(with(base, {"127.0.0.1"}));
        const lab::ConnectionInfo info = made_up_peer(client);
        lab::Connection server = lab::Connection::accept_one(std::uint16_t(port), 20s);
        server.exchange(info, 20s);
        REQUIRE(client.wait_for_output("remote address", 20s));
        std::this_thread::sleep_for(500ms);
        close_and_check_noticed(std::move(server), client);
    }
}

TEST_CASE("06_send_recv with a different -s on each side: the errors rxe gives",
          "[lesson06][bad-input]") {
    // The client's 128-byte messages do not fit the server's 64-byte receives.
    // rxe (6.1 and 6.12) fails the receive with local QP operation error and the
    // send with remote operation error; the specification (and hardware) say
    // local length error and remote invalid request error.
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {
        lesson("06_send_recv"), "-p", port, "--timeout", "10", "-n", "5"};
    Process server(with(base, {"-s", "64"}));
    REQUIRE(server.wait_for_output("waiting for a client", 20s));
    const auto client = run(with(base, {"-s", "128", "127.0.0.1"}), 60s);
    const auto served = server.wait(30s);
    check_one_error_line(served, "receive: work completion failed: local QP operation error");
    check_one_error_line(client, "send: work completion failed: remote operation error");
}

// Lesson 06 given bad input, on the rxe device: each case ends in one clear
// line on stderr, a non-zero exit and no hang, a peer killed mid-run included.
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

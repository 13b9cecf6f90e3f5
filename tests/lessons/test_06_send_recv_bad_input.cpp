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
        check_port_in_use(base, port, "local address", "TCP port " + port + " is already in use");
    }
}

TEST_CASE("06_send_recv: a peer killed during the ping-pong makes the other side fail",
          "[lesson06][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    // Enough iterations to be still running when killed; --timeout 5 bounds the wait.
    const std::vector<std::string> base = {
        lesson("06_send_recv"), "-p", port, "--timeout", "5", "-s", "64", "-n", "10000000"};
    Process server(base);
    REQUIRE(server.wait_for_output("local address", 20s));
    Process client(with(base, {"127.0.0.1"}));
    REQUIRE(client.wait_for_output("client: ping-pong of", 30s));
    REQUIRE(server.wait_for_output("server: ping-pong of", 10s));
    std::this_thread::sleep_for(500ms);

    SECTION("client killed: the server's receive never completes") {
        client.kill(SIGKILL);
        const auto start = Clock::now();
        check_one_error_line(server.wait(30s), "no completion within 5 s");
        CHECK(Clock::now() - start < 15s);
    }
    SECTION(
        "server killed: the client's send is never acknowledged, or its receive never completes") {
        server.kill(SIGKILL);
        const auto start = Clock::now();
        const auto result = client.wait(30s);
        const bool retry_exceeded =
            result.err.find("transport retry counter exceeded") != std::string::npos;
        check_one_error_line(
            result, retry_exceeded ? "send: work completion failed" : "no completion within 5 s");
        CHECK(Clock::now() - start < 15s);
    }
}

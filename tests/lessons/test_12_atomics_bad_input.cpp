// SPDX-License-Identifier: MIT
// Lesson 12 given bad input on rxe, including atomics the device must refuse:
// one clear line, a non-zero exit, no hang, on both sides.
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

namespace {

// Run a server and one client with @p fault; return the client's result and
// check that the server, too, ends with one line instead of waiting.
lab::test::Result run_fault(const std::string& fault) {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {lesson("12_atomics"), "-p", port, "--timeout", "10"};
    Process server(base);
    const auto client = run(with(base, {fault, "127.0.0.1"}), 30s);
    const auto server_result = server.wait(30s);
    check_one_error_line(server_result, "the peer closed the connection");
    return client;
}

}  // namespace

TEST_CASE("12_atomics rejects bad input with one line and a non-zero exit",
          "[lesson12][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {lesson("12_atomics"), "-p", port, "--timeout", "3"};

    SECTION("unknown device") {
        check_unknown_device(base);
    }
    SECTION("GID index out of range") {
        check_gid_out_of_range(base);
    }
    SECTION("bad counts") {
        check_one_error_line(run(with(base, {"--clients", "0"}), 20s), "--clients");
        // Measuring with atomics in flight is bench_12_atomics's job, not the lesson's.
        check_one_error_line(run(with(base, {"--depth", "4"}), 20s), "--depth");
        check_one_error_line(run(with(base, {"-n", "0"}), 20s), "--iters");
        check_one_error_line(run(with(base, {"--wrong-alignment", "--wrong-rkey"}), 20s),
                             "excludes");
    }
    SECTION("server not running: the client gives up after --timeout") {
        check_server_not_running(base, "could not connect to 127.0.0.1:" + port);
    }
    SECTION("TCP port already in use") {
        check_port_in_use(base, port, "atomic_cap", "TCP port " + port + " is already in use");
    }
}

TEST_CASE("12_atomics: atomics the device must refuse", "[lesson12][bad-input]") {
    SECTION("misaligned address: rxe refuses it when it is posted") {
        check_one_error_line(run_fault("--wrong-alignment"),
                             "ibv_post_send(FETCH_AND_ADD) failed: Invalid argument");
    }
    SECTION("wrong rkey: the server's device answers with a remote access error") {
        check_one_error_line(run_fault("--wrong-rkey"),
                             "fetch-and-add with a wrong rkey: work completion failed: remote "
                             "access error");
    }
    SECTION("address outside the region: a remote access error too") {
        check_one_error_line(run_fault("--wrong-address"),
                             "fetch-and-add outside the server's region: work completion "
                             "failed: remote access error");
    }
}

TEST_CASE("12_atomics: a peer killed mid-run is noticed within 2 s, in both directions",
          "[lesson12][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {
        lesson("12_atomics"), "-p", port, "--timeout", "20", "-n", "100000000"};
    Process server(base);
    Process client(with(base, {"127.0.0.1"}));
    REQUIRE(client.wait_for_output("remote address", 30s));
    std::this_thread::sleep_for(1s);

    SECTION("client killed: the server's barrier ends") {
        check_peer_death_noticed(client, server, "the peer closed the connection");
    }
    SECTION("server killed: the client's fetch-and-add loop ends") {
        check_peer_death_noticed(server, client, "the peer closed the connection");
    }
}

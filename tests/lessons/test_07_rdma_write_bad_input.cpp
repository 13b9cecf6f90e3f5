// Lesson 07 given bad input, on the rxe device: each case ends in one clear
// line on stderr, a non-zero exit and no hang; a wrong rkey or an address past
// the end of the region completes with IBV_WC_REM_ACCESS_ERR.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <fstream>
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
using lab::test::check_remote_access_error;
using lab::test::check_server_not_running;
using lab::test::check_unknown_device;
using lab::test::lesson;
using lab::test::Process;
using lab::test::run;
using lab::test::with;
using namespace std::chrono_literals;

TEST_CASE("07_rdma_write rejects bad input with one line and a non-zero exit",
          "[lesson07][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {lesson("07_rdma_write"), "-p", port, "--timeout", "3"};

    SECTION("unknown device") {
        check_unknown_device(base);
    }
    SECTION("GID index out of range") {
        check_gid_out_of_range(base);
    }
    SECTION("bad sizes and flags") {
        check_one_error_line(run(with(base, {"-s", "0"}), 20s), "--size");
        check_one_error_line(run(with(base, {"-s", "4"}), 20s), "--size 4 cannot hold");
        check_one_error_line(run(with(base, {"--wrong-rkey", "--wrong-address"}), 20s), "excludes");
        // The measuring modes left the lesson for bench_07_rdma_write.
        check_one_error_line(run(with(base, {"--bw"}), 20s), "--bw");
    }
    SECTION("server not running: the client gives up after --timeout") {
        check_server_not_running(base, "could not connect");
    }
    SECTION("TCP port already in use") {
        check_port_in_use(base, port, "waiting for a client", "already in use");
    }
}

TEST_CASE("07_rdma_write: a wrong rkey or an address past the end is IBV_WC_REM_ACCESS_ERR",
          "[lesson07][bad-input]") {
    const std::string flag = GENERATE(std::string("--wrong-rkey"), std::string("--wrong-address"));
    check_remote_access_error("07_rdma_write", flag,
                              "RDMA write: work completion failed: remote access error",
                              "hello verbs");
}

namespace {

// Whether a socket listens on TCP @p port (IPv4, /proc/net/tcp), within @p timeout.
bool listening(int port, std::chrono::milliseconds timeout) {
    char local[16];
    std::snprintf(local, sizeof local, ":%04X ", port);
    for (const auto end = std::chrono::steady_clock::now() + timeout;
         std::chrono::steady_clock::now() < end; std::this_thread::sleep_for(50ms)) {
        std::ifstream table("/proc/net/tcp");
        for (std::string line; std::getline(table, line);) {
            // "sl local_address rem_address st ...": state 0A is LISTEN.
            const auto at = line.find(local);
            if (at != std::string::npos && at < 20 && line.find(" 0A ") != std::string::npos) {
                return true;
            }
        }
    }
    return false;
}

}  // namespace

TEST_CASE("07_rdma_write: a peer killed at the barrier is noticed within 2 s, both ways",
          "[lesson07][bad-input]") {
    // The lesson's one write takes a moment; to kill a side at a known point,
    // the other is held with SIGSTOP. The server is held while the client
    // connects and sends its QP information; then the client is held while the
    // server reaches RTS and waits at the barrier for it.
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {lesson("07_rdma_write"), "-p", port, "--timeout", "20"};
    Process server(base);
    REQUIRE(server.wait_for_output("waiting for a client", 20s));
    // It prints that line just before it listens: hold it only once it does.
    REQUIRE(listening(std::stoi(port), 20s));
    server.kill(SIGSTOP);
    Process client(with(base, {"127.0.0.1"}));
    REQUIRE(client.wait_for_output("local address", 30s));
    std::this_thread::sleep_for(2s);  // connected; waiting for the server's information
    client.kill(SIGSTOP);
    server.kill(SIGCONT);
    REQUIRE(server.wait_for_output("QP is in RTS", 30s));

    SECTION("client killed: the server's barrier ends when the socket closes") {
        check_peer_death_noticed(client, server, "the peer closed the connection");
    }
    SECTION("server killed: the client's barrier ends when the socket closes") {
        server.kill(SIGSTOP);
        client.kill(SIGCONT);
        REQUIRE(client.wait_for_output("QP is in RTS", 30s));
        std::this_thread::sleep_for(500ms);  // at the barrier, waiting for the server
        check_peer_death_noticed(server, client, "the peer closed the connection");
    }
}

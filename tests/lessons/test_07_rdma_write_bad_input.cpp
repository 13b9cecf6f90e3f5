// SPDX-License-Identifier: MIT
// Lesson 07 given bad input, on the rxe device: each case ends in one clear
// line on stderr, a non-zero exit and no hang; a wrong rkey or an address past
// the end of the region completes with IBV_WC_REM_ACCESS_ERR.
#include <chrono>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/expect.hpp"
#include "support/process.hpp"

using lab::test::check_gid_out_of_range;
using lab::test::check_one_error_line;
using lab::test::check_port_in_use;
using lab::test::check_remote_access_error;
using lab::test::check_server_not_running;
using lab::test::check_unknown_device;
using lab::test::lesson;
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
        // --inline N: at least the greeting and its zero, at most the buffer.
        check_one_error_line(run(with(base, {"--inline", "5"}), 20s), "--inline");
        check_one_error_line(run(with(base, {"--inline", "5000"}), 20s),
                             "--inline 5000 is larger than the buffer (hint: raise -s on both "
                             "sides)");
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

TEST_CASE("07_rdma_write: a peer killed at the barrier is noticed within 2 s, both ways",
          "[lesson07][bad-input]") {
    lab::test::check_peer_killed_at_barrier("07_rdma_write", "QP is in RTS");
}

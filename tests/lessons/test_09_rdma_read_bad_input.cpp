// SPDX-License-Identifier: MIT
// Lesson 09 given bad input, on the rxe device: each case ends in one clear
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
using lab::test::program;
using lab::test::run;
using lab::test::with;
using namespace std::chrono_literals;

TEST_CASE("09_rdma_read rejects bad input with one line and a non-zero exit",
          "[lesson09][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {lesson("09_rdma_read"), "-p", port, "--timeout", "3"};

    SECTION("unknown device") {
        check_unknown_device(base);
    }
    SECTION("GID index out of range") {
        check_gid_out_of_range(base);
    }
    SECTION("bad sizes, depths and read limits") {
        check_one_error_line(run(with(base, {"-s", "0"}), 20s), "--size");
        check_one_error_line(run(with(base, {"-s", "16"}), 20s), "--size 16 cannot hold");
        check_one_error_line(run(with(base, {"--rd-atomic", "0"}), 20s), "--rd-atomic");
        check_one_error_line(run(with(base, {"--rd-atomic", "200"}), 20s),
                             "--rd-atomic 200 is above what the device allows");
    }
    SECTION("server not running: the client gives up after --timeout") {
        check_server_not_running(base, "could not connect");
    }
    SECTION("TCP port already in use") {
        check_port_in_use(base, port, "waiting for a client", "already in use");
    }
}

TEST_CASE("09_rdma_read: a wrong rkey or an address past the end is IBV_WC_REM_ACCESS_ERR",
          "[lesson09][bad-input]") {
    const std::string flag = GENERATE(std::string("--wrong-rkey"), std::string("--wrong-address"));
    check_remote_access_error("09_rdma_read", flag,
                              "RDMA read: work completion failed: remote access error",
                              "it matches");
}

// The measuring program of lesson 09 (bench/09_rdma_read.cpp).
TEST_CASE("09_rdma_read: a peer killed at the barrier is noticed within 2 s, both ways",
          "[lesson09][bad-input]") {
    lab::test::check_peer_killed_at_barrier("09_rdma_read", "QP is in RTS");
}

TEST_CASE("bench_09_rdma_read rejects bad input with one line and a non-zero exit",
          "[lesson09][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {program("bench/bench_09_rdma_read"), "-p", port,
                                           "--timeout", "3"};
    check_one_error_line(run(base, 20s), "nothing to measure");
    check_one_error_line(run(with(base, {"--bw", "--depth", "0"}), 20s), "--depth");
    check_one_error_line(run(with(base, {"--bw", "--lat"}), 20s), "--lat");
    check_one_error_line(run(with(base, {"--bw", "--rd-atomic", "200"}), 20s),
                         "--rd-atomic 200 is above what the device allows");
}

TEST_CASE("bench_09_rdma_read: a peer killed while it measures is noticed within 2 s, both ways",
          "[lesson09][bad-input]") {
    lab::test::check_peer_killed_mid_run(
        "bench_09_rdma_read", {"--bw", "-s", "65536", "-n", "100000000"}, "reads posted at a time");
}

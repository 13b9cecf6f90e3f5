// SPDX-License-Identifier: MIT
// bench_07_rdma_write, lesson 07's write measured like perftest, with two real
// processes on the rxe device: each mode reports numbers in perftest's table,
// the server's CPU still does no work, a dead peer ends the measuring loop.
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "support/catch.hpp"
#include "support/expect.hpp"
#include "support/pair.hpp"
#include "support/process.hpp"

using lab::test::check_one_error_line;
using lab::test::column_after_header;
using lab::test::lesson;
using lab::test::run;
using lab::test::run_pair;
using lab::test::with;
using namespace std::chrono_literals;

TEST_CASE("bench_07_rdma_write --bw reports a bandwidth like ib_write_bw", "[bench07]") {
    const auto [server, client] =
        run_pair("bench_07_rdma_write", {"--bw", "-s", "4096", "-n", "300", "--depth", "16"});
    INFO("server: " << server.out << server.err << "\nclient: " << client.out << client.err);
    REQUIRE(server.exit_code == 0);
    REQUIRE(client.exit_code == 0);
    CHECK(client.out.find("BW average[MB/sec]") != std::string::npos);
    CHECK(column_after_header(client.out, 0) == 4096);
    CHECK(column_after_header(client.out, 1) == 300);
    CHECK(column_after_header(client.out, 2) > 0);
    // 300 writes, and still no work for the server's CPU.
    CHECK(server.out.find("completions on the server's CQ: 0") != std::string::npos);
}

TEST_CASE("bench_07_rdma_write --lat reports a latency like ib_write_lat", "[bench07]") {
    for (const auto& extra : {std::vector<std::string>{}, std::vector<std::string>{"--inline"}}) {
        std::vector<std::string> flags = {"--lat", "-s", "32", "-n", "100"};
        flags.insert(flags.end(), extra.begin(), extra.end());
        const auto [server, client] = run_pair("bench_07_rdma_write", flags);
        INFO("server: " << server.out << server.err << "\nclient: " << client.out << client.err);
        REQUIRE(server.exit_code == 0);
        REQUIRE(client.exit_code == 0);
        const double t_min = column_after_header(client.out, 2);
        const double t_max = column_after_header(client.out, 3);
        const double t_typical = column_after_header(client.out, 4);
        CHECK(t_min > 0);
        CHECK(t_min <= t_typical);
        CHECK(t_typical <= t_max);
    }
}

TEST_CASE("bench_07_rdma_write rejects bad input with one line", "[bench07][bad-input]") {
    const std::vector<std::string> base = {lesson("bench_07_rdma_write"), "--timeout", "3"};
    check_one_error_line(run(with(base, {"--bw", "--depth", "0"}), 20s), "--depth");
    check_one_error_line(run(with(base, {"--inline"}), 20s), "--inline");
    check_one_error_line(run(with(base, {"--bw", "--lat"}), 20s), "excludes");
    check_one_error_line(run(base, 20s), "nothing to measure");
}

TEST_CASE("bench_07_rdma_write: a peer killed mid-run is noticed within 2 s, both ways",
          "[bench07][bad-input]") {
    SECTION("bandwidth: the client streams writes") {
        lab::test::check_peer_killed_mid_run(
            "bench_07_rdma_write", {"--bw", "-s", "65536", "-n", "100000000"}, "QP is in RTS");
    }
    SECTION("latency: both sides watch memory for the peer's writes") {
        // --lat keeps a sample per iteration: fewer of them.
        lab::test::check_peer_killed_mid_run("bench_07_rdma_write", {"--lat", "-n", "1000000"},
                                             "QP is in RTS");
    }
}

TEST_CASE("bench_07_rdma_write --no-watch: a killed server's QP ends the writes with a retry error",
          "[bench07][dead-peer]") {
    // Without the TCP watch, only the device tells: every write to the
    // vanished QP goes unacknowledged, the requester retransmits retry_cnt
    // (6) times, each after the ACK timeout (17: 4.096 us x 2^17, 0.54 s),
    // then completes the write with IBV_WC_RETRY_EXC_ERR: about 4 s
    // (docs/devices.md#dead-peer). With retry_cnt 7, rxe retries for ever.
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {lesson("bench_07_rdma_write"),
                                           "--bw",
                                           "-s",
                                           "65536",
                                           "-n",
                                           "100000000",
                                           "-p",
                                           port,
                                           "--timeout",
                                           "60"};
    lab::test::Process server(base);
    REQUIRE(server.wait_for_output("waiting for a client", 20s));
    lab::test::Process client(with(base, {"--no-watch", "127.0.0.1"}));
    REQUIRE(client.wait_for_output("QP is in RTS", 30s));
    std::this_thread::sleep_for(500ms);  // the writes are under way
    const auto killed = std::chrono::steady_clock::now();
    server.kill(SIGKILL);
    const auto result = client.wait(60s);
    const auto seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
    INFO("client after " << seconds << " s:\n" << result.out << result.err);
    REQUIRE_FALSE(result.timed_out);
    CHECK(result.exit_code != 0);
    CHECK(result.err.find("transport retry counter exceeded (status 12") != std::string::npos);
    CHECK(result.err.find("no completion within") == std::string::npos);
    WARN("a killed peer's QP: IBV_WC_RETRY_EXC_ERR after " << seconds << " s");
}

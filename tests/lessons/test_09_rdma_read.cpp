// SPDX-License-Identifier: MIT
// Lesson 09 with two real processes on the rxe device: the client must read
// back exactly what the server's buffer holds, echo it behind a fence, and the
// read limits asked for must be the ones the QPs report.
#include <chrono>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/pair.hpp"
#include "support/process.hpp"

using lab::test::column_after_header;
using lab::test::Process;
using lab::test::program;
using lab::test::Result;
using lab::test::run;
using lab::test::run_pair;
using namespace std::chrono_literals;

TEST_CASE("09_rdma_read: the client reads the server's buffer and echoes it behind a fence",
          "[lesson09]") {
    const auto [server, client] = run_pair("09_rdma_read", {});
    INFO("server: " << server.out << server.err << "\nclient: " << client.out << client.err);
    REQUIRE(server.exit_code == 0);
    REQUIRE(client.exit_code == 0);
    CHECK(server.out.find("access REMOTE_READ only") != std::string::npos);
    CHECK(client.out.find("read completed: success, byte_len 31, we read \"hello from the "
                          "server's memory\"") != std::string::npos);
    CHECK(client.out.find("IBV_WR_SEND of the same bytes with IBV_SEND_FENCE") !=
          std::string::npos);
    CHECK(server.out.find("sent back \"hello from the server's memory\" (it matches)") !=
          std::string::npos);
}

TEST_CASE("09_rdma_read: max_rd_atomic and max_dest_rd_atomic are what --rd-atomic asks",
          "[lesson09]") {
    const auto [server, client] = run_pair("09_rdma_read", {"--rd-atomic", "4"});
    INFO("server: " << server.out << server.err << "\nclient: " << client.out << client.err);
    REQUIRE(server.exit_code == 0);
    REQUIRE(client.exit_code == 0);
    CHECK(server.out.find("QP is in RTS, max_rd_atomic 4, max_dest_rd_atomic 4") !=
          std::string::npos);
    CHECK(client.out.find("QP is in RTS, max_rd_atomic 4, max_dest_rd_atomic 4") !=
          std::string::npos);
    CHECK(client.out.find("device max_qp_rd_atom ") != std::string::npos);
}

TEST_CASE("09_rdma_read --no-fence: the echo is posted unfenced and arrives whole", "[lesson09]") {
    const auto [server, client] = run_pair("09_rdma_read", {"--no-fence"});
    INFO("server: " << server.out << server.err << "\nclient: " << client.out << client.err);
    REQUIRE(server.exit_code == 0);
    REQUIRE(client.exit_code == 0);
    CHECK(client.out.find("posted IBV_WR_SEND of the same bytes (no fence)") != std::string::npos);
    CHECK(client.out.find("IBV_SEND_FENCE") == std::string::npos);
    CHECK(client.out.find("read completed: success, byte_len 31") != std::string::npos);
    // Nothing orders the send after the read: the echo may carry what the buffer held
    // before. The server says which, and sent back all 31 bytes either way.
    const bool matched = server.out.find("(it matches)") != std::string::npos;
    const bool stale = server.out.find("(NOT what the buffer holds)") != std::string::npos;
    CHECK(matched != stale);
}

// The measuring modes live in bench/09_rdma_read.cpp (./lab bench runs it
// against perftest); here they must print perftest's columns, right.
TEST_CASE("bench_09_rdma_read --bw and --lat report like ib_read_bw and ib_read_lat",
          "[lesson09]") {
    const auto run_bench = [](const std::vector<std::string>& flags) {
        const std::string port = std::to_string(lab::test::free_tcp_port());
        std::vector<std::string> argv = {program("bench/bench_09_rdma_read"), "-p", port,
                                         "--timeout", "20"};
        argv.insert(argv.end(), flags.begin(), flags.end());
        Process server(argv);
        REQUIRE(server.wait_for_output("waiting for a client", 20s));
        argv.push_back("127.0.0.1");
        const Result client = run(argv, 60s);
        const Result served = server.wait(30s);
        INFO("server: " << served.out << served.err << "\nclient: " << client.out << client.err);
        REQUIRE(served.exit_code == 0);
        REQUIRE(client.exit_code == 0);
        return client.out;
    };
    const std::string bandwidth =
        run_bench({"--bw", "-s", "4096", "-n", "300", "--depth", "32", "--rd-atomic", "8"});
    CHECK(bandwidth.find("32 reads posted at a time, at most 8 in flight") != std::string::npos);
    CHECK(column_after_header(bandwidth, 0) == 4096);
    CHECK(column_after_header(bandwidth, 1) == 300);
    CHECK(column_after_header(bandwidth, 2) > 0);
    // The README's "Things to try": one read in flight of 64 KiB.
    const std::string one_in_flight =
        run_bench({"--bw", "-s", "65536", "-n", "100", "--rd-atomic", "1"});
    CHECK(one_in_flight.find("64 reads posted at a time, at most 1 in flight (max_rd_atomic)") !=
          std::string::npos);
    CHECK(column_after_header(one_in_flight, 0) == 65536);
    CHECK(column_after_header(one_in_flight, 2) > 0);

    const std::string latency = run_bench({"--lat", "-s", "64", "-n", "100"});
    const double t_min = column_after_header(latency, 2);
    CHECK(t_min > 0);
    CHECK(t_min <= column_after_header(latency, 4));
}

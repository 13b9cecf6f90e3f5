// Lesson 07 given bad input, on the rxe device: each case ends in one clear
// line on stderr, a non-zero exit and no hang; a wrong rkey or an address past
// the end of the region completes with IBV_WC_REM_ACCESS_ERR.
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "support/catch.hpp"
#include "support/expect.hpp"
#include "support/process.hpp"

using lab::test::check_one_error_line;
using lab::test::lesson;
using lab::test::Process;
using lab::test::run;
using lab::test::with;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST_CASE("07_rdma_write rejects bad input with one line and a non-zero exit",
          "[lesson07][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {lesson("07_rdma_write"), "-p", port, "--timeout", "3"};

    SECTION("unknown device") {
        check_one_error_line(run(with(base, {"-d", "no_such_dev0"}), 20s),
                             "unknown RDMA device 'no_such_dev0'");
    }
    SECTION("GID index out of range") {
        check_one_error_line(run(with(base, {"-g", "100000"}), 20s), "GID index 100000");
    }
    SECTION("bad sizes and depths") {
        check_one_error_line(run(with(base, {"-s", "0"}), 20s), "--size");
        check_one_error_line(run(with(base, {"-s", "4"}), 20s), "--size 4 cannot hold");
        check_one_error_line(run(with(base, {"--bw", "--depth", "0"}), 20s), "--depth");
        check_one_error_line(run(with(base, {"--bw", "--bad-rkey"}), 20s), "--bad-rkey");
        check_one_error_line(run(with(base, {"--inline"}), 20s), "--inline");
    }
    SECTION("server not running: the client gives up after --timeout") {
        const auto start = Clock::now();
        check_one_error_line(run(with(base, {"127.0.0.1"}), 30s), "could not connect");
        CHECK(Clock::now() - start < 15s);
    }
    SECTION("TCP port already in use") {
        Process first({lesson("07_rdma_write"), "-p", port, "--timeout", "30"});
        REQUIRE(first.wait_for_output("waiting for a client", 20s));
        std::this_thread::sleep_for(300ms);  // the line comes just before listen()
        check_one_error_line(run(base, 20s), "already in use");
    }
}

TEST_CASE("07_rdma_write: a wrong rkey or an address past the end is IBV_WC_REM_ACCESS_ERR",
          "[lesson07][bad-input]") {
    const std::string flag = GENERATE(std::string("--bad-rkey"), std::string("--past-end"));
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {lesson("07_rdma_write"), "-p", port, "--timeout", "20"};
    Process server(base);
    REQUIRE(server.wait_for_output("waiting for a client", 20s));
    const auto client = run(with(base, {flag, "127.0.0.1"}), 40s);
    INFO(flag);
    check_one_error_line(client, "RDMA write: work completion failed: remote access error");
    CHECK(client.err.find("hint: the peer refused: wrong rkey, an address outside its region") !=
          std::string::npos);
    // The server never printed a greeting; it learns from the closed socket.
    const auto served = server.wait(30s);
    CHECK_FALSE(served.timed_out);
    CHECK(served.exit_code != 0);
    CHECK(served.out.find("hello verbs") == std::string::npos);
}

TEST_CASE("07_rdma_write: a peer killed mid-run makes the other side fail, without a hang",
          "[lesson07][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {lesson("07_rdma_write"),
                                           "-p",
                                           port,
                                           "--timeout",
                                           "10",
                                           "--bw",
                                           "-s",
                                           "65536",
                                           "-n",
                                           "100000000"};
    Process server(base);
    REQUIRE(server.wait_for_output("waiting for a client", 20s));
    Process client(with(base, {"127.0.0.1"}));
    REQUIRE(client.wait_for_output("QP is in RTS", 30s));
    REQUIRE(server.wait_for_output("QP is in RTS", 30s));
    std::this_thread::sleep_for(500ms);  // the writes are under way

    SECTION("client killed: the server's wait ends when the socket closes") {
        client.kill(SIGKILL);
        const auto start = Clock::now();
        check_one_error_line(server.wait(30s), "the peer");
        CHECK(Clock::now() - start < 8s);  // before the 10 s timeout
    }
    SECTION("server killed: the client's writes fail or time out") {
        server.kill(SIGKILL);
        const auto result = client.wait(40s);
        check_one_error_line(result, "");
    }
}

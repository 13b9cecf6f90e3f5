// SPDX-License-Identifier: MIT
// Lesson 06 with two real processes on the rxe device: the greeting arrives
// byte for byte, the ping-pong reports what ibv_rc_pingpong reports, and
// --rnr-demo produces IBV_WC_RNR_RETRY_EXC_ERR (status 13) and explains it.
#include <chrono>
#include <regex>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/expect.hpp"
#include "support/pair.hpp"
#include "support/process.hpp"

using namespace std::chrono_literals;

namespace {

std::string qpn_of(const std::string& out, const std::string& side) {
    std::smatch match;
    REQUIRE(std::regex_search(
        out, match,
        std::regex("  " + side + R"( address: +LID 0x[0-9a-f]{4}, QPN (0x[0-9a-f]{6}))")));
    return match[1];
}

// The server prints its address before it listens; the ping-pong may take a while.
lab::test::Pair run_pair(const std::vector<std::string>& args) {
    return lab::test::run_pair("06_send_recv", args,
                               {.ready_text = "local address",
                                .program_timeout = "30",
                                .client_deadline = 100s,
                                .server_deadline = 100s});
}

}  // namespace

TEST_CASE("06_send_recv: the greeting arrives and the ping-pong reports like ibv_rc_pingpong",
          "[lesson06]") {
    const auto [server, client] = run_pair({"-s", "4096", "-n", "200"});
    INFO("server: " << server.out << server.err << "\nclient: " << client.out << client.err);
    REQUIRE(server.exit_code == 0);
    REQUIRE(client.exit_code == 0);

    // Each side's remote line names the other side's QP.
    const std::string client_qpn = qpn_of(client.out, "local");
    CHECK(qpn_of(server.out, "remote") == client_qpn);
    CHECK(qpn_of(client.out, "remote") == qpn_of(server.out, "local"));

    // The greeting, byte for byte, and its length from the completion (byte_len).
    const std::string hello = "Hello from the client, QP " + client_qpn;
    CHECK(client.out.find("client: sent 34 bytes: \"" + hello + "\"") != std::string::npos);
    CHECK(server.out.find("server: received 34 bytes: \"" + hello + "\"") != std::string::npos);

    // 4096 bytes x 200 iterations x 2 directions = 1638400 bytes, on both sides.
    const std::regex bandwidth(R"(^1638400 bytes in \d+\.\d\d seconds = \d+\.\d\d Mbit/sec$)");
    const std::regex latency(R"(^200 iters in \d+\.\d\d seconds = \d+\.\d\d usec/iter$)");
    for (const auto* out : {&server.out, &client.out}) {
        int bandwidth_lines = 0, latency_lines = 0;
        for (const auto& line : lab::test::lines(*out)) {
            bandwidth_lines += std::regex_match(line, bandwidth);
            latency_lines += std::regex_match(line, latency);
        }
        CHECK(bandwidth_lines == 1);
        CHECK(latency_lines == 1);
    }
}

TEST_CASE("06_send_recv: a message smaller than the greeting is cut to --size", "[lesson06]") {
    const auto [server, client] = run_pair({"-s", "5", "-n", "3"});
    INFO("server: " << server.out << server.err << "\nclient: " << client.out << client.err);
    REQUIRE(server.exit_code == 0);
    REQUIRE(client.exit_code == 0);
    CHECK(server.out.find("server: received 5 bytes: \"Hello\"") != std::string::npos);
    CHECK(server.out.find("30 bytes in ") != std::string::npos);
}

TEST_CASE("06_send_recv --rnr-demo: a send without a posted receive fails with status 13",
          "[lesson06]") {
    const auto [server, client] = run_pair({"--rnr-demo"});
    INFO("server: " << server.out << server.err << "\nclient: " << client.out << client.err);
    CHECK(server.exit_code == 0);
    CHECK(client.exit_code == 0);
    CHECK(
        client.out.find("client: the send completed with status 13: RNR retry counter exceeded") !=
        std::string::npos);
    CHECK(client.out.find("receiver not ready") != std::string::npos);
    CHECK(client.out.find("post the receive before the peer sends") != std::string::npos);
    CHECK(server.out.find("received") == std::string::npos);  // nothing arrived
}

TEST_CASE("06_send_recv -s 8192 on the client only: the server's receives are too small",
          "[lesson06]") {
    const auto [server, client] = lab::test::run_pair("06_send_recv", {"-n", "20"},
                                                      {.ready_text = "local address",
                                                       .program_timeout = "30",
                                                       .client_deadline = 100s,
                                                       .server_deadline = 100s,
                                                       .client_only = {"-s", "8192"}});
    INFO("server: " << server.out << server.err << "\nclient: " << client.out << client.err);
    // The greeting (34 bytes) fits; the first 8192-byte message of the ping-pong does not.
    CHECK(server.out.find("server: received 34 bytes") != std::string::npos);
    CHECK(server.out.find("ping-pong of 20 messages of 4096 bytes") != std::string::npos);
    CHECK(client.out.find("ping-pong of 20 messages of 8192 bytes") != std::string::npos);
    // rxe reports the receive as a local QP operation error (the standard's
    // IBV_WC_LOC_LEN_ERR), and the sender learns of it as a remote operation error.
    lab::test::check_one_error_line(
        client, "send: work completion failed: remote operation error (status 11");
    // The server's line depends on which reaches it first: its failed receive,
    // or the client's exit (a failed completion makes every wait look at the
    // peer's socket first).
    const bool receive_failed =
        server.err.find("receive: work completion failed: local QP operation error (status 2") !=
        std::string::npos;
    const bool peer_gone = server.err.find("the peer closed the connection") != std::string::npos;
    CHECK(receive_failed != peer_gone);
    lab::test::check_one_error_line(server, "error: ");
}

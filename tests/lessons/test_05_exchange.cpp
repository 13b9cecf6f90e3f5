// SPDX-License-Identifier: MIT
// Lesson 05 with two real processes on the rxe device: the address lines each
// side prints must match the other side's, both QPs must reach RTS, and every
// bad input ends in one clear line, a non-zero exit and no hang.
#include <chrono>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "support/catch.hpp"
#include "support/pair.hpp"
#include "support/process.hpp"

using lab::test::lesson;
using lab::test::Process;
using lab::test::run;
using namespace std::chrono_literals;

namespace {

struct Address {
    std::string qpn, psn, gid;
};

Address address_line(const std::string& out, const std::string& side) {
    std::smatch match;
    const std::regex line(
        "  " + side +
        R"( address: +LID 0x[0-9a-f]{4}, QPN (0x[0-9a-f]{6}), PSN (0x[0-9a-f]{6}), GID (\S+))");
    REQUIRE(std::regex_search(out, match, line));
    return {match[1], match[2], match[3]};
}

}  // namespace

TEST_CASE("05_exchange connects two QPs: each side's remote line is the other's local line",
          "[lesson05]") {
    const auto [served, client] =
        lab::test::run_pair("05_exchange", {},
                            {.program_timeout = "30",
                             .client_deadline = std::chrono::seconds(40),
                             .server_deadline = std::chrono::seconds(40)});
    INFO("server: " << served.out << served.err << "\nclient: " << client.out << client.err);
    REQUIRE(served.exit_code == 0);
    REQUIRE(client.exit_code == 0);

    const Address server_local = address_line(served.out, "local");
    const Address server_remote = address_line(served.out, "remote");
    const Address client_local = address_line(client.out, "local");
    const Address client_remote = address_line(client.out, "remote");
    CHECK(server_remote.qpn == client_local.qpn);
    CHECK(server_remote.psn == client_local.psn);
    CHECK(server_remote.gid == client_local.gid);
    CHECK(client_remote.qpn == server_local.qpn);
    CHECK(client_remote.psn == server_local.psn);
    CHECK(client_remote.gid == server_local.gid);
    // Same device, so the same RoCE v2 IPv4 GID on both sides.
    CHECK(server_local.gid.rfind("::ffff:", 0) == 0);

    // ibv_query_qp confirms the state and the peer each QP is connected to.
    CHECK(served.out.find("in state RTS, connected to QP " + client_local.qpn) !=
          std::string::npos);
    CHECK(client.out.find("in state RTS, connected to QP " + server_local.qpn) !=
          std::string::npos);
    CHECK(served.out.find("server: both sides are in RTS") != std::string::npos);
    CHECK(client.out.find("client: both sides are in RTS") != std::string::npos);
    // The memory region each side advertises arrives intact (-s default 4096).
    CHECK(served.out.find(", 4096 bytes") != std::string::npos);
}

// The README's "Things to try", run as it writes them.

TEST_CASE("05_exchange: a client started first waits for the server, then both connect",
          "[lesson05]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {lesson("05_exchange"), "-p", port, "--timeout", "30"};
    auto client_argv = base;
    client_argv.push_back("127.0.0.1");
    Process client(client_argv);
    REQUIRE(client.wait_for_output("client: connecting to 127.0.0.1:" + port, 20s));
    std::this_thread::sleep_for(2s);  // refused, and refused again: nobody listens yet
    const auto served = run(base, 40s);
    const auto connected = client.wait(30s);
    INFO("server: " << served.out << served.err << "\nclient: " << connected.out << connected.err);
    CHECK(served.exit_code == 0);
    CHECK(connected.exit_code == 0);
    CHECK(connected.err.empty());  // the refused attempts print nothing
    CHECK(connected.out.find("client: both sides are in RTS") != std::string::npos);
    CHECK(served.out.find("server: both sides are in RTS") != std::string::npos);
}

TEST_CASE("05_exchange --hold: rdma resource show qp lists the two connected QPs in RTS",
          "[lesson05]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {
        lesson("05_exchange"), "-p", port, "--timeout", "30", "--hold", "5"};
    Process server(base);
    REQUIRE(server.wait_for_output("waiting for a client", 20s));
    auto client_argv = base;
    client_argv.push_back("127.0.0.1");
    Process client(client_argv);
    REQUIRE(client.wait_for_output("holding for 5 s", 20s));
    REQUIRE(server.wait_for_output("holding for 5 s", 20s));
    const auto shown = run({"/usr/bin/rdma", "resource", "show", "qp"}, 20s);
    const auto client_done = client.wait(30s);
    const auto server_done = server.wait(30s);
    INFO("rdma resource show qp:\n"
         << shown.out << shown.err << "\nclient: " << client_done.out
         << "\nserver: " << server_done.out);
    REQUIRE(shown.exit_code == 0);
    CHECK(client_done.exit_code == 0);
    CHECK(server_done.exit_code == 0);
    // Each side's QP, in RTS, connected to the other: one's rqpn is the other's lqpn.
    const Address client_local = address_line(client_done.out, "local");
    const Address server_local = address_line(server_done.out, "local");
    const auto qp_line = [&](const Address& own, const Address& peer) {
        return std::regex(
            "lqpn " + std::to_string(std::stoul(own.qpn, nullptr, 16)) + " rqpn " +
            std::to_string(std::stoul(peer.qpn, nullptr, 16)) + " type RC state RTS rq-psn " +
            std::to_string(std::stoul(peer.psn, nullptr, 16)) + " sq-psn " +
            std::to_string(std::stoul(own.psn, nullptr, 16)) + R"( .*comm 05_exchange)");
    };
    CHECK(std::regex_search(shown.out, qp_line(client_local, server_local)));
    CHECK(std::regex_search(shown.out, qp_line(server_local, client_local)));
}

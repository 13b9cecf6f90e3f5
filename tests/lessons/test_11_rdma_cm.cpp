// SPDX-License-Identifier: MIT
// Lesson 11 on rxe: server and client connected by rdma_cm for real. Each side
// must print the CM events of its flow in order, the server must receive the
// hello message, and the line the client wrote with the rkey from the
// server's private data must be in the server's memory.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "support/catch.hpp"
#include "support/expect.hpp"
#include "support/process.hpp"

using lab::test::lesson;
using lab::test::Process;
using namespace std::chrono_literals;

namespace {

// rdma_cm needs an address of the RDMA device; the micro-VM exports it.
std::string server_address() {
    const char* address = std::getenv("RDMA_LAB_SERVER_ADDR");
    return address != nullptr ? address : "10.77.0.1";
}

std::vector<std::string> cm_events(const std::string& out) {
    std::vector<std::string> events;
    static const std::regex event(R"(CM event: RDMA_CM_EVENT_([A-Z_]+) \(status 0\))");
    for (const auto& line : lab::test::lines(out)) {
        std::smatch match;
        if (std::regex_search(line, match, event)) {
            events.push_back(match[1]);
        }
    }
    return events;
}

}  // namespace

TEST_CASE("11_rdma_cm: the CM events in order, the message and the RDMA write arrive",
          "[lesson11]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    Process server({lesson("11_rdma_cm"), "-p", port, "--timeout", "30"});
    REQUIRE(server.wait_for_output("listening on any address port " + port, 20s));
    Process client({lesson("11_rdma_cm"), "-p", port, "--timeout", "30", server_address()});
    const auto client_result = client.wait(45s);
    const auto server_result = server.wait(20s);
    INFO("server:\n"
         << server_result.out << server_result.err << "\nclient:\n"
         << client_result.out << client_result.err);
    REQUIRE(client_result.exit_code == 0);
    REQUIRE(server_result.exit_code == 0);

    CHECK(cm_events(client_result.out) == std::vector<std::string>{"ADDR_RESOLVED",
                                                                   "ROUTE_RESOLVED", "ESTABLISHED",
                                                                   "DISCONNECTED"});
    CHECK(cm_events(server_result.out) ==
          std::vector<std::string>{"CONNECT_REQUEST", "ESTABLISHED", "DISCONNECTED"});

    CHECK(server_result.out.find(
              "received 44 bytes: \"hello from the client, connected by rdma_cm\"") !=
          std::string::npos);
    CHECK(server_result.out.find("RDMA write left: \"this line arrived by RDMA write\"") !=
          std::string::npos);

    // The private data the client decoded is what the server sent.
    std::smatch sent;
    std::smatch got;
    REQUIRE(std::regex_search(
        server_result.out, sent,
        std::regex(R"(private data: address (0x[0-9a-f]+), rkey (0x[0-9a-f]+))")));
    REQUIRE(std::regex_search(
        client_result.out, got,
        std::regex(R"(private data: address (0x[0-9a-f]+), rkey (0x[0-9a-f]+))")));
    CHECK(sent[1] == got[1]);
    CHECK(sent[2] == got[2]);
    // rdma_accept / rdma_connect left both QPs in RTS, connected to each other.
    CHECK(client_result.out.find("QP state RTS") != std::string::npos);
    CHECK(server_result.out.find("QP state RTS") != std::string::npos);
    // The kernel's IB CM sets min_rnr_timer 0 at RTR on both sides: an RNR wait of 655.36 ms.
    CHECK(client_result.out.find("set by the CM: min_rnr_timer 0,") != std::string::npos);
    CHECK(server_result.out.find("set by the CM: min_rnr_timer 0,") != std::string::npos);
}

// The README's "Things to try", as it writes them.

TEST_CASE("11_rdma_cm: a client started first is rejected (status 8), retries, then connects",
          "[lesson11]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    Process client({lesson("11_rdma_cm"), "-p", port, "--timeout", "40", server_address()});
    REQUIRE(client.wait_for_output("retrying every 200 ms", 20s));
    std::this_thread::sleep_for(1s);  // a few more quiet rejections
    Process server({lesson("11_rdma_cm"), "-p", port, "--timeout", "30"});
    const auto client_result = client.wait(45s);
    const auto server_result = server.wait(20s);
    INFO("server:\n"
         << server_result.out << server_result.err << "\nclient:\n"
         << client_result.out << client_result.err);
    REQUIRE(client_result.exit_code == 0);
    REQUIRE(server_result.exit_code == 0);
    // The IB CM's reject reason 8, "invalid service ID": nobody listened yet.
    const auto lines = lab::test::lines(client_result.out);
    const auto count = [&](const std::string& part) {
        return std::count_if(lines.begin(), lines.end(), [&](const std::string& line) {
            return line.find(part) != std::string::npos;
        });
    };
    CHECK(count("CM event: RDMA_CM_EVENT_REJECTED (status 8)") == 1);  // the retries are quiet
    CHECK(count("rejected: no server listening yet; retrying every 200 ms") == 1);
    CHECK(count("Step 8: rdma_connect sent the request") == 1);
    CHECK(count("CM event: RDMA_CM_EVENT_ESTABLISHED (status 0)") == 1);
    CHECK(server_result.out.find(
              "received 44 bytes: \"hello from the client, connected by rdma_cm\"") !=
          std::string::npos);
}

TEST_CASE("11_rdma_cm --reject: the client prints the reason the server gave", "[lesson11]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    Process server({lesson("11_rdma_cm"), "-p", port, "--timeout", "30", "--reject",
                    "no room for another client"});
    REQUIRE(server.wait_for_output("listening on any address port " + port, 20s));
    const auto client_result = lab::test::run(
        {lesson("11_rdma_cm"), "-p", port, "--timeout", "30", server_address()}, 45s);
    const auto server_result = server.wait(20s);
    INFO("server:\n"
         << server_result.out << server_result.err << "\nclient:\n"
         << client_result.out << client_result.err);
    CHECK(server_result.exit_code == 0);
    CHECK(server_result.out.find(
              "Step 8: rdma_reject, private data \"no room for another client\"") !=
          std::string::npos);
    CHECK(server_result.out.find("rdma_accept") == std::string::npos);
    // Status 28, "consumer defined": the server's own rdma_reject, not "nobody listens".
    CHECK(client_result.out.find("CM event: RDMA_CM_EVENT_REJECTED (status 28)") !=
          std::string::npos);
    lab::test::check_one_error_line(
        client_result,
        "the server rejected us: \"no room for another client\" (its rdma_reject's private data)");
}

TEST_CASE("11_rdma_cm: the GID the CM chose is the RoCE v2 entry of the address", "[lesson11]") {
    // Lesson 01 chooses by type the same way: the RoCE v2 entry with an IPv4 address.
    const auto devices = lab::test::run({lesson("01_devices")}, 30s);
    std::smatch chosen;
    REQUIRE(std::regex_search(devices.out, chosen,
                              std::regex(R"(chosen GID index: (\d+) \(RoCE v2, ::ffff:(\S+)\))")));
    const std::string port = std::to_string(lab::test::free_tcp_port());
    Process server({lesson("11_rdma_cm"), "-p", port, "--timeout", "30"});
    REQUIRE(server.wait_for_output("listening on", 20s));
    const auto client_result =
        lab::test::run({lesson("11_rdma_cm"), "-p", port, "--timeout", "30", chosen[2].str()}, 45s);
    const auto server_result = server.wait(20s);
    INFO("server:\n" << server_result.out << "\nclient:\n" << client_result.out);
    REQUIRE(client_result.exit_code == 0);
    const std::string line = "set by the CM: GID index " + chosen[1].str() + ", access";
    CHECK(client_result.out.find(line) != std::string::npos);
    CHECK(server_result.out.find(line) != std::string::npos);
}

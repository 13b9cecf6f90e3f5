// Lesson 11 on rxe: server and client connected by rdma_cm for real. Each side
// must print the CM events of its flow in order, the server must receive the
// hello message, and the line the client wrote with the rkey from the
// server's private data must be in the server's memory.
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "support/catch.hpp"
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

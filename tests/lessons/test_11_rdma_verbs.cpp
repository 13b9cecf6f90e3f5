// SPDX-License-Identifier: MIT
// Lesson 11's variant with librdmacm's data path (rdma_verbs.h), on rxe: the
// client's hello and the server's reply arrive whole, each side's QP reached
// RTS; without a peer, the watchdog ends each side with one line.
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "support/catch.hpp"
#include "support/expect.hpp"
#include "support/process.hpp"

using lab::test::check_one_error_line;
using lab::test::Process;
using namespace std::chrono_literals;

namespace {

std::string variant() {
    return lab::test::program("lessons/11_rdma_cm/11_rdma_verbs");
}

// rdma_cm needs an address of the RDMA device; the micro-VM exports it.
std::string server_address() {
    const char* address = std::getenv("RDMA_LAB_SERVER_ADDR");
    return address != nullptr ? address : "10.77.0.1";
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("11_rdma_verbs: rdma_post_send and rdma_get_recv_comp carry a message each way",
          "[lesson11]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    Process server({variant(), "-p", port, "--timeout", "30"});
    REQUIRE(server.wait_for_output("listening on rdma_cm port " + port, 20s));
    Process client({variant(), "-p", port, "--timeout", "30", server_address()});
    const auto client_result = client.wait(45s);
    const auto server_result = server.wait(20s);
    INFO("server:\n"
         << server_result.out << server_result.err << "\nclient:\n"
         << client_result.out << client_result.err);
    REQUIRE(client_result.exit_code == 0);
    REQUIRE(server_result.exit_code == 0);
    CHECK(contains(server_result.out, "is in RTS"));
    CHECK(contains(client_result.out, "is in RTS"));
    CHECK(contains(server_result.out, "received 29 bytes: \"hello through rdma_post_send\""));
    CHECK(contains(client_result.out, "received 32 bytes: \"and back through rdma_post_send\""));
}

TEST_CASE("11_rdma_verbs: a client started before the server retries, then connects",
          "[lesson11]") {
    // Each refused attempt takes a new endpoint; the attempt after one must
    // not reuse what rdma_create_ep wrote into the QP attributes of the last.
    const std::string port = std::to_string(lab::test::free_tcp_port());
    Process client({variant(), "-p", port, "--timeout", "40", server_address()});
    std::this_thread::sleep_for(2s);  // refused, several times over
    Process server({variant(), "-p", port, "--timeout", "40"});
    const auto client_result = client.wait(60s);
    const auto server_result = server.wait(20s);
    INFO("server:\n"
         << server_result.out << server_result.err << "\nclient:\n"
         << client_result.out << client_result.err);
    CHECK(client_result.exit_code == 0);
    CHECK(server_result.exit_code == 0);
    CHECK(contains(client_result.out, "received 32 bytes: \"and back through rdma_post_send\""));
}

TEST_CASE("11_rdma_verbs: no peer, a size too small: one line and a non-zero exit",
          "[lesson11][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    SECTION("a client with no server gives up at --timeout") {
        check_one_error_line(
            lab::test::run({variant(), "-p", port, "--timeout", "3", server_address()}, 20s),
            "no answer within --timeout");
    }
    SECTION("a server with no client gives up at --timeout") {
        check_one_error_line(lab::test::run({variant(), "-p", port, "--timeout", "3"}, 20s),
                             "no answer within --timeout");
    }
    SECTION("--size too small for the messages") {
        check_one_error_line(lab::test::run({variant(), "-p", port, "-s", "8"}, 20s),
                             "--size 8 cannot hold the messages");
    }
}

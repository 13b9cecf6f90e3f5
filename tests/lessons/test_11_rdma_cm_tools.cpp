// SPDX-License-Identifier: MIT
// Lesson 11's README: rdma-core's own tools as the first check that RDMA works,
// run for real on the rxe device exactly as the README shows them. rping,
// udaddy and rdma_server/rdma_client connect through rdma_cm (by IP address);
// ib_send_bw exchanges QP information over TCP, as lessons 05-10 do. Each test
// asserts what the tools report having done: the ping data both sides saw,
// the datagrams answered, the status each side ended with, the bandwidth line.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "support/catch.hpp"
#include "support/process.hpp"

namespace fs = std::filesystem;
using lab::test::Process;
using lab::test::Result;
using namespace std::chrono_literals;

namespace {

// Where the tools listen: the IPv4 address of the RoCE v2 GID of the first
// RDMA device's port 1, and that GID's index (what ib_send_bw's -x wants).
struct RoceAddress {
    std::string device;
    int gid_index = -1;
    std::string ipv4;
};

std::string first_line(const fs::path& file) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);
    return line;
}

RoceAddress roce_v2_ipv4_address() {
    RoceAddress found;
    for (const auto& entry : fs::directory_iterator("/sys/class/infiniband")) {
        found.device = entry.path().filename().string();
        break;
    }
    REQUIRE_FALSE(found.device.empty());
    const fs::path port = fs::path("/sys/class/infiniband") / found.device / "ports" / "1";
    for (int index = 0; index < 16; ++index) {
        const std::string type = first_line(port / "gid_attrs" / "types" / std::to_string(index));
        const std::string gid = first_line(port / "gids" / std::to_string(index));
        // An IPv4-mapped GID reads 0000:0000:0000:0000:0000:ffff:0a4d:0001.
        if (type == "RoCE v2" && gid.starts_with("0000:0000:0000:0000:0000:ffff:")) {
            unsigned high = 0;
            unsigned low = 0;
            REQUIRE(std::sscanf(gid.c_str() + 30, "%4x:%4x", &high, &low) == 2);
            found.gid_index = index;
            found.ipv4 = std::to_string(high >> 8) + "." + std::to_string(high & 0xff) + "." +
                         std::to_string(low >> 8) + "." + std::to_string(low & 0xff);
            return found;
        }
    }
    FAIL("no RoCE v2 GID with an IPv4 address on " << found.device << " port 1");
    return found;
}

std::string tool(const std::string& name) {
    for (const char* folder : {"/usr/bin/", "/usr/local/bin/"}) {
        if (fs::exists(folder + name)) {
            return folder + name;
        }
    }
    FAIL(name << " is not installed (rdmacm-utils, perftest: ./lab setup)");
    return name;
}

// The tools' output is block-buffered in a pipe, so a server's "waiting" line
// shows only when it ends: the test gives the server a second, and a client
// that came too early (refused) is tried again while the server still waits.
struct Outputs {
    std::string client;  ///< the client's stdout, then its stderr
    std::string server;  ///< the server's stdout, then its stderr
};

Outputs run_client(const std::vector<std::string>& argv, Process& server) {
    Result result;
    for (int attempt = 0; attempt < 5; ++attempt) {
        result = lab::test::run(argv, 30s);
        if (result.exit_code == 0) {
            break;
        }
        std::this_thread::sleep_for(1s);
    }
    INFO("client stdout:\n" << result.out << "\nclient stderr:\n" << result.err);
    CHECK(result.exit_code == 0);
    const Result served = server.wait(30s);
    INFO("server stdout:\n" << served.out << "\nserver stderr:\n" << served.err);
    CHECK_FALSE(served.timed_out);
    CHECK(served.exit_code == 0);
    return {result.out + result.err, served.out + served.err};
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("rping: three pings go both ways and the server sees the disconnect",
          "[lesson11][tools]") {
    const RoceAddress address = roce_v2_ipv4_address();
    const std::string port = std::to_string(lab::test::free_tcp_port());
    Process server({tool("rping"), "-s", "-a", address.ipv4, "-p", port, "-v", "-V", "-C", "3"});
    std::this_thread::sleep_for(1s);
    const Outputs run = run_client(
        {tool("rping"), "-c", "-a", address.ipv4, "-p", port, "-v", "-V", "-C", "3"}, server);
    for (const std::string ping :
         {"rdma-ping-0: ABCDEF", "rdma-ping-1: BCDEFG", "rdma-ping-2: CDEFGH"}) {
        CHECK(contains(run.client, "ping data: " + ping));
        CHECK(contains(run.server, "server ping data: " + ping));
    }
    CHECK_FALSE(contains(run.client, "rdma-ping-3"));
    // The client's own DISCONNECT line is not asserted: rping prints it from
    // its connection-manager thread, which races with the client's exit
    // (rdma_disconnect, then the client joins only its CQ thread).
    CHECK(contains(run.server, "server DISCONNECT EVENT"));
}

TEST_CASE("udaddy: UD datagrams through rdma_cm, answered by the server", "[lesson11][tools]") {
    const RoceAddress address = roce_v2_ipv4_address();
    Process server({tool("udaddy"), "-b", address.ipv4});
    std::this_thread::sleep_for(1s);
    const Outputs run = run_client({tool("udaddy"), "-s", address.ipv4}, server);
    CHECK(contains(run.client, "initiating data transfers"));
    CHECK(contains(run.client, "receiving data transfers"));
    CHECK(contains(run.client, "return status 0"));
    CHECK(contains(run.server, "sending replies"));
    CHECK(contains(run.server, "return status 0"));
}

TEST_CASE("rdma_server and rdma_client: one message each way, both end with status 0",
          "[lesson11][tools]") {
    const RoceAddress address = roce_v2_ipv4_address();
    const std::string port = std::to_string(lab::test::free_tcp_port());
    Process server({tool("rdma_server"), "-s", address.ipv4, "-p", port});
    std::this_thread::sleep_for(1s);
    const Outputs run = run_client({tool("rdma_client"), "-s", address.ipv4, "-p", port}, server);
    CHECK(contains(run.client, "rdma_client: end 0"));
    CHECK(contains(run.server, "rdma_server: end 0"));
}

TEST_CASE("ib_send_bw: 200 sends of 64 KiB over RC, with a bandwidth on both sides",
          "[lesson11][tools]") {
    const RoceAddress address = roce_v2_ipv4_address();
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {tool("ib_send_bw"),
                                           "-d",
                                           address.device,
                                           "-x",
                                           std::to_string(address.gid_index),
                                           "-p",
                                           port,
                                           "-n",
                                           "200"};
    Process server(base);
    std::this_thread::sleep_for(1s);
    auto with_server = base;
    with_server.push_back(address.ipv4);
    const Outputs run = run_client(with_server, server);
    for (const std::string* out : {&run.client, &run.server}) {
        // " 65536      200              43.83              42.84  ..." on both sides.
        const auto at = out->find(" 65536      200 ");
        REQUIRE(at != std::string::npos);
        double peak = 0;
        double average = 0;
        REQUIRE(std::sscanf(out->c_str() + at, " 65536 200 %lf %lf", &peak, &average) == 2);
        CHECK(average > 0);
    }
    CHECK(contains(run.client, "Connection type : RC"));
    CHECK(contains(run.client, "GID index       : " + std::to_string(address.gid_index)));
}

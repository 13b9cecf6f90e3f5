// SPDX-License-Identifier: MIT
// Lesson 07's variant hello_verbs (raw verbs in one file, no common/), with server and client
// started for real on rxe: the greeting lands in the server's buffer, each side reaches RTS
// and destroys what it created; bad input, a missing server or client, a peer that sends
// something else and a killed peer each end in one line and a non-zero exit, never a hang.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "support/catch.hpp"
#include "support/expect.hpp"
#include "support/pair.hpp"
#include "support/process.hpp"

using lab::test::check_one_error_line;
using lab::test::lesson;
using lab::test::Process;
using lab::test::run;
using lab::test::with;
using namespace std::chrono_literals;

namespace {

const std::string kName = "07_rdma_write/hello_verbs";

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("07_hello_verbs: one RDMA WRITE in raw verbs puts hello verbs in the server's buffer",
          "[lesson07]") {
    const auto [server, client] = lab::test::run_pair(kName, {});
    INFO("server: " << server.out << server.err << "\nclient: " << client.out << client.err);
    REQUIRE(server.exit_code == 0);
    REQUIRE(client.exit_code == 0);
    CHECK(server.err.empty());
    CHECK(client.err.empty());
    CHECK(contains(server.out, "Step 9: the server's buffer holds \"hello verbs\""));
    // The client wrote with the rkey the server registered, and the write succeeded.
    std::smatch match;
    REQUIRE(std::regex_search(server.out, match, std::regex(R"(rkey (0x[0-9a-f]+)\n)")));
    CHECK(contains(client.out, "rkey " + match[1].str() + " completed: success"));
    // Steps 6-7 print what the device granted: a CQ (at least the 1 entry asked for), an RC QP.
    CHECK(contains(client.out, "Step 6-7: CQ with cqe "));
    for (const auto* side : {&server.out, &client.out}) {
        CHECK(contains(*side, "Step 8: QP is in RTS, path MTU 1024"));
        CHECK(contains(*side, "Step 10: QP, CQ, MR, PD and device context destroyed"));
    }
}

TEST_CASE("07_hello_verbs rejects bad input with one line and a non-zero exit",
          "[lesson07][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {lesson(kName), "-p", port, "--timeout", "3"};

    SECTION("flags the program cannot use") {
        lab::test::check_each_rejected(
            lesson(kName), {{{"-p", "0"}, "-p wants a number from 1 to 65535, not '0'"},
                            {{"--port", "lots"}, "--port wants a number from 1 to 65535"},
                            {{"--timeout", "0"}, "--timeout wants a number from 1 to 3600"},
                            {{"-g", "-1"}, "-g wants a number"},
                            {{"-g", "256"}, "-g wants a number from 0 to 255, not '256'"},
                            {{"--bogus"}, "unexpected '--bogus'"},
                            {{"host1", "host2"}, "unexpected 'host2'"},
                            {{"-d"}, "-d needs a value"}});
    }
    SECTION("unknown device") {
        lab::test::check_unknown_device(base);
    }
    SECTION("GID index out of the port's table (an 8-bit sgid_index: at most 255)") {
        check_one_error_line(run(with(base, {"-g", "255"}), 20s),
                             "ibv_query_gid_ex(GID index 255) failed");
    }
    SECTION("SERVER that is not an IPv4 address") {
        check_one_error_line(run(with(base, {"server.example"}), 20s),
                             "SERVER is an IPv4 address such as 10.77.0.1, not 'server.example'");
    }
    SECTION("server not running: the client gives up after --timeout") {
        lab::test::check_server_not_running(
            base, "could not connect to 127.0.0.1:" + port + " within --timeout");
    }
    SECTION("no client comes: the server gives up after --timeout") {
        check_one_error_line(run(base, 30s), "no client connected to TCP port " + port);
    }
    SECTION("TCP port already in use") {
        lab::test::check_port_in_use(base, port, "waiting for a client",
                                     "bind(TCP port " + port + ") failed: Address already in use");
    }
}

TEST_CASE("07_hello_verbs: a peer that sends something else is refused in one line",
          "[lesson07][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    Process server({lesson(kName), "-p", port, "--timeout", "10"});
    REQUIRE(server.wait_for_output("waiting for a client", 20s));
    REQUIRE(lab::test::listening(std::stoi(port), 20s));
    // 40 bytes, the size of the program's message; the QPN field reads 0xffffffff.
    const int fake_peer = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(std::stoi(port)));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(connect(fake_peer, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    const std::vector<char> junk(40, '\xff');
    REQUIRE(send(fake_peer, junk.data(), junk.size(), 0) == 40);
    const auto result = server.wait(20s);
    close(fake_peer);
    check_one_error_line(result, "the peer sent something else (hint: is it 07_hello_verbs?)");
}

TEST_CASE("07_hello_verbs: a peer killed at the barrier is noticed within 2 s, both ways",
          "[lesson07][bad-input]") {
    lab::test::check_peer_killed_at_barrier(kName, "QP is in RTS");
}

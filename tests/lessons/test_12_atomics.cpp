// SPDX-License-Identifier: MIT
// Lesson 12 on rxe: one server, three clients, all for real. The counter
// must end at clients x iters, every client must take and release the lock
// its 200 times, and the word the lock protects (incremented
// by a non-atomic read-modify-write) must not have lost an update.
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/process.hpp"

using lab::test::lesson;
using lab::test::Process;
using namespace std::chrono_literals;

TEST_CASE("12_atomics: three clients share a counter and a lock", "[lesson12]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> common = {lesson("12_atomics"), "-p", port, "-n", "300"};
    auto server_argv = common;
    server_argv.insert(server_argv.end(), {"--clients", "3"});
    Process server(server_argv);
    // All three start at once. The server accepts one at a time; the others
    // wait in its listening socket's queue.
    std::vector<std::unique_ptr<Process>> clients;
    for (int client = 1; client <= 3; ++client) {
        auto client_argv = common;
        client_argv.push_back("127.0.0.1");
        clients.push_back(std::make_unique<Process>(client_argv));
    }
    REQUIRE(server.wait_for_output("3 client(s) connected", 60s));
    std::vector<lab::test::Result> results;
    for (auto& client : clients) {
        results.push_back(client->wait(60s));
    }
    const auto server_result = server.wait(20s);
    INFO("server:\n" << server_result.out << server_result.err);
    CHECK(server_result.exit_code == 0);
    // The lock was free at the end, and no increment of the protected word was lost.
    CHECK(server_result.out.find(
              "counter 900, lock 0, protected word 600 (expected 900, 0, 600): correct") !=
          std::string::npos);

    for (const auto& result : results) {
        INFO("client:\n" << result.out << result.err);
        CHECK(result.exit_code == 0);
        CHECK(result.out.find("atomic_cap ATOMIC_") != std::string::npos);
        CHECK(result.out.find("fetch-and-add: 300 operations") != std::string::npos);
        CHECK(result.out.find("old values came back increasing") != std::string::npos);
        CHECK(result.out.find("lock taken and released 200 times") != std::string::npos);
        // The last old value is the counter before this client's last addition.
        std::smatch last;
        REQUIRE(std::regex_search(result.out, last, std::regex(R"(the last one was (\d+))")));
        CHECK(std::stoull(last[1]) >= 299);
        CHECK(std::stoull(last[1]) < 900);
    }
}

TEST_CASE("12_atomics: the old value lands in host byte order on rxe", "[lesson12]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> common = {lesson("12_atomics"), "-p", port, "-n", "1000"};
    Process server(common);
    auto client_argv = common;
    client_argv.push_back("127.0.0.1");
    const auto client = lab::test::run(client_argv, 60s);
    const auto server_result = server.wait(20s);
    INFO(client.out << client.err << server_result.out << server_result.err);
    REQUIRE(client.exit_code == 0);
    // 999 = 0x3e7 and 1000 = 0x3e8, least significant byte first (the host order of x86-64
    // and arm64).
    CHECK(client.out.find("the last one was 999, bytes e7 03 00 00 00 00 00 00") !=
          std::string::npos);
    CHECK(server_result.out.find("counter 1000, lock 0, protected word 200") != std::string::npos);
}

// SPDX-License-Identifier: MIT
// bench_12_atomics, lesson 12's fetch-and-add measured like perftest, with two
// real processes on the rxe device: the rate and the latency are reported, no
// addition is lost, and a dead peer ends the measuring loop.
#include <chrono>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/expect.hpp"
#include "support/pair.hpp"
#include "support/process.hpp"

using lab::test::check_one_error_line;
using lab::test::lesson;
using lab::test::run;
using lab::test::run_pair;
using lab::test::with;
using namespace std::chrono_literals;

TEST_CASE("bench_12_atomics keeps atomics in flight and loses no addition", "[bench12]") {
    const auto [server, client] = run_pair("bench_12_atomics", {"-n", "2000", "--depth", "16"});
    INFO("server: " << server.out << server.err << "\nclient: " << client.out << client.err);
    REQUIRE(server.exit_code == 0);
    REQUIRE(client.exit_code == 0);
    CHECK(client.out.find("fetch-and-add: 2000 operations in") != std::string::npos);
    CHECK(client.out.find("(depth 16, every 4. signaled)") != std::string::npos);
    CHECK(client.out.find("old values came back increasing; the last one was 1999") !=
          std::string::npos);
    CHECK(server.out.find("counter 2000 (expected 2000): correct") != std::string::npos);
}

TEST_CASE("bench_12_atomics --depth 1 reports a median round trip", "[bench12]") {
    const auto [server, client] = run_pair("bench_12_atomics", {"-n", "320", "--depth", "1"});
    INFO("server: " << server.out << server.err << "\nclient: " << client.out << client.err);
    REQUIRE(client.exit_code == 0);
    CHECK(client.out.find("one at a time: median round trip") != std::string::npos);
    CHECK(server.out.find("counter 320 (expected 320): correct") != std::string::npos);
}

TEST_CASE("bench_12_atomics rejects bad input with one line", "[bench12][bad-input]") {
    const std::vector<std::string> base = {lesson("bench_12_atomics"), "--timeout", "3"};
    check_one_error_line(run(with(base, {"--depth", "0"}), 20s), "--depth");
    check_one_error_line(run(with(base, {"-n", "0"}), 20s), "--iters");
}

TEST_CASE("bench_12_atomics: a peer killed mid-run is noticed within 2 s, both ways",
          "[bench12][bad-input]") {
    lab::test::check_peer_killed_mid_run("bench_12_atomics", {"-n", "100000000"}, "QP is in RTS");
}

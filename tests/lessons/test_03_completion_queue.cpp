// SPDX-License-Identifier: MIT
// Lesson 03 on the real device: the CQ size granted, the empty poll, the
// channel that refuses to go before its CQ, and one clear line for bad input.
#include <regex>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/expect.hpp"
#include "support/process.hpp"

using lab::test::check_each_rejected;
using lab::test::lesson;
using lab::test::run;

#ifndef LAB_BAD_INPUT_ONLY

namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// Requested and granted CQ sizes from "requested N entries, granted M (cq->cqe)".
std::pair<long, long> cq_sizes(const std::string& out) {
    std::smatch match;
    REQUIRE(std::regex_search(out, match,
                              std::regex(R"(requested (\d+) entries, granted (\d+) \(cq->cqe\))")));
    return {std::stol(match[1]), std::stol(match[2])};
}

}  // namespace

TEST_CASE("03_completion_queue gets at least the CQ size it asks for", "[lesson03]") {
    // rxe grants 2^k - 1 entries, the smallest such number not below the request
    // (the README's "Sizes" and "Things to try").
    const std::pair<const char*, long> rxe_grants[] = {
        {"1", 1}, {"16", 31}, {"100", 127}, {"1000", 1023}, {"32767", 32767}};
    for (const auto& [requested, expected] : rxe_grants) {
        const auto result = run({lesson("03_completion_queue"), "--cqe", requested});
        INFO("--cqe " << requested << "\n" << result.out << result.err);
        REQUIRE(result.exit_code == 0);
        const auto [asked, granted] = cq_sizes(result.out);
        CHECK(asked == std::stol(requested));
        CHECK(granted >= asked);
        if (contains(result.out, "opened rxe")) {
            CHECK(granted == expected);
        }
    }
}

TEST_CASE("03_completion_queue --no-channel: a CQ without a channel can be armed, not waited on",
          "[lesson03]") {
    const auto result = run({lesson("03_completion_queue"), "--no-channel"});
    INFO(result.out << result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(contains(result.out,
                   "Step 6: --no-channel: no completion channel, the CQ can only be polled"));
    CHECK_FALSE(contains(result.out, "ibv_create_comp_channel"));
    CHECK(contains(result.out, "ibv_poll_cq(empty CQ, up to 4): returned 0"));
    CHECK(
        contains(result.out, "ibv_req_notify_cq: accepted, but there is no channel fd to wait on"));
    CHECK_FALSE(contains(result.out, "poll(channel fd"));
    CHECK(contains(result.out, "Step 10: ibv_destroy_cq: done (no channel to destroy)"));
    CHECK_FALSE(contains(result.out, "EBUSY"));
    CHECK(result.err.empty());
}

TEST_CASE("03_completion_queue polls an empty CQ and times out waiting for an event",
          "[lesson03]") {
    const auto result = run({lesson("03_completion_queue")});
    INFO(result.out << result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(std::regex_search(result.out, std::regex(R"(ibv_create_comp_channel: fd \d+)")));
    CHECK(contains(result.out, "ibv_poll_cq(empty CQ, up to 4): returned 0"));
    CHECK(contains(result.out, "timed out, no event (nothing completed)"));
    CHECK(contains(result.out, "status      IBV_WC_SUCCESS (0, \"success\")"));
    CHECK(contains(result.out, "status 13 is \"RNR retry counter exceeded\""));
}

TEST_CASE("03_completion_queue: the channel refuses to go before its CQ (EBUSY)", "[lesson03]") {
    const auto result = run({lesson("03_completion_queue")});
    INFO(result.out << result.err);
    REQUIRE(result.exit_code == 0);
    const auto busy =
        result.out.find("ibv_destroy_comp_channel before the CQ: Device or resource busy (EBUSY)");
    const auto cq_gone = result.out.find("ibv_destroy_cq: done");
    const auto channel_gone = result.out.find("ibv_destroy_comp_channel: done");
    REQUIRE(busy != std::string::npos);
    REQUIRE(cq_gone != std::string::npos);
    REQUIRE(channel_gone != std::string::npos);
    CHECK(busy < cq_gone);
    CHECK(cq_gone < channel_gone);
    CHECK(result.err.empty());
}

TEST_CASE("03_completion_queue keeps its cq_context and takes every comp_vector the device has",
          "[lesson03]") {
    const auto first = run({lesson("03_completion_queue")});
    INFO(first.out << first.err);
    REQUIRE(first.exit_code == 0);
    CHECK(contains(first.out, "cq_context: \"the lesson's CQ\"; comp_vector 0 of"));
    std::smatch match;
    REQUIRE(std::regex_search(first.out, match, std::regex(R"(num_comp_vectors (\d+))")));
    const int vectors = std::stoi(match[1]);
    REQUIRE(vectors >= 1);
    const std::string last = std::to_string(vectors - 1);
    const auto on_last = run({lesson("03_completion_queue"), "--comp-vector", last});
    INFO(on_last.out << on_last.err);
    CHECK(on_last.exit_code == 0);
    CHECK(contains(on_last.out, "comp_vector " + last + " of num_comp_vectors"));
    const auto beyond =
        run({lesson("03_completion_queue"), "--comp-vector", std::to_string(vectors)});
    INFO(beyond.out << beyond.err);
    CHECK(beyond.exit_code != 0);
    CHECK(contains(beyond.err, "--comp-vector " + std::to_string(vectors) + " is out of range"));
}

#else

TEST_CASE("03_completion_queue rejects bad input with one line and a non-zero exit",
          "[lesson03][bad-input]") {
    check_each_rejected(lesson("03_completion_queue"),
                        {
                            {{"-d", "no_such_dev0"}, "unknown RDMA device 'no_such_dev0'"},
                            {{"-g", "100000"}, "GID index 100000 is out of range"},
                            {{"-i", "7"}, "port 7 is out of range"},
                            {{"--cqe", "0"}, "--cqe"},
                            {{"--cqe", "-5"}, "--cqe"},
                            {{"--cqe", "lots"}, "--cqe"},
                            {{"--comp-vector", "-1"}, "--comp-vector"},
                            {{"--comp-vector", "100000"}, "--comp-vector 100000 is out of range"},
                            {{"--no-channel", "yes"}, "yes"},
                            // Above the device's max_cqe (32767 on rxe): the verb itself refuses.
                            {{"--cqe", "40000"},
                             "ibv_create_cq failed: Invalid argument (hint: the number of entries "
                             "must be between 1 and the device's max_cqe"},
                            {{"--cqe", "100000000"}, "ibv_create_cq failed: Invalid argument"},
                        });
}

#endif

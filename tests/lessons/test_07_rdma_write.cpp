// Lesson 07 with two real processes on the rxe device: the bytes the client
// writes must arrive in the server's buffer while the server's CQ stays empty.
// (The measuring modes are bench_07_rdma_write's: tests/bench/test_bench_07_rdma_write.cpp.)
#include <regex>
#include <string>

#include "support/catch.hpp"
#include "support/expect.hpp"
#include "support/pair.hpp"
#include "support/process.hpp"

using lab::test::run_pair;

TEST_CASE("07_rdma_write: hello verbs lands in the server's memory, its CQ stays empty",
          "[lesson07]") {
    const auto [server, client] = run_pair("07_rdma_write", {});
    INFO("server: " << server.out << server.err << "\nclient: " << client.out << client.err);
    REQUIRE(server.exit_code == 0);
    REQUIRE(client.exit_code == 0);
    CHECK(server.out.find("the server's buffer holds: \"hello verbs\"") != std::string::npos);
    CHECK(server.out.find("completions on the server's CQ: 0") != std::string::npos);
    CHECK(server.out.find("access LOCAL_WRITE | REMOTE_WRITE") != std::string::npos);
    // The message fits the granted inline size, so it is sent inline.
    CHECK(client.out.find("IBV_WR_RDMA_WRITE of \"hello verbs\" (12 bytes, inline)") !=
          std::string::npos);
    CHECK(client.out.find("write completed: success") != std::string::npos);
    // The client wrote to the address and rkey the server registered.
    std::smatch match;
    REQUIRE(
        std::regex_search(server.out, match, std::regex(R"(rkey (0x[0-9a-f]+), access LOCAL)")));
    CHECK(client.out.find("rkey " + match[1].str() + ", length 4096") != std::string::npos);
}

TEST_CASE("07_rdma_write --inline N: inline up to max_inline_data, refused one byte above",
          "[lesson07]") {
    // How much the device granted, from the lesson's own Step 7 line.
    const auto [plain_server, plain_client] = run_pair("07_rdma_write", {});
    std::smatch match;
    REQUIRE(std::regex_search(plain_client.out, match,
                              std::regex(R"(max_inline_data granted: (\d+) bytes)")));
    const std::string granted = match[1];
    const std::string above = std::to_string(std::stoul(granted) + 1);

    const auto [server, client] = run_pair("07_rdma_write", {"--inline", granted});
    INFO("server: " << server.out << server.err << "\nclient: " << client.out << client.err);
    REQUIRE(server.exit_code == 0);
    REQUIRE(client.exit_code == 0);
    CHECK(client.out.find("--inline " + granted + ": IBV_SEND_INLINE, max_inline_data is " +
                          granted) != std::string::npos);
    CHECK(client.out.find("(" + granted + " bytes, inline)") != std::string::npos);
    // The greeting, padded with dots to N bytes with its zero: N - 12 dots.
    const std::string padded = "hello verbs" + std::string(std::stoul(granted) - 12, '.');
    CHECK(server.out.find("the server's buffer holds: \"" + padded + "\"") != std::string::npos);

    const auto [refusing_server, refused] = run_pair("07_rdma_write", {"--inline", above});
    INFO("server: " << refusing_server.out << refusing_server.err << "\nclient: " << refused.out
                    << refused.err);
    lab::test::check_one_error_line(
        refused,
        "ibv_post_send(IBV_WR_RDMA_WRITE) failed: Invalid argument (hint: an inline payload above "
        "max_inline_data, or a full send queue?)");
    CHECK(refused.out.find("posted IBV_WR_RDMA_WRITE") == std::string::npos);
    lab::test::check_one_error_line(refusing_server, "the peer closed the connection");
}

// Lesson 07 with two real processes on the rxe device: the bytes the client
// writes must arrive in the server's buffer while the server's CQ stays empty,
// and the measuring modes must report numbers.
#include <regex>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/pair.hpp"
#include "support/process.hpp"

using lab::test::column_after_header;
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

TEST_CASE("07_rdma_write --bw reports a bandwidth like ib_write_bw", "[lesson07]") {
    const auto [server, client] =
        run_pair("07_rdma_write", {"--bw", "-s", "4096", "-n", "300", "--depth", "16"});
    INFO("server: " << server.out << server.err << "\nclient: " << client.out << client.err);
    REQUIRE(server.exit_code == 0);
    REQUIRE(client.exit_code == 0);
    CHECK(client.out.find("BW average[MB/sec]") != std::string::npos);
    CHECK(column_after_header(client.out, 0) == 4096);
    CHECK(column_after_header(client.out, 1) == 300);
    CHECK(column_after_header(client.out, 2) > 0);
    // 300 writes, and still no work for the server's CPU.
    CHECK(server.out.find("completions on the server's CQ: 0") != std::string::npos);
}

TEST_CASE("07_rdma_write --lat reports a latency like ib_write_lat", "[lesson07]") {
    for (const auto& extra : {std::vector<std::string>{}, std::vector<std::string>{"--inline"}}) {
        std::vector<std::string> flags = {"--lat", "-s", "32", "-n", "100"};
        flags.insert(flags.end(), extra.begin(), extra.end());
        const auto [server, client] = run_pair("07_rdma_write", flags);
        INFO("server: " << server.out << server.err << "\nclient: " << client.out << client.err);
        REQUIRE(server.exit_code == 0);
        REQUIRE(client.exit_code == 0);
        const double t_min = column_after_header(client.out, 2);
        const double t_max = column_after_header(client.out, 3);
        const double t_typical = column_after_header(client.out, 4);
        CHECK(t_min > 0);
        CHECK(t_min <= t_typical);
        CHECK(t_typical <= t_max);
    }
}

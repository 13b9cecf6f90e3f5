// Lesson 07 with two real processes on the rxe device: the bytes the client
// writes must arrive in the server's buffer while the server's CQ stays empty.
// (The measuring modes are bench_07_rdma_write's: tests/bench/test_bench_07_rdma_write.cpp.)
#include <regex>
#include <string>

#include "support/catch.hpp"
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
    // rxe gives no promise that a write's bytes are placed in order (the query returns 0 on
    // Linux 6.1 and 6.12; only a provider that implements the query, such as mlx5, says 1).
    CHECK(server.out.find("ibv_query_qp_data_in_order(IBV_WR_RDMA_WRITE) = 0") !=
          std::string::npos);
    // The client wrote to the address and rkey the server registered.
    std::smatch match;
    REQUIRE(
        std::regex_search(server.out, match, std::regex(R"(rkey (0x[0-9a-f]+), access LOCAL)")));
    CHECK(client.out.find("rkey " + match[1].str() + ", length 4096") != std::string::npos);
}

// SPDX-License-Identifier: MIT
// Lesson 07 with two real processes on the rxe device: the bytes the client
// writes must arrive in the server's buffer while the server's CQ stays empty.
// (The measuring modes are bench_07_rdma_write's: tests/bench/test_bench_07_rdma_write.cpp.)
// Then, with raw verbs, the errors of the README's table that no flag of the
// lesson provokes: the target's QP or MR without REMOTE_WRITE, inline data
// above max_inline_data.
#include <cerrno>
#include <regex>
#include <string>

#include "lab/verbs.hpp"
#include "support/catch.hpp"
#include "support/expect.hpp"
#include "support/pair.hpp"
#include "support/process.hpp"
#include "support/rxe.hpp"

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

TEST_CASE("an RDMA write refused by the target: QP and MR without REMOTE_WRITE differ",
          "[lesson07]") {
    using namespace std::chrono_literals;
    SECTION("the QP lacks REMOTE_WRITE: remote invalid request") {
        lab::test::PairSetup setup;
        setup.access_b = IBV_ACCESS_REMOTE_READ;
        lab::test::LoopbackPair pair(setup);
        lab::post_rdma(pair.a.get(), IBV_WR_RDMA_WRITE, pair.at(0, 16), pair.mr->lkey,
                       pair.address(32768), pair.mr->rkey);
        const auto done = lab::test::poll_completions(pair.cq_a.get(), 1, 10s);
        REQUIRE(done.size() == 1);
        CHECK(done[0].status == IBV_WC_REM_INV_REQ_ERR);
    }
    SECTION("the MR lacks REMOTE_WRITE: remote access error") {
        lab::test::PairSetup setup;
        setup.region_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
        lab::test::LoopbackPair pair(setup);
        lab::post_rdma(pair.a.get(), IBV_WR_RDMA_WRITE, pair.at(0, 16), pair.mr->lkey,
                       pair.address(32768), pair.mr->rkey);
        const auto done = lab::test::poll_completions(pair.cq_a.get(), 1, 10s);
        REQUIRE(done.size() == 1);
        CHECK(done[0].status == IBV_WC_REM_ACCESS_ERR);
    }
}

TEST_CASE("rxe refuses inline data above max_inline_data with EINVAL", "[lesson07]") {
    lab::test::LoopbackPair pair;
    const ibv_qp_attr attr = lab::test::query_qp(pair.a.get(), IBV_QP_CAP);
    const std::size_t too_long = attr.cap.max_inline_data + 1;
    ibv_sge sge{pair.address(0), static_cast<std::uint32_t>(too_long), pair.mr->lkey};
    ibv_send_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
    wr.wr.rdma.remote_addr = pair.address(32768);
    wr.wr.rdma.rkey = pair.mr->rkey;
    ibv_send_wr* bad = nullptr;
    INFO("max_inline_data " << attr.cap.max_inline_data);
    CHECK(ibv_post_send(pair.a.get(), &wr, &bad) == EINVAL);
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

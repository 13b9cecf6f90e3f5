// SPDX-License-Identifier: MIT
// Lesson 08 with two real processes on the rxe device: each write with
// immediate must land in its slot and raise one receive completion carrying
// the slot number; the send with immediate must land in the receive buffer.
#include <regex>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/pair.hpp"
#include "support/process.hpp"

using lab::test::run_pair;

TEST_CASE("08_write_with_imm: data in place, a completion with the immediate per message",
          "[lesson08]") {
    const auto [server, client] = run_pair("08_write_with_imm", {"-n", "5", "-s", "32"});
    INFO("server: " << server.out << server.err << "\nclient: " << client.out << client.err);
    REQUIRE(server.exit_code == 0);
    REQUIRE(client.exit_code == 0);
    for (int slot = 0; slot < 5; ++slot) {
        const std::string n = std::to_string(slot);
        // byte_len is the written length: "message N" and its zero.
        CHECK(server.out.find("completion IBV_WC_RECV_RDMA_WITH_IMM, wr_id " + n +
                              ", byte_len 10, IBV_WC_WITH_IMM set, imm_data 0x" + n + "\n") !=
              std::string::npos);
        CHECK(server.out.find("slot " + n + " holds \"message " + n + "\" (written in place)") !=
              std::string::npos);
        CHECK(client.out.find("completion IBV_WC_RDMA_WRITE, wr_id " + n) != std::string::npos);
    }
    CHECK(server.out.find("completion IBV_WC_RECV, wr_id 5, byte_len 22, IBV_WC_WITH_IMM set, "
                          "imm_data 0xc0ffee") != std::string::npos);
    CHECK(server.out.find("the receive buffer holds \"and this came by send\"") !=
          std::string::npos);
    CHECK(client.out.find("completion IBV_WC_SEND, wr_id 5") != std::string::npos);
}

TEST_CASE("08_write_with_imm: the immediate value survives large slot numbers", "[lesson08]") {
    const auto [server, client] = run_pair("08_write_with_imm", {"-n", "300"});
    INFO("server: " << server.err << "\nclient: " << client.err);
    REQUIRE(server.exit_code == 0);
    REQUIRE(client.exit_code == 0);
    // 299 = 0x12b: a byte-order mistake would show as 0x2b010000.
    CHECK(server.out.find("imm_data 0x12b\n        slot 299 holds \"message 299\"") !=
          std::string::npos);
}

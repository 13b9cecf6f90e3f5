// Lesson 09 with two real processes on the rxe device: the client must read
// back exactly what the server's buffer holds, echo it behind a fence, and the
// read limits asked for must be the ones the QPs report.
#include <regex>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/pair.hpp"
#include "support/process.hpp"

using lab::test::column_after_header;
using lab::test::run_pair;

TEST_CASE("09_rdma_read: the client reads the server's buffer and echoes it behind a fence",
          "[lesson09]") {
    const auto [server, client] = run_pair("09_rdma_read", {});
    INFO("server: " << server.out << server.err << "\nclient: " << client.out << client.err);
    REQUIRE(server.exit_code == 0);
    REQUIRE(client.exit_code == 0);
    CHECK(server.out.find("access REMOTE_READ only") != std::string::npos);
    CHECK(client.out.find("read completed: success, byte_len 31, we read \"hello from the "
                          "server's memory\"") != std::string::npos);
    CHECK(client.out.find("IBV_WR_SEND of the same bytes with IBV_SEND_FENCE") !=
          std::string::npos);
    CHECK(server.out.find("sent back \"hello from the server's memory\" (it matches)") !=
          std::string::npos);
}

TEST_CASE("09_rdma_read: max_rd_atomic and max_dest_rd_atomic are what --rd-atomic asks",
          "[lesson09]") {
    const auto [server, client] = run_pair("09_rdma_read", {"--rd-atomic", "4"});
    INFO("server: " << server.out << server.err << "\nclient: " << client.out << client.err);
    REQUIRE(server.exit_code == 0);
    REQUIRE(client.exit_code == 0);
    CHECK(server.out.find("QP is in RTS, max_rd_atomic 4, max_dest_rd_atomic 4") !=
          std::string::npos);
    CHECK(client.out.find("QP is in RTS, max_rd_atomic 4, max_dest_rd_atomic 4") !=
          std::string::npos);
    CHECK(client.out.find("device max_qp_rd_atom ") != std::string::npos);
}

TEST_CASE("09_rdma_read --bw and --lat report like ib_read_bw and ib_read_lat", "[lesson09]") {
    {
        const auto [server, client] =
            run_pair("09_rdma_read",
                     {"--bw", "-s", "4096", "-n", "300", "--depth", "32", "--rd-atomic", "8"});
        INFO("server: " << server.out << server.err << "\nclient: " << client.out << client.err);
        REQUIRE(server.exit_code == 0);
        REQUIRE(client.exit_code == 0);
        CHECK(client.out.find("32 reads posted at a time, at most 8 in flight") !=
              std::string::npos);
        CHECK(column_after_header(client.out, 0) == 4096);
        CHECK(column_after_header(client.out, 1) == 300);
        CHECK(column_after_header(client.out, 2) > 0);
    }
    {
        const auto [server, client] = run_pair("09_rdma_read", {"--lat", "-s", "64", "-n", "100"});
        INFO("server: " << server.out << server.err << "\nclient: " << client.out << client.err);
        REQUIRE(server.exit_code == 0);
        REQUIRE(client.exit_code == 0);
        const double t_min = column_after_header(client.out, 2);
        CHECK(t_min > 0);
        CHECK(t_min <= column_after_header(client.out, 4));
    }
}

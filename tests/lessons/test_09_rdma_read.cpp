// Lesson 09 with two real processes on the rxe device: the client must read
// back exactly what the server's buffer holds, echo it behind a fence, and the
// read limits asked for must be the ones the QPs report.
#include <chrono>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/process.hpp"

using lab::test::lesson;
using lab::test::Process;
using lab::test::Result;
using lab::test::run;
using namespace std::chrono_literals;

namespace {

struct Pair {
    Result server;
    Result client;
};

// Start the server, then the client with the same flags, and wait for both.
Pair run_pair(const std::vector<std::string>& flags) {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    std::vector<std::string> argv = {lesson("09_rdma_read"), "-p", port, "--timeout", "20"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    Process server(argv);
    REQUIRE(server.wait_for_output("waiting for a client", 20s));
    argv.push_back("127.0.0.1");
    Pair pair;
    pair.client = run(argv, 60s);
    pair.server = server.wait(30s);
    return pair;
}

// The number in column @p column of the line after the "#bytes" header.
double column_after_header(const std::string& out, std::size_t column) {
    const auto all = lab::test::lines(out);
    for (std::size_t i = 0; i + 1 < all.size(); ++i) {
        if (all[i].find("#bytes") != std::string::npos) {
            std::istringstream values(all[i + 1]);
            std::vector<double> numbers;
            for (double value = 0; values >> value;) {
                numbers.push_back(value);
            }
            REQUIRE(numbers.size() > column);
            return numbers[column];
        }
    }
    FAIL("no #bytes line in: " << out);
    return 0;
}

}  // namespace

TEST_CASE("09_rdma_read: the client reads the server's buffer and echoes it behind a fence",
          "[lesson09]") {
    const auto [server, client] = run_pair({});
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
    const auto [server, client] = run_pair({"--rd-atomic", "4"});
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
            run_pair({"--bw", "-s", "4096", "-n", "300", "--depth", "32", "--rd-atomic", "8"});
        INFO("server: " << server.out << server.err << "\nclient: " << client.out << client.err);
        REQUIRE(server.exit_code == 0);
        REQUIRE(client.exit_code == 0);
        CHECK(client.out.find("32 reads posted at a time, at most 8 in flight") !=
              std::string::npos);
        CHECK(column_after_header(client.out, 0) == 4096);
        CHECK(column_after_header(client.out, 2) > 0);
    }
    {
        const auto [server, client] = run_pair({"--lat", "-s", "64", "-n", "100"});
        INFO("server: " << server.out << server.err << "\nclient: " << client.out << client.err);
        REQUIRE(server.exit_code == 0);
        REQUIRE(client.exit_code == 0);
        const double t_min = column_after_header(client.out, 2);
        CHECK(t_min > 0);
        CHECK(t_min <= column_after_header(client.out, 4));
    }
}

// Lesson 05 with two real processes on the rxe device: the address lines each
// side prints must match the other side's, both QPs must reach RTS, and every
// bad input ends in one clear line, a non-zero exit and no hang.
#include <chrono>
#include <regex>
#include <string>

#include "support/catch.hpp"
#include "support/pair.hpp"

namespace {

struct Address {
    std::string qpn, psn, gid;
};

Address address_line(const std::string& out, const std::string& side) {
    std::smatch match;
    const std::regex line(
        "  " + side +
        R"( address: +LID 0x[0-9a-f]{4}, QPN (0x[0-9a-f]{6}), PSN (0x[0-9a-f]{6}), GID (\S+))");
    REQUIRE(std::regex_search(out, match, line));
    return {match[1], match[2], match[3]};
}

}  // namespace

TEST_CASE("05_exchange connects two QPs: each side's remote line is the other's local line",
          "[lesson05]") {
    const auto [served, client] =
        lab::test::run_pair("05_exchange", {},
                            {.program_timeout = "30",
                             .client_deadline = std::chrono::seconds(40),
                             .server_deadline = std::chrono::seconds(40)});
    INFO("server: " << served.out << served.err << "\nclient: " << client.out << client.err);
    REQUIRE(served.exit_code == 0);
    REQUIRE(client.exit_code == 0);

    const Address server_local = address_line(served.out, "local");
    const Address server_remote = address_line(served.out, "remote");
    const Address client_local = address_line(client.out, "local");
    const Address client_remote = address_line(client.out, "remote");
    CHECK(server_remote.qpn == client_local.qpn);
    CHECK(server_remote.psn == client_local.psn);
    CHECK(server_remote.gid == client_local.gid);
    CHECK(client_remote.qpn == server_local.qpn);
    CHECK(client_remote.psn == server_local.psn);
    CHECK(client_remote.gid == server_local.gid);
    // Same device, so the same RoCE v2 IPv4 GID on both sides.
    CHECK(server_local.gid.rfind("::ffff:", 0) == 0);

    // ibv_query_qp confirms the state and the peer each QP is connected to.
    CHECK(served.out.find("in state RTS, connected to QP " + client_local.qpn) !=
          std::string::npos);
    CHECK(client.out.find("in state RTS, connected to QP " + server_local.qpn) !=
          std::string::npos);
    CHECK(served.out.find("server: both sides are in RTS") != std::string::npos);
    CHECK(client.out.find("client: both sides are in RTS") != std::string::npos);
    // The memory region each side advertises arrives intact (-s default 4096).
    CHECK(served.out.find(", 4096 bytes") != std::string::npos);
}

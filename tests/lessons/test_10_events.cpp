// Lesson 10 on rxe: a server and a client for real. Every message of the three
// rounds must arrive in order, and the server must print its CPU time per
// message for busy polling and for events; solicited-only arming must wake
// the server about once per solicited message, not once per message.
#include <regex>
#include <string>

#include "support/catch.hpp"
#include "support/process.hpp"

using lab::test::lesson;
using lab::test::Process;
using namespace std::chrono_literals;

namespace {

struct Round {
    int received = -1;
    int in_order = -1;
    int wake_ups = -1;  // -1: the round never slept
    double cpu_us_per_message = -1;
};

Round round_of(const std::string& out, const std::string& name) {
    const std::regex line(
        "server: " + name +
        R"( +(\d+) of \d+ messages arrived, (\d+) in order, (never slept|(\d+) wake-ups), CPU ([0-9.]+) us per message)");
    std::smatch match;
    Round round;
    if (std::regex_search(out, match, line)) {
        round.received = std::stoi(match[1]);
        round.in_order = std::stoi(match[2]);
        if (match[4].matched) {
            round.wake_ups = std::stoi(match[4]);
        }
        round.cpu_us_per_message = std::stod(match[5]);
    }
    return round;
}

}  // namespace

TEST_CASE("10_events: all messages arrive in three rounds, with CPU time per message",
          "[lesson10]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> common = {
        lesson("10_events"), "-p", port, "-n", "300", "--rate", "1000", "--solicit-every", "10"};
    Process server(common);
    auto client_argv = common;
    client_argv.push_back("127.0.0.1");
    Process client(client_argv);
    const auto client_result = client.wait(60s);
    const auto server_result = server.wait(30s);
    INFO("server:\n"
         << server_result.out << server_result.err << "\nclient:\n"
         << client_result.out << client_result.err);
    REQUIRE(server_result.exit_code == 0);
    REQUIRE(client_result.exit_code == 0);

    const Round polling = round_of(server_result.out, "busy polling");
    const Round events = round_of(server_result.out, "events");
    const Round solicited = round_of(server_result.out, "solicited events");
    for (const Round& round : {polling, events, solicited}) {
        CHECK(round.received == 300);
        CHECK(round.in_order == 300);
        CHECK(round.cpu_us_per_message > 0);
    }
    CHECK(polling.wake_ups == -1);
    // At least one wake-up, and never more than one per message.
    CHECK(events.wake_ups >= 1);
    CHECK(events.wake_ups <= 300);
    // 30 solicited messages (every 10th, the last among them), plus at most one
    // event from the arming left over from the events round.
    CHECK(solicited.wake_ups >= 1);
    CHECK(solicited.wake_ups <= 31);
    CHECK(client_result.out.find("client: sent 300 messages (server waits by solicited events)") !=
          std::string::npos);
    CHECK(server_result.out.find("destroyed the QP, the CQ, then the completion channel") !=
          std::string::npos);
}

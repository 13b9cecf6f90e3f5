// SPDX-License-Identifier: MIT
// The two-process lessons (05 to 12) given bad input, on the rxe device: each
// case ends in one clear line on stderr, a non-zero exit and no hang, a peer
// killed mid-run included. The cases most lessons share are rows of one table,
// a row per program; each program's rows become test cases named after it
// ("05_exchange rejects bad input ..."), so that a test filter by lesson finds
// them. The cases only one lesson has follow the table as test cases of their own.
#include <arpa/inet.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "lab/exchange.hpp"
#include "support/catch.hpp"
#include "support/expect.hpp"
#include "support/process.hpp"

using lab::test::BadArguments;
using lab::test::check_one_error_line;
using lab::test::check_peer_death_noticed;
using lab::test::check_rejected;
using lab::test::lesson;
using lab::test::PeerRun;
using lab::test::Process;
using lab::test::require_output;
using lab::test::run;
using lab::test::with;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

/// Where lesson 11's client finds the server: an address on the RDMA device.
std::string rdma_cm_server_address() {
    const char* address = std::getenv("RDMA_LAB_SERVER_ADDR");
    return address != nullptr ? address : "10.77.0.1";
}

/// The bad-input cases of one program. In the expected texts "{port}" stands
/// for the test's TCP port and "{address}" for the server's address. An empty
/// text (or a false flag, an empty list) leaves its case out.
struct Program {
    std::string name{};            ///< as lesson() takes it
    std::string tags{};            ///< Catch2 tags: the lesson's and [bad-input]
    bool rdma_cm = false;          ///< its client connects to an RDMA address, not 127.0.0.1
    bool unknown_device = true;    ///< -d no_such_dev0 names the device
    bool gid_out_of_range = true;  ///< -g 100000 names the index
    std::vector<BadArguments> bad_args{};  ///< with "-p PORT --timeout 3"
    std::string not_running{};             ///< a client with no server gives up after --timeout 3
    std::string not_running_stdout{};      ///< ... and prints this on stdout
    std::string no_client{};               ///< a server no client comes to gives up after --timeout
    std::string ready{};                   ///< a server prints it once it listens
    std::string port_in_use{};             ///< a second server on a taken port fails with it
    std::vector<PeerRun> peer_killed{};    ///< moments to kill one side at
    std::string barrier_rts{};             ///< check_peer_killed_at_barrier after this line
    std::string remote_access{};           ///< --wrong-rkey and --wrong-address: the client's error
    std::string server_success{};          ///< ... and what the server must then not print
};

/// The same flags on both sides of a run.
PeerRun both_sides(PeerRun run, const std::vector<std::string>& flags) {
    run.server_flags = with(flags, run.server_flags);
    run.client_flags = with(flags, run.client_flags);
    return run;
}

/// Lesson 10 killed in a round: once the server printed @p previous_round (the
/// end of the one before), a second later. Rounds of 3 s each (3000 messages
/// at 1000 per second). In round 1 the server busy-polls; in rounds 2 and 3 it
/// sleeps on its completion channel, with events read and not yet
/// acknowledged: a server that skipped ibv_ack_cq_events on its way out would
/// hang in ibv_destroy_cq.
PeerRun in_round(std::string when, std::string previous_round) {
    return both_sides({.when = std::move(when),
                       .client_text = "messages of 64 bytes per round",
                       .server_text = std::move(previous_round),
                       .settle = 1s},
                      {"--timeout", "20", "-n", "3000", "--rate", "1000"});
}

const std::array kPrograms = {
    Program{
        .name = "05_exchange",
        .tags = "[lesson05][bad-input]",
        .bad_args = {{{"-s", "0"}, "--size"},
                     {{"-s", "lots"}, "--size"},
                     {{"--timeout", "0"}, "--timeout"}},
        .not_running = "could not connect to 127.0.0.1:{port} within 3.0 s",
        .no_client = "no client connected to TCP port {port}",
        .ready = "waiting for a client",
        .port_in_use = "TCP port {port} is already in use",
        .peer_killed = {both_sides({.when = "the client holds in RTS",
                                    .client_flags = {"--hold", "60"},
                                    .client_text = "holding for 60 s",
                                    .server_text = "waiting for the peer at the barrier"},
                                   {"--timeout", "20"}),
                        both_sides({.when = "the server holds in RTS",
                                    .server_flags = {"--hold", "60"},
                                    .client_text = "waiting for the peer at the barrier",
                                    .server_text = "holding for 60 s"},
                                   {"--timeout", "20"})},
    },
    Program{
        .name = "06_send_recv",
        .tags = "[lesson06][bad-input]",
        .bad_args = {{{"-s", "0"}, "--size"},
                     {{"-s", "-5"}, "--size"},
                     {{"-n", "0"}, "--iters"},
                     {{"-n", "many"}, "--iters"}},
        .not_running = "could not connect to 127.0.0.1:{port} within 3.0 s",
        .ready = "waiting for a client",
        .port_in_use = "TCP port {port} is already in use",
        // Enough iterations to be still running when killed.
        .peer_killed = {both_sides({.when = "during the ping-pong",
                                    .client_text = "client: ping-pong of",
                                    .server_text = "server: ping-pong of",
                                    .settle = 500ms},
                                   {"--timeout", "20", "-s", "64", "-n", "10000000"})},
    },
    Program{
        .name = "07_rdma_write",
        .tags = "[lesson07][bad-input]",
        .bad_args = {{{"-s", "0"}, "--size"},
                     {{"-s", "4"}, "--size 4 cannot hold"},
                     {{"--wrong-rkey", "--wrong-address"}, "excludes"},
                     // The measuring modes left the lesson for bench_07_rdma_write.
                     {{"--bw"}, "--bw"},
                     // --inline N: at least the greeting and its zero, at most the buffer.
                     {{"--inline", "5"}, "--inline"},
                     {{"--inline", "5000"},
                      "--inline 5000 is larger than the buffer (hint: raise -s on both sides)"}},
        .not_running = "could not connect",
        .ready = "waiting for a client",
        .port_in_use = "already in use",
        .barrier_rts = "QP is in RTS",
        .remote_access = "RDMA write: work completion failed: remote access error",
        .server_success = "hello verbs",
    },
    Program{
        .name = "08_write_with_imm",
        .tags = "[lesson08][bad-input]",
        .bad_args = {{{"-s", "0"}, "--size"},
                     {{"-s", "8"}, "--size 8 is too small"},
                     {{"-n", "5000"}, "--iters 5000 is too many"}},
        .not_running = "could not connect",
        .ready = "waiting for a client",
        .port_in_use = "already in use",
        // 1000 messages: the client is still at work when one side is killed.
        .peer_killed = {both_sides(
            {.when = "while the client writes", .server_text = "QP is in RTS"},
            {"--timeout", "20", "-n", "1000"})},
    },
    Program{
        .name = "09_rdma_read",
        .tags = "[lesson09][bad-input]",
        .bad_args = {{{"-s", "0"}, "--size"},
                     {{"-s", "16"}, "--size 16 cannot hold"},
                     {{"--rd-atomic", "0"}, "--rd-atomic"},
                     {{"--rd-atomic", "200"}, "--rd-atomic 200 is above what the device allows"}},
        .not_running = "could not connect",
        .ready = "waiting for a client",
        .port_in_use = "already in use",
        .barrier_rts = "QP is in RTS",
        .remote_access = "RDMA read: work completion failed: remote access error",
        .server_success = "it matches",
    },
    // The measuring program of lesson 09 (bench/09_rdma_read.cpp).
    Program{
        .name = "bench_09_rdma_read",
        .tags = "[lesson09][bad-input]",
        .unknown_device = false,
        .gid_out_of_range = false,
        .bad_args = {{{}, "nothing to measure"},
                     {{"--bw", "--depth", "0"}, "--depth"},
                     {{"--bw", "--lat"}, "--lat"},
                     {{"--bw", "--rd-atomic", "200"},
                      "--rd-atomic 200 is above what the device allows"}},
        .peer_killed = {both_sides(
            {.when = "while it measures", .client_text = "reads posted at a time", .settle = 500ms},
            {"--timeout", "10", "--bw", "-s", "65536", "-n", "100000000"})},
    },
    Program{
        .name = "10_events",
        .tags = "[lesson10][bad-input]",
        .bad_args = {{{"-s", "4"}, "--size 4 is too small"},
                     {{"-s", "0"}, "--size"},
                     {{"--rate", "0"}, "--rate"},
                     {{"--solicit-every", "0"}, "--solicit-every"},
                     // Above the 64 receives the server keeps posted, round 3 could never end.
                     {{"--solicit-every", "65"},
                      "--solicit-every 65 is above the 64 receives the server keeps posted"}},
        .not_running = "could not connect to 127.0.0.1:{port}",
        .ready = "waiting for a client",
        .port_in_use = "TCP port {port} is already in use",
        .peer_killed = {in_round("in round 1 (busy polling)", ""),
                        in_round("in round 2 (events)", "server: busy polling"),
                        in_round("in round 3 (events, solicited)", "server: events ")},
    },
    // rdma_cm: no -g (it finds the GID from the address); the survivor learns of
    // a dead peer from its CM event channel (RDMA_CM_EVENT_DISCONNECTED).
    Program{
        .name = "11_rdma_cm",
        .tags = "[lesson11][bad-input]",
        .rdma_cm = true,
        .gid_out_of_range = false,
        .bad_args = {{{"--reject", ""}, "--reject"},
                     {{"--reject", std::string(141, 'x')}, "needs 1 to 140 characters"},
                     {{"-s", "16"}, "--size 16 is too small"},
                     {{"-s", "0"}, "--size"},
                     // 127.0.0.1 is on no RDMA device.
                     {{"127.0.0.1"}, "rdma_resolve_route failed: No such device"}},
        .not_running = "no server accepted a connection at {address}",
        .not_running_stdout = "RDMA_CM_EVENT_REJECTED",
        .no_client = "timed out waiting for a client (CONNECT_REQUEST)",
        .ready = "listening on",
        // rdma_cm reports a port taken by another listener as EADDRNOTAVAIL.
        .port_in_use = "rdma_bind_addr failed: Cannot assign requested address (hint: another "
                       "rdma_cm program may listen on this port",
        .peer_killed = {both_sides({.when = "while connected",
                                    .client_flags = {"--hold", "30"},
                                    .server_ready = "listening on",
                                    .client_text = "holding the connection"},
                                   {"--timeout", "30"})},
    },
    Program{
        .name = "12_atomics",
        .tags = "[lesson12][bad-input]",
        .bad_args = {{{"--clients", "0"}, "--clients"},
                     // Measuring with atomics in flight is bench_12_atomics's job.
                     {{"--depth", "4"}, "--depth"},
                     {{"-n", "0"}, "--iters"},
                     {{"--wrong-alignment", "--wrong-rkey"}, "excludes"}},
        .not_running = "could not connect to 127.0.0.1:{port}",
        .ready = "atomic_cap",
        .port_in_use = "TCP port {port} is already in use",
        .peer_killed = {both_sides({.when = "in the fetch-and-add loop",
                                    .server_ready = "",  // the client waits for it
                                    .client_text = "remote address",
                                    .settle = 1s},
                                   {"--timeout", "20", "-n", "100000000"})},
    },
};

std::string address_of(const Program& program) {
    return program.rdma_cm ? rdma_cm_server_address() : "127.0.0.1";
}

/// @p text with "{port}" and "{address}" filled in.
std::string filled(std::string text, const std::string& port, const std::string& address) {
    for (const auto& [key, value] : {std::pair{"{port}", port}, std::pair{"{address}", address}}) {
        for (auto at = text.find(key); at != std::string::npos; at = text.find(key, at)) {
            text.replace(at, std::string_view(key).size(), value);
            at += value.size();
        }
    }
    return text;
}

void check_rejects_bad_input(const Program& program) {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::string address = address_of(program);
    const std::vector<std::string> base = {lesson(program.name), "-p", port, "--timeout", "3"};

    if (program.unknown_device) {
        SECTION("unknown device") {
            lab::test::check_unknown_device(base);
        }
    }
    if (program.gid_out_of_range) {
        SECTION("GID index out of range") {
            lab::test::check_gid_out_of_range(base);
        }
    }
    SECTION("bad arguments") {
        for (const auto& [args, expected] : program.bad_args) {
            check_rejected(with(base, args), expected);
        }
    }
    if (!program.not_running.empty()) {
        SECTION("server not running: the client gives up after --timeout") {
            const auto took = lab::test::check_server_not_running(
                base, filled(program.not_running, port, address), address,
                program.not_running_stdout);
            CHECK(took >= 2s);
        }
    }
    if (!program.no_client.empty()) {
        SECTION("no client comes: the server gives up after --timeout") {
            check_rejected(base, filled(program.no_client, port, address), 30s);
        }
    }
    if (!program.port_in_use.empty()) {
        SECTION("port already in use") {
            lab::test::check_port_in_use(base, port, program.ready,
                                         filled(program.port_in_use, port, address));
        }
    }
}

void check_notices_killed_peer(const Program& program) {
    for (const auto& work : program.peer_killed) {
        DYNAMIC_SECTION(work.when) {
            lab::test::check_peer_killed(program.name, address_of(program), work);
        }
    }
    if (!program.barrier_rts.empty()) {
        SECTION("at the barrier after RTS") {
            lab::test::check_peer_killed_at_barrier(program.name, program.barrier_rts);
        }
    }
}

void check_remote_access_error(const Program& program) {
    const std::string flag = GENERATE(as<std::string>{}, "--wrong-rkey", "--wrong-address");
    lab::test::check_remote_access_error(program.name, flag, program.remote_access,
                                         program.server_success);
}

// The test cases of kPrograms[I]: Catch2 registers a test case as a function
// without arguments, so each program gets its own instance of these.
template <std::size_t I>
void rejects_bad_input() {
    check_rejects_bad_input(kPrograms[I]);
}
template <std::size_t I>
void notices_killed_peer() {
    check_notices_killed_peer(kPrograms[I]);
}
template <std::size_t I>
void remote_access_error() {
    check_remote_access_error(kPrograms[I]);
}

void register_test_case(void (*test)(), std::string name, const std::string& tags) {
    static std::deque<std::string> names;  // Catch2 may keep references to them
    names.push_back(std::move(name));
    REGISTER_TEST_CASE(test, names.back(), tags);
}

template <std::size_t... I>
bool register_test_cases(std::index_sequence<I...>) {
    const auto register_program = [](const Program& program, auto rejects, auto peer, auto remote) {
        register_test_case(rejects,
                           program.name +
                               " rejects bad input with one line and a "
                               "non-zero exit",
                           program.tags);
        if (!program.peer_killed.empty() || !program.barrier_rts.empty()) {
            register_test_case(peer,
                               program.name +
                                   ": a peer killed is noticed within 2 s, "
                                   "in both directions",
                               program.tags);
        }
        if (!program.remote_access.empty()) {
            register_test_case(remote,
                               program.name +
                                   ": a wrong rkey or an address past the "
                                   "end is IBV_WC_REM_ACCESS_ERR",
                               program.tags);
        }
    };
    (register_program(kPrograms[I], &rejects_bad_input<I>, &notices_killed_peer<I>,
                      &remote_access_error<I>),
     ...);
    return true;
}

[[maybe_unused]] const bool registered =
    register_test_cases(std::make_index_sequence<kPrograms.size()>{});

}  // namespace

// The cases only one lesson has.

TEST_CASE("05_exchange --no-grh: RoCE refuses a path by LID alone at RTR, on both sides",
          "[lesson05][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {lesson("05_exchange"), "-p", port,
                                           "--timeout",           "20", "--no-grh"};
    Process server(base);
    require_output(server, "waiting for a client", 20s);
    const auto client = run(with(base, {"127.0.0.1"}), 40s);
    const auto served = server.wait(30s);
    for (const auto* side : {&client, &served}) {
        INFO((side == &client ? "client" : "server") << ": " << side->out << side->err);
        CHECK(side->out.find("--no-grh: INIT -> RTR with is_global 0, dlid 0") !=
              std::string::npos);
        check_one_error_line(*side,
                             "ibv_modify_qp(RTR) without a GRH failed: Invalid argument (hint: "
                             "RoCE has no LIDs: set ah_attr.is_global = 1 and the peer's GID)");
        CHECK(side->out.find("is in state RTS") == std::string::npos);
    }
}

TEST_CASE("05_exchange: ibv_rc_pingpong's text message fails the server's magic check",
          "[lesson05][bad-input]") {
    const std::string port = std::to_string(lab::test::free_tcp_port());
    Process server({lesson("05_exchange"), "-p", port, "--timeout", "20"});
    require_output(server, "waiting for a client", 20s);
    // The GID index the server chose: ibv_rc_pingpong takes no other way to it.
    std::smatch match;
    const std::string first_lines = server.so_far().out;
    REQUIRE(std::regex_search(first_lines, match,
                              std::regex(R"(device (\S+), port 1, GID index (\d+))")));
    const auto pingpong = run(
        {"/usr/bin/ibv_rc_pingpong", "-d", match[1], "-g", match[2], "-p", port, "127.0.0.1"}, 30s);
    const auto served = server.wait(30s);
    INFO("ibv_rc_pingpong: " << pingpong.out << pingpong.err);
    CHECK(pingpong.exit_code != 0);
    check_one_error_line(served,
                         "bad connection message: magic 0x30303030, expected 0x52564c58 (hint: "
                         "something else answered on this TCP port; check -p)");
}

namespace {

// What a peer would send in step 8: a made-up QP at @p program's own GID (read
// from its "local address" line), so that its RTR and RTS succeed and it goes
// on to its first barrier.
lab::ConnectionInfo made_up_peer(Process& program) {
    require_output(program, "local address", 20s);
    std::smatch match;
    const std::string out = program.so_far().out;
    REQUIRE(std::regex_search(out, match, std::regex(R"(local address: .* GID (\S+))")));
    lab::ConnectionInfo info;
    info.address.qp_num = 0x123;
    info.address.psn = 0x456;
    REQUIRE(::inet_pton(AF_INET6, match[1].str().c_str(), info.address.gid.raw) == 1);
    return info;
}

// Close the test's end of @p peer, as a peer that died, and check that @p program
// notices within 2 s.
void close_and_check_noticed(lab::Connection peer, Process& program) {
    INFO("its peer, played by the test, closes the connection: "
         << lab::test::command_line(program.argv()));
    const auto start = Clock::now();
    static_cast<void>(lab::Connection(std::move(peer)));  // closed at the end of this line
    const lab::test::Result result = program.wait(30s);
    const std::chrono::duration<double> took = Clock::now() - start;
    std::printf("dead peer noticed in %.2f s (at a barrier)\n", took.count());
    check_one_error_line(result, "the peer closed the connection");
    CHECK(took < lab::test::kNoticeDeadPeerWithin);
}

}  // namespace

TEST_CASE("06_send_recv: a peer that dies in the exchange is noticed within 2 s",
          "[lesson06][bad-input]") {
    // A client that connects and sends nothing, as a peer that died before its message.
    const std::string port = std::to_string(lab::test::free_tcp_port());
    Process server({lesson("06_send_recv"), "-p", port, "--timeout", "20"});
    require_output(server, "waiting for a client", 20s);
    // It says when it has connected: killed before that, it would leave the
    // server waiting for a client, which is another test.
    Process silent({"/bin/bash", "-c",
                    "exec 3<>/dev/tcp/127.0.0.1/" + port + " && echo connected && exec sleep 60"});
    require_output(silent, "connected", 20s);
    std::this_thread::sleep_for(500ms);  // the server is in the exchange, waiting
    check_peer_death_noticed(silent, server, "the peer closed the connection");
}

TEST_CASE("06_send_recv: a peer that dies at a barrier is noticed within 2 s, in both directions",
          "[lesson06][bad-input]") {
    // The test plays the peer: it sends a well-formed step-8 message, then closes
    // its socket while the lesson waits at its first barrier ("both QPs are in RTS").
    const int port = lab::test::free_tcp_port();
    const std::vector<std::string> base = {lesson("06_send_recv"), "-p", std::to_string(port),
                                           "--timeout", "20"};
    SECTION("the client dies at the barrier: the server notices") {
        Process server(base);
        require_output(server, "waiting for a client", 20s);
        const lab::ConnectionInfo info = made_up_peer(server);
        lab::Connection client = lab::Connection::connect_to("127.0.0.1", std::uint16_t(port), 20s);
        client.exchange(info, 20s);
        require_output(server, "remote address", 20s);
        std::this_thread::sleep_for(500ms);  // RTR, RTS, and into the barrier
        close_and_check_noticed(std::move(client), server);
    }
    SECTION("the server dies at the barrier: the client notices") {
        Process client(with(base, {"127.0.0.1"}));
        const lab::ConnectionInfo info = made_up_peer(client);
        lab::Connection server = lab::Connection::accept_one(std::uint16_t(port), 20s);
        server.exchange(info, 20s);
        require_output(client, "remote address", 20s);
        std::this_thread::sleep_for(500ms);
        close_and_check_noticed(std::move(server), client);
    }
}

TEST_CASE("06_send_recv with a different -s on each side: the errors rxe gives",
          "[lesson06][bad-input]") {
    // The client's 128-byte messages do not fit the server's 64-byte receives.
    // rxe (6.1 and 6.12) fails the receive with local QP operation error and the
    // send with remote operation error; the specification (and hardware) say
    // local length error and remote invalid request error.
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {
        lesson("06_send_recv"), "-p", port, "--timeout", "10", "-n", "5"};
    Process server(with(base, {"-s", "64"}));
    require_output(server, "waiting for a client", 20s);
    check_rejected(with(base, {"-s", "128", "127.0.0.1"}),
                   "send: work completion failed: remote operation error", 60s);
    INFO("server: " << lab::test::command_line(server.argv()));
    check_one_error_line(server.wait(30s),
                         "receive: work completion failed: local QP operation error");
}

TEST_CASE("12_atomics: atomics the device must refuse", "[lesson12][bad-input]") {
    // A server and one client with the fault; the server, too, ends with one
    // line instead of waiting.
    const auto [fault, expected] = GENERATE(table<std::string, std::string>({
        // A misaligned address: rxe refuses it when it is posted.
        {"--wrong-alignment", "ibv_post_send(FETCH_AND_ADD) failed: Invalid argument"},
        // A wrong rkey: the server's device answers with a remote access error.
        {"--wrong-rkey",
         "fetch-and-add with a wrong rkey: work completion failed: remote access error"},
        // An address outside the region: a remote access error too.
        {"--wrong-address",
         "fetch-and-add outside the server's region: work completion failed: remote access "
         "error"},
    }));
    const std::string port = std::to_string(lab::test::free_tcp_port());
    const std::vector<std::string> base = {lesson("12_atomics"), "-p", port, "--timeout", "10"};
    Process server(base);
    check_rejected(with(base, {fault, "127.0.0.1"}), expected, 30s);
    INFO("server: " << lab::test::command_line(server.argv()));
    check_one_error_line(server.wait(30s), "the peer closed the connection");
}

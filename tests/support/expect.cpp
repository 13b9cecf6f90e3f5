// SPDX-License-Identifier: MIT
#include "support/expect.hpp"

#include <signal.h>

#include <cstdio>
#include <thread>

namespace lab::test {

using namespace std::chrono_literals;

std::string command_line(const std::vector<std::string>& argv) {
    std::string line;
    for (const auto& word : argv) {
        const bool quote = word.empty() || word.find_first_of(" \t'\"") != std::string::npos;
        line += (line.empty() ? "" : " ") + (quote ? "'" + word + "'" : word);
    }
    return line;
}

Result check_rejected(const std::vector<std::string>& argv, const std::string& expected,
                      std::chrono::milliseconds timeout) {
    INFO("command: " << command_line(argv));
    Result result = run(argv, timeout);
    check_one_error_line(result, expected);
    return result;
}

void require_output(Process& process, const std::string& text, std::chrono::milliseconds timeout) {
    const bool printed = process.wait_for_output(text, timeout);
    INFO("command: " << command_line(process.argv()) << "\nexpected within "
                     << std::chrono::duration<double>(timeout).count() << " s: \"" << text
                     << "\"\nstdout so far: " << process.so_far().out
                     << "\nstderr so far: " << process.so_far().err);
    REQUIRE(printed);
}

void check_each_rejected(const std::string& program, const std::vector<BadArguments>& cases) {
    for (const auto& [args, expected] : cases) {
        check_rejected(with({program}, args), expected);
    }
}

void check_unknown_device(const std::vector<std::string>& base) {
    check_rejected(with(base, {"-d", "no_such_dev0"}), "unknown RDMA device 'no_such_dev0'");
}

void check_gid_out_of_range(const std::vector<std::string>& base) {
    check_rejected(with(base, {"-g", "100000"}), "GID index 100000");
}

std::chrono::steady_clock::duration check_server_not_running(const std::vector<std::string>& base,
                                                             const std::string& expected,
                                                             const std::string& address,
                                                             const std::string& expected_stdout) {
    const auto start = std::chrono::steady_clock::now();
    const Result result = check_rejected(with(base, {address}), expected, 30s);
    const auto took = std::chrono::steady_clock::now() - start;
    INFO("command: " << command_line(with(base, {address})));
    if (!expected_stdout.empty()) {
        INFO("expected on stdout: \"" << expected_stdout << "\"\nstdout: " << result.out);
        CHECK(result.out.find(expected_stdout) != std::string::npos);
    }
    CHECK(took < 15s);
    return took;
}

void check_port_in_use(const std::vector<std::string>& base, const std::string& port,
                       const std::string& ready_text, const std::string& expected) {
    Process first({base.front(), "-p", port, "--timeout", "30"});
    require_output(first, ready_text, 20s);
    std::this_thread::sleep_for(500ms);  // a ready line may come just before listen()
    INFO("while " << command_line(first.argv()) << " holds port " << port);
    check_rejected(base, expected);
}

void check_remote_access_error(const std::string& lesson_name, const std::string& flag,
                               const std::string& expected, const std::string& server_success) {
    const std::string port = std::to_string(free_tcp_port());
    const std::vector<std::string> base = {lesson(lesson_name), "-p", port, "--timeout", "20"};
    Process server(base);
    require_output(server, "waiting for a client", 20s);
    const auto client = run(with(base, {flag, "127.0.0.1"}), 40s);
    INFO(flag);
    check_one_error_line(client, expected);
    CHECK(client.err.find("hint: the peer refused: wrong rkey, an address outside its region") !=
          std::string::npos);
    // The server learns from the closed socket, without a hang.
    const auto served = server.wait(30s);
    CHECK_FALSE(served.timed_out);
    CHECK(served.exit_code != 0);
    CHECK(served.out.find(server_success) == std::string::npos);
}

double check_peer_death_noticed(Process& victim, Process& survivor, const std::string& expected) {
    INFO("killed (SIGKILL): " << command_line(victim.argv())
                              << "\nits peer: " << command_line(survivor.argv()));
    victim.kill(SIGKILL);
    const auto start = std::chrono::steady_clock::now();
    const Result result = survivor.wait(30s);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    std::printf("dead peer noticed in %.2f s (%s)\n", took.count(), expected.c_str());
    check_one_error_line(result, expected);
    CHECK(took < kNoticeDeadPeerWithin);
    return took.count();
}

void check_peer_killed(const std::string& name, const std::string& address, const PeerRun& work) {
    const std::vector<std::string> base = {lesson(name), "-p", std::to_string(free_tcp_port())};
    Process server(with(base, work.server_flags));
    if (!work.server_ready.empty()) {
        require_output(server, work.server_ready, 20s);
    }
    Process client(with(with(base, work.client_flags), {address}));
    if (!work.client_text.empty()) {
        require_output(client, work.client_text, 30s);
    }
    if (!work.server_text.empty()) {
        require_output(server, work.server_text, 30s);
    }
    std::this_thread::sleep_for(work.settle);

    SECTION("client killed: the server notices") {
        check_peer_death_noticed(client, server, "the peer closed the connection");
    }
    SECTION("server killed: the client notices") {
        check_peer_death_noticed(server, client, "the peer closed the connection");
    }
}

void check_peer_killed_mid_run(const std::string& name, const std::vector<std::string>& flags,
                               const std::string& client_running_text) {
    const auto both = with({"--timeout", "10"}, flags);
    check_peer_killed(name, "127.0.0.1",
                      {.when = "mid-run",
                       .server_flags = both,
                       .client_flags = both,
                       .server_ready = "waiting for a client",
                       .client_text = client_running_text,
                       .settle = 500ms});
}

void check_peer_killed_at_barrier(const std::string& lesson_name, const std::string& rts_text) {
    const std::string port = std::to_string(free_tcp_port());
    const std::vector<std::string> base = {lesson(lesson_name), "-p", port, "--timeout", "20"};
    Process server(base);
    require_output(server, "waiting for a client", 20s);
    // It prints that line just before it listens: hold it only once it does.
    REQUIRE(listening(std::stoi(port), 20s));
    server.kill(SIGSTOP);
    Process client(with(base, {"127.0.0.1"}));
    require_output(client, "local address", 30s);
    std::this_thread::sleep_for(2s);  // connected; waiting for the server's information
    client.kill(SIGSTOP);
    server.kill(SIGCONT);
    require_output(server, rts_text, 30s);

    SECTION("client killed: the server's barrier ends when the socket closes") {
        check_peer_death_noticed(client, server, "the peer closed the connection");
    }
    SECTION("server killed: the client's barrier ends when the socket closes") {
        server.kill(SIGSTOP);
        client.kill(SIGCONT);
        require_output(client, rts_text, 30s);
        std::this_thread::sleep_for(500ms);  // at the barrier, waiting for the server
        check_peer_death_noticed(server, client, "the peer closed the connection");
    }
}

}  // namespace lab::test

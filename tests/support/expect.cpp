// SPDX-License-Identifier: MIT
#include "support/expect.hpp"

#include <signal.h>

#include <cstdio>
#include <thread>

namespace lab::test {

using namespace std::chrono_literals;

void check_each_rejected(const std::string& program, const std::vector<BadArguments>& cases) {
    for (const auto& [args, expected] : cases) {
        INFO("args: " << args.front() << " " << args.back());
        check_one_error_line(run(with({program}, args), 20s), expected);
    }
}

void check_unknown_device(const std::vector<std::string>& base) {
    check_one_error_line(run(with(base, {"-d", "no_such_dev0"}), 20s),
                         "unknown RDMA device 'no_such_dev0'");
}

void check_gid_out_of_range(const std::vector<std::string>& base) {
    check_one_error_line(run(with(base, {"-g", "100000"}), 20s), "GID index 100000");
}

std::chrono::steady_clock::duration check_server_not_running(const std::vector<std::string>& base,
                                                             const std::string& expected) {
    const auto start = std::chrono::steady_clock::now();
    check_one_error_line(run(with(base, {"127.0.0.1"}), 30s), expected);
    const auto took = std::chrono::steady_clock::now() - start;
    CHECK(took < 15s);
    return took;
}

void check_port_in_use(const std::vector<std::string>& base, const std::string& port,
                       const std::string& ready_text, const std::string& expected) {
    Process first({base.front(), "-p", port, "--timeout", "30"});
    REQUIRE(first.wait_for_output(ready_text, 20s));
    std::this_thread::sleep_for(500ms);  // a ready line may come just before listen()
    check_one_error_line(run(base, 20s), expected);
}

void check_remote_access_error(const std::string& lesson_name, const std::string& flag,
                               const std::string& expected, const std::string& server_success) {
    const std::string port = std::to_string(free_tcp_port());
    const std::vector<std::string> base = {lesson(lesson_name), "-p", port, "--timeout", "20"};
    Process server(base);
    REQUIRE(server.wait_for_output("waiting for a client", 20s));
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
    victim.kill(SIGKILL);
    const auto start = std::chrono::steady_clock::now();
    const Result result = survivor.wait(30s);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    std::printf("dead peer noticed in %.2f s (%s)\n", took.count(), expected.c_str());
    check_one_error_line(result, expected);
    CHECK(took < kNoticeDeadPeerWithin);
    return took.count();
}

void check_peer_killed_mid_run(const std::string& name, const std::vector<std::string>& flags,
                               const std::string& client_running_text) {
    const std::string port = std::to_string(free_tcp_port());
    const std::vector<std::string> base =
        with({lesson(name), "-p", port, "--timeout", "10"}, flags);
    Process server(base);
    REQUIRE(server.wait_for_output("waiting for a client", 20s));
    Process client(with(base, {"127.0.0.1"}));
    REQUIRE(client.wait_for_output(client_running_text, 30s));
    std::this_thread::sleep_for(500ms);  // the work is under way

    SECTION("client killed: the server notices when the socket closes") {
        check_peer_death_noticed(client, server, "the peer closed the connection");
    }
    SECTION("server killed: the client's wait ends when the socket closes") {
        check_peer_death_noticed(server, client, "the peer closed the connection");
    }
}

void check_peer_killed_at_barrier(const std::string& lesson_name, const std::string& rts_text) {
    const std::string port = std::to_string(free_tcp_port());
    const std::vector<std::string> base = {lesson(lesson_name), "-p", port, "--timeout", "20"};
    Process server(base);
    REQUIRE(server.wait_for_output("waiting for a client", 20s));
    // It prints that line just before it listens: hold it only once it does.
    REQUIRE(listening(std::stoi(port), 20s));
    server.kill(SIGSTOP);
    Process client(with(base, {"127.0.0.1"}));
    REQUIRE(client.wait_for_output("local address", 30s));
    std::this_thread::sleep_for(2s);  // connected; waiting for the server's information
    client.kill(SIGSTOP);
    server.kill(SIGCONT);
    REQUIRE(server.wait_for_output(rts_text, 30s));

    SECTION("client killed: the server's barrier ends when the socket closes") {
        check_peer_death_noticed(client, server, "the peer closed the connection");
    }
    SECTION("server killed: the client's barrier ends when the socket closes") {
        server.kill(SIGSTOP);
        client.kill(SIGCONT);
        REQUIRE(client.wait_for_output(rts_text, 30s));
        std::this_thread::sleep_for(500ms);  // at the barrier, waiting for the server
        check_peer_death_noticed(server, client, "the peer closed the connection");
    }
}

}  // namespace lab::test

// SPDX-License-Identifier: MIT
/**
 * @file expect.hpp
 * @brief Checks shared by the bad-input tests of the two-process lessons.
 */
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/process.hpp"

namespace lab::test {

/// @p argv with @p more appended: the base command of a test plus one case's flags.
inline std::vector<std::string> with(std::vector<std::string> argv,
                                     const std::vector<std::string>& more) {
    argv.insert(argv.end(), more.begin(), more.end());
    return argv;
}

/// @p argv as one line, the way a failure message names a command.
std::string command_line(const std::vector<std::string>& argv);

/// The course's rule for bad input: no hang, a non-zero exit, and exactly one
/// line on stderr, "error: ...", that contains @p expected.
inline void check_one_error_line(const Result& result, const std::string& expected) {
    INFO("expected: a non-zero exit and one line on stderr, \"error: ...\", that contains \""
         << expected << "\"\nstdout: " << result.out << "\nstderr: " << result.err);
    CHECK_FALSE(result.timed_out);
    CHECK(result.exit_code != 0);
    CHECK(result.err.rfind("error: ", 0) == 0);
    CHECK(lines(result.err).size() == 1);
    CHECK(result.err.find(expected) != std::string::npos);
}

/// Run @p argv and check_one_error_line on what it left; a failure names the command.
Result check_rejected(const std::vector<std::string>& argv, const std::string& expected,
                      std::chrono::milliseconds timeout = std::chrono::seconds(20));

/// REQUIRE that @p process prints @p text within @p timeout; a failure names
/// the command and shows what it printed.
void require_output(Process& process, const std::string& text, std::chrono::milliseconds timeout);

/// One bad command line and the text its error line must contain.
struct BadArguments {
    std::vector<std::string> args;  ///< appended to the program
    std::string expected;           ///< part of the one error line
};

/// Run @p program with each case's arguments and check_one_error_line on each.
void check_each_rejected(const std::string& program, const std::vector<BadArguments>& cases);

// The bad-input cases every two-process lesson shares. @p base is the lesson's
// command of the test: the program, "-p PORT" and a short "--timeout".

/// `-d no_such_dev0` names the unknown device.
void check_unknown_device(const std::vector<std::string>& base);

/// `-g 100000` names the GID index out of range.
void check_gid_out_of_range(const std::vector<std::string>& base);

/// A client with no server at @p address gives up with @p expected (and prints
/// @p expected_stdout, unless empty), in under 15 s; returns how long it took,
/// for lessons that check a lower bound too.
std::chrono::steady_clock::duration check_server_not_running(
    const std::vector<std::string>& base, const std::string& expected,
    const std::string& address = "127.0.0.1", const std::string& expected_stdout = "");

/// A second server on @p port, while a first one (started with --timeout 30 and
/// seen to print @p ready_text) holds it, fails with @p expected.
void check_port_in_use(const std::vector<std::string>& base, const std::string& port,
                       const std::string& ready_text, const std::string& expected);

/// A client of lesson @p lesson_name run with @p flag (a wrong rkey, an address
/// past the end) fails with @p expected and the peer's hint; the server ends
/// without a hang, non-zero, and never prints @p server_success.
void check_remote_access_error(const std::string& lesson_name, const std::string& flag,
                               const std::string& expected, const std::string& server_success);

/// How soon a two-process lesson must notice that its peer died, whatever it was doing.
inline constexpr std::chrono::seconds kNoticeDeadPeerWithin{2};

/**
 * Kill @p victim (SIGKILL, as a crash) and check that @p survivor then ends
 * within kNoticeDeadPeerWithin, with a non-zero exit and one error line that
 * contains @p expected. Prints the seconds it took, and returns them.
 */
double check_peer_death_noticed(Process& victim, Process& survivor, const std::string& expected);

/// Both sides of a two-process program at work, for a test that kills one of them.
struct PeerRun {
    std::string when{};                       ///< what they are doing, as a section names it
    std::vector<std::string> server_flags{};  ///< the server's flags after "-p PORT"
    std::vector<std::string> client_flags{};  ///< the client's, before the server's address
    /// The server prints it, then the client starts ("": at once).
    std::string server_ready = "waiting for a client";
    std::string client_text{};            ///< then the client prints it
    std::string server_text{};            ///< then the server
    std::chrono::milliseconds settle{0};  ///< then the work goes on this long
};

/**
 * A peer killed while a two-process program works. Starts @p name (a lesson
 * or a measuring program, see lesson()) as server with a free -p port and
 * @p work's flags, then its client to @p address, waits for each text of
 * @p work that is not empty, in the order of its fields, and lets the work go
 * on for work.settle. One SECTION kills the client, the other the server: the
 * survivor must end with "the peer closed the connection" within
 * kNoticeDeadPeerWithin.
 */
void check_peer_killed(const std::string& name, const std::string& address, const PeerRun& work);

/**
 * check_peer_killed for @p name with @p flags (and --timeout 10) on both
 * sides, once the server waits for a client and the client printed
 * @p client_running_text, half a second later.
 */
void check_peer_killed_mid_run(const std::string& name, const std::vector<std::string>& flags,
                               const std::string& client_running_text);

/**
 * A peer killed while the other side waits at the barrier after RTS, for a
 * lesson whose work is too short to kill it at a chosen moment. The other
 * side is held with SIGSTOP: the server while the client connects and sends
 * its QP information, then the client while the server reaches
 * @p rts_text and waits at the barrier. One SECTION kills the client there;
 * the other holds the server, lets the client reach the barrier and kills
 * the server. Both sides must notice within kNoticeDeadPeerWithin.
 */
void check_peer_killed_at_barrier(const std::string& lesson_name, const std::string& rts_text);

}  // namespace lab::test

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

/// The course's rule for bad input: no hang, a non-zero exit, and exactly one
/// line on stderr, "error: ...", that contains @p expected.
inline void check_one_error_line(const Result& result, const std::string& expected) {
    INFO("stdout: " << result.out << "\nstderr: " << result.err);
    CHECK_FALSE(result.timed_out);
    CHECK(result.exit_code != 0);
    CHECK(result.err.rfind("error: ", 0) == 0);
    CHECK(lines(result.err).size() == 1);
    CHECK(result.err.find(expected) != std::string::npos);
}

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

/// A client with no server at 127.0.0.1 gives up with @p expected, in under 15 s;
/// returns how long it took, for lessons that check a lower bound too.
std::chrono::steady_clock::duration check_server_not_running(const std::vector<std::string>& base,
                                                             const std::string& expected);

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

/**
 * A --bw run of lesson @p lesson_name (64 KiB messages, more than the test
 * waits for) loses its peer mid-transfer. One SECTION kills the client: the
 * server notices through its socket (check_peer_death_noticed). The other
 * kills the server: the client's wait for a completion ends as soon as the
 * server's socket closes. @p client_running_text is what the client prints
 * once its transfers are under way; @p mode is "--bw" or "--lat".
 */
void check_peer_killed_mid_transfer(const std::string& lesson_name,
                                    const std::string& client_running_text,
                                    const std::string& mode = "--bw");

}  // namespace lab::test

// SPDX-License-Identifier: MIT
/**
 * @file process.hpp
 * @brief Start the course's programs from tests, with a timeout on everything.
 *
 * Tests start the real lesson binaries on the real rxe device and look at what
 * they printed. Nothing here can hang: every wait has a deadline, and a
 * program still running at its deadline is killed (and the test fails).
 */
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace lab::test {

/// What a finished program left behind.
struct Result {
    int exit_code = -1;      ///< exit status, or 128 + signal number
    bool timed_out = false;  ///< killed at the deadline
    std::string out;         ///< everything it wrote to stdout
    std::string err;         ///< everything it wrote to stderr
};

/// A program running in the background (a server, say), killed if still running on destruction.
class Process {
  public:
    /// Start @p argv (argv[0] is a path) with stdout and stderr captured;
    /// its standard input is @p input, or empty (/dev/null).
    explicit Process(const std::vector<std::string>& argv,
                     const std::optional<std::string>& input = std::nullopt);
    ~Process();
    Process(const Process&) = delete;
    Process& operator=(const Process&) = delete;

    /// Wait until the output (stdout + stderr) contains @p text; false at the deadline or exit.
    bool wait_for_output(const std::string& text, std::chrono::milliseconds timeout);

    /// Wait for the program to end; kill it at the deadline.
    Result wait(std::chrono::milliseconds timeout);

    /// Send @p signal_number (e.g. SIGKILL to simulate a crash).
    void kill(int signal_number);

    /// Process id.
    [[nodiscard]] pid_t pid() const noexcept { return pid_; }

    /// Output read so far.
    [[nodiscard]] const Result& so_far() const noexcept { return result_; }

    /// The command it was started with.
    [[nodiscard]] const std::vector<std::string>& argv() const noexcept { return argv_; }

  private:
    bool pump(
        std::chrono::milliseconds timeout);  // read what is there; false once both pipes closed
    std::vector<std::string> argv_;
    pid_t pid_ = -1;
    int out_fd_ = -1;
    int err_fd_ = -1;
    bool reaped_ = false;
    Result result_;
};

/// Run @p argv to the end, with a deadline.
Result run(const std::vector<std::string>& argv,
           std::chrono::milliseconds timeout = std::chrono::seconds(60));

/// Run @p argv to the end with @p input as its standard input (what a person
/// would type: lines ending in newlines), with a deadline.
Result run_with_input(const std::vector<std::string>& argv, const std::string& input,
                      std::chrono::milliseconds timeout = std::chrono::seconds(60));

/// Path of a program built by this tree, e.g. program("lessons/01_devices/01_devices").
std::string program(const std::string& relative_path);

/// A lesson's binary: lesson("01_devices") is build/.../lessons/01_devices/01_devices;
/// a measuring program's: lesson("bench_07_rdma_write") is build/.../bench/bench_07_rdma_write;
/// a variant's, named as ./lab run names it: lesson("07_rdma_write/hello_verbs") is
/// build/.../lessons/07_rdma_write/07_hello_verbs.
std::string lesson(const std::string& name);

/// A TCP port nobody listens on, different for each call in this process.
int free_tcp_port();

/// Whether a socket listens on TCP @p port (IPv4, from /proc/net/tcp) within @p timeout.
bool listening(int port, std::chrono::milliseconds timeout);

/// All lines of @p text.
std::vector<std::string> lines(const std::string& text);

/// @p text in lower case, without blanks and line breaks: compared so, a
/// line break or a capital letter hides nothing.
std::string squashed(const std::string& text);

}  // namespace lab::test

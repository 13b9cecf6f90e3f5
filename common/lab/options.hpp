// SPDX-License-Identifier: MIT
/**
 * @file options.hpp
 * @brief One command line for every lesson, the one ibv_rc_pingpong users know (lesson 01).
 *
 * | flag               | meaning                                    | default      |
 * |--------------------|--------------------------------------------|--------------|
 * | -d, --ib-dev NAME  | RDMA device                                | first found  |
 * | -i, --ib-port N    | port of that device                        | 1            |
 * | -g, --gid-idx N    | GID index                                  | automatic    |
 * | -p, --port N       | TCP port of the QP-information exchange    | 18515        |
 * | -s, --size N       | message size in bytes                      | 4096         |
 * | -n, --iters N      | number of iterations                       | 1000         |
 * | -e, --events       | sleep on completion events, do not poll    | off          |
 * | --timeout SECONDS  | how long to wait for the peer at each step | 20           |
 * | SERVER             | the server's address; without it, be the server | —       |
 *
 * A lesson enables the flags that make sense for it and may add its own
 * through app(). Bad input ends the program with one line and exit status 2.
 *
 * A CommandLine also makes stdout line-buffered, so that every line a
 * program prints reaches a pipe (a test, `./lab run`, the peer's user) at
 * once, and no lesson needs to flush.
 */
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "lab/wait.hpp"

namespace lab {

/// Which of the common flags a program accepts.
enum Feature : unsigned {
    kDevice = 1u << 0,     ///< -d, -i, -g
    kTcpPort = 1u << 1,    ///< -p
    kSize = 1u << 2,       ///< -s
    kIters = 1u << 3,      ///< -n
    kEvents = 1u << 4,     ///< -e
    kServerArg = 1u << 5,  ///< the optional positional SERVER
    kTimeout = 1u << 6,    ///< --timeout
};

/// The values of the common flags after parsing.
struct Options {
    std::string device;              ///< -d; empty means the first device
    std::uint8_t ib_port = 1;        ///< -i
    std::optional<int> gid_index;    ///< -g; empty means choose_gid() decides
    std::uint16_t tcp_port = 18515;  ///< -p
    std::size_t size = 4096;         ///< -s
    std::size_t iters = 1000;        ///< -n
    bool events = false;             ///< -e
    std::string server;              ///< SERVER; empty on the server side
    /// --timeout: the bound of each wait for the peer (connect, exchange, barrier, completion)
    std::chrono::milliseconds timeout = kDefaultTimeout;

    /// True for the process started without SERVER.
    [[nodiscard]] bool is_server() const noexcept { return server.empty(); }
};

/// Builds the parser for one program; add lesson-specific flags through app() before parse().
class CommandLine {
  public:
    /**
     * @brief Start the parser, and make stdout line-buffered (before anything is printed).
     * @param description one line printed at the top of --help.
     * @param features a bitwise OR of lab::Feature values.
     */
    CommandLine(std::string_view description, unsigned features);

    /// The underlying CLI11 parser, for flags only one lesson has.
    CLI::App& app() & noexcept { return app_; }

    /// The defaults a lesson wants before parsing (e.g. a smaller --iters).
    Options& defaults() & noexcept { return options_; }

    /**
     * @brief Parse argv. On --help print usage and exit 0; on bad input print
     *        "error: <what> (run with --help for usage)" and exit 2.
     */
    Options parse(int argc, char** argv);

  private:
    CLI::App app_;
    Options options_;
    unsigned features_;
    int ib_port_ = 1;
    int gid_index_ = -1;
    int timeout_seconds_ = 0;
};

}  // namespace lab

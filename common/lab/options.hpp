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
 * A lesson enables the flags that make sense for it and adds its own with
 * flag() and option(). Bad input ends the program with one line and exit
 * status 2.
 *
 * The parser behind it is CLI11, kept out of this header: CLI11 is a large
 * header-only library, and every program that included it took about ten
 * seconds longer to compile.
 *
 * A CommandLine also makes stdout line-buffered, so that every line a
 * program prints reaches a pipe (a test, `./lab run`, the peer's user) at
 * once, and no lesson needs to flush.
 */
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lab/wait.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

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

/// The smallest and the largest value a numeric option accepts (both included).
template <class Number>
struct Bounds {
    Number min;  ///< the smallest value accepted
    Number max;  ///< the largest value accepted
};

/// A flag or option a program added, for the rules between two of them.
class Argument {
  public:
    /// Refuse the command line when this one and @p other are both given.
    Argument excludes(Argument other) const;
    /// Refuse this one unless @p other is given too.
    Argument needs(Argument other) const;

  private:
    friend class CommandLine;
    explicit Argument(CLI::Option* option) noexcept : option_(option) {}
    CLI::Option* option_;
};

/// Builds the parser for one program; add its own flags with flag() and option() before parse().
class CommandLine {
  public:
    /**
     * @brief Start the parser, and make stdout line-buffered (before anything is printed).
     * @param description one line printed at the top of --help.
     * @param features a bitwise OR of lab::Feature values.
     */
    CommandLine(std::string_view description, unsigned features);
    /// Frees the parser.
    ~CommandLine();
    CommandLine(const CommandLine&) = delete;             ///< one parser per program
    CommandLine& operator=(const CommandLine&) = delete;  ///< one parser per program

    /// A flag without a value, e.g. "--no-channel": @p value becomes true when it is given.
    Argument flag(std::string_view names, bool& value, std::string_view help);

    /// An option with a whole number; @p names is e.g. "-c,--cqe".
    Argument option(std::string_view names, int& value, std::string_view help);
    /// An option with a whole number in @p bounds; --help shows its default.
    Argument option(std::string_view names, int& value, std::string_view help, Bounds<int> bounds);
    /// An option with a count that a verb takes as 32 bits (uint32_t).
    Argument option(std::string_view names, std::uint32_t& value, std::string_view help);
    /// An option with a size or a count.
    Argument option(std::string_view names, std::size_t& value, std::string_view help);
    /// An option with a size or a count in @p bounds; --help shows its default.
    Argument option(std::string_view names, std::size_t& value, std::string_view help,
                    Bounds<std::size_t> bounds);
    /// An option with a number in @p bounds; --help shows its default.
    Argument option(std::string_view names, double& value, std::string_view help,
                    Bounds<double> bounds);
    /// An option with one or more sizes, e.g. "--block-sizes 64 1024".
    Argument option(std::string_view names, std::vector<std::size_t>& values,
                    std::string_view help);
    /**
     * @brief An option with text.
     * @param check when given, returns what is wrong with a value ("needs 1 to 8
     *        characters"), or an empty string for a good one.
     */
    Argument option(std::string_view names, std::string& value, std::string_view help,
                    std::function<std::string(const std::string&)> check = {});

    /// The defaults a lesson wants before parsing (e.g. a smaller --iters).
    Options& defaults() & noexcept { return options_; }

    /**
     * @brief Parse argv. On --help print usage and exit 0; on bad input print
     *        "error: <what> (run with --help for usage)" and exit 2.
     */
    Options parse(int argc, char** argv);

  private:
    std::unique_ptr<CLI::App> app_;
    Options options_;
    unsigned features_;
    int ib_port_ = 1;
    int gid_index_ = -1;
    int timeout_seconds_ = 0;
};

}  // namespace lab

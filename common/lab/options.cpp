// SPDX-License-Identifier: MIT
#include "lab/options.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace lab {

Argument Argument::excludes(Argument other) const {
    option_->excludes(other.option_);
    return *this;
}

Argument Argument::needs(Argument other) const {
    option_->needs(other.option_);
    return *this;
}

CommandLine::CommandLine(std::string_view description, unsigned features)
    : app_(std::make_unique<CLI::App>(std::string(description))), features_(features) {
    // Line-buffered even into a pipe, where stdout is otherwise fully buffered:
    // a test or the peer's user reads each line as the program prints it.
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
}

CommandLine::~CommandLine() = default;

Argument CommandLine::flag(std::string_view names, bool& value, std::string_view help) {
    return Argument(app_->add_flag(std::string(names), value, std::string(help)));
}

namespace {

template <class Value>
CLI::Option* add(CLI::App& app, std::string_view names, Value& value, std::string_view help) {
    return app.add_option(std::string(names), value, std::string(help));
}

template <class Number>
CLI::Option* add_bounded(CLI::App& app, std::string_view names, Number& value,
                         std::string_view help, Bounds<Number> bounds) {
    return add(app, names, value, help)
        ->check(CLI::Range(bounds.min, bounds.max))
        ->capture_default_str();
}

}  // namespace

Argument CommandLine::option(std::string_view names, int& value, std::string_view help) {
    return Argument(add(*app_, names, value, help));
}

Argument CommandLine::option(std::string_view names, int& value, std::string_view help,
                             Bounds<int> bounds) {
    return Argument(add_bounded(*app_, names, value, help, bounds));
}

Argument CommandLine::option(std::string_view names, std::uint32_t& value, std::string_view help) {
    return Argument(add(*app_, names, value, help));
}

Argument CommandLine::option(std::string_view names, std::size_t& value, std::string_view help) {
    return Argument(add(*app_, names, value, help));
}

Argument CommandLine::option(std::string_view names, std::size_t& value, std::string_view help,
                             Bounds<std::size_t> bounds) {
    return Argument(add_bounded(*app_, names, value, help, bounds));
}

Argument CommandLine::option(std::string_view names, double& value, std::string_view help,
                             Bounds<double> bounds) {
    return Argument(add_bounded(*app_, names, value, help, bounds));
}

Argument CommandLine::option(std::string_view names, std::vector<std::size_t>& values,
                             std::string_view help) {
    return Argument(add(*app_, names, values, help));
}

Argument CommandLine::option(std::string_view names, std::string& value, std::string_view help,
                             std::function<std::string(const std::string&)> check) {
    CLI::Option* option = add(*app_, names, value, help);
    if (check) {
        option->check(std::move(check));
    }
    return Argument(option);
}

Options CommandLine::parse(int argc, char** argv) {
    // Options are declared here, not in the constructor, so that values a
    // lesson put into defaults() are the ones --help shows.
    ib_port_ = options_.ib_port;
    timeout_seconds_ = static_cast<int>(
        std::chrono::duration_cast<std::chrono::seconds>(options_.timeout).count());
    if (features_ & kDevice) {
        app_->add_option("-d,--ib-dev", options_.device, "RDMA device (default: the first one)");
        add_bounded(*app_, "-i,--ib-port", ib_port_, "port of the device", Bounds{1, 255});
        app_->add_option("-g,--gid-idx", gid_index_,
                         "GID index (default: the RoCE v2 IPv4 entry, found by type)")
            ->check(CLI::NonNegativeNumber);
    }
    if (features_ & kTcpPort) {
        // Not add_bounded: the range is checked as an int, so that 70000 is
        // out of range rather than not a 16-bit number.
        app_->add_option("-p,--port", options_.tcp_port,
                         "TCP port for the exchange of QP information")
            ->check(CLI::Range(1, 65535))
            ->capture_default_str();
    }
    if (features_ & kSize) {
        add_bounded(*app_, "-s,--size", options_.size, "message size in bytes",
                    Bounds<std::size_t>{1, std::size_t{1} << 30});
    }
    if (features_ & kIters) {
        add_bounded(*app_, "-n,--iters", options_.iters, "number of iterations",
                    Bounds<std::size_t>{1, 100'000'000});
    }
    if (features_ & kEvents) {
        app_->add_flag("-e,--events", options_.events,
                       "wait for completion events instead of polling");
    }
    if (features_ & kTimeout) {
        add_bounded(*app_, "--timeout", timeout_seconds_,
                    "seconds to wait for the peer at each step: connecting, each exchange and "
                    "barrier, each completion",
                    Bounds{1, 3600});
    }
    if (features_ & kServerArg) {
        app_->add_option("SERVER", options_.server,
                         "address of the server; leave it out to be the server");
    }
    try {
        app_->parse(argc, argv);
    } catch (const CLI::CallForHelp& help) {
        std::exit(app_->exit(help));
    } catch (const CLI::ParseError& error) {
        std::cerr << "error: " << error.what() << " (run with --help for usage)\n";
        std::exit(2);
    }
    options_.ib_port = static_cast<std::uint8_t>(ib_port_);
    if (gid_index_ >= 0) {
        options_.gid_index = gid_index_;
    }
    options_.timeout = std::chrono::seconds(timeout_seconds_);
    return options_;
}

}  // namespace lab

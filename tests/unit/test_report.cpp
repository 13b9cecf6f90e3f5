// SPDX-License-Identifier: MIT
// Unit tests of lab::print_bandwidth and lab::print_latency: the figures and
// the layout bench/common.sh reads (the line after the "#bytes" header, as in
// perftest's output). No device needed.
#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "lab/report.hpp"
#include "support/catch.hpp"

namespace {

// What @p print writes to stdout, caught through a temporary file behind fd 1.
template <typename Print>
std::string stdout_of(Print print) {
    std::fflush(stdout);
    std::FILE* capture = std::tmpfile();
    REQUIRE(capture != nullptr);
    const int saved = dup(STDOUT_FILENO);
    REQUIRE(dup2(fileno(capture), STDOUT_FILENO) == STDOUT_FILENO);
    print();
    std::fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    std::rewind(capture);
    std::string text;
    for (int c = std::fgetc(capture); c != EOF; c = std::fgetc(capture)) {
        text.push_back(static_cast<char>(c));
    }
    std::fclose(capture);
    return text;
}

// The whitespace-separated fields of the line after the "#bytes" header.
std::vector<std::string> figures(const std::string& text) {
    std::istringstream lines(text);
    std::string line;
    bool header_seen = false;
    while (std::getline(lines, line)) {
        if (header_seen) {
            std::istringstream fields(line);
            std::vector<std::string> result;
            for (std::string field; fields >> field;) {
                result.push_back(field);
            }
            return result;
        }
        header_seen = line.find("#bytes") != std::string::npos;
    }
    return {};
}

}  // namespace

TEST_CASE("bandwidth in perftest's units: MB is 2^20 bytes, Mpps 10^6 messages", "[report]") {
    // 2048 messages of 1 MiB in 2 s: 1024 MB/s and 0.001024 Mpps.
    const auto text =
        stdout_of([] { lab::print_bandwidth(1 << 20, 2048, std::chrono::duration<double>(2.0)); });
    INFO(text);
    CHECK(text.find("BW average[MB/sec]") != std::string::npos);
    CHECK(figures(text) == std::vector<std::string>{"1048576", "2048", "1024.00", "0.001024"});
}

TEST_CASE("latency: min, max, median, mean and 99th percentile of unsorted samples", "[report]") {
    // 1..100 us in reverse order: median at index 49 (50 us), 99% at index 98.
    std::vector<double> samples;
    for (int value = 100; value >= 1; --value) {
        samples.push_back(value);
    }
    const auto text = stdout_of([&] { lab::print_latency(8, samples); });
    INFO(text);
    CHECK(text.find("t_typical[usec]") != std::string::npos);
    CHECK(figures(text) ==
          std::vector<std::string>{"8", "100", "1.00", "100.00", "50.00", "50.50", "99.00"});
}

TEST_CASE("latency with no samples prints nothing", "[report]") {
    CHECK(stdout_of([] { lab::print_latency(8, {}); }).empty());
}

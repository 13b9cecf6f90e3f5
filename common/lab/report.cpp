// SPDX-License-Identifier: MIT
#include "lab/report.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <numeric>

#include "lab/check.hpp"

namespace lab {

void print_bandwidth(std::size_t message_size, std::size_t messages,
                     std::chrono::duration<double> elapsed) {
    const double seconds = elapsed.count();
    const double bytes = static_cast<double>(message_size) * static_cast<double>(messages);
    std::printf(" #bytes     #iterations    BW average[MB/sec]   MsgRate[Mpps]\n");
    std::printf(" %-10zu %-14zu %-20.2f %.6f\n", message_size, messages,
                bytes / seconds / (1024.0 * 1024.0), static_cast<double>(messages) / seconds / 1e6);
}

void print_latency(std::size_t message_size, std::vector<double> microseconds) {
    if (microseconds.empty()) {
        return;
    }
    std::ranges::sort(microseconds);
    const double mean = std::accumulate(microseconds.begin(), microseconds.end(), 0.0) /
                        static_cast<double>(microseconds.size());
    const auto percentile = [&](double fraction) {
        const auto last = static_cast<double>(microseconds.size() - 1);
        return microseconds[static_cast<std::size_t>(fraction * last)];
    };
    std::printf(
        " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
        "t_avg[usec]    99%% percentile[usec]\n");
    std::printf(" %-6zu %-14zu %-14.2f %-12.2f %-16.2f %-14.2f %.2f\n", message_size,
                microseconds.size(), microseconds.front(), microseconds.back(), percentile(0.5),
                mean, percentile(0.99));
}

void print_pingpong(std::size_t message_size, std::size_t iterations,
                    std::chrono::duration<double> elapsed) {
    const double seconds = elapsed.count();
    const double usec = seconds * 1e6;
    const auto bytes = static_cast<unsigned long long>(message_size) * iterations * 2;
    std::printf("%llu bytes in %.2f seconds = %.2f Mbit/sec\n", bytes, seconds,
                double(bytes) * 8.0 / usec);
    std::printf("%zu iters in %.2f seconds = %.2f usec/iter\n", iterations, seconds,
                usec / double(iterations));
}

std::string pinned_memory() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
        if (line.starts_with("VmPin:")) {
            return line.substr(line.find_first_not_of(" \t", 6));
        }
    }
    return "not reported";
}

void fill_message(std::span<std::byte> buffer, std::string_view text) {
    std::ranges::fill(buffer, std::byte('.'));
    std::memcpy(buffer.data(), text.data(), std::min(text.size(), buffer.size()));
}

void check_received(std::span<const std::byte> sent, std::span<const std::byte> received) {
    const std::size_t shown = std::min(received.size(), std::size_t{64});
    std::printf("\treceived: \"%.*s\"%s\n", int(shown),
                reinterpret_cast<const char*>(received.data()),
                shown < received.size() ? " ..." : "");
    if (!std::ranges::equal(sent, received)) {
        throw Error("the received bytes differ from the sent ones");
    }
    std::printf("\tall %zu received bytes equal the sent ones\n", received.size());
}

std::string text_in(std::span<const std::byte> bytes) {
    const auto* text = reinterpret_cast<const char*>(bytes.data());
    return {text, strnlen(text, bytes.size())};
}

std::string hex_bytes(std::span<const std::byte> bytes) {
    std::string text;
    for (const std::byte byte : bytes) {
        char two[4];
        std::snprintf(two, sizeof two, text.empty() ? "%02x" : " %02x",
                      std::to_integer<unsigned>(byte));
        text += two;
    }
    return text;
}

}  // namespace lab

// SPDX-License-Identifier: MIT
#include "lab/report.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>

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

/**
 * @file report.hpp
 * @brief Printing what a program measured the way perftest does (lessons 07 and 09,
 *        exercise 04), and the text that arrived in a buffer.
 *
 * Lesson 07 teaches how to measure bandwidth and latency. Its results are
 * printed in perftest's own layout (a "#bytes" header line, then one line of
 * figures) so that a reader can hold them next to ib_write_bw's output, and so
 * that the benchmark scripts read the course's programs and perftest alike.
 */
#pragma once

#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace lab {

/**
 * @brief Print @p messages messages of @p message_size bytes sent in @p elapsed,
 *        as ib_write_bw does: MB/s (MB = 2^20 bytes) and Mpps (10^6 messages/s).
 */
void print_bandwidth(std::size_t message_size, std::size_t messages,
                     std::chrono::duration<double> elapsed);

/**
 * @brief Print one-way or round-trip times, one per message, as ib_write_lat
 *        does: minimum, maximum, median ("typical"), mean and 99th percentile.
 * @param microseconds the samples; taken by value because they are sorted.
 *        An empty list prints nothing.
 */
void print_latency(std::size_t message_size, std::vector<double> microseconds);

/**
 * @brief The C string at the start of @p bytes, up to its terminating zero or
 *        the end of @p bytes, whichever comes first.
 *
 * For printing what a peer wrote or sent into a buffer (lessons 07 to 11):
 * the bytes come from another process, so a missing zero must not make the
 * program read past the buffer.
 */
std::string text_in(std::span<const std::byte> bytes);

}  // namespace lab

/**
 * @file report.hpp
 * @brief Printing a measurement the way perftest does (lessons 07 and 09, exercise 04).
 *
 * Lesson 07 teaches how to measure bandwidth and latency. Its results are
 * printed in perftest's own layout (a "#bytes" header line, then one line of
 * figures) so that a reader can hold them next to ib_write_bw's output, and so
 * that the benchmark scripts read the course's programs and perftest alike.
 */
#pragma once

#include <chrono>
#include <cstddef>
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

}  // namespace lab

// SPDX-License-Identifier: MIT
/**
 * @file report.hpp
 * @brief Printing what a program measured the way perftest does (the measuring
 *        programs under bench/, lesson 09, exercise 04), and the bytes that arrived in a buffer.
 *
 * Lesson 07's measuring program (bench/07_rdma_write.cpp) measures bandwidth
 * and latency as ib_write_bw and ib_write_lat do. Results are
 * printed in perftest's own layout (a "#bytes" header line, then one line of
 * figures) so that a reader can hold them next to ib_write_bw's output, and so
 * that the benchmark scripts read the course's programs and perftest alike.
 */
#pragma once

#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
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
 * @brief Print a ping-pong of @p iterations round trips of @p message_size bytes
 *        each way that took @p elapsed, as ibv_rc_pingpong does (lesson 06):
 *        bytes moved both ways in Mbit/s, then microseconds per iteration.
 */
void print_pingpong(std::size_t message_size, std::size_t iterations,
                    std::chrono::duration<double> elapsed);

/**
 * @brief VmPin of /proc/self/status, e.g. "16 kB": how much memory this process
 *        has pinned (lesson 02). ibv_reg_mr pins every page its range touches,
 *        once per MR, and the kernel counts it there; "not reported" without it.
 */
std::string pinned_memory();

/**
 * @brief Write @p text at the start of @p buffer and fill the rest with '.'
 *        (lesson 04: a message every byte of which is compared on arrival).
 *        A @p text longer than @p buffer is cut.
 */
void fill_message(std::span<std::byte> buffer, std::string_view text);

/**
 * @brief Print "received: "...": the start of @p received (64 bytes at most, then
 *        " ..."), then check it equals @p sent and say so (lesson 04).
 * @throws lab::Error "the received bytes differ from the sent ones".
 */
void check_received(std::span<const std::byte> sent, std::span<const std::byte> received);

/**
 * @brief The C string at the start of @p bytes, up to its terminating zero or
 *        the end of @p bytes, whichever comes first.
 *
 * For printing what a peer wrote or sent into a buffer (lessons 07 to 11):
 * the bytes come from another process, so a missing zero must not make the
 * program read past the buffer.
 */
std::string text_in(std::span<const std::byte> bytes);

/**
 * @brief @p bytes in hexadecimal, in memory order, separated by spaces
 *        ("e8 03 00 00 00 00 00 00" for the 64-bit 1000 on x86).
 *
 * Lesson 12 shows with it in which byte order an atomic's old value lands.
 */
std::string hex_bytes(std::span<const std::byte> bytes);

}  // namespace lab

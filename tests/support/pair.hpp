// SPDX-License-Identifier: MIT
/**
 * @file pair.hpp
 * @brief Run a two-process lesson (server and client) for real, and read the
 *        perftest-style tables the measuring modes print.
 */
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "support/process.hpp"

namespace lab::test {

/// What the server and the client of one run left behind.
struct Pair {
    Result server;
    Result client;
};

/// How long each side may take; the defaults suit a short run of lessons 07-09.
struct PairLimits {
    std::string ready_text = "waiting for a client";  ///< the server's line before it listens
    std::string program_timeout = "20";  ///< --timeout given to both programs, in seconds
    std::chrono::milliseconds client_deadline = std::chrono::seconds(60);  ///< the client's run
    std::chrono::milliseconds server_deadline = std::chrono::seconds(30);  ///< the server, after it
    /// Flags for the client only, after the common ones (a flag one side has and the other not).
    std::vector<std::string> client_only = {};
};

/// Start lesson @p lesson_name as server on a free port with @p flags, wait for
/// its ready line, run the client with the same flags (and limits.client_only)
/// and 127.0.0.1, then wait for the server. REQUIREs the ready line.
Pair run_pair(const std::string& lesson_name, const std::vector<std::string>& flags,
              const PairLimits& limits = {});

/// The number in column @p column of the line after the "#bytes" header
/// (the table ib_write_bw and its kin print). REQUIREs the header and the column.
double column_after_header(const std::string& out, std::size_t column);

}  // namespace lab::test

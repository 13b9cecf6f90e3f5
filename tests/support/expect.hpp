/**
 * @file expect.hpp
 * @brief Checks shared by the bad-input tests of the two-process lessons.
 */
#pragma once

#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/process.hpp"

namespace lab::test {

/// @p argv with @p more appended: the base command of a test plus one case's flags.
inline std::vector<std::string> with(std::vector<std::string> argv,
                                     const std::vector<std::string>& more) {
    argv.insert(argv.end(), more.begin(), more.end());
    return argv;
}

/// The course's rule for bad input: no hang, a non-zero exit, and exactly one
/// line on stderr, "error: ...", that contains @p expected.
inline void check_one_error_line(const Result& result, const std::string& expected) {
    INFO("stdout: " << result.out << "\nstderr: " << result.err);
    CHECK_FALSE(result.timed_out);
    CHECK(result.exit_code != 0);
    CHECK(result.err.rfind("error: ", 0) == 0);
    CHECK(lines(result.err).size() == 1);
    CHECK(result.err.find(expected) != std::string::npos);
}

}  // namespace lab::test

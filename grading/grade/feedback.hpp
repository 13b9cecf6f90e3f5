// SPDX-License-Identifier: MIT
/**
 * @file feedback.hpp
 * @brief How a check says why it failed: what it expected, what it saw, a hint.
 *
 * Checks report through expect() instead of a bare CHECK, so that a student
 * reads, for example:
 *
 *     expected: the 4 blocks of 64 B packed at the target, 256 bytes
 *         seen: byte 64 is 0xee (untouched): the second block never arrived
 *         hint: each work request writes where the previous one stopped ...
 *
 * When LAB_GRADE_RESULTS names a file, the check program also writes one line
 * per check there (results_listener.cpp): its status, its name and the first
 * reason it failed. `./lab grade` builds its reports from those lines.
 */
#pragma once

#include <string>

#include "support/catch.hpp"

namespace lab::grade {

/// The three parts of a failed check's message.
struct Feedback {
    std::string expected;  ///< what a correct program does
    std::string seen;      ///< what this one did
    std::string hint;      ///< where to look (may be empty)
};

/// The message of @p feedback, one part a line.
inline std::string format(const Feedback& feedback) {
    std::string text = "expected: " + feedback.expected + "\n    seen: " + feedback.seen;
    if (!feedback.hint.empty()) {
        text += "\n    hint: " + feedback.hint;
    }
    return text;
}

/// Pass when @p ok, else fail the check (and go on) with @p feedback; returns @p ok.
inline bool expect(bool ok, const Feedback& feedback) {
    if (ok) {
        SUCCEED();
    } else {
        FAIL_CHECK(format(feedback));
    }
    return ok;
}

/// Like expect(), but a failure ends the check (later steps make no sense without this one).
inline void require(bool ok, const Feedback& feedback) {
    if (ok) {
        SUCCEED();
    } else {
        FAIL(format(feedback));
    }
}

}  // namespace lab::grade

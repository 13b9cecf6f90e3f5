// SPDX-License-Identifier: MIT
/**
 * @file check.hpp
 * @brief The course's one convention for reporting failures (taught in lesson 01).
 *
 * Every verb can fail, and a failure is only useful to a student when it says
 * which call failed, what the kernel or the provider answered (the errno text)
 * and what usually causes it. Lessons call a verb, then hand its result to
 * check() or check_ptr(); on failure a lab::Error is thrown, and run_main()
 * turns it into one line on stderr and a non-zero exit status:
 *
 * @code
 * error: ibv_reg_mr failed: Cannot allocate memory (hint: the memlock limit ...)
 * @endcode
 */
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace lab {

/// A failure that a lesson reports to the user as one line.
class Error : public std::runtime_error {
  public:
    /**
     * @brief An error that run_main() prints as one line.
     * @param message the whole line, without the leading "error: ".
     */
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/**
 * @brief Throw a lab::Error that names @p verb, the text of @p error_number and @p hint.
 * @param verb the call that failed, e.g. "ibv_modify_qp(RTR)".
 * @param error_number an errno value; 0 leaves the errno text out.
 * @param hint the most likely cause and its fix; may be empty.
 */
[[noreturn]] void fail(std::string_view verb, int error_number, std::string_view hint = {});

/**
 * @brief Check the integer result of a verb.
 *
 * Verbs report errors in two styles: most return the errno value itself
 * (ibv_modify_qp, ibv_post_send, ibv_dealloc_pd ...), a few return -1 and set
 * errno (ibv_query_gid, ibv_req_notify_cq on some providers). Both are handled:
 * a positive @p result is taken as the errno value, a negative one reads errno.
 */
void check(int result, std::string_view verb, std::string_view hint = {});

/**
 * @brief Check a pointer returned by a verb; nullptr means failure, errno says why.
 * @return @p pointer, so a call and its check fit in one expression.
 */
template <typename T>
T* check_ptr(T* pointer, std::string_view verb, std::string_view hint = {});

/// Implementation detail of check_ptr(): throws with the current errno.
[[noreturn]] void fail_with_errno(std::string_view verb, std::string_view hint);

template <typename T>
T* check_ptr(T* pointer, std::string_view verb, std::string_view hint) {
    if (pointer == nullptr) {
        fail_with_errno(verb, hint);
    }
    return pointer;
}

/**
 * @brief The text of an errno value and its name, "Invalid argument (EINVAL)"
 *        (lesson 02 prints its refusals so): the message a student sees, and
 *        the name to look up in a man page. Names EINVAL, EBUSY, ENOMEM, EPERM
 *        and EOPNOTSUPP; any other value appears as its number.
 */
std::string errno_text(int error_number);

/**
 * @brief Run a lesson's body and turn any exception into one line and an exit status.
 * @return the body's return value, or 1 after printing "error: <what>" to stderr.
 */
int run_main(const std::function<int()>& body);

}  // namespace lab

// SPDX-License-Identifier: MIT
#include "lab/check.hpp"

#include <cerrno>
#include <cstring>
#include <iostream>

namespace lab {

void fail(std::string_view verb, int error_number, std::string_view hint) {
    std::string message{verb};
    message += " failed";
    if (error_number != 0) {
        message += ": ";
        message += std::strerror(error_number);
    }
    if (!hint.empty()) {
        message += " (hint: ";
        message += hint;
        message += ")";
    }
    throw Error(message);
}

void fail_with_errno(std::string_view verb, std::string_view hint) {
    // Some providers return nullptr without setting errno; say so rather than print "Success".
    fail(verb, errno != 0 ? errno : EIO, hint);
}

void check(int result, std::string_view verb, std::string_view hint) {
    if (result == 0) {
        return;
    }
    fail(verb, result > 0 ? result : (errno != 0 ? errno : EIO), hint);
}

std::string errno_text(int error_number) {
    const std::string name = error_number == EINVAL       ? "EINVAL"
                             : error_number == EBUSY      ? "EBUSY"
                             : error_number == ENOMEM     ? "ENOMEM"
                             : error_number == EPERM      ? "EPERM"
                             : error_number == EOPNOTSUPP ? "EOPNOTSUPP"
                                                          : std::to_string(error_number);
    return std::string(std::strerror(error_number)) + " (" + name + ")";
}

int run_main(const std::function<int()>& body) {
    try {
        return body();
    } catch (const std::exception& error) {
        std::cerr << "error: " << error.what() << '\n';
        return 1;
    }
}

}  // namespace lab

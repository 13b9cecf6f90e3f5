// SPDX-License-Identifier: MIT
#include "support/pair.hpp"

#include <sstream>

#include "support/catch.hpp"

namespace lab::test {

Pair run_pair(const std::string& lesson_name, const std::vector<std::string>& flags,
              const PairLimits& limits) {
    const std::string port = std::to_string(free_tcp_port());
    std::vector<std::string> argv = {lesson(lesson_name), "-p", port, "--timeout",
                                     limits.program_timeout};
    argv.insert(argv.end(), flags.begin(), flags.end());
    Process server(argv);
    REQUIRE(server.wait_for_output(limits.ready_text, std::chrono::seconds(20)));
    argv.insert(argv.end(), limits.client_only.begin(), limits.client_only.end());
    argv.push_back("127.0.0.1");
    Pair pair;
    pair.client = run(argv, limits.client_deadline);
    pair.server = server.wait(limits.server_deadline);
    return pair;
}

double column_after_header(const std::string& out, std::size_t column) {
    const auto all = lines(out);
    for (std::size_t i = 0; i + 1 < all.size(); ++i) {
        if (all[i].find("#bytes") != std::string::npos) {
            std::istringstream values(all[i + 1]);
            std::vector<double> numbers;
            for (double value = 0; values >> value;) {
                numbers.push_back(value);
            }
            REQUIRE(numbers.size() > column);
            return numbers[column];
        }
    }
    FAIL("no #bytes line in: " << out);
    return 0;
}

}  // namespace lab::test

// The checks can fail: on the untouched skeleton of every exercise, its
// check program (built against exercises/NN_name) must report failures, and
// every function the skeleton leaves as a TODO must be named by one of them.
// (Exercise 05 has no TODOs but mistakes; test_05's checks all fail on it.)
// (That every check passes on the solution is shown by the check_sol* tests.)
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "support/catch.hpp"
#include "support/process.hpp"

namespace fs = std::filesystem;

namespace {

// The names in todo("name", ...) calls of the exercise's sources.
std::set<std::string> todo_functions(const fs::path& folder) {
    static const std::regex call(R"re(\btodo\(\s*"([A-Za-z_0-9]+)")re");
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(folder)) {
        if (entry.path().extension() != ".cpp") {
            continue;
        }
        std::ifstream file(entry.path());
        std::stringstream text;
        text << file.rdbuf();
        const std::string source = text.str();
        for (auto it = std::sregex_iterator(source.begin(), source.end(), call);
             it != std::sregex_iterator(); ++it) {
            names.insert((*it)[1]);
        }
    }
    return names;
}

}  // namespace

TEST_CASE("every exercise's checks fail on its skeleton, naming each TODO", "[exercises]") {
    int exercises = 0;
    for (const auto& entry : fs::directory_iterator(LAB_EXERCISES_DIR)) {
        const std::string name = entry.path().filename().string();
        if (!entry.is_directory() || !std::regex_match(name, std::regex(R"(\d\d_\w+)"))) {
            continue;
        }
        const std::string checks =
            lab::test::program("tests/check_ex" + name.substr(0, 2) + name.substr(2));
        if (!fs::exists(checks)) {
            continue;  // an exercise without checks yet
        }
        ++exercises;
        INFO("exercise " << name);
        // Exercises with unwritten functions mark them todo("name"); each must
        // be named by a failing check. "Fix the mistakes" exercises have none.
        const auto todos = todo_functions(entry.path());

        const auto result = lab::test::run({checks}, std::chrono::seconds(400));
        INFO(result.out.substr(0, 4000) << result.err.substr(0, 2000));
        CHECK_FALSE(result.timed_out);
        CHECK(result.exit_code != 0);
        CHECK(result.exit_code < 128);  // failed checks, not a crash
        CHECK(std::regex_search(result.out, std::regex(R"(test cases:\s+\d+ \|.*\d+ failed)")));
        for (const auto& function : todos) {
            INFO("TODO function " << function);
            CHECK(result.out.find("TODO: " + function + " is not written yet") !=
                  std::string::npos);
        }
    }
    CHECK(exercises >= 1);
}

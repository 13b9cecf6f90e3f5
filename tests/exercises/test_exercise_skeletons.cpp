// SPDX-License-Identifier: MIT
// The checks can fail: every exercise's check program, run against the
// student's program built from the untouched skeleton (subject_exNN_name),
// fails every check, and the failures name every function the skeleton
// leaves as a TODO. (Exercise 05 has no TODOs but mistakes: all its checks
// fail too.) That every check passes on the solution is shown by the
// check_NN_name tests themselves.
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

std::string read_text(const fs::path& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

// The names in todo("name", ...) calls of the exercise's sources.
std::set<std::string> todo_functions(const fs::path& folder) {
    static const std::regex call(R"re(\btodo\(\s*"([A-Za-z_0-9]+)")re");
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(folder)) {
        if (entry.path().extension() != ".cpp") {
            continue;
        }
        const std::string source = read_text(entry.path());
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
    for (const auto& entry : fs::directory_iterator(fs::path(LAB_SOURCE_DIR) / "exercises")) {
        const std::string name = entry.path().filename().string();
        if (!entry.is_directory() || !std::regex_match(name, std::regex(R"(\d\d_\w+)"))) {
            continue;
        }
        const std::string checks = lab::test::program("tests/check_" + name);
        const std::string skeleton = lab::test::program("tests/subject_ex" + name);
        if (!fs::exists(checks) || !fs::exists(skeleton)) {
            continue;  // an exercise without checks yet
        }
        ++exercises;
        INFO("exercise " << name);
        const fs::path results = fs::path(LAB_BUILD_DIR) / "tests" / ("skeleton-" + name + ".tsv");
        fs::remove(results);
        const auto run = lab::test::run({"/usr/bin/env", "LAB_SUBJECT=" + skeleton,
                                         "LAB_GRADE_RESULTS=" + results.string(), checks},
                                        std::chrono::seconds(500));
        INFO(run.out.substr(0, 3000) << run.err.substr(0, 1000));
        CHECK_FALSE(run.timed_out);
        CHECK(run.exit_code != 0);
        CHECK(run.exit_code < 128);  // failed checks, not a crash of the check program
        const std::string lines = read_text(results);
        INFO(lines);
        const auto listed = lab::test::lines(lines);
        CHECK(listed.size() >= 3);  // exercise 06 has three checks
        for (const auto& line : listed) {
            CHECK(line.rfind("fail\t", 0) == 0);
        }
        for (const auto& function : todo_functions(entry.path())) {
            INFO("TODO function " << function);
            CHECK(lines.find("TODO: " + function + " is not written yet") != std::string::npos);
        }
    }
    CHECK(exercises >= 7);
}

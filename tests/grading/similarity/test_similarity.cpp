// SPDX-License-Identifier: MIT
// The similarity step of ./lab grade --class (grading/similarity.sh), alone:
// no compiling, no micro-VM. A made-up class of exercise 03 (srq.cpp):
//   alice, bob, carol, dave  four honest solutions, each written its own way
//                            (the files beside this one);
//   eve                      dave's file, copied, its comments changed;
//   frank                    carol's file with its identifiers renamed, and
//                            nothing else changed;
//   gina, hank               the skeleton, untouched (identical, yet all of
//                            it is the skeleton's, which is left out).
// The report must name exactly dave-eve and carol-frank, with line ranges of
// both sides that lie in the students' own code. Bad input (one submission, a
// submission without sources, no sim_c++) gives a clear line and no crash.
//
// These folders leave the student edition (grading/export.sh): the four are
// working answers of exercise 03.
#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../text_files.hpp"
#include "support/catch.hpp"
#include "support/process.hpp"

namespace fs = std::filesystem;

using lab::test::read_text;
using lab::test::write_text;

namespace {

const fs::path kSource = LAB_SOURCE_DIR;
const fs::path kHere = kSource / "tests" / "grading" / "similarity";
const fs::path kWork = fs::path(LAB_BUILD_DIR) / "tests" / "similarity";
const std::string kFile = "03_srq_server/srq.cpp";

bool have_sim() {
    return lab::test::run({"/bin/sh", "-c", "command -v sim_c++"}).exit_code == 0;
}

lab::test::Result similarity(const fs::path& klass, const fs::path& report,
                             const std::vector<std::string>& more = {}) {
    std::vector<std::string> argv = {(kSource / "grading" / "similarity.sh").string(), "--skeleton",
                                     (kSource / "exercises").string(), "--report", report.string()};
    argv.insert(argv.end(), more.begin(), more.end());
    argv.push_back(klass.string());
    return lab::test::run(argv);
}

// Every whole-word occurrence of each name replaced by its new name.
std::string rename(std::string text,
                   const std::vector<std::pair<std::string, std::string>>& names) {
    for (const auto& [from, to] : names) {
        text = std::regex_replace(text, std::regex("\\b" + from + "\\b"), to);
    }
    return text;
}

// The "pair:" lines of a report, without what follows the file name.
std::set<std::string> pairs_in(const std::string& report) {
    std::set<std::string> pairs;
    static const std::regex pair_line(R"(^pair: (\S+ \S+ \S+) \()");
    std::istringstream lines(report);
    std::string line;
    while (std::getline(lines, line)) {
        std::smatch match;
        if (std::regex_search(line, match, pair_line)) {
            pairs.insert(match[1]);
        }
    }
    return pairs;
}

}  // namespace

TEST_CASE("the similarity report names the copied and the renamed pair, no honest one",
          "[grading][similarity]") {
    const fs::path klass = kWork / "class";
    const fs::path report = kWork / "out" / "similarity.txt";
    fs::remove_all(kWork);
    // Laid out as ./lab grade --class leaves a class: STUDENT/src/NN_name/FILE.
    const auto hand_in = [&](const std::string& student, const std::string& text) {
        write_text(klass / student / "src" / kFile, text);
    };
    for (const std::string student : {"alice", "bob", "carol", "dave"}) {
        hand_in(student, read_text(kHere / student / "srq.cpp"));
    }
    const std::string dave = read_text(kHere / "dave" / "srq.cpp");
    const std::string eve = std::regex_replace(dave, std::regex("// Walk from the last slot.*"),
                                               "// last to first, so each links to the next");
    REQUIRE(eve != dave);
    hand_in("eve", eve);
    const std::string carol = read_text(kHere / "carol" / "srq.cpp");
    const std::string frank = rename(carol, {{"setup", "init_attr"},
                                             {"queue", "new_srq"},
                                             {"sizes", "qp_sizes"},
                                             {"slot", "n"},
                                             {"piece", "entry"},
                                             {"request", "recv"},
                                             {"failed", "bad_recv"},
                                             {"wanted", "mod"},
                                             {"give_up", "deadline"},
                                             {"slice", "wait_ms"},
                                             {"one", "pfd"},
                                             {"ready", "rc"},
                                             {"got", "event"},
                                             {"is_limit", "limit_hit"},
                                             {"is_ours", "mine"}});
    REQUIRE(frank != carol);
    REQUIRE(std::count(frank.begin(), frank.end(), '\n') ==
            std::count(carol.begin(), carol.end(), '\n'));
    hand_in("frank", frank);
    const std::string skeleton = read_text(kSource / "exercises" / kFile);
    REQUIRE_FALSE(skeleton.empty());
    hand_in("gina", skeleton);
    hand_in("hank", skeleton);

    const auto run = similarity(klass, report, {"--sources", "src"});
    INFO(run.out << run.err);
    if (!have_sim()) {
        // A release without the package (Debian 13): one clear line, no report.
        WARN("sim_c++ is not installed: only its absence is checked");
        CHECK(run.exit_code == 1);
        CHECK(run.out.find("sim_c++ is missing") != std::string::npos);
        return;
    }
    REQUIRE(run.exit_code == 0);
    // One line: how many pairs, and where the report is.
    CHECK(run.out == "similarity: 2 pair(s) at or above 50 % among 8 submissions; report: " +
                         report.string() + "\n");
    const std::string text = read_text(report);
    INFO(text);
    CHECK(pairs_in(text) == std::set<std::string>{"carol frank " + kFile, "dave eve " + kFile});
    CHECK(text.find("A lead, not a verdict") != std::string::npos);

    // Each pair's matching regions: line ranges of both sides, inside the
    // students' own code (the skeleton's first 13 lines are everyone's).
    static const std::regex region(
        R"((\w+)/03_srq_server/srq\.cpp lines (\d+)-(\d+)  =  (\w+)/03_srq_server/srq\.cpp lines (\d+)-(\d+)  \((\d+) tokens\))");
    std::set<std::string> sides;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), region);
         it != std::sregex_iterator(); ++it) {
        const std::smatch& match = *it;
        sides.insert(match[1].str() + "-" + match[4].str());
        CHECK(std::stoi(match[2]) > 13);
        CHECK(std::stoi(match[5]) > 13);
        CHECK(std::stoi(match[2]) <= std::stoi(match[3]));
        CHECK(std::stoi(match[7]) >= 24);
    }
    CHECK(sides == std::set<std::string>{"carol-frank", "dave-eve"});

    // With the threshold at 1 %, the honest pairs show how little they share.
    const auto low =
        similarity(klass, kWork / "out" / "low.txt", {"--sources", "src", "--threshold", "1"});
    REQUIRE(low.exit_code == 0);
    const std::string all = read_text(kWork / "out" / "low.txt");
    static const std::regex percents(
        R"(^pair: (\S+) (\S+) \S+ \((\d+) % of \S+ file is found in \S+, (\d+) % )");
    std::istringstream lines(all);
    std::string line;
    while (std::getline(lines, line)) {
        std::smatch match;
        if (!std::regex_search(line, match, percents)) {
            continue;
        }
        INFO(line);
        const std::string pair = match[1].str() + "-" + match[2].str();
        CHECK(pair.find("gina") == std::string::npos);  // the skeleton shares nothing
        CHECK(pair.find("hank") == std::string::npos);
        if (pair == "carol-frank" || pair == "dave-eve") {
            CHECK(std::stoi(match[3]) == 100);
            CHECK(std::stoi(match[4]) == 100);
        } else {
            CHECK(std::max(std::stoi(match[3]), std::stoi(match[4])) < 25);
        }
    }
}

TEST_CASE("the similarity step says why it has nothing to compare, and does not crash",
          "[grading][similarity][bad-input]") {
    const fs::path klass = kWork / "lonely";
    const fs::path report = kWork / "out" / "lonely.txt";
    fs::remove_all(klass);
    write_text(klass / "alice" / kFile, read_text(kHere / "alice" / "srq.cpp"));
    fs::create_directories(klass / "empty");                            // handed in nothing
    write_text(klass / "notes" / "README.txt", "I ran out of time\n");  // no source file
    const auto run = similarity(klass, report);
    INFO(run.out << run.err);
    if (!have_sim()) {
        CHECK(run.exit_code == 1);
        CHECK(run.out.find("sim_c++ is missing") != std::string::npos);
        return;
    }
    CHECK(run.exit_code == 0);
    CHECK(run.out.find("similarity: empty: no source files (NN_name/*.cpp), left out\n") !=
          std::string::npos);
    CHECK(run.out.find("similarity: notes: no source files (NN_name/*.cpp), left out\n") !=
          std::string::npos);
    CHECK(run.out.find("similarity: nothing to compare: 1 submission(s) with source files") !=
          std::string::npos);
    const std::string text = read_text(report);
    CHECK(text.find("Nothing compared: fewer than two submissions have source files.") !=
          std::string::npos);
    CHECK(pairs_in(text).empty());

    // A class folder with no student at all, and bad usage.
    fs::create_directories(kWork / "nobody");
    const auto none = similarity(kWork / "nobody", kWork / "out" / "nobody.txt");
    CHECK(none.exit_code == 0);
    CHECK(none.out.find("nothing to compare: 0 submission(s)") != std::string::npos);
    const auto bad =
        lab::test::run({(kSource / "grading" / "similarity.sh").string(), "--threshold", "0", "x"});
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("similarity: ") == 0);
}

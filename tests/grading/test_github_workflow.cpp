// SPDX-License-Identifier: MIT
// The GitHub Classroom workflow template (grading/github-classroom/classroom.yml),
// as far as it can be tried without GitHub: the command it runs exists and
// takes those options, and what that command writes to $GITHUB_OUTPUT is
// exactly what the workflow hands to the autograding reporter: one base64
// payload per runner, named as the runners list names them, each decoding to
// the reporter's format (version, status, max_score, tests with name, status,
// score and message).
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "grade/report.hpp"
#include "support/catch.hpp"
#include "support/process.hpp"
#include "text_files.hpp"

namespace fs = std::filesystem;

using lab::test::decode_base64;
using lab::test::read_text;
using lab::test::write_text;

namespace {

const fs::path kSource = LAB_SOURCE_DIR;

std::vector<std::string> split(const std::string& text, char separator) {
    std::vector<std::string> parts;
    std::stringstream stream(text);
    std::string part;
    while (std::getline(stream, part, separator)) {
        parts.push_back(part);
    }
    return parts;
}

}  // namespace

TEST_CASE("the workflow runs the grader with options it has", "[unit][grading]") {
    const std::string workflow = read_text(kSource / "grading/github-classroom/classroom.yml");
    REQUIRE_FALSE(workflow.empty());
    std::smatch found;
    REQUIRE(std::regex_search(workflow, found,
                              std::regex(R"(run: (sudo .*grader/run_autograder .*))")));
    const std::string command = found[1];
    INFO(command);
    CHECK(command.find("--submission \"$PWD/submission\"") != std::string::npos);
    CHECK(command.find("--github-output \"$GITHUB_OUTPUT\"") != std::string::npos);
    CHECK(workflow.find("path: submission") != std::string::npos);
    CHECK(workflow.find("sudo grader/setup.sh") != std::string::npos);
    CHECK(workflow.find("${{ vars.RDMA_LAB_GRADER_URL }}") != std::string::npos);
    const auto help =
        lab::test::run({(kSource / "grading/gradescope/run_autograder").string(), "--help"});
    CHECK(help.exit_code == 0);
    CHECK(help.out.find("--submission DIR") != std::string::npos);
    CHECK(help.out.find("--github-output FILE") != std::string::npos);
    CHECK(help.out.find("RDMA_LAB_EXERCISES") != std::string::npos);
    const auto bad =
        lab::test::run({(kSource / "grading/gradescope/run_autograder").string(), "--bogus"});
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("unknown option '--bogus'") != std::string::npos);
}

TEST_CASE("what the grader writes is what the reporter reads", "[unit][grading]") {
    const std::string workflow = read_text(kSource / "grading/github-classroom/classroom.yml");
    std::smatch found;
    REQUIRE(std::regex_search(workflow, found, std::regex(R"(runners: ([a-z0-9,]+))")));
    const auto runners = split(found[1], ',');
    REQUIRE(
        std::regex_search(workflow, found, std::regex(R"re(RDMA_LAB_EXERCISES: "([0-9,]+)")re")));
    const auto exercises = split(found[1], ',');
    REQUIRE(runners.size() == exercises.size());
    for (std::size_t i = 0; i < runners.size(); ++i) {
        INFO(runners[i]);
        CHECK(runners[i] == "ex" + exercises[i]);
        std::string upper = runners[i];
        for (char& c : upper) {
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        }
        CHECK(workflow.find(upper + "_RESULTS: \"${{ steps.grade.outputs." + runners[i] +
                            " }}\"") != std::string::npos);
    }

    // A graded submission as the grader leaves it: every exercise of the
    // course, exercise 05 all passed, the others not built.
    const fs::path work = fs::path(LAB_BUILD_DIR) / "tests" / "github-workflow";
    fs::remove_all(work);
    fs::create_directories(work / "course");
    std::string names;
    // What exercise 05 is worth here, by the points file (100 with the
    // instructor's checks, less in the student edition, which lacks them).
    const auto points = lab::grade::Points::parse(read_text(kSource / "grading/points.conf"));
    double max_05 = 0;
    for (const auto& entry : fs::directory_iterator(fs::path(LAB_BUILD_DIR) / "grading")) {
        if (entry.path().extension() == ".checks") {
            const std::string name = entry.path().stem().string();
            names += name + "\n";
            fs::copy(entry.path(), work / "course" / (name + ".checks"),
                     fs::copy_options::overwrite_existing);
            if (name.rfind("05_", 0) == 0) {
                for (const double weight :
                     points.weigh(name, lab::test::lines(read_text(entry.path())))) {
                    max_05 += weight;
                }
                write_text(work / "work" / "student" / "build" / name / "status", "ok\n");
                std::string lines;
                for (const auto& check : split(read_text(entry.path()), '\n')) {
                    if (!check.empty()) {
                        lines += "pass\t" + check + "\t\n";
                    }
                }
                write_text(work / "work" / "student" / "results" / (name + ".tsv"), lines);
            } else {
                write_text(work / "work" / "student" / "build" / name / "status",
                           "missing\tthe file is missing\n");
            }
        }
    }
    write_text(work / "course" / "exercises.txt", names);
    const fs::path outputs = work / "github_output";
    const auto result =
        lab::test::run({(fs::path(LAB_BUILD_DIR) / "grading" / "lab_grade_report").string(),
                        "--course", (work / "course").string(), "--work", (work / "work").string(),
                        "--points", (kSource / "grading/points.conf").string(), "--students",
                        "student", "--github", outputs.string()});
    INFO(result.err);
    CHECK(result.exit_code == 1);  // some checks failed
    std::set<std::string> written;
    for (const auto& line : lab::test::lines(read_text(outputs))) {
        const auto equals = line.find('=');
        REQUIRE(equals != std::string::npos);
        const std::string runner = line.substr(0, equals);
        written.insert(runner);
        const std::string json = decode_base64(line.substr(equals + 1));
        INFO(runner << ": " << json);
        CHECK(json.rfind("{\"version\":1,\"status\":", 0) == 0);
        CHECK(std::regex_search(json, std::regex(R"("max_score":[0-9]+,"tests":\[\{"name":")")));
        CHECK(json.find("\"score\":") != std::string::npos);
        CHECK(json.find("\"message\":") != std::string::npos);
        if (runner == "ex05") {
            CHECK(max_05 > 0);
            CHECK(json.find("\"status\":\"pass\",\"max_score\":" +
                            lab::grade::points_text(max_05)) != std::string::npos);
            CHECK(json.find("\"status\":\"fail\"") == std::string::npos);
        } else {
            CHECK(json.find("\"status\":\"fail\"") != std::string::npos);
            CHECK(json.find("the file is missing") != std::string::npos);
        }
    }
    CHECK(written == std::set<std::string>(runners.begin(), runners.end()));
}

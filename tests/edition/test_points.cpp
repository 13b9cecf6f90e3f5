// SPDX-License-Identifier: MIT
// The points of the exercises agree everywhere: grading/points.conf (what
// ./lab grade counts), each exercise's README ("Points"), its deck (the
// "Points" slide), the table of exercises/README.md, the gradebook and
// Gradescope's results.json. Every exercise is out of 100; the checks are
// the ones its check program lists (build/grading/NN_name.checks), the
// instructor's own ("hidden: ...") among them where this checkout has them.
// In the student edition, which lacks those, the READMEs' row for them must
// still make the 100.
#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "grade/report.hpp"
#include "grading/text_files.hpp"
#include "support/catch.hpp"
#include "support/process.hpp"

namespace fs = std::filesystem;

using lab::grade::Points;
using lab::grade::points_text;
using lab::test::read_text;

namespace {

const fs::path kSource = LAB_SOURCE_DIR;
const fs::path kBuild = LAB_BUILD_DIR;
constexpr double kExerciseTotal = 100;
const std::string kHiddenRow = "the instructor's own checks, run when your work is graded";

struct Table {
    std::map<std::string, double> checks;  // "| `name` | points |"
    std::optional<double> hidden;          // the row of the instructor's own checks
    bool found = false;
};

// The "| check | points |" table after the heading @p heading ("## Points" or
// "# Points") of @p text, up to the next heading or slide.
Table points_table(const std::string& text, const std::string& heading) {
    Table table;
    const auto at = text.find("\n" + heading + "\n");
    if (at == std::string::npos) {
        return table;
    }
    table.found = true;
    static const std::regex check_row(R"(^\| `([^`]+)` \| ([0-9.]+) \|$)");
    static const std::regex hidden_row(R"(^\| ([^|`]+) \| ([0-9.]+) \|$)");
    for (const auto& line : lab::test::lines(text.substr(at + heading.size() + 2))) {
        if (line.rfind("#", 0) == 0 || line == "---") {
            break;
        }
        std::smatch found;
        if (std::regex_match(line, found, check_row)) {
            table.checks[found[1]] = std::stod(found[2]);
        } else if (std::regex_match(line, found, hidden_row) && found[1] == kHiddenRow) {
            table.hidden = std::stod(found[2]);
        }
    }
    return table;
}

struct Exercise {
    std::string name;
    std::vector<std::string> checks;
    std::vector<double> weights;
    double visible = 0, hidden = 0;
    std::size_t hidden_checks = 0;
};

std::vector<Exercise> course() {
    const Points points = Points::parse(read_text(kSource / "grading/points.conf"));
    std::vector<Exercise> exercises;
    for (const auto& entry : fs::directory_iterator(kSource / "exercises")) {
        const std::string name = entry.path().filename().string();
        if (!entry.is_directory() || !std::regex_match(name, std::regex(R"(\d\d_\w+)"))) {
            continue;
        }
        Exercise exercise;
        exercise.name = name;
        exercise.checks = lab::test::lines(read_text(kBuild / "grading" / (name + ".checks")));
        exercise.weights = points.weigh(name, exercise.checks);
        for (std::size_t i = 0; i < exercise.checks.size(); ++i) {
            const bool hidden = lab::grade::is_hidden(exercise.checks[i]);
            (hidden ? exercise.hidden : exercise.visible) += exercise.weights[i];
            exercise.hidden_checks += hidden ? 1 : 0;
        }
        INFO(name);
        CHECK(points.total(name) == kExerciseTotal);
        exercises.push_back(exercise);
    }
    std::sort(exercises.begin(), exercises.end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
    return exercises;
}

// @p table (a README's or a deck's) states every visible check's points and the
// instructor's row, and they make the exercise's 100.
void agrees(const Exercise& exercise, const Table& table, const std::string& where) {
    INFO(exercise.name << ", " << where);
    REQUIRE(table.found);
    std::size_t visible = 0;
    for (std::size_t i = 0; i < exercise.checks.size(); ++i) {
        const std::string& check = exercise.checks[i];
        if (lab::grade::is_hidden(check)) {
            continue;
        }
        ++visible;
        INFO("check \"" << check << "\", worth " << points_text(exercise.weights[i]));
        REQUIRE(table.checks.count(check) == 1);
        CHECK(table.checks.at(check) == exercise.weights[i]);
    }
    CHECK(table.checks.size() == visible);  // no row for a check that does not exist
    REQUIRE(table.hidden.has_value());
    CHECK(exercise.visible + *table.hidden == kExerciseTotal);
    if (exercise.hidden_checks > 0) {
        CHECK(*table.hidden == exercise.hidden);
    }
}

}  // namespace

TEST_CASE("every exercise is out of 100, and its README and deck say what each check is worth",
          "[unit][grading]") {
    const auto exercises = course();
    REQUIRE(exercises.size() >= 7);
    const bool instructor = fs::exists(kSource / "tests/exercises/hidden");
    for (const Exercise& exercise : exercises) {
        INFO(exercise.name);
        REQUIRE(exercise.checks.size() >= 3);
        if (instructor) {
            CHECK(exercise.hidden_checks >= 1);  // one of the instructor's own, at least
            CHECK(exercise.visible + exercise.hidden == kExerciseTotal);
        } else {
            CHECK(exercise.hidden_checks == 0);  // the student edition has none
        }
        agrees(exercise,
               points_table(read_text(kSource / "exercises" / exercise.name / "README.md"),
                            "## Points"),
               "its README");
        agrees(exercise,
               points_table(read_text(kSource / "slides" / ("ex" + exercise.name + ".md")),
                            "# Points"),
               "its deck");
    }
    // The exercises' README: one row per exercise, its points last.
    const std::string index = read_text(kSource / "exercises/README.md");
    for (const Exercise& exercise : exercises) {
        INFO(exercise.name);
        const std::regex row("\\n\\| " + exercise.name.substr(0, 2) + " \\| \\[" +
                             exercise.name.substr(3) + "\\]\\([^\\n]*\\| " +
                             points_text(kExerciseTotal) + " \\|\\n");
        CHECK(std::regex_search(index, row));
    }
}

TEST_CASE("the gradebook and Gradescope count the points of points.conf", "[unit][grading]") {
    const auto exercises = course();
    std::vector<lab::grade::Exercise> listed;
    std::map<std::string, std::string> built, results;
    double everything = 0;
    for (const Exercise& exercise : exercises) {
        listed.push_back({exercise.name, exercise.checks});
        built[exercise.name] = "ok";
        for (const std::string& check : exercise.checks) {
            results[exercise.name] += "pass\t" + check + "\t\n";
        }
        everything += exercise.visible + exercise.hidden;
    }
    const Points points = Points::parse(read_text(kSource / "grading/points.conf"));
    const auto student = lab::grade::evaluate("all_right", listed, points, built, {}, results);

    // The gradebook: each exercise's column holds what all its checks are worth.
    const auto rows = lab::test::lines(lab::grade::gradebook_csv(listed, {student}));
    REQUIRE(rows.size() == 2);
    std::string expected = "all_right";
    for (const Exercise& exercise : exercises) {
        expected += "," + points_text(exercise.visible + exercise.hidden);
    }
    CHECK(rows[1] == expected + "," + points_text(everything));

    // Gradescope: every check's max_score is its points, the score their sum.
    const std::string json = lab::grade::gradescope_json(student);
    CHECK(json.find("\"score\": " + points_text(everything) + ",") != std::string::npos);
    for (const Exercise& exercise : exercises) {
        for (std::size_t i = 0; i < exercise.checks.size(); ++i) {
            INFO(exercise.name << ": " << exercise.checks[i]);
            const std::string points = points_text(exercise.weights[i]);
            CHECK(json.find(lab::grade::json_string(exercise.name + ": " + exercise.checks[i])) !=
                  std::string::npos);
            CHECK(json.find(", \"score\": " + points + ", \"max_score\": " + points + ",") !=
                  std::string::npos);
        }
    }
}

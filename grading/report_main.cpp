// SPDX-License-Identifier: MIT
// lab_grade_report: turns the files of a grading run into scores and reports
// (grading/grade.sh calls it; see grading/grade/report.hpp).
//
//   lab_grade_report --course DIR --work DIR --points FILE [--students A,B,...]
//                    [--print checks|table] [--reports DIR] [--gradebook FILE]
//                    [--junit FILE] [--gradescope FILE] [--github FILE]
//                    [--plan FILE [--report-scores FILE]]
//   lab_grade_report --check-plan FILE [--course-folders EXERCISES,LESSONS]
//
// --course: the staged course (exercises.txt, NN_name.checks); --work: one
// folder per student, holding build/NN_name/{status,compile.log},
// results/NN_name.tsv, and for the gradebook commits.tsv (written by
// grading/intake.sh) and results/quizzes.tsv (the quizzes' scores, when graded).
// --plan: the course file (grading/course.conf, grading/grade/course.hpp):
// the gradebook and the table then carry its weights, late days, exercise
// 01's report and the quizzes; --report-scores: the report's scores
// (student,score), in place of the file's "scores 01_report" line.
// --check-plan only reads the course file, and says what is wrong with it.
// Exit status: 0 when every check of every student passed, 1 when some
// failed, 2 on bad usage or unreadable input (one line naming file and line).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "grade/course.hpp"
#include "grade/report.hpp"
#include "lab/check.hpp"

namespace fs = std::filesystem;
using namespace lab::grade;

namespace {

std::string read_text(const fs::path& path) {
    std::ifstream file(path, std::ios::binary);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

void write_text(const fs::path& path, const std::string& text) {
    if (path.has_parent_path()) {
        fs::create_directories(path.parent_path());
    }
    std::ofstream file(path, std::ios::binary);
    file << text;
    if (!file) {
        throw lab::Error("cannot write " + path.string());
    }
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream stream(text);
    std::string line;
    while (std::getline(stream, line)) {
        if (!line.empty()) {
            lines.push_back(line);
        }
    }
    return lines;
}

std::vector<std::string> split(const std::string& text, char separator) {
    std::vector<std::string> parts;
    std::stringstream stream(text);
    std::string part;
    while (std::getline(stream, part, separator)) {
        if (!part.empty()) {
            parts.push_back(part);
        }
    }
    return parts;
}

std::string trimmed(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
        text.pop_back();
    }
    return text;
}

std::string checks_listing(const StudentOutcome& student) {
    std::string text;
    for (const auto& exercise : student.exercises) {
        text += exercise.name + "\n";
        for (const auto& check : exercise.checks) {
            text += std::string(check.passed ? "  pass  " : "  FAIL  ") + check.name + "\n";
            if (!check.passed) {
                std::istringstream lines(check.reason);
                std::string line;
                while (std::getline(lines, line)) {
                    text += "          " + line + "\n";
                }
            }
        }
    }
    text += "\nScores\n";
    for (const auto& exercise : student.exercises) {
        std::string name = exercise.name;
        name.resize(std::max<std::size_t>(name.size(), 26), ' ');
        const std::string summary = exercise.summary();
        text += "  " + name + " " + points_text(exercise.points()) + " of " +
                points_text(exercise.max_points()) + " points" +
                (summary.empty() ? ""
                                 : "   " + clean_text(summary.substr(0, summary.find('\n')), 200)) +
                "\n";
    }
    std::string total = "total";
    total.resize(26, ' ');
    text += "  " + total + " " + points_text(student.points()) + " of " +
            points_text(student.max_points()) + " points\n";
    return text;
}

}  // namespace

int main(int argc, char** argv) {
    std::map<std::string, std::string> options;
    for (int i = 1; i < argc; ++i) {
        const std::string key = argv[i];
        if (key.rfind("--", 0) != 0 || i + 1 >= argc) {  // every option has a value
            std::fprintf(stderr, "lab_grade_report: bad argument '%s' (see the source's header)\n",
                         key.c_str());
            return 2;
        }
        options[key.substr(2)] = argv[++i];
    }
    try {
        if (options.count("check-plan")) {
            const fs::path file = options["check-plan"];
            if (!fs::exists(file)) {
                throw lab::Error(file.string() + ": no such file");
            }
            // --course-folders DIR,DIR: the exercises' and lessons' folders, whose names a
            // weight or a deadline must use
            std::vector<std::string> known;
            for (const std::string& folder : split(options["course-folders"], ',')) {
                for (const auto& entry : fs::directory_iterator(folder)) {
                    if (entry.is_directory()) {
                        known.push_back(entry.path().filename().string());
                    }
                }
            }
            CourseConf::parse(read_text(file), file.string(), known.empty() ? nullptr : &known);
            return 0;
        }
        for (const char* needed : {"course", "work", "points"}) {
            if (!options.count(needed)) {
                throw lab::Error(std::string("--") + needed + " is missing");
            }
        }
        const fs::path course_dir = options["course"];
        const fs::path work = options["work"];
        const Points points = Points::parse(read_text(options["points"]));
        std::vector<Exercise> course;
        for (const std::string& name : lines_of(read_text(course_dir / "exercises.txt"))) {
            course.push_back({name, lines_of(read_text(course_dir / (name + ".checks")))});
        }
        if (course.empty()) {
            throw lab::Error("no exercises in " + (course_dir / "exercises.txt").string());
        }
        std::vector<std::string> names;
        if (options.count("students")) {
            names = split(options["students"], ',');
        } else {
            for (const auto& entry : fs::directory_iterator(work)) {
                if (entry.is_directory()) {
                    names.push_back(entry.path().filename().string());
                }
            }
            std::sort(names.begin(), names.end());
        }
        std::vector<StudentOutcome> students;
        for (const std::string& name : names) {
            std::map<std::string, std::string> status, logs, results;
            for (const Exercise& exercise : course) {
                const fs::path build = work / name / "build" / exercise.name;
                if (fs::exists(build / "status")) {
                    status[exercise.name] = trimmed(read_text(build / "status"));
                }
                if (fs::exists(build / "compile.log")) {
                    logs[exercise.name] = read_text(build / "compile.log");
                }
                const fs::path result = work / name / "results" / (exercise.name + ".tsv");
                if (fs::exists(result)) {
                    results[exercise.name] = read_text(result);
                }
            }
            students.push_back(evaluate(name, course, points, status, logs, results));
        }

        if (options.count("reports")) {
            for (const auto& student : students) {
                write_text(fs::path(options["reports"]) / (student.name + ".txt"),
                           text_report(student));
                write_text(fs::path(options["reports"]) / (student.name + ".xml"),
                           junit_report(student));
            }
        }
        std::optional<CourseConf> plan;
        std::vector<GradebookRow> rows;
        if (options.count("plan")) {
            const fs::path file = options["plan"];
            plan = CourseConf::parse(read_text(file), file.string());
            // Hand-entered columns: every student gets a cell, empty when the file lacks them.
            std::map<std::string, std::map<std::string, double>> hand;
            std::map<std::string, fs::path> hand_files;
            for (const auto& [column, name] : plan->score_files) {
                hand_files[column] =
                    fs::path(name).is_absolute() ? fs::path(name) : file.parent_path() / name;
            }
            if (options.count("report-scores")) {
                hand_files[std::string(kReport)] = options["report-scores"];
            }
            for (const auto& [column, path] : hand_files) {
                if (!fs::exists(path)) {
                    throw lab::Error(path.string() + ": no such file (the scores of " + column +
                                     ")");
                }
                hand[column] = parse_scores_csv(read_text(path), path.string());
            }
            for (const auto& student : students) {
                StudentRecord record;
                const fs::path folder = work / student.name;
                if (fs::exists(folder / "commits.tsv")) {
                    record.commits = parse_commits(read_text(folder / "commits.tsv"));
                }
                if (fs::exists(folder / "results/quizzes.tsv")) {
                    try {
                        record.quizzes = parse_quizzes(read_text(folder / "results/quizzes.tsv"));
                    } catch (const lab::Error& error) {
                        record.notes.push_back(std::string("quizzes not counted: ") + error.what());
                    }
                }
                for (const auto& [column, scores] : hand) {
                    const auto found = scores.find(student.name);
                    record.hand[column] = found == scores.end() ? std::optional<double>()
                                                                : std::optional(found->second);
                    if (found == scores.end()) {
                        record.notes.push_back("no " + column + " score in " +
                                               hand_files[column].filename().string());
                    }
                }
                rows.push_back(gradebook_row(*plan, student, record));
            }
        }
        if (options.count("gradebook")) {
            write_text(options["gradebook"], plan ? course_gradebook_csv(*plan, course, rows)
                                                  : gradebook_csv(course, students));
        }
        if (!students.empty()) {
            if (options.count("junit")) {
                write_text(options["junit"], junit_report(students.front()));
            }
            if (options.count("gradescope")) {
                write_text(options["gradescope"], gradescope_json(students.front()));
            }
            if (options.count("github")) {
                std::ofstream out(options["github"], std::ios::app);
                out << github_outputs(students.front());
            }
        }
        const std::string print = options.count("print") ? options["print"] : "";
        if (print == "table") {
            std::cout << (plan ? course_table(*plan, course, students, rows)
                               : score_table(course, students));
        } else if (print == "checks") {
            for (const auto& student : students) {
                std::cout << checks_listing(student);
            }
        }
        const bool all_passed = std::all_of(students.begin(), students.end(), [](const auto& s) {
            return s.points() == s.max_points();
        });
        return all_passed ? 0 : 1;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "lab_grade_report: %s\n", error.what());
        return 2;
    }
}

// SPDX-License-Identifier: MIT
// ./lab grade --class DIR --only STUDENT: one submission graded again, the
// others' saved results of the last class run kept, the gradebook rewritten
// with grading/course.conf's columns. Cheap: the class run is made up of
// saved result files, and the one student regraded hands in nothing that
// builds, so no micro-VM boots. Also: a course file with a mistake stops the
// run before anything is graded, with one line naming the file and line.
#include <filesystem>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/process.hpp"
#include "text_files.hpp"

namespace fs = std::filesystem;
using lab::test::read_text;
using lab::test::write_text;

namespace {

const fs::path kSource = LAB_SOURCE_DIR;
const fs::path kBuild = LAB_BUILD_DIR;
const fs::path kOut = kBuild / "tests" / "grade-only";
const std::string kExercise = "03_srq_server";

lab::test::Result grade(const std::vector<std::string>& args, const fs::path& plan) {
    std::vector<std::string> argv = {"/usr/bin/env", "RDMA_LAB_GRADE_OUT=" + kOut.string(),
                                     "RDMA_LAB_GRADE_BUILD=" + kBuild.string(),
                                     "RDMA_LAB_COURSE_CONF=" + plan.string(),
                                     (kSource / "grading" / "grade.sh").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return lab::test::run(argv, std::chrono::minutes(4));
}

}  // namespace

TEST_CASE("one student graded again (--only), the others' saved results kept", "[grading][only]") {
    fs::remove_all(kOut);
    const fs::path work = kOut / "class" / "work";
    // The last class run, as it left its files: alice passed every check of
    // exercise 03, and her results stay; her submission is not read again.
    write_text(kOut / "class" / "exercises.txt", kExercise + "\n");
    std::string passed;
    for (const std::string& check :
         lab::test::lines(read_text(kBuild / "grading" / (kExercise + ".checks")))) {
        passed += "pass\t" + check + "\t\n";
    }
    REQUIRE_FALSE(passed.empty());
    write_text(work / "alice" / "build" / kExercise / "status", "ok\n");
    write_text(work / "alice" / "results" / (kExercise + ".tsv"), passed);
    write_text(work / "alice" / "commits.tsv", kExercise + "\t\tno git history: counted on time\n");
    write_text(work / "alice" / "results" / "quizzes.tsv", "01_devices\t8\t10\n");
    const fs::path submissions = kOut / "submissions";
    fs::create_directories(submissions / "alice");  // empty now: graded again, she would score 0
    write_text(submissions / "bob" / "notes.txt", "no code\n");
    const fs::path plan = kOut / "course.conf";
    write_text(plan,
               "syllabus 12\nweight 12 03_srq_server 60\nweight 12 01_report 20\n"
               "weight 12 quizzes 20\nterm-salt test\n");
    write_text(kOut / "reports.csv", "student,score\nalice,50\n");

    const auto run = grade({"--class", submissions.string(), "--only", "bob", "--report-scores",
                            (kOut / "reports.csv").string()},
                           plan);
    INFO(run.out << run.err);
    CHECK(run.exit_code == 1);  // bob failed his checks
    CHECK(run.err.find("no program was built: no check to run") != std::string::npos);
    CHECK(run.err.find("micro-VM: kernel") == std::string::npos);
    // alice: 60 % of 100, 20 % of 50, 20 % of 80; bob: nothing handed in, so
    // his graded quizzes, scored with no answers, are 0 (not an empty cell).
    const auto rows = lab::test::lines(read_text(kOut / "class" / "gradebook.csv"));
    REQUIRE(rows.size() == 3);
    CHECK(rows[0] ==
          "student,03_srq_server,03_srq_server:late,01_report,quizzes,late_days_used,"
          "late_days_left,total,notes");
    CHECK(rows[1] == "alice,100,,50,80,0,2,86,no git history: counted on time (03)");
    CHECK(rows[2] == "bob,0,,,0,0,2,0,no 01_report score in reports.csv");
    CHECK(read_text(work / "alice" / "results" / (kExercise + ".tsv")) == passed);
    CHECK(fs::exists(kOut / "class" / "reports" / "bob.txt"));
    CHECK(run.out.find("total: weighted by syllabus 12, out of 100") != std::string::npos);

    // A student DIR does not hold: refused, the saved results untouched.
    fs::remove_all(submissions / "bob");
    const auto nobody = grade({"--class", submissions.string(), "--only", "bob"}, plan);
    CHECK(nobody.exit_code == 2);
    CHECK(nobody.err.find("holds no submission named bob") != std::string::npos);
    CHECK(fs::exists(work / "bob" / "intake.tsv"));
    CHECK(read_text(work / "alice" / "results" / (kExercise + ".tsv")) == passed);
}

TEST_CASE("a mistake in the course file stops the class run: one line, status 2",
          "[grading][only]") {
    const fs::path folder = kOut / "bad-plan";
    fs::remove_all(folder);
    fs::create_directories(folder / "submissions" / "alice");
    write_text(folder / "bad.conf", "syllabus 14\nweight 14 03_srq_server sixty\n");
    const auto run = grade({"--class", (folder / "submissions").string()}, folder / "bad.conf");
    INFO(run.out << run.err);
    CHECK(run.exit_code == 2);
    CHECK(run.err.find("bad-plan/bad.conf:2: 'sixty' is not a percent (0 to 100)\n") !=
          std::string::npos);
    CHECK(lab::test::lines(run.err).size() == 2);  // "building the checks", then the mistake
    CHECK(run.err.find("running the checks") == std::string::npos);
}

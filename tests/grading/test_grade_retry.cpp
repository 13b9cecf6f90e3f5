// SPDX-License-Identifier: MIT
// grading/in-vm.sh, the part of ./lab grade that runs the check programs two
// at a time: an exercise whose checks partly passed and partly ran out of
// time, while another check program ran beside it, is graded again, alone;
// its second result counts and its first is kept beside it. Nothing else runs
// twice: not a program that hangs in every check, not a crash, not a class
// graded one check program at a time.
//
// The check programs here are small shell scripts that stand in for the
// course's checks: this is about which check program runs when, and the real
// checks' deadlines are tested by test_sandbox and test_grade_class.
#include <filesystem>
#include <map>
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
const std::string kExercise = "01_alpha";

// How each student's stand-in check reports, in the order in-vm.sh starts
// them: "starved" runs out of time only while another check program runs.
const std::vector<std::string> kStudents = {"neighbour", "starved", "stuck", "hangs", "crashes"};

std::string stand_in_check(const fs::path& folder) {
    const std::string runs = (folder / "runs.txt").string();
    const std::string running = (folder / "running").string();
    return "#!/bin/sh\n"
           "# student = the folder above build/EXERCISE/program\n"
           "student=$(basename \"$(dirname \"$(dirname \"$(dirname \"$LAB_SUBJECT\")\")\")\")\n"
           "echo \"$student\" >>'" +
           runs +
           "'\n"
           "touch '" +
           running +
           "'/\"$student\"\n"
           "late='no result within 20 s: your code hangs or sleeps'\n"
           "case $student in\n"
           "neighbour) sleep 8; printf 'pass\\tone\\t\\npass\\ttwo\\t\\n' ;;\n"
           "starved) sleep 2\n"
           "    if [ \"$(ls '" +
           running +
           "' | wc -l)\" -gt 1 ]; then printf 'pass\\tone\\t\\nfail\\ttwo\\t%s\\n' \"$late\"\n"
           "    else printf 'pass\\tone\\t\\npass\\ttwo\\t\\n'; fi ;;\n"
           "stuck) sleep 1; printf 'pass\\tone\\t\\nfail\\ttwo\\t%s\\n' \"$late\" ;;\n"
           "hangs) sleep 1; printf 'fail\\tone\\t%s\\nfail\\ttwo\\t%s\\n' \"$late\" \"$late\" ;;\n"
           "crashes) sleep 1; printf 'pass\\tone\\t\\nfail\\ttwo\\tyour program crashed\\n' ;;\n"
           "esac >\"$LAB_GRADE_RESULTS\"\n"
           "echo \"check of $student done\"\n"
           "rm -f '" +
           running + "'/\"$student\"\n";
}

struct Graded {
    lab::test::Result result;
    std::map<std::string, int> runs;  // student -> times its check program ran
    fs::path work;
};

Graded grade(const std::string& jobs) {
    const fs::path folder = fs::path(LAB_BUILD_DIR) / "tests" / ("grade-retry-" + jobs);
    fs::remove_all(folder);
    const fs::path course = folder / "course", work = folder / "work";
    fs::create_directories(folder / "running");
    write_text(course / "exercises.txt", kExercise + "\n");
    write_text(course / (kExercise + ".checks"), "one\ntwo\n");
    write_text(course / "check.sh", stand_in_check(folder));
    fs::permissions(course / "check.sh", fs::perms::owner_all, fs::perm_options::add);
    write_text(course / (kExercise + ".check"), (course / "check.sh").string());
    for (const auto& student : kStudents) {
        const fs::path program = work / student / "build" / kExercise / "program";
        write_text(program, "#!/bin/sh\n");
        fs::permissions(program, fs::perms::owner_all, fs::perm_options::add);
    }
    const std::string in_vm = (kSource / "grading" / "in-vm.sh").string();
    std::vector<std::string> argv = {"/usr/bin/env", "RDMA_LAB_GRADE_JOBS=" + jobs, "bash", in_vm};
    argv.push_back(course.string());
    argv.push_back(work.string());
    argv.insert(argv.end(), kStudents.begin(), kStudents.end());
    Graded graded{lab::test::run(argv, std::chrono::seconds(180)), {}, work};
    for (const auto& line : lab::test::lines(read_text(folder / "runs.txt"))) {
        ++graded.runs[line];
    }
    return graded;
}

std::string results_of(const Graded& graded, const std::string& student,
                       const std::string& suffix = ".tsv") {
    return read_text(graded.work / student / "results" / (kExercise + suffix));
}

}  // namespace

TEST_CASE("an exercise that ran out of time beside another is graded again, alone",
          "[grading][retry]") {
    struct Row {
        std::string jobs;
        std::map<std::string, int> runs;
    };
    // Two at a time: "starved" and "stuck" again; one at a time: nothing twice.
    const Row row = GENERATE(
        Row{"2", {{"neighbour", 1}, {"starved", 2}, {"stuck", 2}, {"hangs", 1}, {"crashes", 1}}},
        Row{"1", {{"neighbour", 1}, {"starved", 1}, {"stuck", 1}, {"hangs", 1}, {"crashes", 1}}});
    const Graded graded = grade(row.jobs);
    INFO("RDMA_LAB_GRADE_JOBS=" << row.jobs << "\n" << graded.result.out << graded.result.err);
    REQUIRE_FALSE(graded.result.timed_out);
    CHECK(graded.result.exit_code == 0);
    CHECK(graded.runs == row.runs);

    // The second result counts: "starved" passes both its checks; a real hang stays failed.
    CHECK(results_of(graded, "starved") == "pass\tone\t\npass\ttwo\t\n");
    CHECK(results_of(graded, "stuck").find("fail\ttwo\tno result within 20 s") !=
          std::string::npos);
    CHECK(results_of(graded, "hangs").find("fail\tone\tno result within 20 s") !=
          std::string::npos);
    const bool again = row.jobs == "2";
    const std::string said =
        "grade: starved 01_alpha: a check ran out of time while another ran beside it; "
        "graded again, alone";
    CHECK((graded.result.out.find(said) != std::string::npos) == again);
    CHECK(graded.result.out.find("grade: hangs 01_alpha: a check ran out") == std::string::npos);
    CHECK(graded.result.out.find("grade: crashes 01_alpha: a check ran out") == std::string::npos);
    // The first try stays beside the result, for the instructor who asks why.
    CHECK(fs::exists(graded.work / "starved" / "results" / (kExercise + ".first-try.tsv")) ==
          again);
    if (again) {
        CHECK(results_of(graded, "starved", ".first-try.tsv").find("fail\ttwo\tno result") !=
              std::string::npos);
        CHECK(results_of(graded, "starved", ".first-try.log") == "check of starved done\n");
        CHECK(results_of(graded, "starved", ".log") == "check of starved done\n");
    }
}

// SPDX-License-Identifier: MIT
// ./lab grade --class, for real: a class of submissions graded in one run
// (one micro-VM boot), on exercises 03 and 05. Some students did the work,
// some did not, some handed in something broken (it does not compile, a file
// is missing, it hangs, crashes, forks without end, eats all memory, prints
// megabytes, sleeps past the deadline), some cheat. Each broken or cheating
// exercise scores what its code earns (0 here) with one clear reason, while
// every other exercise and every other student is graded normally; no cheat
// changes a score, writes outside its sandbox or runs on the grading host.
//
// It boots its own micro-VM, so it runs on the build host (label grade-class).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
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
const fs::path kWork = fs::path(LAB_BUILD_DIR) / "tests" / "grade-class";
const fs::path kClass = kWork / "class";
const fs::path kMarkers = kWork / "markers";
const fs::path kOut = kWork / "out";

std::string solution(const std::string& exercise, const std::string& file) {
    return read_text(kSource / "solutions" / exercise / file);
}
std::string skeleton(const std::string& exercise, const std::string& file) {
    return read_text(kSource / "exercises" / exercise / file);
}

const std::string k03 = "03_srq_server", k05 = "05_fix_the_connection";

// A student's folder: srq.cpp (the solution unless given) and connection.cpp.
void student(const std::string& name, const std::string& connection,
             const std::string& srq = solution(k03, "srq.cpp")) {
    write_text(kClass / name / k03 / "srq.cpp", srq);
    if (!connection.empty()) {
        write_text(kClass / name / k05 / "connection.cpp", connection);
    } else {
        fs::create_directories(kClass / name / k05);
    }
}

// Code that runs when the program starts, before any check: a static initializer.
std::string at_start(const std::string& body) {
    return "\nnamespace {\nconst int at_start = [] {\n" + body +
           "\nreturn 0;\n}();\n}  // namespace\n";
}

void prepare_class() {
    fs::remove_all(kWork);
    fs::create_directories(kMarkers);
    const std::string good = solution(k05, "connection.cpp");
    const std::string skel = skeleton(k05, "connection.cpp");
    const std::string solution_file = (kSource / "solutions" / k05 / "connection.cpp").string();
    const std::string includes =
        "#include <sys/mman.h>\n#include <unistd.h>\n#include <csignal>\n#include <cstdio>\n"
        "#include <cstdlib>\n#include <fstream>\n#include <string>\n"
        "#include <thread>\n#include <chrono>\n#include <vector>\n";

    // Good work in three shapes: a zip with a top folder, a tar.gz of exercises/, bare files.
    student("good_zip/alice", good);
    lab::test::run({"/bin/sh", "-c",
                    "cd '" + (kClass / "good_zip").string() + "' && zip -qr ../alice.zip alice"});
    student("good_tar/exercises", good);
    lab::test::run(
        {"/bin/sh", "-c",
         "cd '" + (kClass / "good_tar").string() + "' && tar -czf ../bob.tar.gz exercises"});
    fs::remove_all(kClass / "good_zip");
    fs::remove_all(kClass / "good_tar");
    write_text(kClass / "carol" / "connection.cpp", good);
    write_text(kClass / "carol" / "srq.cpp", solution(k03, "srq.cpp"));
    student("skeleton", skel, skeleton(k03, "srq.cpp"));

    // Broken work.
    student("bad_compile", good + "\nint broken( {\n");
    student("bad_missing", "");
    student("bad_hang", includes + good + at_start("for (volatile int i = 0;; i = i + 1) {}"));
    student("bad_sleep",
            includes + good + at_start("std::this_thread::sleep_for(std::chrono::hours(1));"));
    student("bad_fork", includes + good + at_start("for (;;) { ::fork(); }"));
    student("bad_memory", includes + good +
                              // MAP_POPULATE fills the pages in one call: touching them one
                              // fault at a time takes longer than the deadline in a slow VM.
                              at_start("for (;;) { mmap(nullptr, 256 << 20, PROT_READ | "
                                       "PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | "
                                       "MAP_POPULATE, -1, 0); }"));
    student("bad_print", includes + good + at_start("for (;;) { std::puts(\"spam spam spam\"); }"));
    std::string crash = good;
    for (const std::string function :
         {"int choose_gid_index(ibv_context* context, std::uint8_t port) {",
          "ibv_mtu choose_path_mtu(ibv_context* context, std::uint8_t port) {",
          "int memory_access_flags() {",
          "void connect(Resources& resources, int gid_index, ibv_mtu path_mtu) {",
          "std::string send_message(Resources& resources, std::string_view text) {"}) {
        const auto at = crash.find(function);
        REQUIRE(at != std::string::npos);
        crash.insert(at + function.size(), "\n    *static_cast<volatile int*>(nullptr) = 1;");
    }
    student("bad_crash", crash);

    // Cheats. Each comes with the skeleton's code, so a working cheat would show.
    student("cheat_cmake", skel);
    const std::string cmake_marker = (kMarkers / "cmake-ran").string();
    for (const fs::path& folder : {kClass / "cheat_cmake", kClass / "cheat_cmake" / k05}) {
        write_text(folder / "CMakeLists.txt", "execute_process(COMMAND touch \"" + cmake_marker +
                                                  "\")\n"
                                                  "file(WRITE \"" +
                                                  cmake_marker +
                                                  "\" \"configure-time code ran\")\n"
                                                  "add_library(ex05_connection STATIC \"" +
                                                  solution_file + "\")\n");
    }
    student("cheat_given", skel);
    write_text(
        kClass / "cheat_given" / k05 / "given.cpp",
        "// run() that prints success at once\n#include \"connection.hpp\"\nnamespace fix {\n"
        "void run(const std::string&, std::uint8_t, std::ostream& out) { out << \"B received "
        "\\\"hello through SEND\\\"\\n\"; }\n}\n");
    write_text(kClass / "cheat_given" / k05 / "connection.hpp",
               "#pragma once\n#define choose_gid_index(c, p) 1\n");
    write_text(kClass / "cheat_given" / "tests" / "exercises" / "check_05_fix_the_connection.cpp",
               "int main() { return 0; }\n");
    student("cheat_include",
            "#include \"../../solutions/05_fix_the_connection/connection.cpp\"\n"
            "#include \"" +
                solution_file + "\"\n");
    student("cheat_incbin", skel + "\nasm(\".section .rodata\\n.incbin \\\"" + solution_file +
                                "\\\"\\n.text\");\n");
    student("cheat_exit",
            includes + skel +
                at_start("std::puts(\"All tests passed (13 assertions in 6 test cases)\");\n"
                         "std::puts(\"pass\\tchoose_gid_index\");\nstd::exit(0);"));
    const std::string escape_marker = (kMarkers / "escaped").string();
    const std::string results =
        (kOut / "class" / "work" / "cheat_escape" / "results" / (k05 + ".tsv")).string();
    student("cheat_escape", includes + skel +
                                at_start("std::ofstream(\"" + escape_marker +
                                         "\") << \"out of the sandbox\";\n"
                                         "std::ofstream(\"" +
                                         results +
                                         "\", std::ios::app) << \"pass\\tconnect\\t\\n\";\n"
                                         "std::ofstream(\"/tmp/scratch-is-fine\") << \"ok\";\n"
                                         "::kill(-1, SIGKILL);"));
    // Values that look right without the work behind them: send_message returns
    // the text without sending, connect does nothing. The values that ARE right
    // (flags, GID index, MTU) earn their checks; the rest cannot be faked.
    std::string forge = good;
    const auto connect_body =
        forge.find("void connect(Resources& resources, int gid_index, ibv_mtu path_mtu) {");
    const auto send_body =
        forge.find("std::string send_message(Resources& resources, std::string_view text) {");
    REQUIRE(connect_body != std::string::npos);
    REQUIRE(send_body != std::string::npos);
    forge = forge.substr(0, connect_body) +
            "void connect(Resources&, int, ibv_mtu) {}\n"
            "std::string send_message(Resources&, std::string_view text) { return "
            "std::string(text); }\n"
            "}  // namespace fix\n";
    student("cheat_forge", forge);
}

struct Run {
    lab::test::Result result;
    std::map<std::string, std::string> rows;  // student -> "03,05,their sum"
    std::string header;
};

const Run& graded_class() {
    static const Run run = [] {
        prepare_class();
        Run done;
        // A deadline of 30 s a check: a program that hangs costs two of them
        // (it is not started a third time), and the memory hog reaches its
        // 512 MiB within it even on a loaded machine. With 15 s, its first run
        // once ran out of time while CI's other leg ran beside it, and the
        // reason became "no result within 15 s" instead of the memory limit.
        done.result = lab::test::run(
            {"/usr/bin/env", "RDMA_LAB_CHECK_TIMEOUT=30", "RDMA_LAB_GRADE_OUT=" + kOut.string(),
             "RDMA_LAB_GRADE_BUILD=" + std::string(LAB_BUILD_DIR),
             (kSource / "grading" / "grade.sh").string(), "--class", kClass.string(), "--exercises",
             "03,05"},
            std::chrono::minutes(25));
        const auto lines = lab::test::lines(read_text(kOut / "class" / "gradebook.csv"));
        for (std::size_t i = 0; i < lines.size(); ++i) {
            if (i == 0) {
                done.header = lines[i];
                continue;
            }
            // student,03,03:late,05,05:late,... (grading/course.conf's columns follow)
            std::vector<std::string> cells;
            std::stringstream row(lines[i]);
            for (std::string cell; std::getline(row, cell, ',');) {
                cells.push_back(cell);
            }
            if (cells.size() > 3) {
                done.rows[cells[0]] = cells[1] + "," + cells[3] + "," +
                                      std::to_string(std::stoi(cells[1]) + std::stoi(cells[3]));
            }
        }
        return done;
    }();
    return run;
}

// vm-guest.sh names the micro-VM rdma-lab-vm; grading boots its own, so this runs on the host.
bool skipped_inside_vm() {
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    if (std::string(name) != "rdma-lab-vm") {
        return false;
    }
    WARN(
        "SKIPPED: ./lab grade boots its own micro-VM; run this on the build host: "
        "ctest -L grade-class");
    return true;
}

std::string report_of(const std::string& name) {
    return read_text(kOut / "class" / "reports" / (name + ".txt"));
}

// The one line of exercise 05 in @p name's report: "05_...: 0 of 100 points (REASON)".
std::string summary_05(const std::string& name) {
    for (const auto& line : lab::test::lines(report_of(name))) {
        if (line.rfind(k05 + ":", 0) == 0) {
            return line;
        }
    }
    return "(no line for " + k05 + ")";
}

// The lines of @p name's report that are not a passed check: scores, failures, reasons.
std::string failed_checks(const std::string& name) {
    std::string failed;
    for (const auto& line : lab::test::lines(report_of(name))) {
        if (line.rfind("  pass  ", 0) != 0 && !line.empty()) {
            failed += line + "\n";
        }
    }
    return failed;
}

// Each student's exercise 05 that cannot work scores 0, with a reason that says why.
void broken_submissions_score_zero() {
    const Run& run = graded_class();
    REQUIRE_FALSE(run.result.timed_out);
    const std::map<std::string, std::string> reasons = {
        {"bad_compile", "(does not compile: 05_fix_the_connection/connection.cpp:"},
        {"bad_missing", "(05_fix_the_connection/connection.cpp is missing from the submission"},
        {"bad_hang", "(no result within 30 s: your code hangs or sleeps"},
        {"bad_sleep", "(no result within 30 s: your code hangs or sleeps"},
        {"bad_fork", "(your program tried to start more than 64 processes and was stopped"},
        {"bad_memory", "(your program used more than 512 MiB of memory and was stopped"},
        {"bad_print", "(your program printed more than 1 MiB and was stopped"},
        {"bad_crash", "(your program crashed: segmentation fault (SIGSEGV)"},
        {"skeleton", "(0 of 7 checks passed"},
    };
    for (const auto& [name, reason] : reasons) {
        const std::string line = summary_05(name);
        INFO(name << ": " << line);
        CHECK(line.find(k05 + ": 0 of 100 points " + reason) == 0);
    }
    // The compile error names the student's file and line, not the course's build.
    const std::string compile = report_of("bad_compile");
    INFO(compile);
    CHECK(compile.find("05_fix_the_connection/connection.cpp:") != std::string::npos);
    CHECK(compile.find(LAB_SOURCE_DIR) == std::string::npos);
    CHECK(compile.find("/course/") == std::string::npos);
}

// Each cheat meets the sandbox or the course's own files, and earns nothing.
void cheats_earn_nothing() {
    const Run& run = graded_class();
    REQUIRE_FALSE(run.result.timed_out);
    // CMake files, headers, given files and checks come from the course, never from a submission.
    CHECK_FALSE(fs::exists(kMarkers / "cmake-ran"));
    CHECK(summary_05("cheat_cmake") == summary_05("skeleton"));
    CHECK(summary_05("cheat_given") == summary_05("skeleton"));
    // The compiler sees neither the solutions nor this checkout.
    CHECK(summary_05("cheat_include").find("does not compile") != std::string::npos);
    CHECK(report_of("cheat_include").find("No such file or directory") != std::string::npos);
    CHECK(summary_05("cheat_incbin").find("does not compile") != std::string::npos);
    // Its exit status and its output decide nothing.
    CHECK(summary_05("cheat_exit")
              .find("your program ended (exit status 0) before it started the check") !=
          std::string::npos);
    // Its code runs in the sandbox: nothing written outside it, the results are the check's.
    CHECK_FALSE(fs::exists(kMarkers / "escaped"));
    const std::string results =
        read_text(kOut / "class" / "work" / "cheat_escape" / "results" / (k05 + ".tsv"));
    INFO(results);
    CHECK(lab::test::lines(results).size() == 7);  // 6 checks and the instructor's own
    CHECK(results.find("pass\t") == std::string::npos);
    // Values returned without the work behind them do not pass the behaviour checks.
    const std::string forge = report_of("cheat_forge");
    INFO(forge);
    CHECK(forge.find("  FAIL  connect:") != std::string::npos);
    CHECK(forge.find("  FAIL  send_message:") != std::string::npos);
    CHECK(forge.find("  FAIL  the whole program") != std::string::npos);
    CHECK(forge.find("  pass  memory_access_flags:") != std::string::npos);
}

}  // namespace

TEST_CASE("a class graded in one run: good, broken and cheating submissions",
          "[grading][grade-class]") {
    if (skipped_inside_vm()) {
        return;
    }
    const Run& run = graded_class();
    {
        // (the grader's own output, for these checks only: the rows below name what went wrong)
        INFO(
            run.result.out.substr(run.result.out.size() > 6000 ? run.result.out.size() - 6000 : 0));
        INFO(
            run.result.err.substr(run.result.err.size() > 6000 ? run.result.err.size() - 6000 : 0));
        REQUIRE_FALSE(run.result.timed_out);
        CHECK(run.result.exit_code == 1);  // some checks failed
        CHECK(run.result.err.find("grade: 19 submission(s), 2 exercise(s)") != std::string::npos);
    }
    // One micro-VM boot for the whole class.
    std::size_t boots = 0;
    for (std::size_t at = run.result.out.find("micro-VM: kernel"); at != std::string::npos;
         at = run.result.out.find("micro-VM: kernel", at + 1)) {
        ++boots;
    }
    for (std::size_t at = run.result.err.find("micro-VM: kernel"); at != std::string::npos;
         at = run.result.err.find("micro-VM: kernel", at + 1)) {
        ++boots;
    }
    CHECK(boots == 1);

    // The gradebook: a header, one row per student; every other exercise graded normally.
    CHECK(run.header.rfind("student,03_srq_server,03_srq_server:late,05_fix_the_connection,"
                           "05_fix_the_connection:late,",
                           0) == 0);
    CHECK(run.header.find(",late_days_used,late_days_left,total,notes") != std::string::npos);
    CHECK(run.rows.size() == 19);
    // (grading/points.conf: each exercise out of 100; the forged values earn
    // choose_gid_index, choose_path_mtu and memory_access_flags, 8 each.)
    const std::map<std::string, std::string> expected = {
        {"alice", "100,100,200"},      {"bob", "100,100,200"},       {"carol", "100,100,200"},
        {"skeleton", "0,0,0"},         {"bad_compile", "100,0,100"}, {"bad_missing", "100,0,100"},
        {"bad_hang", "100,0,100"},     {"bad_sleep", "100,0,100"},   {"bad_fork", "100,0,100"},
        {"bad_memory", "100,0,100"},   {"bad_print", "100,0,100"},   {"bad_crash", "100,0,100"},
        {"cheat_cmake", "100,0,100"},  {"cheat_given", "100,0,100"}, {"cheat_include", "100,0,100"},
        {"cheat_incbin", "100,0,100"}, {"cheat_exit", "100,0,100"},  {"cheat_escape", "100,0,100"},
        {"cheat_forge", "100,24,124"},
    };
    for (const auto& [name, row] : expected) {
        const std::string seen = run.rows.count(name) == 1 ? run.rows.at(name) : "(no row)";
        INFO(name << ": expected " << row << ", gradebook " << seen << "; its failed checks:\n"
                  << failed_checks(name));
        CHECK(seen == row);
    }
    // Score table on stdout, reports per student.
    CHECK(run.result.out.find("student") != std::string::npos);
    CHECK(run.result.out.find("Exercises that scored 0:") != std::string::npos);
    for (const auto& [name, row] : run.rows) {
        CHECK(fs::exists(kOut / "class" / "reports" / (name + ".txt")));
        CHECK(read_text(kOut / "class" / "reports" / (name + ".xml")).find("<testsuites") !=
              std::string::npos);
    }
    // The class grader runs the instructor's own checks (tests/exercises/hidden/), and they count.
    const std::string alice = report_of("alice");
    INFO(alice);
    CHECK(alice.find("  pass  hidden: post_srq_receives:") != std::string::npos);
    CHECK(alice.find("  pass  hidden: the whole program, three times in one run") !=
          std::string::npos);
    CHECK(report_of("skeleton").find("  FAIL  hidden: ") != std::string::npos);
    // One ctest test, so that the class is graded once: the other questions are sections of it.
    SECTION("a broken submission scores 0 on its exercise with one clear reason") {
        broken_submissions_score_zero();
    }
    SECTION("cheating submissions earn nothing and reach nothing") {
        cheats_earn_nothing();
    }
}

// SPDX-License-Identifier: MIT
// Scores and reports of ./lab grade (grading/grade/report.cpp), from files as
// a grading run leaves them: the points file, build statuses, the lines the
// check programs write; and every output format: gradebook CSV, text,
// JUnit, Gradescope's results.json, GitHub Classroom's runner payloads.
#include <map>
#include <string>
#include <vector>

#include "grade/report.hpp"
#include "lab/check.hpp"
#include "support/catch.hpp"
#include "text_files.hpp"

using namespace lab::grade;

using lab::test::decode_base64;

namespace {

const std::vector<Exercise> kCourse = {
    {"01_alpha", {"first check: it works", "second check", "third check"}},
    {"02_beta", {"only check"}},
};

std::string error_of(std::string_view points) {
    try {
        Points::parse(points);
    } catch (const lab::Error& error) {
        return error.what();
    }
    return {};
}

StudentOutcome sample_student() {
    return evaluate(
        "alice", kCourse, Points::parse(""),
        {{"01_alpha", "ok"}, {"02_beta", "error\tdoes not compile: 02_beta/b.cpp:3:1: error: x"}},
        {{"02_beta", "02_beta/b.cpp:3:1: error: x\n"}},
        {{"01_alpha",
          "pass\tfirst check: it works\t\n"
          "fail\tsecond check\texpected: 4\\n    seen: 5 \"<&>\"\\n    hint: h\n"}});
}

}  // namespace

TEST_CASE("points: 1 a check, or what the points file says, or a share of a total",
          "[unit][grading]") {
    const Points none = Points::parse("# nothing but comments\n\n");
    CHECK(none.weigh("01_alpha", kCourse[0].checks) == std::vector<double>{1, 1, 1});
    const Points points = Points::parse(
        "points *        \"second*\"  2   # a prefix\n"
        "points 01_alpha \"third check\" 5\n"
        "points 02_beta  *            4\n"
        "points 01_alpha \"third check\" 3   # the last rule wins\n");
    CHECK(points.weigh("01_alpha", kCourse[0].checks) == std::vector<double>{1, 2, 3});
    CHECK(points.weigh("02_beta", kCourse[1].checks) == std::vector<double>{4});
    // A total: the named checks keep their points, the others share the rest.
    const Points shared = Points::parse("points * \"first*\" 2\ntotal 01_alpha 100\n");
    CHECK(shared.weigh("01_alpha", kCourse[0].checks) == std::vector<double>{2, 49, 49});
    CHECK(shared.weigh("02_beta", kCourse[1].checks) == std::vector<double>{1});
    CHECK_FALSE(shared.total("02_beta").has_value());
    // Without a points line, the checks share the total equally.
    const Points even = Points::parse("total * 100\n");
    CHECK(even.weigh("02_beta", kCourse[1].checks) == std::vector<double>{100});
    CHECK(even.weigh("01_alpha", {"a", "b", "c", "d"}) == std::vector<double>{25, 25, 25, 25});
    // Every check named: the total changes nothing, even when a check is
    // missing (the student edition lacks the instructor's checks).
    const Points named = Points::parse(
        "total * 100\npoints * \"hidden:*\" 10\npoints * \"first*\" 50\npoints * \"second*\" 40\n");
    CHECK(named.weigh("01_alpha", {"first check: it works", "second check", "hidden: more"}) ==
          std::vector<double>{50, 40, 10});
    CHECK(named.weigh("01_alpha", {"first check: it works", "second check"}) ==
          std::vector<double>{50, 40});
    // Named checks that make the total exactly: the others are worth 0.
    const Points full = Points::parse("total * 10\npoints * \"first*\" 10\n");
    CHECK(full.weigh("01_alpha", kCourse[0].checks) == std::vector<double>{10, 0, 0});
    // Named checks above the total (a second hidden check at 10, say) are
    // refused with the exercise named: an exercise never grows to 110.
    const Points over = Points::parse(
        "total * 100\npoints * \"hidden:*\" 10\npoints * \"first*\" 50\npoints * \"second*\" 40\n");
    CHECK_THROWS_WITH(
        over.weigh("01_alpha", {"first check", "second check", "hidden: one", "hidden: two"}),
        "points file: the checks of 01_alpha add up to 110, above its total of 100: lower the "
        "points lines of grading/points.conf so that they make 100");
}

TEST_CASE("points: a malformed line is refused with its number", "[unit][grading][bad-input]") {
    CHECK(error_of("points 01_alpha \"x\" 2\ntotal 01_alpha\n").find("line 2") !=
          std::string::npos);
    CHECK(error_of("points 01_alpha \"x\" many\n").find("'many' is not a number of points") !=
          std::string::npos);
    CHECK(error_of("points 01_alpha \"x 2\n").find("a quote is not closed") != std::string::npos);
    CHECK(error_of("total * -3\n").find("not a number of points") != std::string::npos);
    CHECK(error_of("bonus * 3\n").find("expected 'points EXERCISE") != std::string::npos);
}

TEST_CASE("evaluate: results, build failures and checks that never ran", "[unit][grading]") {
    const StudentOutcome alice = sample_student();
    REQUIRE(alice.exercises.size() == 2);
    const auto& alpha = alice.exercises[0];
    CHECK(alpha.checks[0].passed);
    CHECK_FALSE(alpha.checks[1].passed);
    CHECK(alpha.checks[1].reason == "expected: 4\n    seen: 5 \"<&>\"\n    hint: h");
    CHECK(alpha.checks[2].reason.find("did not run") != std::string::npos);
    CHECK(alpha.points() == 1);
    CHECK(alpha.max_points() == 3);
    CHECK(alpha.summary() == "1 of 3 checks passed");
    // A build failure is every check's reason, and the exercise's one line.
    const auto& beta = alice.exercises[1];
    CHECK(beta.points() == 0);
    CHECK(beta.summary() == "does not compile: 02_beta/b.cpp:3:1: error: x");
    CHECK(beta.build_log.find("error: x") != std::string::npos);
    CHECK(alice.points() == 1);
    CHECK(alice.max_points() == 4);
}

TEST_CASE("evaluate: one shared reason is the exercise's summary", "[unit][grading]") {
    const StudentOutcome bob = evaluate(
        "bob", {kCourse[0]}, Points::parse(""), {{"01_alpha", "ok"}}, {},
        {{"01_alpha",
          "fail\tfirst check: it works\tno result within 20 s: it hangs\\n    its last output: a\n"
          "fail\tsecond check\tno result within 20 s: it hangs\\n    its last output: b\n"
          "fail\tthird check\tno result within 20 s: it hangs\n"}});
    CHECK(bob.exercises[0].summary() == "no result within 20 s: it hangs");
    // A check that reports expected / seen / hint shares what it saw.
    const StudentOutcome carol =
        evaluate("carol", {kCourse[0]}, Points::parse(""), {{"01_alpha", "ok"}}, {},
                 {{"01_alpha",
                   "fail\tfirst check: it works\tyour program crashed: SIGSEGV\n"
                   "fail\tsecond check\tyour program crashed: SIGSEGV\n"
                   "fail\tthird check\texpected: it works\\n    seen: your program crashed: SIGSEGV"
                   "\\n    hint: fix it\n"}});
    CHECK(carol.exercises[0].summary() == "your program crashed: SIGSEGV");
}

TEST_CASE("clean_text: nothing from a student's program reaches a terminal raw",
          "[unit][grading]") {
    CHECK(clean_text("red \x1b[31mtext\x1b[0m and a bell\a") == "red text and a bell?");
    CHECK(clean_text("line one\nline two\ttab") == "line one\nline two\ttab");
    CHECK(clean_text(std::string(50, 'x'), 10) == "xxxxxxxxxx [...]");
}

TEST_CASE("points_text: whole numbers plain, fractions to two places", "[unit][grading]") {
    CHECK(points_text(3) == "3");
    CHECK(points_text(2.5) == "2.5");
    CHECK(points_text(100.0 / 3) == "33.33");
    CHECK(points_text(0) == "0");
}

TEST_CASE("gradebook and score table", "[unit][grading]") {
    const std::vector<StudentOutcome> students = {sample_student()};
    CHECK(gradebook_csv(kCourse, students) == "student,01_alpha,02_beta,total\nalice,1,0,1\n");
    const std::string table = score_table(kCourse, students);
    CHECK(table.find("alice") != std::string::npos);
    CHECK(table.find("1/3") != std::string::npos);
    CHECK(table.find("01 = 01_alpha") != std::string::npos);
    CHECK(table.find("alice, 02_beta: does not compile: 02_beta/b.cpp:3:1: error: x") !=
          std::string::npos);
}

TEST_CASE("text and JUnit reports", "[unit][grading]") {
    const StudentOutcome alice = sample_student();
    const std::string text = text_report(alice);
    CHECK(text.find("Grading report for alice: 1 of 4 points") != std::string::npos);
    CHECK(text.find("  FAIL  second check  [0/1]\n        expected: 4\n            seen: 5") !=
          std::string::npos);
    CHECK(text.find("compiler output:\n    | 02_beta/b.cpp:3:1: error: x") != std::string::npos);
    const std::string xml = junit_report(alice);
    CHECK(xml.find(
              "<testsuites name=\"rdma-verbs-lab exercises: alice\" tests=\"4\" failures=\"3\">") !=
          std::string::npos);
    CHECK(xml.find("<testcase classname=\"01_alpha\" name=\"first check: it works\"") !=
          std::string::npos);
    CHECK(xml.find("seen: 5 &quot;&lt;&amp;&gt;&quot;") != std::string::npos);
    CHECK(xml.find("<failure message=\"expected: 4\" type=\"check\">") != std::string::npos);
}

TEST_CASE("Gradescope's results.json", "[unit][grading]") {
    const std::string json = gradescope_json(sample_student());
    CHECK(json.find("\"score\": 1,") != std::string::npos);
    CHECK(json.find("{\"name\": \"01_alpha: first check: it works\", \"number\": \"1.1\", "
                    "\"score\": 1, \"max_score\": 1, \"status\": \"passed\"") != std::string::npos);
    CHECK(
        json.find("\"status\": \"failed\", \"output\": \"expected: 4\\n    seen: 5 \\\"<&>\\\"") !=
        std::string::npos);
    CHECK(json.find("\"visibility\": \"visible\"") != std::string::npos);
    // The instructor's own checks show once the grades are published.
    const StudentOutcome hidden =
        evaluate("bob", {{"01_alpha", {"visible check", "hidden: more layouts"}}},
                 Points::parse(""), {{"01_alpha", "ok"}}, {},
                 {{"01_alpha", "pass\tvisible check\t\nfail\thidden: more layouts\tno\n"}});
    const std::string with_hidden = gradescope_json(hidden);
    CHECK(with_hidden.find("\"name\": \"01_alpha: visible check\"") != std::string::npos);
    CHECK(with_hidden.find("\"output\": \"no\", \"visibility\": \"after_published\"}") !=
          std::string::npos);
    CHECK(with_hidden.find("\"output\": \"\", \"visibility\": \"visible\"}") != std::string::npos);
    CHECK(is_hidden("hidden: more layouts"));
    CHECK_FALSE(is_hidden("a check about hidden: things"));
    CHECK(json_string("a\"b\\c\n\x01") == "\"a\\\"b\\\\c\\n\\u0001\"");
}

TEST_CASE("GitHub Classroom: one base64 payload per exercise", "[unit][grading]") {
    CHECK(base64("") == "");
    CHECK(base64("f") == "Zg==");
    CHECK(base64("fo") == "Zm8=");
    CHECK(base64("foo") == "Zm9v");
    CHECK(base64("foobar") == "Zm9vYmFy");
    const std::string lines = github_outputs(sample_student());
    const auto newline = lines.find('\n');
    REQUIRE(lines.rfind("ex01=", 0) == 0);
    const std::string json = decode_base64(lines.substr(5, newline - 5));
    CHECK(json.rfind("{\"version\":1,\"status\":\"fail\",\"max_score\":3,\"tests\":[", 0) == 0);
    CHECK(json.find("{\"name\":\"first check: it works\",\"status\":\"pass\",\"score\":1,"
                    "\"message\":\"\"}") != std::string::npos);
    CHECK(lines.find("\nex02=") != std::string::npos);
}

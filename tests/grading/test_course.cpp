// SPDX-License-Identifier: MIT
// The course plan of ./lab grade --class (grading/course.conf,
// grading/grade/course.cpp): the file and each way of getting it wrong, dates
// and late days, the commit times grading/intake.sh reads from a
// submission's git history, and the gradebook they make: the late rule, the
// report's hand-entered column, the quizzes, the weighted total.
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "grade/course.hpp"
#include "lab/check.hpp"
#include "support/catch.hpp"
#include "support/process.hpp"
#include "text_files.hpp"

namespace fs = std::filesystem;
using namespace lab::grade;
using lab::test::read_text;
using lab::test::write_text;

namespace {

const fs::path kSource = LAB_SOURCE_DIR;

const std::string kPlan =
    "syllabus 12\n"
    "weight 12 01_alpha 30\n"
    "weight 12 01_report 20\n"
    "weight 12 02_beta 40\n"
    "weight 12 quizzes 10\n"
    "weight 14 01_alpha 100\n"
    "deadline 01_alpha 2027-03-01T23:59:00+00:00\n"
    "deadline 02_beta 2027-03-08T23:59:00+00:00\n"
    "late-days 2\n"
    "late-penalty 10\n"
    "late-limit 3\n"
    "term-salt spring\n";

// What parsing @p text says is wrong ("" when nothing is).
std::string error_of(const std::string& text) {
    try {
        CourseConf::parse(text, "course.conf");
    } catch (const lab::Error& error) {
        return error.what();
    }
    return {};
}

Seconds at(const std::string& iso) {
    const auto moment = parse_iso8601(iso);
    REQUIRE(moment);
    return *moment;
}

bool near(double a, double b) {
    return std::abs(a - b) < 1e-9;
}

// A student whose every check passed: 01_alpha out of 100, 02_beta out of 100.
StudentOutcome full_marks(const std::string& name) {
    StudentOutcome student{name, {}};
    for (const std::string exercise : {"01_alpha", "02_beta"}) {
        student.exercises.push_back({exercise, {{"a check", true, 100, 100, ""}}, ""});
    }
    return student;
}

}  // namespace

TEST_CASE("course.conf: the shipped file parses, and each syllabus adds up to 100",
          "[unit][grading]") {
    const std::string text = read_text(kSource / "grading" / "course.conf");
    const CourseConf shipped = CourseConf::parse(text, "grading/course.conf");
    CHECK(shipped.syllabus == 14);
    CHECK_FALSE(shipped.term_salt.empty());
    CHECK(shipped.late.free_days == 2);
    CHECK(shipped.late.penalty == 10);
    CHECK(shipped.late.limit == 3);
    // The guide's weights: ex01's checks and report 60:40, the quizzes 10 in
    // every plan, the 14-week project 20.
    const std::map<int, std::map<std::string, double>> guide = {
        {10,
         {{"01_noncontiguous_sge", 15},
          {"01_report", 10},
          {"02_ud_ping", 15},
          {"04_throughput", 20},
          {"05_fix_the_connection", 10},
          {"06_recover_qp", 20},
          {"quizzes", 10}}},
        {12,
         {{"01_noncontiguous_sge", 12},
          {"01_report", 8},
          {"02_ud_ping", 10},
          {"03_srq_server", 15},
          {"04_throughput", 15},
          {"05_fix_the_connection", 5},
          {"06_recover_qp", 10},
          {"07_memory_window", 15},
          {"quizzes", 10}}},
        {14,
         {{"01_noncontiguous_sge", 9},
          {"01_report", 6},
          {"02_ud_ping", 10},
          {"03_srq_server", 10},
          {"04_throughput", 10},
          {"05_fix_the_connection", 5},
          {"06_recover_qp", 10},
          {"07_memory_window", 10},
          {"project", 20},
          {"quizzes", 10}}},
    };
    for (const auto& [weeks, weights] : guide) {
        std::string chosen = text;
        const auto line = chosen.find("\nsyllabus 14\n");
        REQUIRE(line != std::string::npos);
        chosen.replace(line, 13, "\nsyllabus " + std::to_string(weeks) + "\n");
        const CourseConf conf = CourseConf::parse(chosen, "grading/course.conf");
        INFO("syllabus " << weeks);
        CHECK(conf.total_weight() == 100);
        std::map<std::string, double> seen(conf.weights.begin(), conf.weights.end());
        CHECK(seen == weights);
    }
    // Every exercise and deadline it names is one of the course's.
    for (const auto& [name, deadline] : shipped.deadlines) {
        if (name.rfind("quiz:", 0) == 0) {
            CHECK(fs::exists(kSource / "lessons" / name.substr(5)));
        } else {
            CHECK(fs::exists(kSource / "exercises" / name));
        }
    }
}

TEST_CASE("course.conf: what a file says", "[unit][grading]") {
    const CourseConf conf = CourseConf::parse(kPlan, "course.conf");
    CHECK(conf.syllabus == 12);
    CHECK(conf.weights.size() == 4);
    CHECK(conf.weight("02_beta") == 40);
    CHECK(conf.weight("project") == 0);
    CHECK(conf.total_weight() == 100);
    CHECK(conf.deadlines.at("02_beta") == at("2027-03-08T23:59:00Z"));
    CHECK(conf.term_salt == "spring");
    CHECK_FALSE(conf.quizzes_per_lesson());
    CHECK(other_columns(conf) == std::vector<std::string>{"01_report", "quizzes"});
    // Comments, blank lines, CRLF; the defaults of the late policy.
    const CourseConf bare = CourseConf::parse(
        "# a comment\r\n\r\nsyllabus 10   # the short plan\r\nweight 10 quiz:06_send_recv 5\r\n",
        "c");
    CHECK(bare.late.free_days == 2);
    CHECK(bare.quizzes_per_lesson());
    CHECK(other_columns(bare) == std::vector<std::string>{"01_report", "quiz:06_send_recv"});
}

// Each bad input: one line naming the file and the line. A case whose
// error goes on (with the words the file may use) is compared by its start.
TEST_CASE("course.conf bad input: each ends in one line naming the file and the line",
          "[unit][grading][bad-input]") {
    struct BadInput {
        const char* what;
        std::string text;
        std::string error;
        bool starts_only = false;
    };
    const std::vector<BadInput> cases = {
        {"an unknown line", "syllabus 14\nweight 14 02_ud_ping 10\nweights 14 x 1\n",
         "course.conf:3: unknown line 'weights'", true},
        {"no syllabus line", "weight 14 02_ud_ping 10\n",
         "course.conf:0: no 'syllabus 10|12|14' line"},
        {"a syllabus that is not 10, 12 or 14", "syllabus 13\n",
         "course.conf:1: the syllabus is 10, 12 or 14 (weeks), not '13'"},
        {"two syllabus lines", "syllabus 14\nsyllabus 12\n",
         "course.conf:2: a second 'syllabus' line"},
        {"the chosen syllabus has no weights", "weight 12 02_ud_ping 10\nsyllabus 14\n",
         "course.conf:2: syllabus 14 has no weight lines"},
        {"a weight of no syllabus", "syllabus 14\nweight 11 02_ud_ping 10\n",
         "course.conf:2: a weight is for syllabus 10, 12 or 14, not '11'"},
        {"a weight of no assignment", "syllabus 14\nweight 14 ud_ping 10\n",
         "course.conf:2: 'ud_ping' is no assignment", true},
        {"a weight that is not a percent", "syllabus 14\nweight 14 02_ud_ping ten\n",
         "course.conf:2: 'ten' is not a percent (0 to 100)"},
        {"a weight that is not a percent", "syllabus 14\nweight 14 02_ud_ping 101\n",
         "course.conf:2: '101' is not a percent (0 to 100)"},
        {"a weight line with a word missing", "syllabus 14\nweight 14 02_ud_ping\n",
         "course.conf:2: expected 'weight 10|12|14 ASSIGNMENT PERCENT'"},
        {"an assignment weighed twice",
         "syllabus 14\nweight 14 02_ud_ping 10\nweight 14 02_ud_ping 20\n",
         "course.conf:3: a second weight of 02_ud_ping for syllabus 14"},
        {"weights above 100", "syllabus 14\nweight 14 02_ud_ping 60\nweight 14 03_srq_server 50\n",
         "course.conf:3: the weights of syllabus 14 add up to 110, above 100"},
        {"the quizzes weighed both ways",
         "syllabus 14\nweight 14 quizzes 10\nweight 14 quiz:06_send_recv 2\n",
         "course.conf:3: weigh the quizzes as one column", true},
        {"a deadline without its offset",
         "syllabus 14\nweight 14 02_ud_ping 10\n"
         "deadline 02_ud_ping 2027-04-14T23:59:00\n",
         "course.conf:3: '2027-04-14T23:59:00' is not a date and time with its offset", true},
        {"a deadline on a day that does not exist",
         "syllabus 14\nweight 14 02_ud_ping 10\n"
         "deadline 02_ud_ping 2027-02-29T23:59:00+08:00\n",
         "course.conf:3: '2027-02-29T23:59:00+08:00' is not a date", true},
        {"a deadline of no assignment",
         "syllabus 14\nweight 14 02_ud_ping 10\n"
         "deadline quizzes 2027-04-14T23:59:00Z\n",
         "course.conf:3: 'quizzes' is no assignment with a deadline", true},
        {"two deadlines of one assignment",
         "syllabus 14\nweight 14 02_ud_ping 10\n"
         "deadline quiz:06_send_recv 2027-04-14T23:59:00Z\n"
         "deadline quiz:06_send_recv 2027-04-15T23:59:00Z\n",
         "course.conf:4: a second deadline of quiz:06_send_recv"},
        {"late days that are not a whole number",
         "syllabus 14\nweight 14 02_ud_ping 10\nlate-days 1.5\n",
         "course.conf:3: '1.5' is not a whole number of days (0 to 365)"},
        {"late days that are not a whole number",
         "syllabus 14\nweight 14 02_ud_ping 10\nlate-limit -1\n",
         "course.conf:3: '-1' is not a whole number of days (0 to 365)"},
        {"a late penalty out of range", "syllabus 14\nweight 14 02_ud_ping 10\nlate-penalty 120\n",
         "course.conf:3: '120' is not a number of points of 100 (0 to 100)"},
        {"a second late-days line",
         "syllabus 14\nweight 14 02_ud_ping 10\nlate-days 2\nlate-days 3\n",
         "course.conf:4: a second 'late-days' line"},
        {"hand-entered scores of an exercise",
         "syllabus 14\nweight 14 02_ud_ping 10\nscores 02_ud_ping s.csv\n",
         "course.conf:3: hand-entered scores are for 01_report or project, not '02_ud_ping'"},
        {"a term salt of two words, or two salts",
         "syllabus 14\nweight 14 02_ud_ping 10\nterm-salt spring 2027\n",
         "course.conf:3: expected 'term-salt WORD'"},
        {"a term salt of two words, or two salts",
         "syllabus 14\nweight 14 02_ud_ping 10\nterm-salt a\nterm-salt b\n",
         "course.conf:4: a second 'term-salt' line"},
    };
    for (const BadInput& bad : cases) {
        INFO(bad.what);
        const std::string error = error_of(bad.text);
        if (bad.starts_only) {
            CHECK(error.rfind(bad.error, 0) == 0);
            CHECK(error.find('\n') == std::string::npos);
        } else {
            CHECK(error == bad.error);
        }
    }
}

TEST_CASE("dates with their offset, and late days rounded up", "[unit][grading]") {
    CHECK(parse_iso8601("1970-01-01T00:00:00Z") == Seconds{0});
    CHECK(parse_iso8601("2027-03-14T23:59:00+08:00") == at("2027-03-14T15:59:00Z"));
    CHECK(parse_iso8601("2027-03-14T23:59-05:30") == at("2027-03-15T05:29:00Z"));
    CHECK(parse_iso8601("2028-02-29T12:00:00Z").has_value());  // a leap day
    CHECK(parse_iso8601("2000-01-01T00:00:00Z") == Seconds{946684800});
    for (const char* bad : {"2027-03-14", "2027-03-14 23:59:00Z", "2027-13-01T00:00Z",
                            "2027-03-14T24:00Z", "2027-03-14T23:59:00+0800", "tomorrow"}) {
        INFO(bad);
        CHECK_FALSE(parse_iso8601(bad).has_value());
    }
    const Seconds deadline = at("2027-03-01T23:59:00Z");
    CHECK(days_late(deadline - 3600, deadline) == 0);
    CHECK(days_late(deadline, deadline) == 0);
    CHECK(days_late(deadline + 1, deadline) == 1);  // a part of a day counts whole
    CHECK(days_late(deadline + 86400, deadline) == 1);
    CHECK(days_late(deadline + 86401, deadline) == 2);
}

TEST_CASE("late rule: free days to the earliest deadlines, then the penalty, then 0",
          "[unit][grading]") {
    const CourseConf conf = CourseConf::parse(kPlan, "course.conf");
    const Seconds alpha = conf.deadlines.at("01_alpha"), beta = conf.deadlines.at("02_beta");
    struct Case {
        Seconds alpha_at, beta_at;
        std::vector<double> scores;
        std::vector<int> late;
        int used, left;
    };
    const Case c = GENERATE_COPY(
        // On time: nothing spent.
        Case{alpha - 60, beta - 60, {100, 100}, {0, 0}, 0, 2},
        // 1 day late, then 2 days late: two free days go to 01, one to 02, one day at -10.
        Case{alpha + 3600, beta + 86400 + 60, {100, 90}, {1, 2}, 2, 0},
        // 3 days late at 01 (2 free, 1 at -10), 02 2 days late (no free day left: -20).
        Case{alpha + 2 * 86400 + 1, beta + 2 * 86400, {90, 80}, {3, 2}, 2, 0},
        // Past the limit of 3: 0, and no free day spent on it.
        Case{alpha + 3 * 86400 + 1, beta + 1, {0, 100}, {4, 1}, 1, 1});
    StudentRecord record;
    record.commits["01_alpha"] = {c.alpha_at, ""};
    record.commits["02_beta"] = {c.beta_at, ""};
    const GradebookRow row = gradebook_row(conf, full_marks("ann"), record);
    REQUIRE(row.exercises.size() == 2);
    CHECK(std::vector<double>{row.exercises[0].score, row.exercises[1].score} == c.scores);
    CHECK(std::vector<int>{row.exercises[0].days_late, row.exercises[1].days_late} == c.late);
    CHECK(row.free_days_used == c.used);
    CHECK(row.free_days_left == c.left);
    // 01 30 %, 02 40 %, the report and the quizzes missing (0 of their 30).
    CHECK(near(row.total, 0.3 * c.scores[0] + 0.4 * c.scores[1]));
}

TEST_CASE("late rule: free days go by deadline, not by exercise number", "[unit][grading]") {
    const CourseConf conf = CourseConf::parse(
        "syllabus 14\nweight 14 01_alpha 50\nweight 14 02_beta 50\nlate-days 1\n"
        "deadline 01_alpha 2027-03-08T00:00:00Z\ndeadline 02_beta 2027-03-01T00:00:00Z\n",
        "c");
    StudentRecord record;
    record.commits["01_alpha"] = {at("2027-03-08T10:00:00Z"), ""};
    record.commits["02_beta"] = {at("2027-03-01T10:00:00Z"), ""};
    const GradebookRow row = gradebook_row(conf, full_marks("ann"), record);
    CHECK(row.exercises[1].free_days == 1);  // 02's deadline came first
    CHECK(row.exercises[1].score == 100);
    CHECK(row.exercises[0].score == 90);
    CHECK(row.total == 95);
}

TEST_CASE("commit times from a submission's git history (grading/intake.sh)", "[unit][grading]") {
    const fs::path folder = fs::path(LAB_BUILD_DIR) / "tests" / "course-commits";
    fs::remove_all(folder);
    const fs::path course = folder / "course";
    write_text(course / "01_alpha.build", "EDITED=(a.cpp)\n");
    write_text(course / "02_beta.build", "EDITED=(b.cpp)\n");
    const auto git = [&](const fs::path& repo, const std::string& date,
                         std::vector<std::string> args) {
        std::vector<std::string> argv = {"/usr/bin/env",
                                         "HOME=" + folder.string(),
                                         "GIT_CONFIG_NOSYSTEM=1",
                                         "GIT_AUTHOR_DATE=" + date,
                                         "GIT_COMMITTER_DATE=" + date,
                                         "git",
                                         "-C",
                                         repo.string(),
                                         "-c",
                                         "user.name=Ann",
                                         "-c",
                                         "user.email=ann@example.org"};
        argv.insert(argv.end(), args.begin(), args.end());
        const auto result = lab::test::run(argv);
        INFO(result.out << result.err);
        REQUIRE(result.exit_code == 0);
    };
    const auto intake = [&](const fs::path& in, const std::string& student) {
        const fs::path out = folder / "work" / student;
        fs::create_directories(out);
        const auto result = lab::test::run(
            {"/usr/bin/env", "LAB_PATH_IN=" + in.string(), "LAB_PATH_COURSE=" + course.string(),
             "LAB_PATH_OUT=" + out.string(), "TMPDIR=" + out.string(), "bash",
             (kSource / "grading" / "intake.sh").string(), "folder"});
        INFO(result.out << result.err);
        CHECK(result.exit_code == 0);
        return parse_commits(read_text(out / "commits.tsv"));
    };

    // A repository at the top: 01 committed before its deadline, 02 a day
    // and an hour after its own, then a commit that touches neither.
    const fs::path ann = folder / "ann";
    write_text(ann / "01_alpha" / "a.cpp", "int a;\n");
    git(ann, "2027-03-01T20:00:00+00:00", {"init", "-q"});
    git(ann, "2027-03-01T20:00:00+00:00", {"add", "01_alpha/a.cpp"});
    git(ann, "2027-03-01T20:00:00+00:00", {"commit", "-q", "-m", "01"});
    write_text(ann / "02_beta" / "b.cpp", "int b;\n");
    git(ann, "2027-03-10T01:00:00+00:00", {"add", "02_beta/b.cpp"});
    git(ann, "2027-03-10T01:00:00+00:00", {"commit", "-q", "-m", "02"});
    write_text(ann / "notes.txt", "later\n");
    git(ann, "2027-04-01T00:00:00+00:00", {"add", "notes.txt"});
    git(ann, "2027-04-01T00:00:00+00:00", {"commit", "-q", "-m", "notes"});
    auto commits = intake(ann, "ann");
    REQUIRE(commits.size() == 2);
    CHECK(commits["01_alpha"].time == at("2027-03-01T20:00:00Z"));
    CHECK(commits["01_alpha"].note.empty());
    CHECK(commits["02_beta"].time == at("2027-03-10T01:00:00Z"));
    const CourseConf conf = CourseConf::parse(kPlan, "course.conf");
    StudentRecord record;
    record.commits = commits;
    const GradebookRow row = gradebook_row(conf, full_marks("ann"), record);
    CHECK(row.exercises[0].days_late == 0);
    CHECK(row.exercises[1].days_late == 2);  // 25 h and 1 min: two days
    CHECK(row.free_days_left == 0);
    CHECK(row.exercises[1].score == 100);

    // Changed after its last commit: the commit time counts, and a note says so.
    write_text(ann / "01_alpha" / "a.cpp", "int a = 1;\n");
    commits = intake(ann, "ann");
    CHECK(commits["01_alpha"].time == at("2027-03-01T20:00:00Z"));
    CHECK(commits["01_alpha"].note == "changed after its last commit: the commit time counts");

    // The repository one folder down (a .zip of the student's clone); a file never committed.
    const fs::path bob = folder / "bob";
    write_text(bob / "clone" / "exercises" / "01_alpha" / "a.cpp", "int a;\n");
    write_text(bob / "clone" / "exercises" / "02_beta" / "b.cpp", "int b;\n");
    git(bob / "clone", "2027-03-02T12:00:00+01:00", {"init", "-q"});
    git(bob / "clone", "2027-03-02T12:00:00+01:00", {"add", "exercises/01_alpha"});
    git(bob / "clone", "2027-03-02T12:00:00+01:00", {"commit", "-q", "-m", "01"});
    commits = intake(bob, "bob");
    CHECK(commits["01_alpha"].time == at("2027-03-02T11:00:00Z"));
    CHECK_FALSE(commits["02_beta"].time.has_value());
    CHECK(commits["02_beta"].note == "in no commit: counted on time");

    // No git history at all: on time, and the gradebook says so once.
    const fs::path carl = folder / "carl";
    write_text(carl / "a.cpp", "int a;\n");
    write_text(carl / "b.cpp", "int b;\n");
    commits = intake(carl, "carl");
    CHECK(commits["01_alpha"].note == "no git history: counted on time");
    record.commits = commits;
    const GradebookRow carls = gradebook_row(conf, full_marks("carl"), record);
    CHECK(carls.notes == std::vector<std::string>{"no git history: counted on time (01, 02)"});
    CHECK(carls.exercises[0].score == 100);
}

TEST_CASE("the report's column: hand-entered scores, a missing student an empty cell",
          "[unit][grading]") {
    const auto scores =
        parse_scores_csv("student,score\nann, 85\n\"bob\",70.5\r\n\n", "reports.csv");
    CHECK(scores == std::map<std::string, double>{{"ann", 85}, {"bob", 70.5}});
    CHECK_THROWS_WITH(parse_scores_csv("ann,85\nbob\n", "reports.csv"),
                      "reports.csv:2: expected 'student,score' with a score from 0 to 100");
    CHECK_THROWS_WITH(parse_scores_csv("ann,185\n", "reports.csv"),
                      "reports.csv:1: expected 'student,score' with a score from 0 to 100");
    CHECK_THROWS_WITH(parse_scores_csv("ann,85\nann,80\n", "r.csv"),
                      "r.csv:2: a second score for ann");
    const CourseConf conf = CourseConf::parse(kPlan, "course.conf");
    const std::vector<Exercise> course = {{"01_alpha", {"a check"}}, {"02_beta", {"a check"}}};
    StudentRecord ann, dan;
    ann.hand["01_report"] = 85;
    ann.quizzes = std::vector<QuizScore>{{"01_devices", 6, 8}, {"02_memory", 9, 12}};
    dan.hand["01_report"] = std::nullopt;
    dan.notes.push_back("no 01_report score in reports.csv");
    const std::vector<GradebookRow> rows = {gradebook_row(conf, full_marks("ann"), ann),
                                            gradebook_row(conf, full_marks("dan"), dan)};
    // ann: 30 + 40 + 20 % of 85 + 10 % of 75 (15 of 20 quiz points); dan: no report, no quizzes.
    CHECK(near(rows[0].total, 30 + 40 + 17 + 7.5));
    CHECK(rows[1].total == 70);
    const std::string csv = course_gradebook_csv(conf, course, rows);
    CHECK(csv ==
          "student,01_alpha,01_alpha:late,02_beta,02_beta:late,01_report,quizzes,"
          "late_days_used,late_days_left,total,notes\n"
          "ann,100,,100,,85,75,0,2,94.5,\n"
          "dan,100,,100,,,,0,2,70,no 01_report score in reports.csv\n");
    const std::string table =
        course_table(conf, course, {full_marks("ann"), full_marks("dan")}, rows);
    CHECK(table.find("total: weighted by syllabus 12, out of 100") != std::string::npos);
    CHECK(table.find("  dan: no 01_report score in reports.csv\n") != std::string::npos);
}

TEST_CASE("the quizzes: one column, or one per weighed lesson; quizzes.tsv", "[unit][grading]") {
    CHECK_THROWS_WITH(parse_quizzes("01_devices\t6\n"),
                      "quizzes.tsv, line 1: expected 'NN_name<TAB>score<TAB>max'");
    CHECK_THROWS_WITH(parse_quizzes("01_devices\t9\t8\n"),
                      "quizzes.tsv, line 1: expected 'NN_name<TAB>score<TAB>max'");
    const auto quizzes = parse_quizzes("01_devices\t6\t8\n06_send_recv\t2.5\t10\n");
    REQUIRE(quizzes.size() == 2);
    CHECK(quizzes[1].score == 2.5);
    const CourseConf conf = CourseConf::parse(
        "syllabus 14\nweight 14 01_alpha 80\nweight 14 quiz:06_send_recv 10\n"
        "weight 14 quiz:07_rdma_write 10\n",
        "c");
    StudentRecord record;
    record.quizzes = quizzes;
    const GradebookRow row = gradebook_row(conf, full_marks("ann"), record);
    CHECK(row.other.at("quiz:06_send_recv") == 25);
    CHECK_FALSE(row.other.at("quiz:07_rdma_write").has_value());  // not in quizzes.tsv
    CHECK(near(row.total, 80 + 2.5));
    const std::string csv = course_gradebook_csv(conf, {{"01_alpha", {}}, {"02_beta", {}}}, {row});
    CHECK(lab::test::lines(csv).at(0) ==
          "student,01_alpha,01_alpha:late,02_beta,02_beta:late,01_report,quiz:06_send_recv,"
          "quiz:07_rdma_write,late_days_used,late_days_left,total,notes");
    CHECK(lab::test::lines(csv).at(1) == "ann,100,,100,,,25,,0,2,82.5,");
}

TEST_CASE("course.conf bad input: an exercise or a lesson the course does not have",
          "[unit][grading]") {
    const std::vector<std::string> known = {"02_ud_ping", "06_send_recv"};
    const auto error_with = [&](const std::string& text) {
        try {
            CourseConf::parse(text, "course.conf", &known);
        } catch (const lab::Error& error) {
            return std::string(error.what());
        }
        return std::string();
    };
    CHECK(error_with("syllabus 14\nweight 14 02_udping 10\n") ==
          "course.conf:2: '02_udping': the course has no exercise 02_udping");
    CHECK(error_with("syllabus 14\nweight 14 02_ud_ping 10\n"
                     "deadline quiz:05_send_recv 2027-04-14T23:59:00Z\n") ==
          "course.conf:3: 'quiz:05_send_recv': the course has no lesson 05_send_recv");
    CHECK(error_with("syllabus 14\nweight 14 02_ud_ping 10\nweight 14 quiz:06_send_recv 5\n"
                     "weight 14 01_report 5\nweight 14 project 5\n")
              .empty());
}

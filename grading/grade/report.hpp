// SPDX-License-Identifier: MIT
/**
 * @file report.hpp
 * @brief Scores and reports of ./lab grade: points, the gradebook, text, JUnit, Gradescope, GitHub.
 *
 * The inputs are written by course code only: the names of each exercise's
 * checks (listed from the check program at build time), what the compile
 * step says about each student's exercise (built, a file missing, a compile
 * error), and the results file the check program writes in the micro-VM.
 * Text that came from a student's program (an exception's message, its last
 * output) is cleaned of control characters and shortened before it is
 * written anywhere.
 */
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lab::grade {

/// How the names of the instructor's own checks begin (tests/exercises/hidden/): the student
/// edition leaves them out, and Gradescope shows them once the grades are published.
inline constexpr std::string_view kHiddenPrefix = "hidden:";

/// Whether @p check is one of the instructor's own checks (its name begins with kHiddenPrefix).
bool is_hidden(std::string_view check);

/// One rule of the points file.
struct PointsRule {
    std::string exercise;  ///< a folder name or "*"
    std::string check;     ///< a check name, a prefix ending in '*', or "*"; empty for a total
    double points = 0;
};

/// The instructor's points (grading/points.conf).
class Points {
  public:
    /// Parse @p text; throws lab::Error naming the line of a malformed rule.
    static Points parse(std::string_view text);
    /// The points a `points` rule gives check @p check of @p exercise, if one names it.
    [[nodiscard]] std::optional<double> named_points(const std::string& exercise,
                                                     const std::string& check) const;
    /// What @p exercise is worth, if a `total` rule says.
    [[nodiscard]] std::optional<double> total(const std::string& exercise) const;
    /**
     * @brief The points of every check of @p exercise (its checks in order).
     *
     * A check a `points` rule names is worth what the rule says. With a
     * `total`, the checks no rule names share what the named ones leave of it
     * equally (nothing when they leave nothing); without one, each is worth 1.
     */
    [[nodiscard]] std::vector<double> weigh(const std::string& exercise,
                                            const std::vector<std::string>& checks) const;

  private:
    std::vector<PointsRule> checks_;
    std::vector<PointsRule> totals_;
};

/// An exercise of the course: its folder name and its checks, in order.
struct Exercise {
    std::string name;
    std::vector<std::string> checks;
};

/// One check's outcome for one student.
struct CheckOutcome {
    std::string name;
    bool passed = false;
    double points = 0;      ///< earned
    double max_points = 0;  ///< possible
    std::string reason;     ///< why it failed (empty when it passed)
};

/// One exercise's outcome for one student.
struct ExerciseOutcome {
    std::string name;
    std::vector<CheckOutcome> checks;
    std::string build_log;  ///< the cleaned compiler output when it did not build
    [[nodiscard]] double points() const;
    [[nodiscard]] double max_points() const;
    /// One line for the score table and the summary: empty when every check passed.
    [[nodiscard]] std::string summary() const;
};

/// Everything about one student.
struct StudentOutcome {
    std::string name;
    std::vector<ExerciseOutcome> exercises;
    [[nodiscard]] double points() const;
    [[nodiscard]] double max_points() const;
};

/**
 * @brief One student's outcome from the files of the grading run.
 * @param build_status per exercise: "ok", or "missing\tREASON" / "error\tREASON" (absent: not
 * built)
 * @param results per exercise: the lines the check program wrote (absent: it did not run)
 */
StudentOutcome evaluate(const std::string& student, const std::vector<Exercise>& course,
                        const Points& points,
                        const std::map<std::string, std::string>& build_status,
                        const std::map<std::string, std::string>& build_logs,
                        const std::map<std::string, std::string>& results);

/// Text from a student's program made safe for any report: no control characters, bounded.
std::string clean_text(std::string_view text, std::size_t max_length = 2000);

/// A points value as reports write it: "3", "2.5", "33.33".
std::string points_text(double points);

/// The gradebook: "student,<exercise>...,total" and one row per student.
std::string gradebook_csv(const std::vector<Exercise>& course,
                          const std::vector<StudentOutcome>& students);
/// The score table printed at the end of a class run.
std::string score_table(const std::vector<Exercise>& course,
                        const std::vector<StudentOutcome>& students);
/// A student's text report: every exercise and check, with the reasons.
std::string text_report(const StudentOutcome& student);
/// A student's JUnit XML report: a test suite per exercise, a test case per check.
std::string junit_report(const StudentOutcome& student);
/// Gradescope's results.json for one student (their documented format); the instructor's
/// own checks are "after_published", the others "visible".
std::string gradescope_json(const StudentOutcome& student);
/**
 * @brief GitHub Classroom's autograding results, one runner per exercise.
 *
 * Lines "NN=BASE64" for $GITHUB_OUTPUT: each value is the JSON the
 * autograding-grading-reporter action reads from <RUNNER>_RESULTS
 * ({"version":1,"status":...,"max_score":...,"tests":[...]}).
 */
std::string github_outputs(const StudentOutcome& student);

/// @p text as a JSON string literal.
std::string json_string(std::string_view text);
/// @p text escaped for XML text and attributes.
std::string xml_text(std::string_view text);
/// @p bytes in base64 (RFC 4648, with padding, no line breaks).
std::string base64(std::string_view bytes);

}  // namespace lab::grade

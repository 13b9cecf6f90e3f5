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
    /// What check @p check of @p exercise is worth before any total is applied.
    [[nodiscard]] double check_points(const std::string& exercise, const std::string& check) const;
    /// The total @p exercise is scaled to, if a rule sets one.
    [[nodiscard]] std::optional<double> total(const std::string& exercise) const;
    /// The points of every check of @p exercise (its checks in order), totals applied.
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
/// Gradescope's results.json for one student (their documented format).
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

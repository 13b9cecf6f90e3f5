// SPDX-License-Identifier: MIT
/**
 * @file course.hpp
 * @brief The course plan of ./lab grade --class (grading/course.conf): weights, deadlines,
 * late days, and the gradebook they make.
 *
 * The file is the instructor's, and ships in the student edition too (students may read
 * the weights and deadlines). Its lines:
 *
 *     syllabus 14                          the plan in use: 10, 12 or 14 (weeks)
 *     weight 14 02_ud_ping 10              per syllabus, an assignment's percent of the grade
 *     deadline 02_ud_ping 2027-04-15T23:59:00+08:00
 *     late-days 2                          free late days per student and term
 *     late-penalty 10                      points of 100 per late day past them
 *     late-limit 3                         later than this many days: the assignment scores 0
 *     scores 01_report FILE                a hand-entered column (student,score per line)
 *     term-salt WORD                       the quizzes' public salt (read by the quiz tools)
 *
 * An assignment is an exercise (NN_name), exercise 01's written report (01_report), the
 * project, the quizzes as one column (quizzes) or one lesson's quiz (quiz:NN_name).
 */
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "grade/report.hpp"

namespace lab::grade {

/// A moment: seconds since 1970-01-01T00:00:00Z.
using Seconds = long long;

/// An ISO 8601 date and time with its offset (2027-03-14T23:59:00+08:00, seconds optional,
/// Z for UTC), as a moment; nothing when @p text is not one.
std::optional<Seconds> parse_iso8601(std::string_view text);

/// Whole days from @p deadline to @p submitted, a part of a day counting whole; 0 when on time.
int days_late(Seconds submitted, Seconds deadline);

/// The assignment names a course file may weigh, beside the exercises' own.
inline constexpr std::string_view kReport = "01_report";
inline constexpr std::string_view kProject = "project";
inline constexpr std::string_view kQuizzes = "quizzes";
inline constexpr std::string_view kQuizPrefix = "quiz:";

/// The late policy: free days per student, then a penalty per day, then nothing.
struct LatePolicy {
    int free_days = 2;    ///< late-days: the budget per student and term
    double penalty = 10;  ///< late-penalty: points of 100 per late day past the budget
    int limit = 3;        ///< late-limit: more days late than this scores 0
};

/// grading/course.conf, parsed.
class CourseConf {
  public:
    /**
     * @brief Parse @p text; throws lab::Error "FILE:LINE: what is wrong" (one line) naming @p file.
     * @param known the course's exercise and lesson folders: when given, an exercise or a quiz
     * the file names must be one of them (a typo would otherwise weigh nothing)
     */
    static CourseConf parse(std::string_view text, const std::string& file,
                            const std::vector<std::string>* known = nullptr);

    int syllabus = 0;  ///< 10, 12 or 14
    /// The weights of the chosen syllabus, in the file's order: assignment, percent.
    std::vector<std::pair<std::string, double>> weights;
    std::map<std::string, Seconds> deadlines;        ///< per assignment
    std::map<std::string, std::string> score_files;  ///< hand-entered columns: assignment, file
    LatePolicy late;
    std::string term_salt;

    /// The weight of @p assignment in the chosen syllabus (0 when it has none).
    [[nodiscard]] double weight(const std::string& assignment) const;
    /// The sum of the chosen syllabus's weights: what the weighted total is out of.
    [[nodiscard]] double total_weight() const;
    /// Whether the quizzes are weighed one lesson at a time (quiz:NN_name lines).
    [[nodiscard]] bool quizzes_per_lesson() const;
};

/// When one exercise of a submission was last committed, and what to say about it.
struct CommitTime {
    std::optional<Seconds> time;  ///< none: no git history, or its files in no commit
    std::string note;             ///< e.g. "no git history", "changed after the last commit"
};

/// One line of a student's quizzes.tsv.
struct QuizScore {
    std::string quiz;  ///< NN_name
    double score = 0;
    double max = 0;
};

/// What the gradebook knows of a student beside the checks.
struct StudentRecord {
    std::map<std::string, CommitTime> commits;          ///< per exercise (commits.tsv)
    std::optional<std::vector<QuizScore>> quizzes;      ///< none: no quizzes.tsv
    std::map<std::string, std::optional<double>> hand;  ///< hand-entered scores, per assignment
    std::vector<std::string> notes;                     ///< said by whoever read the files
};

/// Parse commits.tsv: lines "NN_name<TAB>SECONDS<TAB>NOTE" (SECONDS empty when unknown).
std::map<std::string, CommitTime> parse_commits(std::string_view text);
/// Parse quizzes.tsv: lines "NN_name<TAB>score<TAB>max"; throws lab::Error on a bad line.
std::vector<QuizScore> parse_quizzes(std::string_view text);
/// Parse a hand-entered CSV "student,score" (a header line "student,score" may come first);
/// throws lab::Error "FILE:LINE: ..." on a bad line.
std::map<std::string, double> parse_scores_csv(std::string_view text, const std::string& file);

/// One exercise of one student in the gradebook.
struct ExerciseRow {
    std::string name;
    double checks = 0;  ///< points the checks gave
    double max = 0;
    double score = 0;  ///< after the late rule
    int days_late = 0;
    int free_days = 0;   ///< of the budget, spent here
    bool dated = false;  ///< a deadline and a commit time: days_late was counted
};

/// One row of the gradebook.
struct GradebookRow {
    std::string student;
    std::vector<ExerciseRow> exercises;
    std::map<std::string, std::optional<double>> other;  ///< 01_report, project, quizzes, quiz:..
    int free_days_used = 0;
    int free_days_left = 0;
    double total = 0;  ///< weighted, out of CourseConf::total_weight()
    std::vector<std::string> notes;
};

/// The assignments beside the exercises that get a column, in order: 01_report, the project
/// when weighed, the quizzes (one column, or one per weighed quiz).
std::vector<std::string> other_columns(const CourseConf& conf);

/// A student's row: the checks' points, the late rule applied from the deadlines (earliest
/// first, spending free days as they come), the other columns, the weighted total.
GradebookRow gradebook_row(const CourseConf& conf, const StudentOutcome& student,
                           const StudentRecord& record);

/// The course's gradebook: student, per exercise its score and days late, the other columns,
/// late days used and left, the weighted total, notes.
std::string course_gradebook_csv(const CourseConf& conf, const std::vector<Exercise>& course,
                                 const std::vector<GradebookRow>& rows);
/// The table printed at the end of a class run: the same, briefly.
std::string course_table(const CourseConf& conf, const std::vector<Exercise>& course,
                         const std::vector<StudentOutcome>& students,
                         const std::vector<GradebookRow>& rows);
/// A cell of a CSV file: quoted when it holds a comma, a quote or a line break.
std::string csv_cell(const std::string& text);

}  // namespace lab::grade

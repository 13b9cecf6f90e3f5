// SPDX-License-Identifier: MIT
/**
 * @file graded.hpp
 * @brief The graded mode: papers, the students' answers files, grading, feedback.
 *
 * Design
 * ------
 * The instructor's bank, grading/quizzes/NN_name.quiz, never leaves the
 * instructor's repository (grading/export.sh leaves it out). What a student
 * gets is its paper, quizzes/graded/NN_name.paper, written by paper_of():
 * the questions, parameters, pools, options, run commands and the attempt
 * policy, and no line of the key: no answer, tolerance, wrong answer,
 * explanation, section to reread or read pattern. Nothing from which the
 * key follows is on the student's machine, not even hashed: a hashed key of
 * a small answer set is found by trying every answer (okpy's lesson).
 *
 * The student's session draws the same variants as the grader (the seed is
 * student id, quiz and term salt; the draw needs only ids, parameters and
 * pools, which the paper has), says nothing about right or wrong, and
 * appends each attempt to quizzes/answers/graded/NN_name.txt:
 *
 *     # 2026-12-01T10:00:00Z graded quiz=03_completion_queue student=ID salt=S lang=en
 *     2026-12-01T10:01:12Z<TAB>03g.granted<TAB>N=24<TAB>31
 *
 * (time, question, variant, the answer as given; a question of several parts
 * has its answers joined by " ; "). Input that does not parse is asked again
 * and never written, so it costs no attempt.
 *
 * grade() re-draws every variant from the student id and salt, and scores
 * each attempt with the bank's key, a run question with the key read from a
 * re-run of its command (a Runner: the grading VM, once per distinct
 * command). A question earns its best attempt: attempt i's share of the
 * points (AttemptPolicy::weights) times its score, partial credit per part.
 * With fresh-variant, attempt i is asked and graded in variant i
 * (variant_for_attempt); an attempt whose recorded variant is not the one
 * drawn earns nothing. A line that does not parse is skipped and costs no
 * attempt, as in the session.
 */
#pragma once

#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quiz.hpp"

namespace lab::quiz {

/// The salt used where grading/course.conf gives none (`term-salt WORD`).
inline constexpr std::string_view kDefaultTermSalt = "rdma-verbs-lab";

/// The paper of a graded bank: the bank's format, without any line of the key.
std::string paper_of(const Bank& bank);

/// Whether @p input is understood as an answer to @p part (a paper's part:
/// no key needed); if not, @p problem says why.
bool understood(const Part& part, std::string_view input, std::string& problem);

/// One line of an answers file.
struct Attempt {
    std::string time, question, variant, answer;
    int line = 0;
};

/// A graded answers file: its header's fields (the last header wins) and
/// its attempts in the order they were made.
struct AnswersFile {
    std::string quiz, student, salt;
    std::vector<Attempt> attempts;
};

AnswersFile parse_answers(std::string_view content);
/// The answers file at @p path, or an empty one if there is none.
AnswersFile load_answers(const std::string& path);

/// "a ; b" into its parts' answers.
std::vector<std::string> split_answer(std::string_view answer);

/// What grading/course.conf says that the quizzes need.
struct CourseConf {
    std::string term_salt;                         ///< empty: none given
    std::map<std::string, std::time_t> deadlines;  ///< "quiz:03_completion_queue" -> time
};
/// Reads `term-salt WORD` and `deadline NAME ISO-TIME` lines; other lines are
/// someone else's (the gradebook's) and ignored. No file: an empty CourseConf.
CourseConf load_course_conf(const std::string& path);

/// 2026-12-01T23:59:00Z (seconds optional; Z, +HH:MM or -HH:MM, or none: UTC).
std::optional<std::time_t> parse_time(std::string_view text);

/// One attempt as graded.
struct GradedAttempt {
    const Attempt* attempt = nullptr;
    std::string variant;   ///< the variant drawn for it
    Values values;         ///< its parameters
    bool counted = false;  ///< false: it did not parse, no attempt spent
    bool variant_matches = true;
    double weight = 0, score = 0;  ///< score: 0..1 of the question, before the weight
    std::vector<PartResult> parts;
};

struct GradedQuestion {
    Drawn first;  ///< the first attempt's variant
    std::vector<GradedAttempt> attempts;
    double points = 0;  ///< what it earns: the best weighted attempt
    /// Per attempt counted: the keys a re-run gave (empty for a part: the bank's key).
    std::vector<std::vector<std::optional<std::string>>> rerun_keys;
    bool rerun_failed = false;  ///< a run question whose re-run gave no key: the bank's key used
};

struct QuizGrade {
    std::string quiz;
    double score = 0, max = 0;
    std::vector<GradedQuestion> questions;
    std::vector<std::string> notes;  ///< the student id differs from the file's, lines skipped...
};

/// Grade @p answers against @p bank for @p student and @p salt. @p runner,
/// when given, re-runs the run questions (else their bank's keys are used).
QuizGrade grade(const Bank& bank, const AnswersFile& answers, const std::string& student,
                const std::string& salt, const Runner* runner);

/// The commands whose output grading @p answers needs (run questions, every
/// variant attempted), distinct and sorted.
std::vector<std::string> commands_needed(const Bank& bank, const AnswersFile& answers,
                                         const std::string& student, const std::string& salt);

/// The feedback a student gets on one quiz: per question, what was given,
/// right or wrong, the key, the explanation and the section to reread.
std::string feedback_text(const Bank& bank, const QuizGrade& grade, const std::string& lang);

/// Whether the feedback on @p bank may be given at @p now; if not, @p why
/// says until when.
bool released(const Bank& bank, const CourseConf& conf, std::time_t now, std::string& why);

/// "3.50": a score as the machine-readable lines print it.
std::string score_text(double value);

}  // namespace lab::quiz

// SPDX-License-Identifier: MIT
/**
 * @file quiz.hpp
 * @brief The quiz engine: question banks, per-student variants, answer checking.
 *
 * Design
 * ------
 * A bank is one plain-text file per lesson, `quizzes/NN_name.quiz`, holding
 * both languages: each text line `text:` has its twin `text.zh-CN:` right
 * under it. One file, not twin files, because the key (answers, tolerances,
 * parameters, pools) exists once: a corrected fact cannot drift between two
 * languages, and a test can refuse a question whose Chinese line is missing.
 * The English is the fallback where a Chinese line is absent.
 *
 * The format is line based, `key: value`, so that a mistake is reported as
 * one line, `FILE:LINE: what is wrong`. `#` starts a comment line; a line
 * that begins with white space continues the value of the line above.
 *
 *     quiz: 03_completion_queue
 *     title: The completion queue
 *     title.zh-CN: 完成队列
 *     pool: sizes draw 1            (a pool: ask 1 of the questions in it)
 *
 *     question: 03.granted          (a stable id: the answers file names it)
 *     pool: sizes
 *     param: N = 8 | 16 | 32        (or a range: 1..64, 256..4096 step 256)
 *     run: ./lab run 03_completion_queue --cqe {N}
 *     text: How many entries does rxe grant?
 *     text.zh-CN: rxe 实际给了多少个条目？
 *     kind: number                  (number, name or choice; starts a part)
 *     read: granted (\d+)           (where a re-run finds the answer)
 *     answer: {next_pow2(N + 1) - 1}
 *     wrong: {N} => The number asked for, not the one granted.
 *     explain: ...                  (and explain.zh-CN, reread, reread.zh-CN)
 *
 * A name part may say `among: errno` (or wc-status, qp-state, port-state):
 * an answer outside that family (a typo, a word from another family) is not
 * understood, and costs no attempt, like a word where a number belongs.
 *
 * `{...}` is an integer expression over the parameters (+ - * / %, brackets,
 * min, max, ceil_div, next_pow2), replaced in every text and answer ("{{" is
 * a brace). A
 * question has one or more parts (`kind:` or `part:` starts one, each with its
 * answer); a choice part lists `option a: ...` lines and one or several right
 * letters. Scores are per part, the question's points shared among its parts.
 *
 * Variants are drawn from a seed, the hash of student id, quiz and term salt,
 * with a generator of our own (splitmix64; no std distribution, whose results
 * differ between standard libraries), and per question: adding a question
 * changes no other question's variant. A disputed grade is reproduced from the
 * three strings alone.
 *
 * "Run it" questions carry the command (`run:`) and, per part, a pattern
 * (`read:`) that finds the answer in the program's output. Practice checks
 * the answer against the bank's key; the graded mode passes a Runner (its
 * sandbox on rxe) to keys_from_run() and checks against what the re-run
 * printed instead (`lab-quiz --rerun` does it with the shell, to check a
 * bank). What a second attempt earns, and whether it gets a fresh variant,
 * is an AttemptPolicy; practice asks each question once.
 *
 * A graded bank (the instructor's, grading/quizzes/) has the same format and
 * may say its policy in its header, before the first question (defaults
 * shown):
 *
 *     attempts: 1 0.5               (share of the points at attempt 1, 2...; none beyond)
 *     fresh-variant: no             (yes: new parameters after each attempt)
 *     release: after-grading        (or after-deadline: feedback once the quiz's
 *                                    deadline in grading/course.conf has passed)
 *
 * What a student gets of it is its "paper" (graded.hpp): the same format
 * without a single line of the key (answer, tolerance, wrong, explain,
 * reread, read), parsed with Strictness::paper, which requires no answer and
 * refuses any key line.
 */
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace lab::quiz {

/// A malformed bank: what() is one line, "FILE:LINE: reason".
class BankError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// A text in every language the bank gives; "en" is always there.
struct Text {
    std::map<std::string, std::string> by_lang;
    /// The text in @p lang, or the English one.
    [[nodiscard]] const std::string& in(std::string_view lang) const;
    [[nodiscard]] bool empty() const { return by_lang.empty(); }
};

enum class Kind { number, name, choice };

/// An explanation for one wrong answer (`wrong: VALUE => text`).
struct WrongNote {
    std::string value;  ///< may hold {expressions}
    Text text;
};

/// One part of a question: one answer to give.
struct Part {
    Kind kind = Kind::number;
    Text prompt;            ///< what this part asks, when a question has several
    std::string answer;     ///< the key, may hold {expressions}; names: "A | B"
    std::string tolerance;  ///< numbers: "0.5" (absolute) or "5%" (relative)
    std::vector<std::pair<char, Text>> options;  ///< choices: letter and text
    std::string read;   ///< run questions: a pattern whose group 1 is the answer
    std::string among;  ///< names: the family an answer must belong to, or empty
    std::vector<WrongNote> wrong;
    int line = 0;
};

/// A parameter: a list of values, or an integer range with a step.
struct Param {
    std::string name;
    std::vector<std::int64_t> values;  ///< a list, or empty for a range
    std::int64_t low = 0, high = 0, step = 1;
    [[nodiscard]] std::uint64_t count() const;
    [[nodiscard]] std::int64_t at(std::uint64_t index) const;
};

struct Question {
    std::string id;
    std::string pool;  ///< empty: always asked
    std::vector<Param> params;
    std::string run;  ///< the command of a "run it" question, may hold {expressions}
    Text text, explain, reread;
    double points = 1;
    std::vector<Part> parts;
    int line = 0;
    [[nodiscard]] bool is_run() const { return !run.empty(); }
};

struct Pool {
    std::string name;
    unsigned draw = 1;
    int line = 0;
};

/// What a further attempt at a missed question gets (the graded mode's
/// policy; practice asks each question once).
struct AttemptPolicy {
    std::vector<double> weights{1.0};  ///< share of the points at attempt 1, 2, ...; none beyond
    bool fresh_variant = false;        ///< a new draw of the parameters for each further attempt
};

/// When a graded quiz's answers and explanations reach the student.
enum class Release { after_grading, after_deadline };

struct Bank {
    std::string file;
    std::string quiz;  ///< e.g. 03_completion_queue
    Text title;
    std::vector<Pool> pools;
    std::vector<Question> questions;
    AttemptPolicy policy;  ///< `attempts:` and `fresh-variant:` (graded banks)
    Release release = Release::after_grading;
};

/// A bank, or a paper: a graded bank without its key (no answer required,
/// and a key line is an error).
enum class Strictness { bank, paper };

/// Parse a bank; throws BankError naming @p file and the line.
Bank parse_bank(std::string_view content, const std::string& file,
                Strictness strictness = Strictness::bank);
/// Read and parse a bank file.
Bank load_bank(const std::string& path, Strictness strictness = Strictness::bank);
/// Problems a shipped bank must not have (a missing Chinese line, a key that
/// does not evaluate, an unknown wrong-answer value...), one line each.
std::vector<std::string> lint_bank(const Bank& bank, const std::vector<std::string>& langs);

/// Values of a question's parameters in one variant.
using Values = std::map<std::string, std::int64_t>;

/// Evaluate an integer expression over @p values; throws std::invalid_argument.
std::int64_t evaluate(std::string_view expression, const Values& values);
/// Replace every {expression} in @p text.
std::string substitute(std::string_view text, const Values& values);

/// FNV-1a, 64 bits: the seed of a draw.
std::uint64_t hash64(std::string_view text, std::uint64_t basis = 14695981039346656037ull);
/// The seed of one student's quiz: student id, quiz and term salt.
std::uint64_t quiz_seed(std::string_view student, std::string_view quiz, std::string_view salt);

/// One question as one student gets it.
struct Drawn {
    const Question* question = nullptr;
    Values values;
    [[nodiscard]] std::string variant() const;  ///< "N=16,S=3", or "-"
};

/// The questions of a quiz for @p seed: every question outside a pool, in the
/// bank's order, and each pool's draw (its members shuffled, the first @c draw
/// kept) where the pool's first member stands.
std::vector<Drawn> draw_quiz(const Bank& bank, std::uint64_t seed);

/// Share of the points attempt @p attempt (0 is the first) may earn.
double attempt_weight(const AttemptPolicy& policy, unsigned attempt);

/// The variant of attempt @p attempt of @p first's question: @p first itself,
/// or with fresh_variant a new draw, as reproducible as the first.
Drawn variant_for_attempt(const Drawn& first, std::uint64_t seed, unsigned attempt,
                          const AttemptPolicy& policy);

/// How one answer to one part fared.
struct PartResult {
    bool parsed = false;              ///< false: the input was not understood, no attempt spent
    double score = 0;                 ///< 0..1 of the part
    std::string given;                ///< the answer as understood (normalised)
    std::string expected;             ///< the key, as shown to the student
    std::string problem;              ///< why it did not parse
    const WrongNote* note = nullptr;  ///< the explanation for this wrong answer, if any
};

/// Check @p input against @p part for the values of a variant. @p key, when
/// given, replaces the bank's answer (the graded mode's re-run result).
PartResult check_part(const Part& part, const Values& values, std::string_view input,
                      const std::optional<std::string>& key = std::nullopt);

/// Runs a command (after substitution) and returns what it printed, or nothing
/// if it could not be run: the graded mode's sandbox on rxe.
using Runner = std::function<std::optional<std::string>(const std::string& command)>;

/// The keys of a run question's parts read from a re-run: one per part, empty
/// where the part has no `read:` pattern or the output did not match.
std::vector<std::optional<std::string>> keys_from_run(const Drawn& drawn, const Runner& runner);

/// Points of a question from its parts' scores (each part an equal share).
double question_score(const Question& question, const std::vector<double>& part_scores);

/// "number", "name", "choice".
std::string_view kind_name(Kind kind);

/// @p text without the spaces, tabs and carriage returns around it.
std::string trim(std::string_view text);

}  // namespace lab::quiz

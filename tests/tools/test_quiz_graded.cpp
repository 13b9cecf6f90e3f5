// SPDX-License-Identifier: MIT
// The graded quizzes (tools/quiz/graded.hpp): the instructor's banks and
// their papers, which hold no key; a graded session that records every
// attempt and gives no verdict; grading a made-up answers file (partial
// credit, the second attempt's weight, fresh variants, input that does not
// parse, run questions keyed by a re-run); feedback withheld until the
// deadline and given after it.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "graded.hpp"
#include "quiz.hpp"
#include "quiz_banks.hpp"
#include "support/catch.hpp"
#include "support/process.hpp"

namespace fs = std::filesystem;
using namespace lab::quiz;

namespace {

using lab::test::quiz::has;
using lab::test::quiz::kSource;
using lab::test::quiz::read_file;

bool near(double a, double b) {
    return std::fabs(a - b) < 1e-9;
}

/// What parsing @p content throws, or "" if it does not.
std::string parse_error(const std::string& content, const std::string& file,
                        Strictness strictness = Strictness::bank) {
    try {
        (void)parse_bank(content, file, strictness);
    } catch (const BankError& e) {
        return e.what();
    }
    return "";
}

std::vector<fs::path> graded_banks() {
    return lab::test::quiz::banks_in("grading/quizzes");
}

/// A folder of its own for one test case.
fs::path scratch(const std::string& name) {
    const fs::path dir =
        fs::temp_directory_path() / ("quiz-graded-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

/// One piece of a bank's key that its paper must not hold.
struct KeyPiece {
    std::string text;
    /// Empty: nowhere in the paper. Else only this question's part of it: a
    /// number as common as 128 or 1024 may stand in another question.
    std::string question;
    /// An answer: matched as a whole word or number ("EBUSY" is not in
    /// "the busy-polling"); a stretch of prose: anywhere, spacing aside.
    bool token = false;
};

/// The pieces of a bank's key that its paper must not hold: every
/// explanation and wrong-answer note (each brace-free stretch of 20
/// characters or more), every read pattern, and every answer long enough not
/// to occur by chance (a name of 4 letters or more, a number of 3 digits or
/// more; "a", "22" or "b" are in any text). Wrong values are no part of the
/// key: a question may well name them, and they only say what is wrong.
std::vector<KeyPiece> key_pieces(const Bank& bank) {
    std::vector<KeyPiece> pieces;
    const auto stretches = [&](const std::string& text) {
        std::string piece;
        for (const char c : text + "{") {
            if (c == '{' || c == '}') {
                // 20 characters, not bytes: a Chinese character takes three,
                // and 7 of them are a phrase the question may share.
                const auto characters = std::ranges::count_if(
                    piece, [](char b) { return (static_cast<unsigned char>(b) & 0xC0) != 0x80; });
                if (characters >= 20) {
                    pieces.push_back({piece, "", false});
                }
                piece.clear();
            } else {
                piece += c;
            }
        }
    };
    for (const auto& q : bank.questions) {
        for (const auto& [lang, text] : q.explain.by_lang) {
            stretches(text);
        }
        for (const auto& part : q.parts) {
            if (part.kind != Kind::choice) {
                std::istringstream split(part.answer);
                std::string one;
                while (std::getline(split, one, '|')) {
                    const auto from = one.find_first_not_of(' ');
                    one = from == std::string::npos ? "" : one.substr(from);
                    while (!one.empty() && one.back() == ' ') {
                        one.pop_back();
                    }
                    const bool number = !one.empty() && std::ranges::all_of(one, [](char c) {
                        return std::isdigit(static_cast<unsigned char>(c)) != 0;
                    });
                    if (one.find('{') == std::string::npos &&
                        (number ? one.size() >= 3 : one.size() >= 4)) {
                        pieces.push_back({one, number ? q.id : "", true});
                    }
                }
            }
            if (!part.read.empty()) {
                pieces.push_back({part.read, "", false});
            }
            for (const auto& note : part.wrong) {
                for (const auto& [lang, text] : note.text.by_lang) {
                    stretches(text);
                }
            }
        }
    }
    return pieces;
}

/// Lower case, white space runs as one space: how answers are looked for.
std::string spaced(const std::string& text) {
    std::string out;
    for (const char c : text) {
        const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
        if (space && (out.empty() || out.back() == ' ')) {
            continue;
        }
        out += space ? ' ' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

/// Whether @p text holds @p word with no letter, digit or _ right beside it.
bool has_token(const std::string& text, const std::string& word) {
    const auto word_char = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
    };
    for (auto at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
        const bool before = at > 0 && word_char(text[at - 1]);
        const bool after = at + word.size() < text.size() && word_char(text[at + word.size()]);
        if (!before && !after) {
            return true;
        }
    }
    return false;
}

/// The lines of a paper (or bank) that belong to question @p id.
std::string question_section(const std::string& text, const std::string& id) {
    const auto from = text.find("question: " + id + "\n");
    if (from == std::string::npos) {
        return "";
    }
    const auto to = text.find("\nquestion: ", from + 1);
    return text.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

}  // namespace

TEST_CASE("every graded bank parses, has both languages, 6 to 10 questions and its paper",
          "[quiz][graded]") {
    const auto banks = graded_banks();
    REQUIRE(banks.size() >= 4);
    for (const auto& path : banks) {
        INFO(path.filename().string());
        const Bank bank = load_bank(path.string());
        CHECK(bank.quiz == path.stem().string());
        CHECK(fs::exists(kSource / "quizzes" / path.filename()));  // the practice bank's topics
        for (const auto& problem : lint_bank(bank, {"en", "zh-CN"})) {
            UNSCOPED_INFO(problem);
        }
        CHECK(lint_bank(bank, {"en", "zh-CN"}).empty());
        CHECK(bank.questions.size() >= 6);
        CHECK(bank.questions.size() <= 10);  // pools may ask fewer
        int run = 0, varying = 0;
        std::set<std::string> kinds;
        const Bank practice = load_bank((kSource / "quizzes" / path.filename()).string());
        for (const auto& q : bank.questions) {
            INFO(q.id);
            CHECK(q.id.starts_with(bank.quiz.substr(0, 2) + "g."));
            run += q.is_run() ? 1 : 0;
            varying += q.params.empty() ? 0 : 1;
            for (const auto& part : q.parts) {
                kinds.insert(std::string(kind_name(part.kind)));
            }
            // Not a practice question under another id: its text is its own.
            for (const auto& other : practice.questions) {
                CHECK(other.text.in("en") != q.text.in("en"));
            }
            CHECK(q.reread.in("en").starts_with("lessons/" + bank.quiz + "/README.md#"));
            CHECK(q.reread.in("zh-CN").starts_with("lessons/" + bank.quiz + "/README.zh-CN.md#"));
        }
        CHECK(run >= 1);
        CHECK(varying >= 1);
        CHECK(kinds.size() >= 2);
        // The committed paper is the one ./lab quiz --publish writes now, and it
        // draws what its bank draws.
        const fs::path paper_path = kSource / "quizzes/graded" / (bank.quiz + ".paper");
        REQUIRE(fs::exists(paper_path));
        CHECK(read_file(paper_path) == paper_of(bank));
        const Bank paper = load_bank(paper_path.string(), Strictness::paper);
        CHECK(paper.policy.weights == bank.policy.weights);
        CHECK(paper.policy.fresh_variant == bank.policy.fresh_variant);
        CHECK(paper.release == bank.release);
        for (const std::string student : {"alice", "bob", "carol@example.org"}) {
            const auto seed = quiz_seed(student, bank.quiz, "2026-fall");
            const auto one = draw_quiz(bank, seed);
            const auto two = draw_quiz(paper, seed);
            REQUIRE(one.size() == two.size());
            for (std::size_t i = 0; i < one.size(); ++i) {
                CHECK(one[i].question->id == two[i].question->id);
                CHECK(one[i].variant() == two[i].variant());
                CHECK(variant_for_attempt(one[i], seed, 1, bank.policy).variant() ==
                      variant_for_attempt(two[i], seed, 1, paper.policy).variant());
            }
        }
    }
}

TEST_CASE("each graded run question's key agrees with the sample output its lesson's README shows",
          "[quiz][graded]") {
    CHECK(lab::test::quiz::check_keys_against_readme(graded_banks()) >= 6);
}

TEST_CASE("a paper holds no part of its bank's key", "[quiz][graded]") {
    for (const auto& path : graded_banks()) {
        const Bank bank = load_bank(path.string());
        const std::string paper = read_file(kSource / "quizzes/graded" / (bank.quiz + ".paper"));
        // Compared without white space and case: a line break or a capital
        // letter hides nothing.
        const std::string bank_text = lab::test::squashed(read_file(path));
        const std::string paper_text = lab::test::squashed(paper);
        // No line of the key, by its name...
        static const std::regex key_line(
            R"((^|\n)(answer|tolerance|wrong|explain|reread|read)(\.[A-Za-z-]+)?:)");
        CHECK_FALSE(std::regex_search(paper, key_line));
        // ...nor any of its content: explanations, notes, patterns, answers.
        const auto pieces = key_pieces(bank);
        CHECK(pieces.size() >= 15);  // a collector that found nothing would show here
        const std::string bank_file = read_file(path);
        for (const auto& piece : pieces) {
            INFO(piece.text << (piece.question.empty() ? "" : " (in " + piece.question + ")"));
            if (!piece.token) {
                CHECK_FALSE(has(paper_text, lab::test::squashed(piece.text)));
                CHECK(has(bank_text,
                          lab::test::squashed(piece.text)));  // the search finds it where it is
                continue;
            }
            const auto where = [&](const std::string& text) {
                return spaced(piece.question.empty() ? text
                                                     : question_section(text, piece.question));
            };
            CHECK_FALSE(has_token(where(paper), spaced(piece.text)));
            CHECK(has_token(where(bank_file), spaced(piece.text)));
        }
    }
    // A paper that carries a key line is refused, whatever the line.
    const std::string with_key = "quiz: 97_t\ntitle: T\nquestion: 97.a\ntext: t\nkind: number\n";
    CHECK_NOTHROW(parse_bank(with_key, "p.paper", Strictness::paper));
    CHECK_THROWS_AS(parse_bank(with_key, "b.quiz"), BankError);  // a bank needs its answer
    for (const std::string line : {"answer: 3", "tolerance: 1", "wrong: 2 => no", "explain: x",
                                   "reread: x.md#a", "read: (\\d+)"}) {
        INFO(line);
        CHECK(
            has(parse_error(with_key + line + "\n", "p.paper", Strictness::paper), "p.paper:6: '"));
        CHECK(has(parse_error(with_key + line + "\n", "p.paper", Strictness::paper),
                  "a paper holds no part of the key"));
    }
}

TEST_CASE("policy lines: defaults, values, and one-line errors", "[quiz][graded]") {
    const std::string tail = "question: 97.a\ntext: t\nkind: number\nanswer: 1\n";
    const Bank plain = parse_bank("quiz: 97_t\n" + tail, "t.quiz");
    CHECK(plain.policy.weights == std::vector<double>{1.0});
    CHECK_FALSE(plain.policy.fresh_variant);
    CHECK(plain.release == Release::after_grading);
    const Bank set = parse_bank(
        "quiz: 97_t\nattempts: 1 0.5 0.25\nfresh-variant: yes\nrelease: after-deadline\n" + tail,
        "t.quiz");
    CHECK(set.policy.weights == std::vector<double>{1.0, 0.5, 0.25});
    CHECK(set.policy.fresh_variant);
    CHECK(set.release == Release::after_deadline);
    for (const std::string bad : {"attempts: 1 1.5", "attempts:", "attempts: one",
                                  "fresh-variant: maybe", "release: never"}) {
        INFO(bad);
        CHECK(parse_error("quiz: 97_t\n" + bad + "\n" + tail, "t.quiz").starts_with("t.quiz:2: "));
    }
}

namespace {

// A bank to grade against: two attempts (the second worth half), a fresh
// variant after each, a two-part number question, a choice, a run question.
const char* const kGradedBank = R"(quiz: 96_graded
title: Graded
title.zh-CN: 计分
attempts: 1 0.5
fresh-variant: yes
release: after-deadline

question: 96.parts
param: N = 1..1000
text: N is {N}.
kind: number
prompt: N + 1?
answer: {N + 1}
kind: number
prompt: 2 N?
answer: {2 * N}
explain: Add one; double it.

question: 96.choice
text: Pick.
kind: choice
option a: right
option b: also right
option c: wrong
answer: a b
explain: Both a and b.

question: 96.run
param: N = 1..1000
run: lesson --cqe {N}
text: Run it.
kind: number
read: granted (\d+)
answer: {N}
explain: What the run printed.
)";

std::string attempt_line(const std::string& id, const std::string& variant,
                         const std::string& answer) {
    return "2026-12-01T10:00:00Z\t" + id + "\t" + variant + "\t" + answer + "\n";
}

}  // namespace

TEST_CASE("grading a made-up answers file: partial credit, attempts, fresh variants, run keys",
          "[quiz][graded]") {
    const Bank bank = parse_bank(kGradedBank, "96_graded.quiz");
    const std::string student = "dana", salt = "2026-fall";
    const auto seed = quiz_seed(student, bank.quiz, salt);
    const auto drawn = draw_quiz(bank, seed);
    REQUIRE(drawn.size() == 3);
    const Drawn parts1 = drawn[0];
    const Drawn parts2 = variant_for_attempt(parts1, seed, 1, bank.policy);
    REQUIRE(parts1.variant() != parts2.variant());  // a fresh variant for attempt 2
    const auto n1 = parts1.values.at("N"), n2 = parts2.values.at("N");
    const Drawn run1 = drawn[2];
    const auto r1 = run1.values.at("N");

    // 96.parts: the first attempt has part 1 right only (half), a line that
    // does not parse costs nothing, the second attempt answers the new
    // numbers right (half of the points: 0.5); the best, 0.5.
    // 96.choice: "a c" is 0 (one right, one wrong), then "a b" at attempt 2: 0.5.
    // 96.run: the typed number is the bank's formula, but the re-run printed
    // another: wrong. A third attempt would be worth nothing.
    std::string text = "# 2026-12-01T09:59:00Z graded quiz=96_graded student=dana salt=2026-fall\n";
    text += attempt_line("96.parts", parts1.variant(), std::to_string(n1 + 1) + " ; 0");
    text += attempt_line("96.parts", parts2.variant(), "many ; 3");
    text += attempt_line("96.parts", parts2.variant(),
                         std::to_string(n2 + 1) + " ; " + std::to_string(2 * n2));
    text += attempt_line("96.choice", "-", "a, c");
    text += attempt_line("96.choice", "-", "a b");
    text += attempt_line("96.run", run1.variant(), std::to_string(r1));
    text += attempt_line("96.nope", "-", "1");
    const AnswersFile answers = parse_answers(text);
    CHECK(answers.student == "dana");
    CHECK(answers.attempts.size() == 7);

    std::vector<std::string> ran;
    const Runner runner = [&](const std::string& command) -> std::optional<std::string> {
        ran.push_back(command);
        return "requested " + command.substr(command.rfind(' ') + 1) + ", granted 4095\n";
    };
    const QuizGrade result = grade(bank, answers, student, salt, &runner);
    REQUIRE(result.questions.size() == 3);
    const auto& parts = result.questions[0];
    REQUIRE(parts.attempts.size() == 3);
    CHECK(parts.attempts[0].counted);
    CHECK(near(parts.attempts[0].score, 0.5));  // one part of two
    CHECK(near(parts.attempts[0].weight, 1.0));
    CHECK_FALSE(parts.attempts[1].counted);  // "many" is not a number: free
    CHECK(parts.attempts[2].counted);
    CHECK(parts.attempts[2].variant == parts2.variant());
    CHECK(near(parts.attempts[2].score, 1.0));
    CHECK(near(parts.attempts[2].weight, 0.5));
    CHECK(near(parts.points, 0.5));
    CHECK(near(result.questions[1].points, 0.5));
    CHECK(near(result.questions[1].attempts[0].score, 0.0));
    CHECK(near(result.questions[2].points, 0.0));  // 4095 was printed, not the formula
    CHECK(ran == std::vector<std::string>{"lesson --cqe " + std::to_string(r1)});
    CHECK(near(result.score, 1.0));
    CHECK(near(result.max, 3.0));
    CHECK(std::ranges::any_of(result.notes,
                              [](const std::string& n) { return has(n, "'96.nope'"); }));

    // The run answered with what the re-run printed is right; without a
    // runner, the bank's key is used (and said: grade_all warns).
    const AnswersFile printed =
        parse_answers(attempt_line("96.run", run1.variant(), "4095") +
                      attempt_line("96.choice", "-", "b a") +  // right at once: 1
                      attempt_line("96.choice", "-", "c"));    // a later miss takes nothing away
    const QuizGrade rerun = grade(bank, printed, student, salt, &runner);
    CHECK(near(rerun.questions[2].points, 1.0));
    CHECK(near(rerun.questions[1].points, 1.0));
    CHECK(near(grade(bank, printed, student, salt, nullptr).questions[2].points, 0.0));
    CHECK(commands_needed(bank, printed, student, salt) ==
          std::vector<std::string>{"lesson --cqe " + std::to_string(r1)});

    // Attempt 2 answered with attempt 1's numbers (a stale variant): the
    // recorded variant is not the one drawn, and it earns nothing.
    const AnswersFile stale =
        parse_answers(attempt_line("96.parts", parts1.variant(), "0 ; 0") +
                      attempt_line("96.parts", parts1.variant(),
                                   std::to_string(n1 + 1) + " ; " + std::to_string(2 * n1)));
    const QuizGrade stale_grade = grade(bank, stale, student, salt, nullptr);
    CHECK_FALSE(stale_grade.questions[0].attempts[1].variant_matches);
    CHECK(near(stale_grade.questions[0].points, 0.0));

    // Another student's file graded for this one: said.
    const QuizGrade other = grade(bank, answers, "erin", salt, nullptr);
    CHECK(std::ranges::any_of(other.notes,
                              [](const std::string& n) { return has(n, "student 'dana'"); }));
}

TEST_CASE("feedback is withheld before the deadline and given after it", "[quiz][graded]") {
    const fs::path dir = scratch("feedback");
    fs::create_directories(dir / "banks");
    fs::create_directories(dir / "answers");
    std::ofstream(dir / "banks/96_graded.quiz") << kGradedBank;
    std::ofstream(dir / "course.conf") << "# the course\nterm-salt 2026-fall\n"
                                       << "deadline quiz:96_graded 2026-12-05T23:59:00Z\n"
                                       << "weight exercises 60\n";  // someone else's line
    const Bank bank = parse_bank(kGradedBank, "96_graded.quiz");
    const auto seed = quiz_seed("dana", bank.quiz, "2026-fall");
    const Drawn first = draw_quiz(bank, seed)[0];
    std::ofstream(dir / "answers/96_graded.txt")
        << "# 2026-12-01T09:59:00Z graded quiz=96_graded student=dana salt=2026-fall\n"
        << attempt_line("96.parts", first.variant(),
                        std::to_string(first.values.at("N") + 1) + " ; 1")
        << attempt_line("96.choice", "-", "a b");

    const CourseConf conf = load_course_conf((dir / "course.conf").string());
    CHECK(conf.term_salt == "2026-fall");
    REQUIRE(conf.deadlines.count("quiz:96_graded") == 1);
    std::string why;
    CHECK_FALSE(released(bank, conf, *parse_time("2026-12-05T23:58:59Z"), why));
    CHECK(has(why, "2026-12-05T23:59:00Z"));
    CHECK(released(bank, conf, *parse_time("2026-12-06T07:59:00+08:00"), why));
    CHECK(parse_time("2026-12-06T00:00Z") == parse_time("2026-12-06T08:00:00+08:00"));
    CHECK_FALSE(parse_time("next week"));

    const auto graded = [&](const std::string& now) {
        return lab::test::run({lab::test::program("tools/quiz/lab-quiz"), "--banks",
                               (dir / "banks").string(), "--answers", (dir / "answers").string(),
                               "--course", (dir / "course.conf").string(), "--feedback",
                               (dir / "feedback").string(), "--now", now, "grade"});
    };
    const auto before = graded("2026-12-05T12:00:00Z");
    INFO(before.out << before.err);
    CHECK(before.exit_code == 0);
    // One machine-readable line per quiz: QUIZ, score, max; the student id and
    // the salt are the answers file's and the course's.
    CHECK(before.out == "96_graded\t1.50\t3.00\n");
    const std::string withheld = read_file(dir / "feedback/96_graded.txt");
    CHECK(has(withheld, "Feedback withheld"));
    CHECK_FALSE(has(withheld, "Add one; double it."));
    CHECK_FALSE(has(withheld, "Both a and b."));

    const auto after = graded("2026-12-06T00:00:00Z");
    CHECK(after.out == before.out);
    const std::string given = read_file(dir / "feedback/96_graded.txt");
    INFO(given);
    CHECK(has(given, "Score: 1.50 / 3.00"));
    CHECK(has(given, "Add one; double it."));
    CHECK(has(given, "Both a and b."));
    CHECK(has(given, "partly right"));
    CHECK(has(given, "The answer 2: " + std::to_string(2 * first.values.at("N"))));
    CHECK(has(given, "Not answered."));  // 96.run
    fs::remove_all(dir);
}

TEST_CASE("./lab quiz NN --graded records every attempt and says nothing of right or wrong",
          "[quiz][graded]") {
    ::setenv("RDMA_LAB_QUIZ_BUILD", LAB_BUILD_DIR, 1);
    const std::string lab = (kSource / "lab").string();
    const fs::path dir = scratch("session");
    std::ofstream(dir / "course.conf") << "term-salt 2026-fall\n";
    const auto listed = lab::test::run({lab, "quiz", "--graded"});
    CHECK(listed.exit_code == 0);
    for (const auto& bank : graded_banks()) {
        CHECK(has(listed.out, bank.stem().string()));
    }

    const Bank bank = load_bank((kSource / "grading/quizzes/03_completion_queue.quiz").string());
    const Bank paper = load_bank((kSource / "quizzes/graded/03_completion_queue.paper").string(),
                                 Strictness::paper);
    const auto seed = quiz_seed("test-student", bank.quiz, "2026-fall");
    const auto drawn = draw_quiz(paper, seed);
    REQUIRE(drawn.size() >= 6);
    // The first question is answered after an answer that does not parse, the
    // second is skipped (Enter), the rest answered with a wrong-looking but
    // well-formed answer each.
    std::string input = "not a number\n1\n\n";
    for (std::size_t i = 2; i < drawn.size(); ++i) {
        for (const auto& part : drawn[i].question->parts) {
            input += part.kind == Kind::choice ? "b\n" : part.kind == Kind::number ? "7\n" : "x\n";
        }
    }
    const std::vector<std::string> take = {lab,         "quiz",
                                           "03",        "--graded",
                                           "--student", "test-student",
                                           "--answers", dir.string(),
                                           "--course",  (dir / "course.conf").string()};
    const auto first = lab::test::run_with_input(take, input);
    INFO(first.out << first.err);
    CHECK(first.exit_code == 0);
    CHECK(has(first.out, "(no attempt spent; answer again)"));
    CHECK(has(first.out, "Skipped."));
    CHECK(has(first.out, "Recorded."));
    // No verdict, no key, no explanation.
    for (const std::string verdict :
         {"Right.", "Wrong.", "Partly right", "The answer:", "Score:", "Reread:"}) {
        CHECK_FALSE(has(first.out, verdict));
    }
    for (const auto& q : bank.questions) {
        CHECK_FALSE(has(first.out, q.explain.in("en").substr(0, 30)));
    }

    const std::string log_path = (dir / "03_completion_queue.txt").string();
    AnswersFile log = parse_answers(read_file(log_path));
    CHECK(log.student == "test-student");
    CHECK(log.salt == "2026-fall");
    REQUIRE(log.attempts.size() == drawn.size() - 1);  // all but the skipped one
    CHECK(log.attempts[0].question == drawn[0].question->id);
    CHECK(log.attempts[0].variant == drawn[0].variant());
    CHECK(log.attempts[0].answer == "1");
    CHECK(log.attempts[1].question == drawn[2].question->id);
    static const std::regex line(
        R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\t[0-9]+g\.[a-z-]+\t[^\t]+\t[^\t]+$)");
    for (const auto& text : lab::test::lines(read_file(log_path))) {
        if (!text.empty() && !text.starts_with("#")) {
            INFO(text);
            CHECK(std::regex_match(text, line));
        }
    }

    // A second session: question 1 may be answered again (attempt 2, a fresh
    // variant, worth 50 %); Enter keeps the first answer of every other.
    const auto second = lab::test::run_with_input(take, "2\n" + std::string(drawn.size(), '\n'));
    INFO(second.out);
    CHECK(has(second.out, "Answered before: 1. Answering again is attempt 2 (worth 50 %)"));
    CHECK(has(second.out, "The answer is kept."));
    log = parse_answers(read_file(log_path));
    REQUIRE(log.attempts.size() == drawn.size());
    CHECK(log.attempts.back().question == drawn[0].question->id);
    CHECK(log.attempts.back().variant ==
          variant_for_attempt(drawn[0], seed, 1, paper.policy).variant());
    // The grader reads the file as the session wrote it.
    const QuizGrade result = grade(bank, log, "test-student", "2026-fall", nullptr);
    CHECK(result.questions[0].attempts.size() == 2);
    CHECK(result.questions[0].attempts[1].variant_matches);
    CHECK(near(result.questions[0].attempts[1].weight, 0.5));

    // In Chinese, the same silence about right and wrong.
    const fs::path zh = scratch("session-zh");
    auto chinese_take = take;
    chinese_take[7] = zh.string();
    chinese_take.insert(chinese_take.end(), {"--lang", "zh-CN"});
    const auto chinese = lab::test::run_with_input(chinese_take, "1\n");
    CHECK(chinese.exit_code == 0);
    CHECK(has(chinese.out, "计分测验：不显示对错"));
    CHECK(has(chinese.out, "已记录。"));
    CHECK_FALSE(has(chinese.out, "正确。"));
    CHECK_FALSE(has(chinese.out, "错误。"));
    fs::remove_all(dir);
    fs::remove_all(zh);
}

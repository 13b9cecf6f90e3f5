// SPDX-License-Identifier: MIT
// The quiz engine (tools/quiz) and ./lab quiz: the shipped banks, the parser's
// one-line errors, seeded variants and pools, answer checking per kind, the
// graded mode's re-run hook, and a whole practice quiz fed on stdin.
#include <infiniband/verbs.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

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

std::vector<fs::path> shipped_banks() {
    return lab::test::quiz::banks_in("quizzes");
}
bool has(const std::string& text, char c) {
    return text.find(c) != std::string::npos;
}

bool near(double a, double b) {
    return std::fabs(a - b) < 1e-9;
}

// A heading's anchor as the course's pages are rendered: lower case, spaces
// to '-', ASCII punctuation and full-width Chinese punctuation dropped.
std::string slug(const std::string& heading) {
    std::string out;
    for (std::size_t i = 0; i < heading.size();) {
        const auto c = static_cast<unsigned char>(heading[i]);
        if (c < 0x80) {
            if (std::isalnum(c) || c == '-' || c == '_') {
                out += static_cast<char>(std::tolower(c));
            } else if (c == ' ') {
                out += '-';
            }
            ++i;
            continue;
        }
        const std::size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
        unsigned code = c & (length == 2 ? 0x1f : length == 3 ? 0x0f : 0x07);
        for (std::size_t k = 1; k < length && i + k < heading.size(); ++k) {
            code = (code << 6) | (static_cast<unsigned char>(heading[i + k]) & 0x3f);
        }
        const bool punctuation = (code >= 0x3000 && code <= 0x303f) ||
                                 (code >= 0xff00 && code <= 0xff0f) ||
                                 (code >= 0xff1a && code <= 0xff20);
        if (!punctuation) {
            out += heading.substr(i, length);
        }
        i += length;
    }
    return out;
}

std::set<std::string> anchors_of(const fs::path& page) {
    std::set<std::string> anchors;
    std::istringstream in(read_file(page));
    std::string line;
    bool fenced = false;
    static const std::regex id(R"(<a id="([^"]+)\"></a>)");
    while (std::getline(in, line)) {
        if (line.starts_with("```")) {
            fenced = !fenced;
        }
        if (fenced) {
            continue;
        }
        if (line.starts_with("#")) {
            anchors.insert(slug(line.substr(line.find_first_not_of('#'))));
            // (the leading space became a '-')
            anchors.insert(slug(line.substr(line.find_first_not_of("# "))));
        }
        for (std::sregex_iterator it(line.begin(), line.end(), id), end; it != end; ++it) {
            anchors.insert((*it)[1].str());
        }
    }
    return anchors;
}

const char* const kSmallBank = R"(# SPDX-License-Identifier: CC-BY-4.0
quiz: 99_test
title: Test
title.zh-CN: 测试
pool: p draw 2

question: 99.fixed-a
param: N = 1..1000
text: N is {N}.
text.zh-CN: N 是 {N}。
kind: number
answer: {N * 2}
explain: twice
explain.zh-CN: 两倍
reread: x.md#a
reread.zh-CN: x.md#a

question: 99.p1
pool: p
text: one
kind: name
answer: ONE

question: 99.p2
pool: p
text: two
kind: name
answer: TWO

question: 99.p3
pool: p
text: three
kind: name
answer: THREE

question: 99.p4
pool: p
text: four
kind: name
answer: FOUR

question: 99.p5
pool: p
text: five
kind: name
answer: FIVE

question: 99.fixed-b
text: last
kind: choice
option a: A
option b: B
answer: a
)";

}  // namespace

TEST_CASE("every shipped bank parses, has both languages and the mix of kinds a quiz needs",
          "[quiz]") {
    const auto banks = shipped_banks();
    REQUIRE(banks.size() >= 4);
    for (const auto& path : banks) {
        INFO(path.filename().string());
        const Bank bank = load_bank(path.string());
        CHECK(bank.quiz == path.stem().string());
        CHECK(fs::is_directory(kSource / "lessons" / bank.quiz));
        CHECK(lint_bank(bank, {"en", "zh-CN"}).empty());
        for (const auto& problem : lint_bank(bank, {"en", "zh-CN"})) {
            UNSCOPED_INFO(problem);
        }
        CHECK(bank.questions.size() >= 6);
        CHECK(bank.questions.size() <= 10);
        const auto asked = draw_quiz(bank, 0).size();
        CHECK(asked >= 6);
        std::set<std::string> kinds;
        int run = 0;
        for (const auto& q : bank.questions) {
            INFO(q.id);
            CHECK(q.id.starts_with(bank.quiz.substr(0, 2) + "."));
            if (q.is_run()) {
                ++run;
                CHECK(q.run.starts_with("./lab run " + bank.quiz));
            }
            for (const auto& part : q.parts) {
                kinds.insert(std::string(kind_name(part.kind)));
            }
            // Every section to reread exists, in English and in Chinese.
            for (const auto& lang : {"en", "zh-CN"}) {
                const std::string reread = q.reread.in(lang);
                INFO(reread);
                const auto hash = reread.find('#');
                REQUIRE(hash != std::string::npos);
                const fs::path page = kSource / reread.substr(0, hash);
                REQUIRE(fs::is_regular_file(page));
                CHECK(anchors_of(page).count(reread.substr(hash + 1)) == 1);
                CHECK((std::string(lang) == "en") == !has(reread, ".zh-CN."));
            }
        }
        CHECK(run >= 1);
        CHECK(kinds.size() == 3);
    }
}

TEST_CASE("the shipped keys agree with the device page", "[quiz]") {
    // docs/devices.md#granted-sizes: rxe grants a CQ of 2^k - 1, "16 → 31".
    const Bank bank = load_bank((kSource / "quizzes/03_completion_queue.quiz").string());
    const auto granted = std::find_if(bank.questions.begin(), bank.questions.end(),
                                      [](const Question& q) { return q.id == "03.granted"; });
    REQUIRE(granted != bank.questions.end());
    REQUIRE(has(read_file(kSource / "docs/devices.md"), "CQ 2^k − 1 (16 → 31)"));
    const Part& part = granted->parts.front();
    CHECK(check_part(part, {{"N", 16}}, "31").score == 1);
    CHECK(check_part(part, {{"N", 100}}, "127").score == 1);  // the lesson's sample
    CHECK(check_part(part, {{"N", 8}}, "15").score == 1);
    CHECK(check_part(part, {{"N", 16}}, "32").score == 0);
    // The lesson's own sample output is what the run question reads.
    std::smatch match;
    const std::string sample = read_file(kSource / "lessons/03_completion_queue/README.md");
    REQUIRE(std::regex_search(sample, match, std::regex(part.read)));
    CHECK(match[1] == "127");
}

TEST_CASE("each run question's key agrees with the sample output its lesson's README shows",
          "[quiz]") {
    CHECK(lab::test::quiz::check_keys_against_readme(shipped_banks()) >= 8);
}

TEST_CASE("a malformed bank is refused with one line naming the file and the line", "[quiz]") {
    struct Case {
        std::string bank;
        int line;
        std::string says;
    };
    const std::string head = "quiz: 99_test\ntitle: T\n";    // lines 1-2
    const std::string question = "question: q1\ntext: t\n";  // lines 3-4 after head
    const std::vector<Case> cases = {
        {head + "question: q1\ntext: t\nkind: number\nanswer: 1\nfrobnicate: x\n", 7,
         "unknown key"},
        {head + "this line has no colon\n", 3, "expected 'key: value'"},
        {"  continued\nquiz: 99_test\n", 1, "continuation"},
        {head + question + "answer: 1\n", 5, "before 'kind:'"},
        {head + question + "kind: number\noption a: x\nanswer: 1\n", 6, "not a choice"},
        {head + question + "kind: choice\noption a: x\noption b: y\nanswer: c\n", 5,
         "'c' is not one of"},
        {head + question + "kind: number\nanswer: 1\n" + question + "kind: number\nanswer: 1\n", 7,
         "used twice"},
        {head + "pool: p draw 3\n" + question + "pool: p\nkind: name\nanswer: X\n", 3, "draws 3"},
        {head + question + "pool: nope\n", 5, "no pool 'nope'"},
        {head + question + "param: N = 5..1\n", 5, "a range"},
        {head + question + "param: N = 1 | two\n", 5, "not an integer"},
        {head + question + "kind: number\nanswer: 1\nwrong: 2 no arrow\n", 7, "=>"},
        {head + question + "kind: number\nread: no group\nanswer: 1\n", 6, "group"},
        {head + question + "kind: sometimes\n", 5, "unknown kind"},
        {head + question + "kind: number\namong: errno\n", 6, "'among' is for a name part"},
        {head + question + "kind: name\namong: colours\n", 6, "'among' is for a name part"},
        {head + question + "kind: number\n", 5, "no 'answer:'"},
        {head + question + "kind: number\nanswer: 1\ntext: again\n", 7, "a second 'text'"},
        {head + question + "kind: choice\noption.zh-CN a: 甲\n", 6, "before its English"},
        {"title: T\nquestion: q1\ntext: t\nkind: name\nanswer: X\n", 1, "no 'quiz:'"},
    };
    for (const auto& c : cases) {
        INFO(c.bank);
        try {
            (void)parse_bank(c.bank, "quizzes/bad.quiz");
            FAIL("the bank was accepted");
        } catch (const BankError& e) {
            const std::string what = e.what();
            CHECK(what.starts_with("quizzes/bad.quiz:" + std::to_string(c.line) + ": "));
            CHECK(has(what, c.says));
            CHECK(!has(what, '\n'));
        }
    }
    // A missing Chinese line and a key that does not evaluate parse, and the lint names them.
    const Bank lacking = parse_bank(head + question + "kind: number\nanswer: {M + 1}\n", "b.quiz");
    const auto problems = lint_bank(lacking, {"en", "zh-CN"});
    const auto named = [&](const std::string& text) {
        return std::any_of(problems.begin(), problems.end(),
                           [&](const std::string& p) { return has(p, text); });
    };
    CHECK(named("b.quiz:1: the title has no 'zh-CN' line"));
    CHECK(named("b.quiz:3: q1: 'text' has no 'zh-CN' line"));
    CHECK(named("no parameter 'M'"));
}

TEST_CASE("a continued line joins with a space, but not inside Chinese text", "[quiz]") {
    const Bank bank = parse_bank(
        "quiz: 99_test\ntitle: a\n  b\ntitle.zh-CN: 第一行\n  第二行，\n"
        "  VmPin 的值：\n  {1 + 1} kB。\n  RDMA\n",
        "j.quiz");
    CHECK(bank.title.in("en") == "a b");
    CHECK(bank.title.in("zh-CN") == "第一行第二行，VmPin 的值：{1 + 1} kB。RDMA");
}

TEST_CASE("a variant is the same for the same student, quiz and salt, and differs for others",
          "[quiz]") {
    const Bank bank = parse_bank(kSmallBank, "small.quiz");
    const auto value = [&](const std::string& student, const std::string& salt) {
        return draw_quiz(bank, quiz_seed(student, bank.quiz, salt)).front().values.at("N");
    };
    CHECK(value("alice", "2026-fall") == value("alice", "2026-fall"));
    CHECK(value("alice", "2026-fall") != value("bob", "2026-fall"));
    CHECK(value("alice", "2026-fall") != value("alice", "2027-spring"));
    // Across the range 1..1000: fifty students get (nearly) fifty values, all in range.
    std::set<std::int64_t> values;
    for (int i = 0; i < 50; ++i) {
        const auto n = value("student" + std::to_string(i), "2026-fall");
        CHECK(n >= 1);
        CHECK(n <= 1000);
        values.insert(n);
    }
    CHECK(values.size() >= 45);
    // Pinned: the seed and the draw are our own arithmetic, the same with
    // every compiler and library, so that a disputed grade can be reproduced.
    CHECK(hash64("") == 14695981039346656037ull);
    CHECK(hash64("a") == 0xaf63dc4c8601ec8cull);
    const auto drawn = draw_quiz(bank, quiz_seed("alice", "99_test", "2026-fall"));
    CHECK(drawn.front().variant() == "N=" + std::to_string(drawn.front().values.at("N")));
    CHECK(drawn.front().values.at("N") == value("alice", "2026-fall"));
    // A question's variant does not move when another question is added before it.
    const Bank longer =
        parse_bank(std::string(kSmallBank)
                       .replace(std::string(kSmallBank).find("question: 99.fixed-a"), 0,
                                "question: 99.zero\ntext: z\nkind: name\nanswer: Z\n\n"),
                   "longer.quiz");
    const auto seed = quiz_seed("alice", bank.quiz, "2026-fall");
    CHECK(draw_quiz(longer, seed)[1].question->id == "99.fixed-a");
    CHECK(draw_quiz(longer, seed)[1].values == draw_quiz(bank, seed)[0].values);
}

TEST_CASE("an attempt policy: declining points, and a fresh variant after a miss", "[quiz]") {
    const Bank bank = parse_bank(kSmallBank, "small.quiz");
    const auto seed = quiz_seed("alice", bank.quiz, "2026-fall");
    const Drawn first = draw_quiz(bank, seed).front();
    const AttemptPolicy declining{{1.0, 0.5, 0.25}, false};
    CHECK(attempt_weight(declining, 0) == 1.0);
    CHECK(attempt_weight(declining, 2) == 0.25);
    CHECK(attempt_weight(declining, 3) == 0.0);
    CHECK(variant_for_attempt(first, seed, 1, declining).values == first.values);
    const AttemptPolicy fresh{{1.0, 1.0}, true};
    CHECK(variant_for_attempt(first, seed, 0, fresh).values == first.values);
    const auto second = variant_for_attempt(first, seed, 1, fresh);
    CHECK(second.question == first.question);
    CHECK(second.values != first.values);
    CHECK(variant_for_attempt(first, seed, 1, fresh).values == second.values);  // reproducible
    CHECK(variant_for_attempt(first, seed, 2, fresh).values != second.values);
}

TEST_CASE("a pool draws N of its M questions, in a shuffled order, where the pool stands",
          "[quiz]") {
    const Bank bank = parse_bank(kSmallBank, "small.quiz");
    std::set<std::string> ever_drawn;
    std::set<std::string> orders;
    for (int i = 0; i < 200; ++i) {
        const auto drawn = draw_quiz(bank, quiz_seed("s" + std::to_string(i), bank.quiz, "t"));
        REQUIRE(drawn.size() == 4);  // two fixed questions, two of the pool's five
        CHECK(drawn[0].question->id == "99.fixed-a");
        CHECK(drawn[3].question->id == "99.fixed-b");
        CHECK(drawn[1].question->pool == "p");
        CHECK(drawn[2].question->pool == "p");
        CHECK(drawn[1].question != drawn[2].question);
        ever_drawn.insert(drawn[1].question->id);
        ever_drawn.insert(drawn[2].question->id);
        orders.insert(drawn[1].question->id + " " + drawn[2].question->id);
    }
    CHECK(ever_drawn.size() == 5);
    // Both orders of a pair occur: the draw is shuffled, not the bank's order.
    CHECK(orders.count("99.p1 99.p2") + orders.count("99.p2 99.p1") == 2);
}

TEST_CASE(
    "answers are checked per kind, with partial credit; input that does not parse costs "
    "no attempt",
    "[quiz]") {
    const Bank bank = parse_bank(R"(quiz: 99_test
title: T
question: n
text: t
kind: number
answer: {N + 1}
tolerance: 0.5
wrong: {N} => the request
part: number
answer: 200
tolerance: 5%
question: s
text: t
kind: name
answer: IBV_WC_RNR_RETRY_EXC_ERR | RNR retry counter exceeded
wrong: IBV_WC_RETRY_EXC_ERR | Transport retry counter exceeded => ACK timeouts
question: c
text: t
kind: choice
option a: A
option b: B
option c: C
option d: D
answer: a b d
wrong: c => not c
wrong: a b => d too
)",
                                 "k.quiz");
    const Part& number = bank.questions[0].parts[0];
    const Part& percent = bank.questions[0].parts[1];
    const Part& name = bank.questions[1].parts[0];
    const Part& choice = bank.questions[2].parts[0];
    const Values n16{{"N", 16}};

    SECTION("numbers") {
        CHECK(check_part(number, n16, "17").score == 1);
        CHECK(check_part(number, n16, " 17.4 ").score == 1);  // within 0.5
        CHECK(check_part(number, n16, "0x11").score == 1);
        CHECK(check_part(number, n16, "17.6").score == 0);
        const auto wrong = check_part(number, n16, "16");
        CHECK(wrong.parsed);
        CHECK(wrong.score == 0);
        REQUIRE(wrong.note != nullptr);
        CHECK(wrong.note->text.in("en") == "the request");
        CHECK(check_part(number, n16, "15").note == nullptr);
        CHECK(check_part(percent, {}, "209").score == 1);
        CHECK(check_part(percent, {}, "211").score == 0);
        for (const auto* input : {"", "seventeen", "17 entries", "1.2.3"}) {
            INFO(input);
            const auto result = check_part(number, n16, input);
            CHECK(!result.parsed);
            CHECK(!result.problem.empty());
        }
    }
    SECTION("names") {
        CHECK(check_part(name, {}, "ibv_wc_rnr_retry_exc_err").score == 1);
        CHECK(check_part(name, {}, "`IBV_WC_RNR_RETRY_EXC_ERR`").score == 1);
        CHECK(check_part(name, {}, "  RNR   retry counter EXCEEDED ").score == 1);
        const auto wrong = check_part(name, {}, "transport retry counter exceeded");
        CHECK(wrong.score == 0);
        REQUIRE(wrong.note != nullptr);
        CHECK(wrong.note->text.in("en") == "ACK timeouts");
        CHECK(check_part(name, {}, "IBV_WC_SUCCESS").note == nullptr);
        CHECK(!check_part(name, {}, "   ").parsed);
        CHECK(check_part(name, {}, "x").expected == "IBV_WC_RNR_RETRY_EXC_ERR");
    }
    SECTION("a name outside its family is not understood, and costs no attempt") {
        const Bank families = parse_bank(R"(quiz: 99_test
title: T
question: e
text: t
kind: name
among: errno
answer: EBUSY
question: w
text: t
kind: name
among: wc-status
answer: IBV_WC_RNR_RETRY_EXC_ERR | RNR retry counter exceeded
question: q
text: t
kind: name
among: qp-state
answer: INIT
)",
                                         "f.quiz");
        const Part& errno_part = families.questions[0].parts[0];
        const Part& status = families.questions[1].parts[0];
        const Part& state = families.questions[2].parts[0];
        CHECK(check_part(errno_part, {}, "ebusy").score == 1);
        CHECK(check_part(errno_part, {}, "EINVAL").parsed);  // wrong, but an errno
        CHECK(check_part(errno_part, {}, "Invalid argument").parsed);
        CHECK(!check_part(errno_part, {}, "busy").parsed);
        CHECK(has(check_part(errno_part, {}, "busy").problem, "not an errno name"));
        CHECK(check_part(status, {}, "RETRY_EXC_ERR").parsed);
        CHECK(check_part(status, {}, "rnr retry counter exceeded").score ==
              1);  // the key's own text
        CHECK(!check_part(status, {}, "IBV_WC_RNR_RETRY").parsed);
        CHECK(check_part(state, {}, "IBV_QPS_INIT").score == 1);
        CHECK(check_part(state, {}, "rts").parsed);
        CHECK(!check_part(state, {}, "ready").parsed);
    }
    SECTION("choices, one share per right letter") {
        CHECK(near(check_part(choice, {}, "a b d").score, 1));
        CHECK(near(check_part(choice, {}, "D,B,a").score, 1));
        CHECK(near(check_part(choice, {}, "abd").score, 1));
        CHECK(near(check_part(choice, {}, "a").score, 1.0 / 3));
        CHECK(near(check_part(choice, {}, "a b c d").score, 2.0 / 3));
        CHECK(near(check_part(choice, {}, "a c").score, 0));
        CHECK(check_part(choice, {}, "a b").note->text.in("en") == "d too");  // this exact answer
        CHECK(check_part(choice, {}, "b c").note->text.in("en") == "not c");  // its wrong letter
        for (const auto* input : {"", "e", "a a", "1"}) {
            INFO(input);
            CHECK(!check_part(choice, {}, input).parsed);
        }
    }
    SECTION("a question's points are shared among its parts") {
        CHECK(near(question_score(bank.questions[0], {1, 0}), 0.5));
        CHECK(near(question_score(bank.questions[0], {1, 1}), 1));
    }
    SECTION("the graded mode's key replaces the bank's") {
        CHECK(check_part(number, n16, "31", std::string("31")).score == 1);
        CHECK(check_part(number, n16, "17", std::string("31")).score == 0);
    }
}

TEST_CASE("expressions in texts and keys", "[quiz]") {
    const Values v{{"N", 16}, {"S", 5000}};
    CHECK(evaluate("next_pow2(N + 1) - 1", v) == 31);
    CHECK(evaluate("ceil_div(S, 1024)", v) == 5);
    CHECK(evaluate("2 + 3 * (4 - 1) % 5", v) == 6);
    CHECK(evaluate("-N + max(1, min(7, 3))", v) == -13);
    CHECK(substitute("{N} entries, {{N * 2}", v) == "16 entries, {N * 2}");
    CHECK_THROWS_AS(evaluate("N / 0", v), std::invalid_argument);
    CHECK_THROWS_AS(evaluate("M", v), std::invalid_argument);
    CHECK_THROWS_AS(evaluate("sqrt(N)", v), std::invalid_argument);
    CHECK_THROWS_AS(evaluate("(N", v), std::invalid_argument);
    CHECK_THROWS_AS(evaluate("next_pow2(4611686018427387905)", v), std::invalid_argument);
    CHECK_THROWS_AS(substitute("{N", v), std::invalid_argument);
}

TEST_CASE("lab-quiz --rerun runs the run-it questions and compares their output with the key",
          "[quiz]") {
    const fs::path banks = fs::temp_directory_path() / ("quiz-banks-" + std::to_string(::getpid()));
    fs::create_directories(banks);
    std::ofstream(banks / "98_rerun.quiz") << R"(quiz: 98_rerun
title: T
question: 98.agree
param: N = 8 | 16
run: printf 'requested %d, granted %d\n' {N} {next_pow2(N + 1) - 1}
text: t
kind: number
read: granted (\d+)
answer: {next_pow2(N + 1) - 1}
question: 98.differ
run: echo 'status 12'
text: t
kind: number
read: status (\d+)
answer: 13
question: 98.silent
run: true
text: t
kind: name
read: state (\w+)
answer: RTS
)";
    const auto result = lab::test::run({lab::test::program("tools/quiz/lab-quiz"), "--banks",
                                        banks.string(), "--rerun", "take", "98"});
    INFO(result.out << result.err);
    CHECK(result.exit_code == 1);
    CHECK(std::regex_search(result.out,
                            std::regex(R"(printed '(15|31)', the bank's key '(15|31)': agree)")));
    CHECK(has(result.out, "printed '12', the bank's key '13': DIFFER"));
    CHECK(has(result.out, "the output has no match for 'state (\\w+)'"));
    CHECK(has(result.out, "3 part(s) re-run, 2 not as the bank says"));
    fs::remove_all(banks);
}

TEST_CASE("lab-quiz key prints one student's variants and keys, the same at every call", "[quiz]") {
    const auto keys = [](const std::string& student) {
        return lab::test::run({lab::test::program("tools/quiz/lab-quiz"), "--banks",
                               (kSource / "quizzes").string(), "--student", student, "--salt",
                               "2026-fall", "key", "03"});
    };
    const auto alice = keys("alice");
    CHECK(alice.exit_code == 0);
    CHECK(alice.out == keys("alice").out);
    // 03.granted: N from 8, 16, 32, 100, 200 and rxe's 2^k - 1 for it.
    std::smatch match;
    REQUIRE(std::regex_search(alice.out, match, std::regex(R"(03\.granted\tN=(\d+)\t(\d+)\n)")));
    const std::map<std::string, std::string> granted = {
        {"8", "15"}, {"16", "31"}, {"32", "63"}, {"100", "127"}, {"200", "255"}};
    CHECK(granted.at(match[1]) == match[2]);
    CHECK(has(alice.out, "03.failed-fields\t-\ta, b, e, f\n"));
    // Among 20 students, more than one size is drawn.
    std::set<std::string> sizes;
    for (int i = 0; i < 20; ++i) {
        const auto out = keys("student" + std::to_string(i)).out;
        if (std::regex_search(out, match, std::regex(R"(03\.granted\tN=(\d+))"))) {
            sizes.insert(match[1]);
        }
    }
    CHECK(sizes.size() >= 3);
}

TEST_CASE("a run question's key can come from a re-run (the graded mode's hook)", "[quiz]") {
    const Bank bank = load_bank((kSource / "quizzes/03_completion_queue.quiz").string());
    const auto question = std::find_if(bank.questions.begin(), bank.questions.end(),
                                       [](const Question& q) { return q.id == "03.granted"; });
    REQUIRE(question != bank.questions.end());
    const Drawn drawn{&*question, {{"N", 16}}};
    std::string ran;
    const auto keys = keys_from_run(drawn, [&](const std::string& command) {
        ran = command;
        return std::optional<std::string>(
            "\tibv_create_cq: requested 16 entries, granted 31 (cq->cqe)\n");
    });
    CHECK(ran == "./lab run 03_completion_queue --cqe 16");
    REQUIRE(keys.size() == 1);
    REQUIRE(keys[0].has_value());
    CHECK(*keys[0] == "31");
    CHECK(check_part(question->parts[0], drawn.values, "31", keys[0]).score == 1);
    // Nothing ran, or nothing matched: no key, and the caller knows.
    CHECK(!keys_from_run(drawn, [](const std::string&) { return std::nullopt; })[0]);
    CHECK(!keys_from_run(drawn, [](const std::string&) {
        return std::optional<std::string>("error: no device\n");
    })[0]);
}

TEST_CASE("a name, its short form and the text a program prints for it are one answer", "[quiz]") {
    // A re-run's key is what the program printed: strerror()'s and
    // ibv_wc_status_str()'s texts. A student who typed the constant is right.
    Part part;
    part.kind = Kind::name;
    part.among = "errno";
    part.answer = "EINVAL";
    CHECK(check_part(part, {}, "EINVAL", std::string("Invalid argument")).score == 1);
    CHECK(check_part(part, {}, "invalid argument", std::string("EINVAL")).score == 1);
    CHECK(check_part(part, {}, "ENOMEM", std::string("Invalid argument")).score == 0);
    part.among = "wc-status";
    // Every status, in the library's own words (rdma-core 44 and 56 print the same).
    const std::pair<ibv_wc_status, std::string_view> statuses[] = {
        {IBV_WC_SUCCESS, "IBV_WC_SUCCESS"},
        {IBV_WC_LOC_LEN_ERR, "IBV_WC_LOC_LEN_ERR"},
        {IBV_WC_LOC_QP_OP_ERR, "IBV_WC_LOC_QP_OP_ERR"},
        {IBV_WC_LOC_EEC_OP_ERR, "IBV_WC_LOC_EEC_OP_ERR"},
        {IBV_WC_LOC_PROT_ERR, "IBV_WC_LOC_PROT_ERR"},
        {IBV_WC_WR_FLUSH_ERR, "IBV_WC_WR_FLUSH_ERR"},
        {IBV_WC_MW_BIND_ERR, "IBV_WC_MW_BIND_ERR"},
        {IBV_WC_BAD_RESP_ERR, "IBV_WC_BAD_RESP_ERR"},
        {IBV_WC_LOC_ACCESS_ERR, "IBV_WC_LOC_ACCESS_ERR"},
        {IBV_WC_REM_INV_REQ_ERR, "IBV_WC_REM_INV_REQ_ERR"},
        {IBV_WC_REM_ACCESS_ERR, "IBV_WC_REM_ACCESS_ERR"},
        {IBV_WC_REM_OP_ERR, "IBV_WC_REM_OP_ERR"},
        {IBV_WC_RETRY_EXC_ERR, "IBV_WC_RETRY_EXC_ERR"},
        {IBV_WC_RNR_RETRY_EXC_ERR, "IBV_WC_RNR_RETRY_EXC_ERR"},
        {IBV_WC_LOC_RDD_VIOL_ERR, "IBV_WC_LOC_RDD_VIOL_ERR"},
        {IBV_WC_REM_INV_RD_REQ_ERR, "IBV_WC_REM_INV_RD_REQ_ERR"},
        {IBV_WC_REM_ABORT_ERR, "IBV_WC_REM_ABORT_ERR"},
        {IBV_WC_INV_EECN_ERR, "IBV_WC_INV_EECN_ERR"},
        {IBV_WC_INV_EEC_STATE_ERR, "IBV_WC_INV_EEC_STATE_ERR"},
        {IBV_WC_FATAL_ERR, "IBV_WC_FATAL_ERR"},
        {IBV_WC_RESP_TIMEOUT_ERR, "IBV_WC_RESP_TIMEOUT_ERR"},
        {IBV_WC_GENERAL_ERR, "IBV_WC_GENERAL_ERR"},
        {IBV_WC_TM_ERR, "IBV_WC_TM_ERR"},
        {IBV_WC_TM_RNDV_INCOMPLETE, "IBV_WC_TM_RNDV_INCOMPLETE"},
    };
    for (const auto& [status, name] : statuses) {
        INFO(name);
        part.answer = std::string(name);
        const std::string printed = ibv_wc_status_str(status);
        CHECK(check_part(part, {}, name, printed).score == 1);
        CHECK(check_part(part, {}, std::string(name).substr(7), printed).score == 1);
        CHECK(check_part(part, {}, printed, std::nullopt).score == 1);
        const auto other = status == IBV_WC_SUCCESS ? IBV_WC_GENERAL_ERR : IBV_WC_SUCCESS;
        CHECK(check_part(part, {}, ibv_wc_status_str(other), printed).score == 0);
    }
}

TEST_CASE(
    "./lab quiz lists the quizzes, and ./lab quiz 01 asks, explains and records every "
    "attempt",
    "[quiz]") {
    ::setenv("RDMA_LAB_QUIZ_BUILD", LAB_BUILD_DIR, 1);
    const std::string lab = (kSource / "lab").string();
    const auto listed = lab::test::run({lab, "quiz"});
    CHECK(listed.exit_code == 0);
    for (const auto& bank : shipped_banks()) {
        CHECK(has(listed.out, bank.stem().string()));
    }

    const fs::path answers =
        fs::temp_directory_path() / ("quiz-answers-" + std::to_string(::getpid()));
    fs::remove_all(answers);
    const Bank bank = load_bank((kSource / "quizzes/01_devices.quiz").string());
    // "zero" does not parse (asked again, no attempt); 4096 is wrong, with its
    // own explanation; "32, 0" is half of a two-part question; "a b" two
    // thirds of a choice with three right letters.
    const std::string input = "zero\n1\n4096\n32\n0\nport_active\nENOSYS\nb\na b\na\n";
    const auto result = lab::test::run_with_input(
        {lab, "quiz", "01", "--student", "test-student", "--answers", answers.string()}, input);
    INFO(result.out << result.err);
    CHECK(result.exit_code == 0);
    CHECK(has(result.out, "Not understood: expected a number"));
    CHECK(has(result.out, "(no attempt spent; answer again)"));
    CHECK(has(result.out, "4096 is max_mtu"));  // the explanation for that wrong answer
    CHECK(has(result.out, "Partly right: 0.5/1"));
    for (const auto& q : bank.questions) {
        CHECK(has(result.out, q.explain.in("en")));
        CHECK(has(result.out, "Reread: " + q.reread.in("en")));
    }
    CHECK(has(result.out, "Score: 6.17 / 8"));

    const std::string log = read_file(answers / "01_devices.txt");
    INFO(log);
    std::vector<std::string> attempts;
    for (const auto& line : lab::test::lines(log)) {
        if (!line.empty() && !line.starts_with("#")) {
            attempts.push_back(line);
        }
    }
    REQUIRE(attempts.size() == 8);  // "zero" is not an attempt
    const std::regex first(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\t01\.gid-index\t-\t1\tright\t1/1$)");
    CHECK(std::regex_match(attempts[0], first));
    CHECK(has(attempts[1], "\t01.active-mtu\t-\t4096\twrong\t0/1"));
    CHECK(has(attempts[2], "\t01.limits\t-\t32 ; 0\tpartial\t0.5/1"));
    CHECK(has(attempts[6], "\t01.read-not-assume\t-\ta, b\tpartial\t0.667/1"));
    CHECK(has(log, "student=test-student"));

    // In Chinese, and a second run appends; stopping early keeps what was answered.
    const auto chinese =
        lab::test::run_with_input({lab, "quiz", "01_devices", "--lang", "zh-CN", "--student",
                                   "test-student", "--answers", answers.string()},
                                  "1\n");
    CHECK(chinese.exit_code == 0);
    CHECK(has(chinese.out, "正确。"));
    CHECK(has(chinese.out, bank.questions[0].explain.in("zh-CN")));
    CHECK(has(chinese.out, "重读：" + bank.questions[0].reread.in("zh-CN")));
    CHECK(has(chinese.out, "输入已结束"));
    CHECK(lab::test::lines(read_file(answers / "01_devices.txt")).size() >= 11);

    // LANG=zh... asks in Chinese without --lang (LC_ALL and LC_MESSAGES, which
    // come first, unset for the run).
    {
        const auto saved = [](const char* name) {
            const char* value = std::getenv(name);
            return value == nullptr ? std::optional<std::string>() : std::string(value);
        };
        const auto lc_all = saved("LC_ALL"), lc_messages = saved("LC_MESSAGES"),
                   lang = saved("LANG");
        ::unsetenv("LC_ALL");
        ::unsetenv("LC_MESSAGES");
        ::setenv("LANG", "zh_CN.UTF-8", 1);
        const auto by_lang = lab::test::run_with_input(
            {lab, "quiz", "01", "--student", "test-student", "--answers", answers.string()}, "0\n");
        const auto restore = [](const char* name, const std::optional<std::string>& value) {
            if (value) {
                ::setenv(name, value->c_str(), 1);
            } else {
                ::unsetenv(name);
            }
        };
        restore("LC_ALL", lc_all);
        restore("LC_MESSAGES", lc_messages);
        restore("LANG", lang);
        CHECK(has(by_lang.out, "错误。"));
        CHECK(has(by_lang.out, bank.questions[0].parts[0].wrong[0].text.in("zh-CN")));
    }

    // An unknown quiz is one line and a non-zero exit.
    const auto unknown = lab::test::run({lab, "quiz", "77"});
    CHECK(unknown.exit_code != 0);
    CHECK(has(unknown.err, "no quiz '77'"));
    fs::remove_all(answers);
}

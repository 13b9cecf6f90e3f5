// SPDX-License-Identifier: MIT
// lab-quiz: the program behind ./lab quiz (practice and graded modes).
//
//   lab-quiz [--banks DIR] list
//   lab-quiz [--banks DIR] check [FILE...]
//   lab-quiz [--banks DIR] [--student ID] [--salt S] key QUIZ
//   lab-quiz [--banks DIR] [--answers DIR] [--lang L] [--student ID] [--salt S] take QUIZ
//   lab-quiz [--banks DIR] [--student ID] [--salt S] --rerun take QUIZ
//   lab-quiz --banks DIR --out DIR paper
//   lab-quiz --banks DIR --answers DIR [--course FILE] [--student ID] [--salt S] graded [QUIZ]
//   lab-quiz --banks DIR --answers DIR [--course FILE] [--student ID] [--salt S]
//            [--runs DIR | --rerun] [--feedback DIR] [--now TIME] grade
//   lab-quiz --banks DIR --answers DIR [--course FILE] [--student ID] [--salt S] runs
//
// The graded mode (graded.hpp): `paper` writes the paper of each of the
// instructor's banks (no key in it); `graded` asks a paper's questions,
// records every attempt and says nothing about right or wrong; `grade`
// scores a student's answers files against the instructor's banks, one line
// per quiz, QUIZ<TAB>SCORE<TAB>MAX, and writes the feedback files the bank's
// release policy allows; `runs` lists the commands whose output grading
// needs (HASH<TAB>COMMAND), for grading/quiz-runs.sh to run on rxe into the
// folder `grade --runs` reads (HASH.out).
//
// `take` asks one lesson's questions at the terminal, one by one; after each
// answer it says whether it was right, explains, and names the section to
// reread. Every attempt is appended to ANSWERS/NN_name.txt, one line each:
// time, question, variant, answer, right/partial/wrong, points. Input that is
// not understood (a word where a number belongs) is asked again and costs no
// attempt. `check` refuses a bank that does not parse or lacks a language.
// `key` prints one student's questions, variants and keys (a disputed grade
// is reproduced from student id, quiz and salt). `--rerun` runs the quiz's "run it" questions (in
// the checkout: ./lab run
// ...) and says where the output and the bank's key disagree.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "graded.hpp"
#include "quiz.hpp"

namespace fs = std::filesystem;
using namespace lab::quiz;

namespace {

const std::vector<std::string> kLanguages = {"en", "zh-CN"};

/// The words of the program itself, in each language.
const std::string& say(const std::string& lang, const std::string& key) {
    static const std::map<std::string, std::map<std::string, std::string>> words = {
        {"en",
         {{"question", "Question"},
          {"of", "of"},
          {"run", "Run it on rxe: "},
          {"part", "Part"},
          {"right", "Right."},
          {"wrong", "Wrong."},
          {"partly", "Partly right: "},
          {"points", "point(s)"},
          {"answer", "The answer: "},
          {"reread", "Reread: "},
          {"again", "Not understood: "},
          {"no_attempt", "(no attempt spent; answer again)"},
          {"score", "Score: "},
          {"saved", "Attempts saved in"},
          {"stopped", "Stopped before the end (no more input)."},
          {"choose", "(one or several letters, e.g. b or a c)"}}},
        {"zh-CN",
         {{"question", "第"},
          {"of", "题，共"},
          {"run", "在 rxe 上运行："},
          {"part", "小问"},
          {"right", "正确。"},
          {"wrong", "错误。"},
          {"partly", "部分正确："},
          {"points", "分"},
          {"answer", "答案："},
          {"reread", "重读："},
          {"again", "没有看懂："},
          {"no_attempt", "（不计入作答次数，请重新回答）"},
          {"score", "得分："},
          {"saved", "作答记录已保存到"},
          {"stopped", "输入已结束，测验未做完。"},
          {"choose", "（一个或几个字母，例如 b 或 a c）"},
          {"number", "这里要填一个数，例如 42、0x2a 或 2.5"},
          {"name", "这里要填一个名字，例如 IBV_WC_SUCCESS"},
          {"name errno", "这里要填一个 errno 名字（例如 EINVAL）或它的错误信息"},
          {"name wc-status", "这里要填一个完成状态，例如 IBV_WC_SUCCESS"},
          {"name qp-state", "这里要填一个 QP 状态，例如 RTS"},
          {"name port-state", "这里要填一个端口状态，例如 PORT_ACTIVE"},
          {"choice", "这里要填所选项的字母，例如 b 或 a c，每个字母只写一次"}}},
    };
    const auto found = words.find(lang);
    return (found == words.end() ? words.at("en") : found->second).at(key);
}

/// "Part 2: ", "小问 2：".
std::string part_label(const std::string& lang, std::size_t index) {
    return say(lang, "part") + " " + std::to_string(index + 1) + (lang == "en" ? ": " : "：");
}

std::string language_from_environment() {
    for (const char* name : {"LC_ALL", "LC_MESSAGES", "LANG"}) {
        const char* value = std::getenv(name);
        if (value != nullptr && *value != '\0') {
            return std::string(value).starts_with("zh") ? "zh-CN" : "en";
        }
    }
    return "en";
}

std::string now_utc() {
    const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&now, &tm);
    std::ostringstream out;
    out << std::put_time(&tm, "%Y-%m-%dT%H:%M:%SZ");
    return out.str();
}

std::string points_text(double value) {
    std::ostringstream out;
    out << std::setprecision(3) << value;
    return out.str();
}

/// An answer as written to the answers file: one line, no tabs.
std::string one_line(std::string text) {
    std::ranges::replace(text, '\t', ' ');
    std::ranges::replace(text, '\n', ' ');
    std::ranges::replace(text, '\r', ' ');
    return text;
}

std::vector<fs::path> bank_files(const fs::path& dir) {
    std::vector<fs::path> files;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(dir, error)) {
        if (entry.is_regular_file() && entry.path().extension() == ".quiz") {
            files.push_back(entry.path());
        }
    }
    std::ranges::sort(files);
    return files;
}

int list(const fs::path& dir, const std::string& lang) {
    const auto files = bank_files(dir);
    if (files.empty()) {
        std::cerr << "lab-quiz: no quiz in " << dir.string() << "\n";
        return 2;
    }
    std::cout << (lang == "zh-CN"
                      ? "测验（./lab quiz NN 做其中一个；加 --lang zh-CN 用中文）：\n"
                      : "Quizzes (./lab quiz NN takes one; --lang zh-CN asks in Chinese):\n");
    for (const auto& file : files) {
        const Bank bank = load_bank(file.string());
        // Each question by its kind: "run" (answered by running a program
        // on rxe), else the kind of its first part.
        std::map<std::string, int> kinds;
        for (const auto& q : bank.questions) {
            ++kinds[q.is_run() ? "run" : std::string(kind_name(q.parts.front().kind))];
        }
        const auto asked = draw_quiz(bank, 0).size();
        const bool zh = lang == "zh-CN";
        std::ostringstream line;
        line << "  " << std::left << std::setw(22) << bank.quiz << " " << bank.title.in(lang)
             << (zh ? "：" : ": ") << asked << (zh ? " 题，题库 " : " asked of ")
             << bank.questions.size() << (zh ? " 题（" : " (");
        bool first = true;
        for (const auto& [kind, count] : kinds) {
            line << (first ? "" : zh ? "，" : ", ") << kind << " " << count;
            first = false;
        }
        line << (zh ? "）" : ")");
        std::cout << line.str() << "\n";
    }
    return 0;
}

int check(const std::vector<std::string>& files) {
    int problems = 0;
    for (const auto& file : files) {
        try {
            const Bank bank = load_bank(file);
            for (const auto& problem : lint_bank(bank, kLanguages)) {
                std::cerr << problem << "\n";
                ++problems;
            }
        } catch (const BankError& e) {
            std::cerr << e.what() << "\n";
            ++problems;
        }
    }
    if (problems == 0) {
        std::cout << files.size() << " bank(s) checked, no problem\n";
    }
    return problems == 0 ? 0 : 1;
}

struct Options {
    fs::path banks = "quizzes";
    fs::path answers = "quizzes/answers";
    std::string lang;
    std::string student;
    std::string salt = "practice";
    bool rerun = false;
    bool student_given = false, salt_given = false;
    fs::path out, course = "grading/course.conf", runs, feedback;
    std::string now;
};

std::vector<fs::path> files_with(const fs::path& dir, const std::string& extension) {
    std::vector<fs::path> files;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(dir, error)) {
        if (entry.is_regular_file() && entry.path().extension() == extension) {
            files.push_back(entry.path());
        }
    }
    std::ranges::sort(files);
    return files;
}

fs::path find_bank(const fs::path& dir, const std::string& name,
                   const std::string& extension = ".quiz") {
    for (const auto& file : files_with(dir, extension)) {
        const std::string stem = file.stem().string();
        if (stem == name || stem.starts_with(name + "_")) {
            return file;
        }
    }
    std::string known;
    for (const auto& file : files_with(dir, extension)) {
        known += " " + file.stem().string();
    }
    throw std::runtime_error("no quiz '" + name + "' (the quizzes are:" + known + ")");
}

int take(const Options& options, const std::string& name) {
    const std::string& lang = options.lang;
    const Bank bank = load_bank(find_bank(options.banks, name).string());
    const auto seed = quiz_seed(options.student, bank.quiz, options.salt);
    const auto questions = draw_quiz(bank, seed);

    fs::create_directories(options.answers);
    const fs::path log_path = options.answers / (bank.quiz + ".txt");
    std::ofstream log(log_path, std::ios::app);
    if (!log) {
        throw std::runtime_error("cannot write " + log_path.string());
    }
    log << "# " << now_utc() << " practice quiz=" << bank.quiz
        << " student=" << one_line(options.student) << " salt=" << one_line(options.salt)
        << " lang=" << lang << "\n";
    log.flush();

    const bool interactive = isatty(STDIN_FILENO) != 0;
    std::cout << bank.quiz << (lang == "en" ? ": " : "：") << bank.title.in(lang) << "\n";
    double total = 0, possible = 0;
    bool stopped = false;
    for (std::size_t n = 0; n < questions.size() && !stopped; ++n) {
        const Drawn& drawn = questions[n];
        const Question& q = *drawn.question;
        if (lang == "zh-CN") {
            std::cout << "\n"
                      << say(lang, "question") << " " << n + 1 << " " << say(lang, "of") << " "
                      << questions.size() << " 题 [" << q.id << "]\n";
        } else {
            std::cout << "\n"
                      << say(lang, "question") << " " << n + 1 << " " << say(lang, "of") << " "
                      << questions.size() << " [" << q.id << "]\n";
        }
        if (q.is_run()) {
            std::cout << say(lang, "run") << substitute(q.run, drawn.values) << "\n";
        }
        std::cout << substitute(q.text.in(lang), drawn.values) << "\n";
        std::vector<PartResult> results;
        std::vector<std::string> given;
        for (std::size_t p = 0; p < q.parts.size(); ++p) {
            const Part& part = q.parts[p];
            if (q.parts.size() > 1) {
                std::cout << part_label(lang, p) << substitute(part.prompt.in(lang), drawn.values)
                          << "\n";
            }
            for (const auto& [letter, text] : part.options) {
                std::cout << "  " << letter << ") " << substitute(text.in(lang), drawn.values)
                          << "\n";
            }
            if (part.kind == Kind::choice) {
                std::cout << say(lang, "choose") << "\n";
            }
            while (true) {
                std::cout << "> " << std::flush;
                std::string input;
                if (!std::getline(std::cin, input)) {
                    stopped = true;
                    break;
                }
                if (!interactive) {
                    std::cout << input << "\n";  // a transcript reads like a session
                }
                PartResult result = check_part(part, drawn.values, input);
                if (!result.parsed) {
                    // In Chinese, what the part wants (its family, for a name given).
                    std::string wanted(kind_name(part.kind));
                    if (!part.among.empty() &&
                        input.find_first_not_of(" \t\r") != std::string::npos) {
                        wanted += " " + part.among;
                    }
                    std::cout << say(lang, "again")
                              << (lang == "en" ? result.problem : say(lang, wanted))
                              << (lang == "en" ? " " : "") << say(lang, "no_attempt") << "\n";
                    continue;
                }
                given.push_back(result.given);
                results.push_back(std::move(result));
                break;
            }
            if (stopped) {
                break;
            }
        }
        if (stopped) {
            break;
        }
        std::vector<double> scores;
        for (const auto& result : results) {
            scores.push_back(result.score);
        }
        const double points = question_score(q, scores);
        total += points;
        possible += q.points;
        const bool right = points >= q.points - 1e-9;
        const bool wrong = points <= 1e-9;
        std::string answer;
        for (const auto& part : given) {
            answer += (answer.empty() ? "" : " ; ") + part;
        }
        log << now_utc() << "\t" << q.id << "\t" << drawn.variant() << "\t" << one_line(answer)
            << "\t"
            << (right   ? "right"
                : wrong ? "wrong"
                        : "partial")
            << "\t" << points_text(points) << "/" << points_text(q.points) << "\n";
        log.flush();

        if (right) {
            std::cout << say(lang, "right") << "\n";
        } else {
            std::cout << (wrong ? say(lang, "wrong")
                                : say(lang, "partly") + points_text(points) + "/" +
                                      points_text(q.points) + " " + say(lang, "points"))
                      << "\n";
            for (std::size_t p = 0; p < results.size(); ++p) {
                if (results[p].score >= 1) {
                    continue;
                }
                if (q.parts.size() == 1) {
                    std::cout << say(lang, "answer");
                } else if (lang == "en") {
                    std::cout << "Part " << p + 1 << ", the answer: ";
                } else {
                    std::cout << say(lang, "part") << " " << p + 1 << " 的" << say(lang, "answer");
                }
                std::cout << results[p].expected << "\n";
                if (results[p].note != nullptr) {
                    std::cout << substitute(results[p].note->text.in(lang), drawn.values) << "\n";
                }
            }
        }
        std::cout << substitute(q.explain.in(lang), drawn.values) << "\n";
        std::cout << say(lang, "reread") << q.reread.in(lang) << "\n";
    }
    if (stopped) {
        std::cout << "\n" << say(lang, "stopped") << "\n";
    }
    std::cout << "\n"
              << say(lang, "score") << points_text(total) << " / " << points_text(possible) << "\n"
              << say(lang, "saved") << " " << log_path.string() << "\n";
    return 0;
}

/// Runs a command through the shell, its stderr with its stdout: the
/// Runner of `--rerun` (the graded mode passes its sandbox instead).
std::optional<std::string> run_command(const std::string& command) {
    FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
    if (pipe == nullptr) {
        return std::nullopt;
    }
    std::string output;
    char buffer[4096];
    std::size_t got = 0;
    while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) {
        output.append(buffer, got);
    }
    ::pclose(pipe);
    return output;
}

/// --rerun: every "run it" question of the quiz (this student's variant) is
/// run, and what it printed is compared with the bank's key, part by part.
/// For whoever writes or checks a bank on rxe; the graded mode keys its run
/// questions the same way (keys_from_run), in its sandbox.
int rerun(const Options& options, const std::string& name) {
    const Bank bank = load_bank(find_bank(options.banks, name).string());
    const auto seed = quiz_seed(options.student, bank.quiz, options.salt);
    int disagree = 0, checked = 0;
    for (const auto& drawn : draw_quiz(bank, seed)) {
        const Question& q = *drawn.question;
        if (!q.is_run()) {
            continue;
        }
        const std::string command = substitute(q.run, drawn.values);
        std::cout << q.id << " (" << drawn.variant() << "): " << command << "\n" << std::flush;
        const auto keys = keys_from_run(drawn, run_command);
        for (std::size_t p = 0; p < q.parts.size(); ++p) {
            ++checked;
            const std::string bank_key = check_part(q.parts[p], drawn.values, "").expected;
            if (!keys[p]) {
                std::cout << "  part " << p + 1 << ": the output has no match for '"
                          << q.parts[p].read << "'\n";
                ++disagree;
                continue;
            }
            const bool agree = check_part(q.parts[p], drawn.values, *keys[p]).score >= 1;
            std::cout << "  part " << p + 1 << ": printed '" << *keys[p] << "', the bank's key '"
                      << bank_key << "': " << (agree ? "agree" : "DIFFER") << "\n";
            disagree += agree ? 0 : 1;
        }
    }
    std::cout << checked << " part(s) re-run, " << disagree << " not as the bank says\n";
    return disagree == 0 ? 0 : 1;
}

/// key: one student's questions as drawn, with their variants and keys, one
/// line each (question, variant, key of each part): what reproduces a
/// disputed grade from the student id, the quiz and the salt alone.
int key(const Options& options, const std::string& name) {
    const Bank bank = load_bank(find_bank(options.banks, name).string());
    for (const auto& drawn : draw_quiz(bank, quiz_seed(options.student, bank.quiz, options.salt))) {
        std::cout << drawn.question->id << "\t" << drawn.variant();
        for (const auto& part : drawn.question->parts) {
            std::cout << "\t" << check_part(part, drawn.values, "").expected;
        }
        std::cout << "\n";
    }
    return 0;
}

// --- the graded mode ------------------------------------------------------------

/// The term salt: --salt, else grading/course.conf's `term-salt`, else the
/// default (said on stderr, once: variants drawn with it are the course's
/// default ones, the same for every term).
std::string term_salt(const Options& options) {
    if (options.salt_given) {
        return options.salt;
    }
    const CourseConf conf = load_course_conf(options.course.string());
    if (!conf.term_salt.empty()) {
        return conf.term_salt;
    }
    std::cerr << "lab-quiz: " << options.course.string()
              << " gives no 'term-salt WORD' line: the default salt '" << kDefaultTermSalt
              << "' is used\n";
    return std::string(kDefaultTermSalt);
}

/// paper: the paper of every bank of --banks, into --out.
int write_papers(const Options& options) {
    const auto files = bank_files(options.banks);
    if (files.empty()) {
        std::cerr << "lab-quiz: no graded bank in " << options.banks.string() << "\n";
        return 2;
    }
    fs::create_directories(options.out);
    for (const auto& file : files) {
        const Bank bank = load_bank(file.string());
        const auto problems = lint_bank(bank, kLanguages);
        for (const auto& problem : problems) {
            std::cerr << problem << "\n";
        }
        if (!problems.empty()) {
            return 1;
        }
        const std::string paper = paper_of(bank);
        // The paper must draw what the bank draws: the same questions and variants.
        const Bank back = parse_bank(paper, bank.quiz + ".paper", Strictness::paper);
        for (const std::string student : {"a", "b", "c"}) {
            const auto seed = quiz_seed(student, bank.quiz, "check");
            const auto one = draw_quiz(bank, seed), two = draw_quiz(back, seed);
            for (std::size_t i = 0; i < one.size(); ++i) {
                if (i >= two.size() || one[i].question->id != two[i].question->id ||
                    one[i].variant() != two[i].variant()) {
                    std::cerr << "lab-quiz: the paper of " << bank.quiz
                              << " draws other variants than its bank: a bug\n";
                    return 1;
                }
            }
        }
        const fs::path path = options.out / (bank.quiz + ".paper");
        std::ofstream out(path);
        out << paper;
        if (!out) {
            throw std::runtime_error("cannot write " + path.string());
        }
        std::cout << "wrote " << path.string() << " (" << bank.questions.size()
                  << " questions, no key)\n";
    }
    return 0;
}

int list_papers(const Options& options) {
    const auto files = files_with(options.banks, ".paper");
    const bool zh = options.lang == "zh-CN";
    if (files.empty()) {
        std::cout << (zh ? "还没有计分测验。\n" : "No graded quiz yet.\n");
        return 0;
    }
    std::cout << (zh ? "计分测验（./lab quiz NN --graded 做其中一个）：\n"
                     : "Graded quizzes (./lab quiz NN --graded takes one):\n");
    for (const auto& file : files) {
        const Bank bank = load_bank(file.string(), Strictness::paper);
        std::cout << "  " << std::left << std::setw(22) << bank.quiz << " "
                  << bank.title.in(options.lang) << "\n";
    }
    return 0;
}

/// graded: ask a paper's questions, record each attempt, say nothing of
/// right or wrong. A question already answered is asked again while the
/// policy allows another attempt; Enter keeps the answer given before.
int take_graded(const Options& options, const std::string& name) {
    const std::string& lang = options.lang;
    const bool zh = lang == "zh-CN";
    const Bank bank =
        load_bank(find_bank(options.banks, name, ".paper").string(), Strictness::paper);
    const std::string salt = term_salt(options);
    const auto seed = quiz_seed(options.student, bank.quiz, salt);
    const auto questions = draw_quiz(bank, seed);
    const fs::path log_path = options.answers / (bank.quiz + ".txt");
    const AnswersFile before = load_answers(log_path.string());
    if (!before.student.empty() && before.student != options.student) {
        std::cerr << "lab-quiz: " << log_path.string() << " holds the answers of '"
                  << before.student << "', not of '" << options.student
                  << "': move it away, or set RDMA_LAB_STUDENT\n";
        return 1;
    }
    fs::create_directories(options.answers);
    std::ofstream log(log_path, std::ios::app);
    if (!log) {
        throw std::runtime_error("cannot write " + log_path.string());
    }
    log << "# " << now_utc() << " graded quiz=" << bank.quiz
        << " student=" << one_line(options.student) << " salt=" << one_line(salt)
        << " lang=" << lang << "\n";
    log.flush();

    const auto& weights = bank.policy.weights;
    std::string shares;
    for (const double weight : weights) {
        shares += (shares.empty() ? "" : ", ") + points_text(weight * 100) + " %";
    }
    std::cout << bank.quiz << (zh ? "：" : ": ") << bank.title.in(lang) << "\n";
    if (zh) {
        std::cout << "计分测验：不显示对错。每题最多作答 " << weights.size()
                  << " 次（各次得分比例：" << shares << "）"
                  << (bank.policy.fresh_variant ? "，每次换一组参数" : "")
                  << "。直接按回车跳过一题，下次再答。答案与讲解"
                  << (bank.release == Release::after_deadline ? "在截止时间之后" : "在评分之后")
                  << "公布。\n";
    } else {
        std::cout << "Graded: no answer is said to be right or wrong. Each question may be "
                     "answered "
                  << weights.size() << " time(s) (worth " << shares << ")"
                  << (bank.policy.fresh_variant ? ", with new numbers each time" : "")
                  << ". Enter skips a question for now. The answers and explanations come "
                  << (bank.release == Release::after_deadline ? "after the deadline"
                                                              : "after grading")
                  << ".\n";
    }
    const bool interactive = isatty(STDIN_FILENO) != 0;
    std::size_t recorded = 0;
    bool stopped = false;
    for (std::size_t n = 0; n < questions.size() && !stopped; ++n) {
        const Question& q = *questions[n].question;
        std::vector<const Attempt*> earlier;
        for (const auto& attempt : before.attempts) {
            if (attempt.question == q.id) {
                earlier.push_back(&attempt);
            }
        }
        const auto attempt = static_cast<unsigned>(earlier.size());
        std::cout << "\n"
                  << say(lang, "question") << " " << n + 1 << " " << say(lang, "of") << " "
                  << questions.size() << (zh ? " 题" : "") << " [" << q.id << "]\n";
        if (attempt >= weights.size()) {
            std::cout << (zh ? "作答次数已用完；记录的答案：" : "No attempt left; recorded: ")
                      << earlier.back()->answer << "\n";
            continue;
        }
        const Drawn drawn = variant_for_attempt(questions[n], seed, attempt, bank.policy);
        if (attempt > 0) {
            if (zh) {
                std::cout << "已作答：" << earlier.back()->answer << "。再答一次是第 "
                          << attempt + 1 << " 次（得分比例 " << points_text(weights[attempt] * 100)
                          << " %）" << (bank.policy.fresh_variant ? "，参数换了" : "")
                          << "；按回车保留原答案。\n";
            } else {
                std::cout << "Answered before: " << earlier.back()->answer
                          << ". Answering again is attempt " << attempt + 1 << " (worth "
                          << points_text(weights[attempt] * 100) << " %)"
                          << (bank.policy.fresh_variant ? ", with new numbers" : "")
                          << "; Enter keeps the answer.\n";
            }
        }
        if (q.is_run()) {
            std::cout << say(lang, "run") << substitute(q.run, drawn.values) << "\n";
        }
        std::cout << substitute(q.text.in(lang), drawn.values) << "\n";
        std::vector<std::string> given;
        bool skipped = false;
        for (std::size_t p = 0; p < q.parts.size() && !stopped && !skipped; ++p) {
            const Part& part = q.parts[p];
            if (q.parts.size() > 1) {
                std::cout << part_label(lang, p) << substitute(part.prompt.in(lang), drawn.values)
                          << "\n";
            }
            for (const auto& [letter, text] : part.options) {
                std::cout << "  " << letter << ") " << substitute(text.in(lang), drawn.values)
                          << "\n";
            }
            if (part.kind == Kind::choice) {
                std::cout << say(lang, "choose") << "\n";
            }
            while (true) {
                std::cout << "> " << std::flush;
                std::string input;
                if (!std::getline(std::cin, input)) {
                    stopped = true;
                    break;
                }
                if (!interactive) {
                    std::cout << input << "\n";
                }
                if (p == 0 && input.find_first_not_of(" \t\r") == std::string::npos) {
                    skipped = true;
                    break;
                }
                std::string problem;
                if (!understood(part, input, problem)) {
                    std::string wanted(kind_name(part.kind));
                    if (!part.among.empty() &&
                        input.find_first_not_of(" \t\r") != std::string::npos) {
                        wanted += " " + part.among;
                    }
                    std::cout << say(lang, "again") << (zh ? say(lang, wanted) : problem)
                              << (zh ? "" : " ") << say(lang, "no_attempt") << "\n";
                    continue;
                }
                given.push_back(one_line(input));
                break;
            }
        }
        if (stopped || skipped) {
            if (skipped) {
                std::cout << (attempt > 0 ? (zh ? "保留原答案。\n" : "The answer is kept.\n")
                                          : (zh ? "跳过。\n" : "Skipped.\n"));
            }
            continue;
        }
        std::string answer;
        for (const auto& part : given) {
            answer += (answer.empty() ? "" : " ; ") + part;
        }
        log << now_utc() << "\t" << q.id << "\t" << drawn.variant() << "\t" << answer << "\n";
        log.flush();
        ++recorded;
        std::cout << (zh ? "已记录。\n" : "Recorded.\n");
    }
    if (stopped) {
        std::cout << "\n" << say(lang, "stopped") << "\n";
    }
    std::cout << "\n"
              << (zh ? "本次记录了 " : "") << recorded
              << (zh ? " 个答案，保存在 " : " answer(s) recorded in ") << log_path.string()
              << (zh ? "。与练习一起提交（git add 并 commit）。\n"
                     : ". Hand it in with your exercises (git add and commit it).\n");
    return 0;
}

/// The Runner of `grade --runs DIR`: the output of a command, as
/// grading/quiz-runs.sh saved it on rxe (DIR/HASH.out), or nothing.
std::string command_hash(const std::string& command) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash64(command)));
    return hex;
}

/// Per quiz of --banks: the student id (--student, else the answers file's,
/// said on stderr), the answers file and the bank.
struct GradeInput {
    Bank bank;
    AnswersFile answers;
    std::string student;
};

std::vector<GradeInput> grade_inputs(const Options& options) {
    std::vector<GradeInput> inputs;
    for (const auto& file : bank_files(options.banks)) {
        GradeInput input{load_bank(file.string()), {}, options.student};
        input.answers = load_answers((options.answers / (input.bank.quiz + ".txt")).string());
        if (!options.student_given && !input.answers.student.empty()) {
            input.student = input.answers.student;
        }
        inputs.push_back(std::move(input));
    }
    if (inputs.empty()) {
        throw std::runtime_error("no graded bank in " + options.banks.string());
    }
    return inputs;
}

int list_runs(const Options& options) {
    const std::string salt = term_salt(options);
    std::set<std::string> commands;
    for (const auto& input : grade_inputs(options)) {
        for (const auto& command :
             commands_needed(input.bank, input.answers, input.student, salt)) {
            commands.insert(command);
        }
    }
    for (const auto& command : commands) {
        std::cout << command_hash(command) << "\t" << command << "\n";
    }
    return 0;
}

int grade_all(const Options& options) {
    const std::string salt = term_salt(options);
    const CourseConf conf = load_course_conf(options.course.string());
    std::time_t now = std::time(nullptr);
    if (!options.now.empty()) {
        const auto when = parse_time(options.now);
        if (!when) {
            throw std::runtime_error("--now " + options.now + ": expected 2026-12-01T12:00:00Z");
        }
        now = *when;
    }
    const Runner from_runs = [&](const std::string& command) -> std::optional<std::string> {
        std::ifstream in(options.runs / (command_hash(command) + ".out"));
        if (!in) {
            return std::nullopt;
        }
        std::ostringstream text;
        text << in.rdbuf();
        return text.str();
    };
    const Runner from_shell = run_command;
    const Runner* runner = options.rerun          ? &from_shell
                           : options.runs.empty() ? nullptr
                                                  : &from_runs;
    if (!options.feedback.empty()) {
        fs::create_directories(options.feedback);
    }
    for (const auto& input : grade_inputs(options)) {
        const QuizGrade result = grade(input.bank, input.answers, input.student, salt, runner);
        for (const auto& note : result.notes) {
            std::cerr << "lab-quiz: " << input.bank.quiz << ": " << note << "\n";
        }
        for (const auto& question : result.questions) {
            if (question.first.question->is_run() && !question.attempts.empty() &&
                (runner == nullptr || question.rerun_failed)) {
                std::cerr << "lab-quiz: " << input.bank.quiz << ": " << question.first.question->id
                          << ": no re-run output; scored with the bank's key\n";
            }
        }
        std::cout << input.bank.quiz << "\t" << score_text(result.score) << "\t"
                  << score_text(result.max) << "\n";
        if (options.feedback.empty()) {
            continue;
        }
        const fs::path path = options.feedback / (input.bank.quiz + ".txt");
        std::ofstream out(path);
        std::string why;
        if (released(input.bank, conf, now, why)) {
            out << feedback_text(input.bank, result, options.lang);
        } else {
            out << input.bank.quiz << ": " << input.bank.title.in(options.lang) << "\n"
                << "Feedback withheld: " << why << ".\n";
        }
        if (!out) {
            throw std::runtime_error("cannot write " + path.string());
        }
    }
    return 0;
}

int usage(std::ostream& out, int status) {
    out << "usage: lab-quiz [--banks DIR] list\n"
           "       lab-quiz [--banks DIR] check [FILE...]\n"
           "       lab-quiz [--banks DIR] [--student ID] [--salt S] key QUIZ\n"
           "       lab-quiz [--banks DIR] [--answers DIR] [--lang en|zh-CN] [--student ID]\n"
           "                [--salt S] [--rerun] take QUIZ   (QUIZ: 03 or 03_completion_queue)\n"
           "  --rerun: run the quiz's \"run it\" questions and compare the output with the key\n"
           "       lab-quiz --banks DIR --out DIR paper        (the papers of graded banks)\n"
           "       lab-quiz --banks DIR --answers DIR [--course FILE] [--student ID] [--salt S]\n"
           "                graded [QUIZ] | runs | grade [--runs DIR | --rerun]\n"
           "                [--feedback DIR] [--now 2026-12-01T12:00:00Z]\n";
    return status;
}

}  // namespace

int main(int argc, char** argv) {
    Options options;
    std::vector<std::string> words;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                throw std::runtime_error(arg + " needs a value");
            }
            return argv[++i];
        };
        try {
            if (arg == "--banks") {
                options.banks = value();
            } else if (arg == "--answers") {
                options.answers = value();
            } else if (arg == "--lang") {
                options.lang = value();
            } else if (arg == "--student") {
                options.student = value();
                options.student_given = true;
            } else if (arg == "--salt") {
                options.salt = value();
                options.salt_given = true;
            } else if (arg == "--out") {
                options.out = value();
            } else if (arg == "--course") {
                options.course = value();
            } else if (arg == "--runs") {
                options.runs = value();
            } else if (arg == "--feedback") {
                options.feedback = value();
            } else if (arg == "--now") {
                options.now = value();
            } else if (arg == "--rerun") {
                options.rerun = true;
            } else if (arg == "-h" || arg == "--help") {
                return usage(std::cout, 0);
            } else if (arg.starts_with("-")) {
                std::cerr << "lab-quiz: unknown option " << arg << "\n";
                return usage(std::cerr, 2);
            } else {
                words.push_back(arg);
            }
        } catch (const std::exception& e) {
            std::cerr << "lab-quiz: " << e.what() << "\n";
            return 2;
        }
    }
    if (options.lang.empty()) {
        options.lang = language_from_environment();
    }
    if (options.lang != "en" && options.lang != "zh-CN") {
        std::cerr << "lab-quiz: --lang " << options.lang << ": the languages are en and zh-CN\n";
        return 2;
    }
    if (options.student.empty()) {
        const char* student = std::getenv("RDMA_LAB_STUDENT");
        const char* user = std::getenv("USER");
        options.student = student != nullptr && *student != '\0' ? student
                          : user != nullptr                      ? user
                                                                 : "student";
    }
    try {
        if (words.empty() || words[0] == "list" || (words[0] == "take" && words.size() == 1)) {
            return list(options.banks, options.lang);
        }
        if (words[0] == "check") {
            std::vector<std::string> files(words.begin() + 1, words.end());
            if (files.empty()) {
                for (const auto& file : bank_files(options.banks)) {
                    files.push_back(file.string());
                }
            }
            return check(files);
        }
        if (words[0] == "key" && words.size() == 2) {
            return key(options, words[1]);
        }
        if (words[0] == "paper" && words.size() == 1 && !options.out.empty()) {
            return write_papers(options);
        }
        if (words[0] == "graded" && words.size() == 1) {
            return list_papers(options);
        }
        if (words[0] == "graded" && words.size() == 2) {
            return take_graded(options, words[1]);
        }
        if (words[0] == "grade" && words.size() == 1) {
            return grade_all(options);
        }
        if (words[0] == "runs" && words.size() == 1) {
            return list_runs(options);
        }
        if (words[0] == "take" && words.size() == 2) {
            return options.rerun ? rerun(options, words[1]) : take(options, words[1]);
        }
        return usage(std::cerr, 2);
    } catch (const std::exception& e) {
        std::cerr << "lab-quiz: " << e.what() << "\n";
        return 1;
    }
}

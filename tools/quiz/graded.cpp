// SPDX-License-Identifier: MIT
// The graded mode (graded.hpp): papers, answers files, grading, feedback.
#include "graded.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

namespace lab::quiz {

namespace {

std::string number_text(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", value);
    return buffer;
}

/// `key: value` for each language of @p text, English first.
void write_text(std::ostream& out, const std::string& key, const Text& text,
                const std::string& label = "") {
    const std::string suffix = label.empty() ? "" : " " + label;
    if (const auto english = text.by_lang.find("en"); english != text.by_lang.end()) {
        out << key << suffix << ": " << english->second << "\n";
    }
    for (const auto& [lang, value] : text.by_lang) {
        if (lang != "en") {
            out << key << "." << lang << suffix << ": " << value << "\n";
        }
    }
}

/// Parses every part of @p given with the bank's key: whether the attempt
/// counts (every part understood), and each part's result.
std::vector<PartResult> check_all(const Question& q, const Values& values,
                                  const std::vector<std::string>& given,
                                  const std::vector<std::optional<std::string>>& keys) {
    std::vector<PartResult> results;
    for (std::size_t p = 0; p < q.parts.size(); ++p) {
        const std::string input = p < given.size() ? given[p] : "";
        std::optional<std::string> key = p < keys.size() ? keys[p] : std::nullopt;
        try {
            results.push_back(check_part(q.parts[p], values, input, key));
        } catch (const std::invalid_argument&) {
            // A re-run printed something the part cannot take as a key: the bank's.
            results.push_back(check_part(q.parts[p], values, input));
        }
    }
    return results;
}

bool all_parsed(const std::vector<PartResult>& results) {
    return std::ranges::all_of(results, [](const PartResult& r) { return r.parsed; });
}

}  // namespace

std::string paper_of(const Bank& bank) {
    std::ostringstream out;
    out << "# SPDX-License-Identifier: CC-BY-4.0\n"
        << "# The paper of graded quiz " << bank.quiz
        << ": its questions without their key (./lab quiz " << bank.quiz.substr(0, 2)
        << " --graded asks them).\n"
        << "# Written by ./lab quiz --publish from the instructor's bank; do not edit.\n"
        << "quiz: " << bank.quiz << "\n";
    write_text(out, "title", bank.title);
    out << "attempts:";
    for (const double weight : bank.policy.weights) {
        out << " " << number_text(weight);
    }
    out << "\nfresh-variant: " << (bank.policy.fresh_variant ? "yes" : "no") << "\n"
        << "release: "
        << (bank.release == Release::after_deadline ? "after-deadline" : "after-grading") << "\n";
    for (const auto& pool : bank.pools) {
        out << "pool: " << pool.name << " draw " << pool.draw << "\n";
    }
    for (const auto& q : bank.questions) {
        out << "\nquestion: " << q.id << "\n";
        if (!q.pool.empty()) {
            out << "pool: " << q.pool << "\n";
        }
        for (const auto& param : q.params) {
            out << "param: " << param.name << " = ";
            if (!param.values.empty()) {
                for (std::size_t i = 0; i < param.values.size(); ++i) {
                    out << (i == 0 ? "" : " | ") << param.values[i];
                }
            } else {
                out << param.low << ".." << param.high;
                if (param.step != 1) {
                    out << " step " << param.step;
                }
            }
            out << "\n";
        }
        if (q.is_run()) {
            out << "run: " << q.run << "\n";
        }
        write_text(out, "text", q.text);
        if (q.points != 1) {
            out << "points: " << number_text(q.points) << "\n";
        }
        for (const auto& part : q.parts) {
            out << "kind: " << kind_name(part.kind) << "\n";
            if (!part.among.empty()) {
                out << "among: " << part.among << "\n";
            }
            write_text(out, "prompt", part.prompt);
            for (const auto& [letter, text] : part.options) {
                write_text(out, "option", text, std::string(1, letter));
            }
        }
    }
    return out.str();
}

bool understood(const Part& part, std::string_view input, std::string& problem) {
    // A stand-in key, which no answer equals: only whether the input parses is asked.
    std::string stand_in = "0";
    if (part.kind == Kind::name) {
        stand_in = "\x01";
    } else if (part.kind == Kind::choice) {
        stand_in = std::string(1, part.options.front().first);
    }
    const auto result = check_part(part, {}, input, stand_in);
    problem = result.problem;
    return result.parsed;
}

std::vector<std::string> split_answer(std::string_view answer) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (true) {
        const auto at = answer.find(" ; ", start);
        parts.push_back(trim(answer.substr(start, at - start)));
        if (at == std::string_view::npos) {
            return parts;
        }
        start = at + 3;
    }
}

AnswersFile parse_answers(std::string_view content) {
    AnswersFile file;
    std::istringstream in{std::string(content)};
    std::string raw;
    int number = 0;
    while (std::getline(in, raw)) {
        ++number;
        if (!raw.empty() && raw.back() == '\r') {
            raw.pop_back();
        }
        if (raw.starts_with("#")) {
            std::istringstream words(raw.substr(1));
            std::string word;
            while (words >> word) {
                const auto equals = word.find('=');
                if (equals == std::string::npos) {
                    continue;
                }
                const std::string key = word.substr(0, equals), value = word.substr(equals + 1);
                if (key == "quiz") {
                    file.quiz = value;
                } else if (key == "student") {
                    file.student = value;
                } else if (key == "salt") {
                    file.salt = value;
                }
            }
            continue;
        }
        std::vector<std::string> fields;
        std::size_t start = 0;
        while (true) {
            const auto tab = raw.find('\t', start);
            fields.push_back(raw.substr(start, tab - start));
            if (tab == std::string::npos) {
                break;
            }
            start = tab + 1;
        }
        if (fields.size() < 4) {
            continue;  // not an attempt (an empty line, a line cut short)
        }
        file.attempts.push_back({fields[0], fields[1], fields[2], fields[3], number});
    }
    return file;
}

AnswersFile load_answers(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        return {};
    }
    std::ostringstream content;
    content << in.rdbuf();
    return parse_answers(content.str());
}

std::optional<std::time_t> parse_time(std::string_view text) {
    const std::string value = trim(text);
    int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, used = 0;
    if (std::sscanf(value.c_str(), "%4d-%2d-%2dT%2d:%2d%n", &year, &month, &day, &hour, &minute,
                    &used) != 5) {
        return std::nullopt;
    }
    std::string rest = value.substr(static_cast<std::size_t>(used));
    if (rest.starts_with(":")) {
        int more = 0;
        if (std::sscanf(rest.c_str(), ":%2d%n", &second, &more) != 1) {
            return std::nullopt;
        }
        rest = rest.substr(static_cast<std::size_t>(more));
    }
    long offset = 0;
    if (rest == "Z" || rest.empty()) {
        offset = 0;
    } else if ((rest[0] == '+' || rest[0] == '-') && rest.size() == 6 && rest[3] == ':') {
        int hours = 0, minutes = 0;
        if (std::sscanf(rest.c_str() + 1, "%2d:%2d", &hours, &minutes) != 2) {
            return std::nullopt;
        }
        offset = (rest[0] == '+' ? 1 : -1) * (hours * 3600L + minutes * 60L);
    } else {
        return std::nullopt;
    }
    if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
        return std::nullopt;
    }
    std::tm tm{};
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = second;
    return timegm(&tm) - offset;
}

CourseConf load_course_conf(const std::string& path) {
    CourseConf conf;
    std::ifstream in(path);
    std::string raw;
    while (std::getline(in, raw)) {
        std::istringstream words(raw);
        std::string key, name, when;
        words >> key;
        if (key == "term-salt") {
            words >> conf.term_salt;
        } else if (key == "deadline") {
            words >> name >> when;
            if (const auto time = parse_time(when)) {
                conf.deadlines[name] = *time;
            }
        }
    }
    return conf;
}

QuizGrade grade(const Bank& bank, const AnswersFile& answers, const std::string& student,
                const std::string& salt, const Runner* runner) {
    QuizGrade result;
    result.quiz = bank.quiz;
    if (!answers.student.empty() && answers.student != student) {
        result.notes.push_back("the answers file was written for student '" + answers.student +
                               "'; graded for '" + student + "'");
    }
    if (!answers.salt.empty() && answers.salt != salt) {
        result.notes.push_back("the answers file was written with salt '" + answers.salt +
                               "'; graded with '" + salt + "'");
    }
    const auto seed = quiz_seed(student, bank.quiz, salt);
    std::set<std::string> asked;
    for (const auto& drawn : draw_quiz(bank, seed)) {
        const Question& q = *drawn.question;
        asked.insert(q.id);
        GradedQuestion graded;
        graded.first = drawn;
        result.max += q.points;
        unsigned n = 0;  // attempts counted so far
        for (const auto& attempt : answers.attempts) {
            if (attempt.question != q.id) {
                continue;
            }
            GradedAttempt one;
            one.attempt = &attempt;
            const Drawn variant = variant_for_attempt(drawn, seed, n, bank.policy);
            one.variant = variant.variant();
            one.values = variant.values;
            const auto given = split_answer(attempt.answer);
            // Whether it counts is judged with the bank's key, as the session
            // judged it; what it scores, with the re-run's keys.
            if (!all_parsed(check_all(q, variant.values, given, {}))) {
                graded.attempts.push_back(std::move(one));
                continue;
            }
            std::vector<std::optional<std::string>> keys(q.parts.size());
            if (q.is_run() && runner != nullptr) {
                keys = keys_from_run(variant, *runner);
                if (std::ranges::any_of(keys, [](const auto& k) { return !k.has_value(); })) {
                    graded.rerun_failed = true;
                }
            }
            graded.rerun_keys.push_back(keys);
            one.parts = check_all(q, variant.values, given, keys);
            one.counted = true;
            one.variant_matches = attempt.variant == one.variant;
            one.weight = attempt_weight(bank.policy, n);
            std::vector<double> scores;
            for (const auto& part : one.parts) {
                scores.push_back(part.score);
            }
            one.score = one.variant_matches ? question_score(q, scores) / q.points : 0;
            graded.points = std::max(graded.points, one.weight * one.score * q.points);
            graded.attempts.push_back(std::move(one));
            ++n;
        }
        result.score += graded.points;
        result.questions.push_back(std::move(graded));
    }
    for (const auto& attempt : answers.attempts) {
        if (asked.count(attempt.question) == 0) {
            result.notes.push_back("line " + std::to_string(attempt.line) + ": question '" +
                                   attempt.question +
                                   "' was not drawn for this student: not graded");
        }
    }
    return result;
}

std::vector<std::string> commands_needed(const Bank& bank, const AnswersFile& answers,
                                         const std::string& student, const std::string& salt) {
    std::set<std::string> commands;
    const auto seed = quiz_seed(student, bank.quiz, salt);
    for (const auto& drawn : draw_quiz(bank, seed)) {
        const Question& q = *drawn.question;
        if (!q.is_run()) {
            continue;
        }
        unsigned n = 0;
        for (const auto& attempt : answers.attempts) {
            if (attempt.question != q.id) {
                continue;
            }
            const Drawn variant = variant_for_attempt(drawn, seed, n, bank.policy);
            if (all_parsed(check_all(q, variant.values, split_answer(attempt.answer), {}))) {
                commands.insert(substitute(q.run, variant.values));
                ++n;
            }
        }
    }
    return {commands.begin(), commands.end()};
}

std::string score_text(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.2f", value + 1e-9);
    return buffer;
}

bool released(const Bank& bank, const CourseConf& conf, std::time_t now, std::string& why) {
    if (bank.release == Release::after_grading) {
        return true;
    }
    const auto deadline = conf.deadlines.find("quiz:" + bank.quiz);
    if (deadline == conf.deadlines.end()) {
        why =
            "released after the quiz's deadline, and grading/course.conf gives none (deadline "
            "quiz:" +
            bank.quiz + " TIME)";
        return false;
    }
    if (now >= deadline->second) {
        return true;
    }
    std::tm tm{};
    gmtime_r(&deadline->second, &tm);
    char when[32];
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    why = std::string("released after the quiz's deadline, ") + when;
    return false;
}

std::string feedback_text(const Bank& bank, const QuizGrade& grade, const std::string& lang) {
    const bool zh = lang == "zh-CN";
    std::ostringstream out;
    out << bank.quiz << (zh ? "：" : ": ") << bank.title.in(lang) << "\n"
        << (zh ? "得分：" : "Score: ") << score_text(grade.score) << " / " << score_text(grade.max)
        << "\n";
    std::size_t number = 0;
    for (const auto& graded : grade.questions) {
        const Question& q = *graded.first.question;
        out << "\n"
            << (zh ? "第 " : "Question ") << ++number << (zh ? " 题" : "") << " [" << q.id << "] ("
            << graded.first.variant() << ")" << (zh ? "：" : ": ") << score_text(graded.points)
            << " / " << score_text(q.points) << "\n"
            << substitute(q.text.in(lang), graded.first.values) << "\n";
        std::size_t counted = 0;
        const GradedAttempt* last = nullptr;
        for (const auto& attempt : graded.attempts) {
            out << (zh ? "  作答：" : "  Answer: ") << attempt.attempt->answer;
            if (!attempt.counted) {
                out << (zh ? "（没有看懂，不计入作答次数）\n"
                           : " (not understood; no attempt spent)\n");
                continue;
            }
            ++counted;
            last = &attempt;
            out << (zh ? "（第 " : " (attempt ") << counted << (zh ? " 次，" : ", ")
                << attempt.variant << (zh ? "，占分 " : ", worth ")
                << number_text(attempt.weight * 100) << " %" << (zh ? "）：" : "): ")
                << (attempt.score >= 1 - 1e-9 ? (zh ? "正确" : "right")
                    : attempt.score <= 1e-9   ? (zh ? "错误" : "wrong")
                                              : (zh ? "部分正确" : "partly right"))
                << (attempt.variant_matches ? ""
                                            : (zh ? "（记录的参数与抽到的不符）"
                                                  : " (the variant recorded is not the one drawn)"))
                << "\n";
        }
        if (counted == 0) {
            out << (zh ? "  没有作答。\n" : "  Not answered.\n");
        }
        // The key of the last attempt's variant (the first's, if none).
        const Values& values = last == nullptr ? graded.first.values : last->values;
        for (std::size_t p = 0; p < q.parts.size(); ++p) {
            std::string key;
            if (last != nullptr && p < last->parts.size()) {
                key = last->parts[p].expected;
            } else {
                key = check_part(q.parts[p], values, "").expected;
            }
            out << (zh ? "  答案" : "  The answer") << (q.parts.size() > 1 ? " " : "")
                << (q.parts.size() > 1 ? std::to_string(p + 1) : "") << (zh ? "：" : ": ") << key
                << "\n";
            if (last != nullptr && p < last->parts.size() && last->parts[p].note != nullptr) {
                out << "  " << substitute(last->parts[p].note->text.in(lang), values) << "\n";
            }
        }
        out << substitute(q.explain.in(lang), values) << "\n"
            << (zh ? "重读：" : "Reread: ") << q.reread.in(lang) << "\n";
    }
    return out.str();
}

}  // namespace lab::quiz

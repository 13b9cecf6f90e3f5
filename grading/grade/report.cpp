// SPDX-License-Identifier: MIT
#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "lab/check.hpp"

namespace lab::grade {

namespace {

// Words of a points-file line: blanks separate them, double quotes group them.
std::vector<std::string> words_of(std::string_view line, std::size_t number) {
    std::vector<std::string> words;
    std::size_t i = 0;
    while (i < line.size()) {
        if (line[i] == ' ' || line[i] == '\t') {
            ++i;
            continue;
        }
        if (line[i] == '#') {
            break;
        }
        std::string word;
        if (line[i] == '"') {
            const std::size_t end = line.find('"', i + 1);
            if (end == std::string_view::npos) {
                throw lab::Error("points file, line " + std::to_string(number) +
                                 ": a quote is not closed");
            }
            word = std::string(line.substr(i + 1, end - i - 1));
            i = end + 1;
        } else {
            const std::size_t end = line.find_first_of(" \t#", i);
            word = std::string(
                line.substr(i, end == std::string_view::npos ? line.size() - i : end - i));
            i = end == std::string_view::npos ? line.size() : end;
        }
        words.push_back(word);
    }
    return words;
}

double points_value(const std::string& word, std::size_t number) {
    char* end = nullptr;
    const double value = std::strtod(word.c_str(), &end);
    if (word.empty() || end != word.c_str() + word.size() || !(value >= 0) || value > 1e6) {
        throw lab::Error("points file, line " + std::to_string(number) + ": '" + word +
                         "' is not a number of points");
    }
    return value;
}

bool matches(const std::string& pattern, const std::string& name) {
    if (pattern == "*") {
        return true;
    }
    if (!pattern.empty() && pattern.back() == '*') {
        return name.rfind(pattern.substr(0, pattern.size() - 1), 0) == 0;
    }
    return pattern == name;
}

// The first line of a reason (details, such as the program's last output,
// follow on lines of their own): what a summary shows.
std::string headline(const std::string& reason) {
    return reason.substr(0, reason.find('\n'));
}

// What went wrong, in one line: the headline, or for an "expected: / seen: /
// hint:" message (feedback.hpp) what was seen, since that is what several
// failed checks have in common (a crash, a hang).
std::string cause(const std::string& reason) {
    const std::string seen_marker = "\n    seen: ";
    const std::size_t seen = reason.find(seen_marker);
    if (reason.rfind("expected: ", 0) == 0 && seen != std::string::npos) {
        return headline(reason.substr(seen + seen_marker.size()));
    }
    return headline(reason);
}

std::string unescape(std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) {
            const char next = text[++i];
            out += next == 'n' ? '\n' : next == 't' ? '\t' : next;
        } else {
            out += text[i];
        }
    }
    return out;
}

std::string pad(std::string text, std::size_t width) {
    if (text.size() < width) {
        text.append(width - text.size(), ' ');
    }
    return text;
}

std::string indent(const std::string& text, const std::string& prefix) {
    std::string out;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        out += prefix + line + "\n";
    }
    return out;
}

}  // namespace

bool is_hidden(std::string_view check) {
    return check.rfind(kHiddenPrefix, 0) == 0;
}

Points Points::parse(std::string_view text) {
    Points points;
    std::size_t number = 0;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        ++number;
        const auto words = words_of(text.substr(start, end - start), number);
        start = end + 1;
        if (words.empty()) {
            continue;
        }
        if (words[0] == "points" && words.size() == 4) {
            points.checks_.push_back({words[1], words[2], points_value(words[3], number)});
        } else if (words[0] == "total" && words.size() == 3) {
            points.totals_.push_back({words[1], "", points_value(words[2], number)});
        } else {
            throw lab::Error("points file, line " + std::to_string(number) +
                             ": expected 'points EXERCISE \"CHECK\" POINTS' or "
                             "'total EXERCISE POINTS'");
        }
    }
    return points;
}

std::optional<double> Points::named_points(const std::string& exercise,
                                           const std::string& check) const {
    std::optional<double> value;
    for (const PointsRule& rule : checks_) {
        if (matches(rule.exercise, exercise) && matches(rule.check, check)) {
            value = rule.points;
        }
    }
    return value;
}

std::optional<double> Points::total(const std::string& exercise) const {
    std::optional<double> value;
    for (const PointsRule& rule : totals_) {
        if (matches(rule.exercise, exercise)) {
            value = rule.points;
        }
    }
    return value;
}

std::vector<double> Points::weigh(const std::string& exercise,
                                  const std::vector<std::string>& checks) const {
    const auto wanted = total(exercise);
    std::vector<double> weights;
    double named_sum = 0;
    std::size_t unnamed = 0;
    for (const std::string& check : checks) {
        const auto named = named_points(exercise, check);
        weights.push_back(named.value_or(wanted ? -1 : 1));  // -1: a share of the rest, below
        named_sum += named.value_or(0);
        unnamed += named ? 0 : 1;
    }
    // An exercise's total is fixed: checks that add up to more (a hidden check
    // added with its 10 points, say) are refused, never graded out of 110.
    if (wanted && named_sum > *wanted + 1e-9) {
        throw lab::Error("points file: the checks of " + exercise + " add up to " +
                         points_text(named_sum) + ", above its total of " + points_text(*wanted) +
                         ": lower the points lines of grading/points.conf so that they make " +
                         points_text(*wanted));
    }
    if (wanted && unnamed > 0) {
        const double share = (*wanted - named_sum) / static_cast<double>(unnamed);
        for (double& weight : weights) {
            weight = weight < 0 ? share : weight;
        }
    }
    return weights;
}

double ExerciseOutcome::points() const {
    double sum = 0;
    for (const auto& check : checks) {
        sum += check.points;
    }
    return sum;
}

double ExerciseOutcome::max_points() const {
    double sum = 0;
    for (const auto& check : checks) {
        sum += check.max_points;
    }
    return sum;
}

std::string ExerciseOutcome::summary() const {
    const auto passed = static_cast<std::size_t>(
        std::count_if(checks.begin(), checks.end(), [](const auto& c) { return c.passed; }));
    if (passed == checks.size()) {
        return "";
    }
    std::string common;
    bool same = true;
    for (const auto& check : checks) {
        if (!check.passed) {
            const std::string line = cause(check.reason);
            if (common.empty()) {
                common = line;
            } else if (line != common) {
                same = false;
            }
        }
    }
    const std::string count =
        std::to_string(passed) + " of " + std::to_string(checks.size()) + " checks passed";
    if (same && passed == 0) {
        return common;
    }
    if (same) {
        return count + "; the others: " + common;
    }
    return count;
}

double StudentOutcome::points() const {
    double sum = 0;
    for (const auto& exercise : exercises) {
        sum += exercise.points();
    }
    return sum;
}

double StudentOutcome::max_points() const {
    double sum = 0;
    for (const auto& exercise : exercises) {
        sum += exercise.max_points();
    }
    return sum;
}

std::string clean_text(std::string_view text, std::size_t max_length) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == 0x1b) {  // an escape sequence: drop it whole
            std::size_t j = i + 1;
            if (j < text.size() && text[j] == '[') {
                ++j;
                while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) ||
                                           text[j] == ';' || text[j] == '?')) {
                    ++j;
                }
            }
            i = j < text.size() ? j : text.size();
            continue;
        }
        if (c == '\n' || c == '\t') {
            out += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7f) {
            out += '?';
        } else {
            out += static_cast<char>(c);
        }
    }
    if (out.size() > max_length) {
        out = out.substr(0, max_length) + " [...]";
    }
    return out;
}

std::string points_text(double points) {
    const double rounded = std::round(points * 100) / 100;
    char text[64];
    std::snprintf(text, sizeof text, "%.2f", rounded);
    std::string out = text;
    while (out.back() == '0') {
        out.pop_back();
    }
    if (out.back() == '.') {
        out.pop_back();
    }
    return out == "-0" ? "0" : out;
}

StudentOutcome evaluate(const std::string& student, const std::vector<Exercise>& course,
                        const Points& points,
                        const std::map<std::string, std::string>& build_status,
                        const std::map<std::string, std::string>& build_logs,
                        const std::map<std::string, std::string>& results) {
    StudentOutcome outcome{student, {}};
    for (const Exercise& exercise : course) {
        ExerciseOutcome done{exercise.name, {}, {}};
        const std::vector<double> weights = points.weigh(exercise.name, exercise.checks);
        std::string shared_reason;  // one reason for every check: the build did not happen
        const auto status = build_status.find(exercise.name);
        if (status == build_status.end()) {
            shared_reason = "not graded: the grading run stopped before this exercise";
        } else if (status->second != "ok") {
            const std::size_t tab = status->second.find('\t');
            shared_reason = clean_text(tab == std::string::npos ? status->second
                                                                : status->second.substr(tab + 1));
            if (const auto log = build_logs.find(exercise.name); log != build_logs.end()) {
                done.build_log = clean_text(log->second, 6000);
            }
        }
        std::map<std::string, std::pair<bool, std::string>> seen;
        if (shared_reason.empty()) {
            if (const auto lines = results.find(exercise.name); lines != results.end()) {
                std::istringstream text(lines->second);
                std::string line;
                while (std::getline(text, line)) {
                    const std::size_t first = line.find('\t');
                    const std::size_t second =
                        first == std::string::npos ? first : line.find('\t', first + 1);
                    if (second == std::string::npos) {
                        continue;
                    }
                    const std::string name = unescape(line.substr(first + 1, second - first - 1));
                    seen[name] = {line.substr(0, first) == "pass",
                                  clean_text(unescape(line.substr(second + 1)))};
                }
            }
        }
        for (std::size_t i = 0; i < exercise.checks.size(); ++i) {
            CheckOutcome check{exercise.checks[i], false, 0, weights[i], shared_reason};
            if (shared_reason.empty()) {
                const auto found = seen.find(check.name);
                if (found == seen.end()) {
                    check.reason =
                        "the check did not run: the check program stopped before it (a fault "
                        "of the grader: tell your instructor)";
                } else {
                    check.passed = found->second.first;
                    check.reason = check.passed ? "" : found->second.second;
                    if (!check.passed && check.reason.empty()) {
                        check.reason = "the check failed";
                    }
                }
            }
            check.points = check.passed ? check.max_points : 0;
            done.checks.push_back(check);
        }
        outcome.exercises.push_back(done);
    }
    return outcome;
}

std::string gradebook_csv(const std::vector<Exercise>& course,
                          const std::vector<StudentOutcome>& students) {
    std::string csv = "student";
    for (const Exercise& exercise : course) {
        csv += "," + exercise.name;
    }
    csv += ",total\n";
    for (const StudentOutcome& student : students) {
        csv += student.name;  // names are [A-Za-z0-9._-] (grading/grade.sh)
        for (const Exercise& exercise : course) {
            const auto found = std::find_if(student.exercises.begin(), student.exercises.end(),
                                            [&](const auto& e) { return e.name == exercise.name; });
            csv += "," + (found == student.exercises.end() ? std::string()
                                                           : points_text(found->points()));
        }
        csv += "," + points_text(student.points()) + "\n";
    }
    return csv;
}

std::string score_table(const std::vector<Exercise>& course,
                        const std::vector<StudentOutcome>& students) {
    std::size_t name_width = 7;
    for (const auto& student : students) {
        name_width = std::max(name_width, student.name.size());
    }
    std::string table = pad("student", name_width + 2);
    for (const Exercise& exercise : course) {
        table += pad(exercise.name.substr(0, 2), 9);
    }
    table += "total\n";
    for (const StudentOutcome& student : students) {
        table += pad(student.name, name_width + 2);
        for (const auto& exercise : student.exercises) {
            table +=
                pad(points_text(exercise.points()) + "/" + points_text(exercise.max_points()), 9);
        }
        table += points_text(student.points()) + "/" + points_text(student.max_points()) + "\n";
    }
    table += "\n";
    for (const Exercise& exercise : course) {
        table += "  " + exercise.name.substr(0, 2) + " = " + exercise.name + "\n";
    }
    bool any = false;
    for (const StudentOutcome& student : students) {
        for (const auto& exercise : student.exercises) {
            if (exercise.points() == 0 && exercise.max_points() > 0) {
                if (!any) {
                    table += "\nExercises that scored 0:\n";
                    any = true;
                }
                table += "  " + student.name + ", " + exercise.name + ": " +
                         clean_text(exercise.summary(), 240) + "\n";
            }
        }
    }
    return table;
}

std::string text_report(const StudentOutcome& student) {
    std::string text = "Grading report for " + student.name + ": " + points_text(student.points()) +
                       " of " + points_text(student.max_points()) + " points\n";
    for (const auto& exercise : student.exercises) {
        text += "\n" + exercise.name + ": " + points_text(exercise.points()) + " of " +
                points_text(exercise.max_points()) + " points";
        const std::string summary = exercise.summary();
        text += summary.empty() ? "\n" : " (" + headline(summary) + ")\n";
        for (const auto& check : exercise.checks) {
            text += std::string(check.passed ? "  pass  " : "  FAIL  ") + check.name + "  [" +
                    points_text(check.points) + "/" + points_text(check.max_points) + "]\n";
            if (!check.passed) {
                text += indent(check.reason, "        ");
            }
        }
        if (!exercise.build_log.empty()) {
            text += "  compiler output:\n" + indent(exercise.build_log, "    | ");
        }
    }
    return text;
}

std::string xml_text(std::string_view text) {
    std::string out;
    for (const char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&apos;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::string junit_report(const StudentOutcome& student) {
    std::size_t tests = 0, failures = 0;
    for (const auto& exercise : student.exercises) {
        for (const auto& check : exercise.checks) {
            ++tests;
            failures += check.passed ? 0 : 1;
        }
    }
    std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"" +
                      xml_text("rdma-verbs-lab exercises: " + student.name) + "\" tests=\"" +
                      std::to_string(tests) + "\" failures=\"" + std::to_string(failures) + "\">\n";
    for (const auto& exercise : student.exercises) {
        std::size_t failed = 0;
        for (const auto& check : exercise.checks) {
            failed += check.passed ? 0 : 1;
        }
        xml += "  <testsuite name=\"" + xml_text(exercise.name) + "\" tests=\"" +
               std::to_string(exercise.checks.size()) + "\" failures=\"" + std::to_string(failed) +
               "\" errors=\"0\">\n";
        for (const auto& check : exercise.checks) {
            xml += "    <testcase classname=\"" + xml_text(exercise.name) + "\" name=\"" +
                   xml_text(check.name) + "\" time=\"0\">\n";
            if (!check.passed) {
                xml += "      <failure message=\"" + xml_text(headline(check.reason)) +
                       "\" type=\"check\">" + xml_text(check.reason) + "</failure>\n";
            }
            xml += "      <system-out>points: " + points_text(check.points) + " of " +
                   points_text(check.max_points) + "</system-out>\n    </testcase>\n";
        }
        xml += "  </testsuite>\n";
    }
    return xml + "</testsuites>\n";
}

std::string json_string(std::string_view text) {
    std::string out = "\"";
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\t':
                out += "\\t";
                break;
            case '\r':
                out += "\\r";
                break;
            default:
                if (byte < 0x20) {
                    char code[8];
                    std::snprintf(code, sizeof code, "\\u%04x", byte);
                    out += code;
                } else {
                    out += c;
                }
        }
    }
    return out + "\"";
}

std::string gradescope_json(const StudentOutcome& student) {
    std::string summary;
    for (const auto& exercise : student.exercises) {
        const std::string line = exercise.summary();
        summary += exercise.name + ": " + points_text(exercise.points()) + " of " +
                   points_text(exercise.max_points()) + " points" +
                   (line.empty() ? "" : " (" + headline(line) + ")") + "\n";
    }
    std::string json = "{\n  \"score\": " + points_text(student.points()) +
                       ",\n  \"output\": " + json_string(summary) +
                       ",\n  \"visibility\": \"visible\",\n  \"stdout_visibility\": \"hidden\","
                       "\n  \"tests\": [";
    bool first = true;
    std::size_t exercise_number = 0;
    for (const auto& exercise : student.exercises) {
        ++exercise_number;
        std::size_t check_number = 0;
        for (const auto& check : exercise.checks) {
            ++check_number;
            std::string output = check.reason;
            if (!check.passed && !exercise.build_log.empty()) {
                output += "\n\ncompiler output:\n" + exercise.build_log;
            }
            json +=
                std::string(first ? "" : ",") +
                "\n    {\"name\": " + json_string(exercise.name + ": " + check.name) +
                ", \"number\": " +
                json_string(std::to_string(exercise_number) + "." + std::to_string(check_number)) +
                ", \"score\": " + points_text(check.points) +
                ", \"max_score\": " + points_text(check.max_points) +
                ", \"status\": " + (check.passed ? "\"passed\"" : "\"failed\"") +
                ", \"output\": " + json_string(output) + ", \"visibility\": " +
                (is_hidden(check.name) ? "\"after_published\"" : "\"visible\"") + "}";
            first = false;
        }
    }
    return json + "\n  ]\n}\n";
}

std::string base64(std::string_view bytes) {
    static constexpr char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    std::size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const auto a = static_cast<unsigned char>(bytes[i]);
        const auto b = static_cast<unsigned char>(bytes[i + 1]);
        const auto c = static_cast<unsigned char>(bytes[i + 2]);
        out += kAlphabet[a >> 2];
        out += kAlphabet[((a & 3) << 4) | (b >> 4)];
        out += kAlphabet[((b & 15) << 2) | (c >> 6)];
        out += kAlphabet[c & 63];
    }
    if (i + 1 == bytes.size()) {
        const auto a = static_cast<unsigned char>(bytes[i]);
        out += kAlphabet[a >> 2];
        out += kAlphabet[(a & 3) << 4];
        out += "==";
    } else if (i + 2 == bytes.size()) {
        const auto a = static_cast<unsigned char>(bytes[i]);
        const auto b = static_cast<unsigned char>(bytes[i + 1]);
        out += kAlphabet[a >> 2];
        out += kAlphabet[((a & 3) << 4) | (b >> 4)];
        out += kAlphabet[(b & 15) << 2];
        out += '=';
    }
    return out;
}

std::string github_outputs(const StudentOutcome& student) {
    std::string lines;
    for (const auto& exercise : student.exercises) {
        bool all_passed = true;
        std::string tests;
        for (const auto& check : exercise.checks) {
            all_passed = all_passed && check.passed;
            tests += std::string(tests.empty() ? "" : ",") +
                     "{\"name\":" + json_string(check.name) +
                     ",\"status\":" + (check.passed ? "\"pass\"" : "\"fail\"") +
                     ",\"score\":" + points_text(check.points) +
                     ",\"message\":" + json_string(check.reason) + "}";
        }
        const std::string json =
            "{\"version\":1,\"status\":" + std::string(all_passed ? "\"pass\"" : "\"fail\"") +
            ",\"max_score\":" + points_text(exercise.max_points()) + ",\"tests\":[" + tests + "]}";
        lines += "ex" + exercise.name.substr(0, 2) + "=" + base64(json) + "\n";
    }
    return lines;
}

}  // namespace lab::grade

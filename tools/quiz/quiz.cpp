// SPDX-License-Identifier: MIT
// The quiz engine (quiz.hpp): the bank parser, variants, answer checking.
#include "quiz.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace lab::quiz {

std::string trim(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) {
        return {};
    }
    const auto last = text.find_last_not_of(" \t\r");
    return std::string(text.substr(first, last - first + 1));
}

namespace {

bool is_identifier(std::string_view name) {
    if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) {
        return false;
    }
    return std::ranges::all_of(
        name, [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::vector<std::string> split(std::string_view text, char separator) {
    std::vector<std::string> pieces;
    std::size_t start = 0;
    while (true) {
        const auto at = text.find(separator, start);
        pieces.push_back(trim(text.substr(start, at - start)));
        if (at == std::string_view::npos) {
            return pieces;
        }
        start = at + 1;
    }
}

std::optional<std::int64_t> parse_integer(std::string_view text) {
    const std::string copy = trim(text);
    if (copy.empty()) {
        return std::nullopt;
    }
    errno = 0;
    char* end = nullptr;
    const long long value = std::strtoll(copy.c_str(), &end, 0);
    if (errno != 0 || end != copy.c_str() + copy.size()) {
        return std::nullopt;
    }
    return value;
}

/// A number as a student or a bank writes it: 31, -2.5, 0x1f, 1e3.
std::optional<double> parse_number(std::string_view text) {
    std::string copy = trim(text);
    if (copy.empty()) {
        return std::nullopt;
    }
    const bool hex = copy.size() > 2 && copy[0] == '0' && (copy[1] == 'x' || copy[1] == 'X');
    if (hex) {
        if (const auto value = parse_integer(copy)) {
            return static_cast<double>(*value);
        }
        return std::nullopt;
    }
    errno = 0;
    char* end = nullptr;
    const double value = std::strtod(copy.c_str(), &end);
    if (errno != 0 || end != copy.c_str() + copy.size() || !std::isfinite(value)) {
        return std::nullopt;
    }
    return value;
}

std::string format_number(double value) {
    if (value == std::floor(value) && std::fabs(value) < 1e15) {
        return std::to_string(static_cast<long long>(value));
    }
    std::ostringstream out;
    out << value;
    return out.str();
}

/// A name as compared: lower case, quotes and backquotes around it dropped,
/// runs of white space as one space.
std::string normalise_name(std::string_view text) {
    std::string value = trim(text);
    while (value.size() >= 2 &&
           (value.front() == '"' || value.front() == '`' || value.front() == '\'') &&
           value.back() == value.front()) {
        value = trim(std::string_view(value).substr(1, value.size() - 2));
    }
    std::string out;
    bool space = false;
    for (const char c : value) {
        if (c == ' ' || c == '\t') {
            space = true;
            continue;
        }
        if (space && !out.empty()) {
            out += ' ';
        }
        space = false;
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

/// The letters of a choice answer, sorted: "c, a" and "ac" are both "ac".
std::optional<std::string> parse_letters(std::string_view text, const Part& part,
                                         std::string& problem) {
    std::string letters;
    for (const char raw : text) {
        if (raw == ' ' || raw == ',' || raw == '\t' || raw == '\r') {
            continue;
        }
        const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(raw)));
        const bool known =
            std::ranges::any_of(part.options, [&](const auto& o) { return o.first == c; });
        if (!known) {
            problem = std::string("'") + raw + "' is not one of the letters";
            return std::nullopt;
        }
        if (letters.find(c) != std::string::npos) {
            problem = std::string("'") + c + "' is given twice";
            return std::nullopt;
        }
        letters += c;
    }
    if (letters.empty()) {
        problem = "no letter given";
        return std::nullopt;
    }
    std::ranges::sort(letters);
    return letters;
}

std::string show_letters(const std::string& letters) {
    std::string out;
    for (const char c : letters) {
        if (!out.empty()) {
            out += ", ";
        }
        out += c;
    }
    return out;
}

/// The code point that ends (@p last) or begins @p text; 0 if none.
char32_t code_point(std::string_view text, bool last) {
    if (text.empty()) {
        return 0;
    }
    std::size_t at = 0;
    if (last) {
        at = text.size() - 1;
        while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xc0) == 0x80) {
            --at;
        }
    }
    const auto lead = static_cast<unsigned char>(text[at]);
    const std::size_t length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
    char32_t code = length == 1 ? lead : lead & (0x7f >> length);
    for (std::size_t k = 1; k < length && at + k < text.size(); ++k) {
        code = (code << 6) | (static_cast<unsigned char>(text[at + k]) & 0x3f);
    }
    return code;
}

/// Chinese text has no space where a line breaks: between two Chinese
/// characters, or next to full-width punctuation. Elsewhere a break is a space.
bool joins_without_space(std::string_view before, std::string_view after) {
    const auto wide = [](char32_t c) { return c >= 0x2e80; };
    const auto punctuation = [](char32_t c) {
        return (c >= 0x3000 && c <= 0x303f) || (c >= 0xff00 && c <= 0xffef);
    };
    const char32_t a = code_point(before, true);
    const char32_t b = code_point(after, false);
    return (wide(a) && wide(b)) || punctuation(a) || punctuation(b);
}

/// The families a name part may restrict its answers to (`among:`).
const std::map<std::string, std::vector<std::string>>& families() {
    static const std::map<std::string, std::vector<std::string>> names = {
        {"wc-status",
         {"IBV_WC_SUCCESS",
          "IBV_WC_LOC_LEN_ERR",
          "IBV_WC_LOC_QP_OP_ERR",
          "IBV_WC_LOC_EEC_OP_ERR",
          "IBV_WC_LOC_PROT_ERR",
          "IBV_WC_WR_FLUSH_ERR",
          "IBV_WC_MW_BIND_ERR",
          "IBV_WC_BAD_RESP_ERR",
          "IBV_WC_LOC_ACCESS_ERR",
          "IBV_WC_REM_INV_REQ_ERR",
          "IBV_WC_REM_ACCESS_ERR",
          "IBV_WC_REM_OP_ERR",
          "IBV_WC_RETRY_EXC_ERR",
          "IBV_WC_RNR_RETRY_EXC_ERR",
          "IBV_WC_LOC_RDD_VIOL_ERR",
          "IBV_WC_REM_INV_RD_REQ_ERR",
          "IBV_WC_REM_ABORT_ERR",
          "IBV_WC_INV_EECN_ERR",
          "IBV_WC_INV_EEC_STATE_ERR",
          "IBV_WC_FATAL_ERR",
          "IBV_WC_RESP_TIMEOUT_ERR",
          "IBV_WC_GENERAL_ERR",
          "IBV_WC_TM_ERR",
          "IBV_WC_TM_RNDV_INCOMPLETE"}},
        {"qp-state",
         {"IBV_QPS_RESET", "IBV_QPS_INIT", "IBV_QPS_RTR", "IBV_QPS_RTS", "IBV_QPS_SQD",
          "IBV_QPS_SQE", "IBV_QPS_ERR", "IBV_QPS_UNKNOWN"}},
        {"port-state",
         {"IBV_PORT_NOP", "IBV_PORT_DOWN", "IBV_PORT_INIT", "IBV_PORT_ARMED", "IBV_PORT_ACTIVE",
          "IBV_PORT_ACTIVE_DEFER"}},
        {"errno", {}},  // E followed by letters and digits, or a strerror() text
    };
    return names;
}

/// What ibv_wc_status_str() returns for each status of the wc-status family,
/// in the same order (rdma-core 44 and 56 alike; test_quiz compares them with
/// the library's). A program prints these, so a re-run's key is one of them.
const std::vector<std::string>& wc_status_texts() {
    static const std::vector<std::string> texts = {"success",
                                                   "local length error",
                                                   "local QP operation error",
                                                   "local EE context operation error",
                                                   "local protection error",
                                                   "Work Request Flushed Error",
                                                   "memory management operation error",
                                                   "bad response error",
                                                   "local access error",
                                                   "remote invalid request error",
                                                   "remote access error",
                                                   "remote operation error",
                                                   "transport retry counter exceeded",
                                                   "RNR retry counter exceeded",
                                                   "local RDD violation error",
                                                   "remote invalid RD request",
                                                   "aborted error",
                                                   "invalid EE context number",
                                                   "invalid EE context state",
                                                   "fatal error",
                                                   "response timeout error",
                                                   "general error",
                                                   "TM error",
                                                   "TM software rendezvous"};
    return texts;
}

/// The constant of @p family that @p given (normalised) names, written in
/// full and normalised (ibv_qps_rts for rts; einval for "Invalid argument",
/// ibv_wc_rem_access_err for "remote access error"), or @p given itself. So a
/// name, its short form and the text a program prints for it are one answer.
std::string canonical(const std::string& family, const std::string& given) {
    if (family.empty()) {
        return given;
    }
    if (family == "errno") {
        for (int number = 1; number < 200; ++number) {
            const char* name = strerrorname_np(number);
            if (name != nullptr && normalise_name(std::strerror(number)) == given) {
                return normalise_name(name);
            }
        }
        return given;
    }
    if (family == "wc-status") {
        const auto& texts = wc_status_texts();
        const auto& constants = families().at(family);
        for (std::size_t i = 0; i < texts.size() && i < constants.size(); ++i) {
            if (normalise_name(texts[i]) == given) {
                return normalise_name(constants[i]);
            }
        }
    }
    for (const auto& constant : families().at(family)) {
        const std::string full = normalise_name(constant);
        for (const std::string prefix : {"ibv_wc_", "ibv_qps_", "ibv_port_", "ibv_"}) {
            if (full.starts_with(prefix) && given == full.substr(prefix.size())) {
                return full;
            }
        }
    }
    return given;
}

/// Whether @p given (normalised) names a member of @p family: the constant,
/// or the constant without its prefix (RTS for IBV_QPS_RTS; a port state
/// also as PORT_ACTIVE, the way ibv_devinfo prints it).
bool in_family(const std::string& family, const std::string& given) {
    if (family == "errno") {
        const bool name = given.size() >= 3 && given.size() <= 16 && given[0] == 'e' &&
                          std::ranges::all_of(given, [](char c) {
                              return std::islower(static_cast<unsigned char>(c)) ||
                                     std::isdigit(static_cast<unsigned char>(c));
                          });
        for (int number = 1; !name && number < 200; ++number) {
            if (normalise_name(std::strerror(number)) == given) {
                return true;
            }
        }
        return name;
    }
    if (family == "wc-status" && canonical(family, given) != given) {
        return true;  // the text ibv_wc_status_str() prints for it
    }
    for (const auto& constant : families().at(family)) {
        const std::string full = normalise_name(constant);
        for (const std::string prefix : {"ibv_wc_", "ibv_qps_", "ibv_port_", "ibv_"}) {
            if (full.starts_with(prefix) && given == full.substr(prefix.size())) {
                return true;
            }
        }
        if (given == full) {
            return true;
        }
    }
    return false;
}

// --- expressions -----------------------------------------------------------------

class Evaluator {
  public:
    Evaluator(std::string_view text, const Values& values) : text_(text), values_(values) {}

    std::int64_t run() {
        const auto value = expression();
        skip();
        if (pos_ != text_.size()) {
            fail("unexpected '" + std::string(1, text_[pos_]) + "'");
        }
        return value;
    }

  private:
    [[noreturn]] void fail(const std::string& why) const {
        throw std::invalid_argument("{" + std::string(text_) + "}: " + why);
    }
    void skip() {
        while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) {
            ++pos_;
        }
    }
    bool take(char c) {
        skip();
        if (pos_ < text_.size() && text_[pos_] == c) {
            ++pos_;
            return true;
        }
        return false;
    }
    std::int64_t expression() {
        auto value = term();
        while (true) {
            if (take('+')) {
                value += term();
            } else if (take('-')) {
                value -= term();
            } else {
                return value;
            }
        }
    }
    std::int64_t term() {
        auto value = unary();
        while (true) {
            if (take('*')) {
                value *= unary();
            } else if (take('/') || take('%')) {
                const char op = text_[pos_ - 1];
                const auto divisor = unary();
                if (divisor == 0) {
                    fail("division by zero");
                }
                value = op == '/' ? value / divisor : value % divisor;
            } else {
                return value;
            }
        }
    }
    std::int64_t unary() {
        if (take('-')) {
            return -unary();
        }
        return primary();
    }
    std::int64_t primary() {
        skip();
        if (take('(')) {
            const auto value = expression();
            if (!take(')')) {
                fail("a ')' is missing");
            }
            return value;
        }
        const auto start = pos_;
        while (pos_ < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
            ++pos_;
        }
        const std::string word(text_.substr(start, pos_ - start));
        if (word.empty()) {
            fail(pos_ < text_.size() ? "unexpected '" + std::string(1, text_[pos_]) + "'"
                                     : "an operand is missing");
        }
        if (std::isdigit(static_cast<unsigned char>(word[0]))) {
            const auto value = parse_integer(word);
            if (!value) {
                fail("'" + word + "' is not an integer");
            }
            return *value;
        }
        if (take('(')) {
            std::vector<std::int64_t> args{expression()};
            while (take(',')) {
                args.push_back(expression());
            }
            if (!take(')')) {
                fail("a ')' is missing");
            }
            return call(word, args);
        }
        const auto found = values_.find(word);
        if (found == values_.end()) {
            fail("no parameter '" + word + "'");
        }
        return found->second;
    }
    std::int64_t call(const std::string& name, const std::vector<std::int64_t>& args) {
        const auto want = [&](std::size_t n) {
            if (args.size() != n) {
                fail(name + " takes " + std::to_string(n) + " argument(s)");
            }
        };
        if (name == "min" || name == "max") {
            want(2);
            return name == "min" ? std::min(args[0], args[1]) : std::max(args[0], args[1]);
        }
        if (name == "ceil_div") {
            want(2);
            if (args[1] <= 0) {
                fail("ceil_div needs a positive divisor");
            }
            return (args[0] + args[1] - 1) / args[1];
        }
        if (name == "next_pow2") {
            want(1);
            if (args[0] > (std::int64_t{1} << 62)) {
                fail("next_pow2 of a number above 2^62");
            }
            std::int64_t power = 1;
            while (power < args[0]) {
                power *= 2;
            }
            return power;
        }
        fail("no function '" + name + "' (min, max, ceil_div, next_pow2)");
    }

    std::string_view text_;
    const Values& values_;
    std::size_t pos_ = 0;
};

// --- the parser ----------------------------------------------------------------

struct Line {
    int number = 0;
    std::string key;    ///< e.g. "text"
    std::string lang;   ///< "en", or the suffix of text.zh-CN
    std::string label;  ///< "a" in "option a:"
    std::string value;
};

class Parser {
  public:
    Parser(std::string_view content, std::string file, Strictness strictness)
        : content_(content), paper_(strictness == Strictness::paper) {
        bank_.file = std::move(file);
    }

    Bank run() {
        for (const auto& line : logical_lines()) {
            apply(line);
        }
        finish_question();
        if (bank_.quiz.empty()) {
            fail(1, "no 'quiz:' line naming the lesson");
        }
        for (const auto& pool : bank_.pools) {
            const auto members = std::ranges::count_if(
                bank_.questions, [&](const Question& q) { return q.pool == pool.name; });
            if (members < static_cast<long>(pool.draw)) {
                fail(pool.line, "pool '" + pool.name + "' draws " + std::to_string(pool.draw) +
                                    " but has " + std::to_string(members) + " question(s)");
            }
        }
        return std::move(bank_);
    }

  private:
    [[noreturn]] void fail(int line, const std::string& why) const {
        throw BankError(bank_.file + ":" + std::to_string(line) + ": " + why);
    }

    std::vector<Line> logical_lines() {
        std::vector<Line> lines;
        std::istringstream in{std::string(content_)};
        std::string raw;
        int number = 0;
        while (std::getline(in, raw)) {
            ++number;
            if (!raw.empty() && raw.back() == '\r') {
                raw.pop_back();
            }
            if (trim(raw).empty() || raw[0] == '#') {
                continue;
            }
            if (raw[0] == ' ' || raw[0] == '\t') {
                if (lines.empty()) {
                    fail(number, "a continuation line (it starts with a space) with no line above");
                }
                // A line break between two Chinese characters is no space
                // (none is written there); anywhere else it is one.
                auto& value = lines.back().value;
                const std::string more = trim(raw);
                value += (joins_without_space(value, more) ? "" : " ") + more;
                continue;
            }
            const auto colon = raw.find(':');
            if (colon == std::string::npos) {
                fail(number, "expected 'key: value', got '" + trim(raw) + "'");
            }
            Line line;
            line.number = number;
            line.value = trim(std::string_view(raw).substr(colon + 1));
            std::string key = raw.substr(0, colon);
            if (const auto space = key.find(' '); space != std::string::npos) {
                line.label = trim(std::string_view(key).substr(space + 1));
                key = key.substr(0, space);
            }
            line.lang = "en";
            if (const auto dot = key.find('.'); dot != std::string::npos) {
                line.lang = key.substr(dot + 1);
                key = key.substr(0, dot);
                if (line.lang.empty() || line.lang == "en") {
                    fail(number, "'" + raw.substr(0, colon) +
                                     "': name a language after the dot, e.g. text.zh-CN");
                }
            }
            line.key = key;
            lines.push_back(std::move(line));
        }
        return lines;
    }

    void set_text(Text& text, const Line& line) {
        if (line.value.empty()) {
            fail(line.number, "'" + line.key + "' is empty");
        }
        if (!text.by_lang.emplace(line.lang, line.value).second) {
            fail(line.number,
                 "a second '" + line.key + (line.lang == "en" ? "" : "." + line.lang) + "' line");
        }
    }

    void no_label(const Line& line) const {
        if (!line.label.empty()) {
            fail(line.number,
                 "'" + line.key + " " + line.label + ":': '" + line.key + "' takes no label");
        }
    }
    void english_only(const Line& line) const {
        if (line.lang != "en") {
            fail(line.number, "'" + line.key + "' has no language versions");
        }
    }

    void apply(const Line& line) {
        if (line.key == "question") {
            no_label(line);
            english_only(line);
            finish_question();
            if (line.value.empty() || line.value.find_first_of(" \t") != std::string::npos) {
                fail(line.number, "a question id is one word, e.g. 03.granted");
            }
            for (const auto& q : bank_.questions) {
                if (q.id == line.value) {
                    fail(line.number, "question id '" + line.value + "' is used twice (line " +
                                          std::to_string(q.line) + ")");
                }
            }
            question_ = Question{};
            question_->id = line.value;
            question_->line = line.number;
            return;
        }
        if (!question_) {
            bank_line(line);
        } else {
            question_line(line);
        }
    }

    void bank_line(const Line& line) {
        if (line.key == "quiz") {
            no_label(line);
            english_only(line);
            if (!bank_.quiz.empty()) {
                fail(line.number, "a second 'quiz:' line");
            }
            bank_.quiz = line.value;
        } else if (line.key == "title") {
            no_label(line);
            set_text(bank_.title, line);
        } else if (line.key == "attempts") {
            no_label(line);
            english_only(line);
            // attempts: 1 0.5 (each a share of the points, 0 to 1)
            std::istringstream words(line.value);
            std::vector<double> weights;
            std::string word;
            while (words >> word) {
                const auto weight = parse_number(word);
                if (!weight || *weight < 0 || *weight > 1) {
                    fail(line.number,
                         "expected 'attempts: 1 0.5' (a share from 0 to 1 per attempt)");
                }
                weights.push_back(*weight);
            }
            if (weights.empty()) {
                fail(line.number, "expected 'attempts: 1 0.5' (a share from 0 to 1 per attempt)");
            }
            bank_.policy.weights = weights;
        } else if (line.key == "fresh-variant") {
            no_label(line);
            english_only(line);
            if (line.value != "yes" && line.value != "no") {
                fail(line.number, "expected 'fresh-variant: yes' or 'fresh-variant: no'");
            }
            bank_.policy.fresh_variant = line.value == "yes";
        } else if (line.key == "release") {
            no_label(line);
            english_only(line);
            if (line.value == "after-grading") {
                bank_.release = Release::after_grading;
            } else if (line.value == "after-deadline") {
                bank_.release = Release::after_deadline;
            } else {
                fail(line.number, "expected 'release: after-grading' or 'release: after-deadline'");
            }
        } else if (line.key == "pool") {
            no_label(line);
            english_only(line);
            // pool: NAME draw N
            std::istringstream words(line.value);
            std::string name, draw, count, extra;
            words >> name >> draw >> count >> extra;
            const auto n = parse_integer(count);
            if (!is_identifier(name) || draw != "draw" || !n || *n < 1 || !extra.empty()) {
                fail(line.number, "expected 'pool: NAME draw N' (N at least 1)");
            }
            for (const auto& pool : bank_.pools) {
                if (pool.name == name) {
                    fail(line.number, "pool '" + name + "' is declared twice");
                }
            }
            bank_.pools.push_back({name, static_cast<unsigned>(*n), line.number});
        } else {
            fail(line.number, "'" + line.key + "' before the first 'question:' line");
        }
    }

    Part& current_part(const Line& line) {
        if (question_->parts.empty()) {
            fail(line.number,
                 "'" + line.key + "' before 'kind:' (or 'part:') says what the answer is");
        }
        return question_->parts.back();
    }

    void question_line(const Line& line) {
        Question& q = *question_;
        const std::string& key = line.key;
        if (key != "option") {
            no_label(line);
        }
        if (paper_ && (key == "answer" || key == "tolerance" || key == "wrong" ||
                       key == "explain" || key == "reread" || key == "read")) {
            fail(line.number, "'" + key + "' in a paper: a paper holds no part of the key");
        }
        if (key == "pool") {
            english_only(line);
            if (std::ranges::none_of(bank_.pools,
                                     [&](const Pool& p) { return p.name == line.value; })) {
                fail(line.number, "no pool '" + line.value + "' (declare 'pool: " + line.value +
                                      " draw N' above the questions)");
            }
            q.pool = line.value;
        } else if (key == "param") {
            english_only(line);
            q.params.push_back(parse_param(line));
        } else if (key == "run") {
            english_only(line);
            q.run = line.value;
        } else if (key == "text") {
            set_text(q.text, line);
        } else if (key == "explain") {
            set_text(q.explain, line);
        } else if (key == "reread") {
            set_text(q.reread, line);
        } else if (key == "points") {
            english_only(line);
            const auto value = parse_number(line.value);
            if (!value || *value <= 0) {
                fail(line.number, "points must be a positive number");
            }
            q.points = *value;
        } else if (key == "kind" || key == "part") {
            english_only(line);
            Part part;
            part.line = line.number;
            if (line.value == "number") {
                part.kind = Kind::number;
            } else if (line.value == "name") {
                part.kind = Kind::name;
            } else if (line.value == "choice") {
                part.kind = Kind::choice;
            } else {
                fail(line.number, "unknown kind '" + line.value + "' (number, name or choice)");
            }
            q.parts.push_back(std::move(part));
        } else if (key == "prompt") {
            set_text(current_part(line).prompt, line);
        } else if (key == "answer") {
            english_only(line);
            Part& part = current_part(line);
            if (!part.answer.empty()) {
                fail(line.number, "a second 'answer:' in one part (start another with 'part:')");
            }
            if (line.value.empty()) {
                fail(line.number, "'answer' is empty");
            }
            part.answer = line.value;
        } else if (key == "tolerance") {
            english_only(line);
            Part& part = current_part(line);
            std::string value = line.value;
            if (!value.empty() && value.back() == '%') {
                value.pop_back();
            }
            const auto number = parse_number(value);
            if (part.kind != Kind::number || !number || *number < 0) {
                fail(line.number, "a tolerance is a number or a percentage, for a number part");
            }
            part.tolerance = line.value;
        } else if (key == "among") {
            english_only(line);
            Part& part = current_part(line);
            if (part.kind != Kind::name || families().count(line.value) == 0) {
                fail(line.number,
                     "'among' is for a name part: errno, wc-status, qp-state or port-state");
            }
            part.among = line.value;
        } else if (key == "read") {
            english_only(line);
            try {
                const std::regex pattern(line.value);
                if (pattern.mark_count() < 1) {
                    fail(line.number, "'read' needs a group, (...), around the answer");
                }
            } catch (const std::regex_error& e) {
                fail(line.number, std::string("'read' is not a valid pattern: ") + e.what());
            }
            current_part(line).read = line.value;
        } else if (key == "option") {
            Part& part = current_part(line);
            if (part.kind != Kind::choice) {
                fail(line.number, "an option in a part that is not a choice");
            }
            if (line.label.size() != 1 || line.label[0] < 'a' || line.label[0] > 'z') {
                fail(line.number, "an option is 'option LETTER: text', a letter from a to z");
            }
            const char letter = line.label[0];
            auto found = std::ranges::find_if(part.options,
                                              [&](const auto& o) { return o.first == letter; });
            if (found == part.options.end()) {
                if (line.lang != "en") {
                    fail(line.number, "'option." + line.lang + " " + line.label +
                                          "' before its English 'option " + line.label + "'");
                }
                part.options.emplace_back(letter, Text{});
                found = part.options.end() - 1;
            }
            set_text(found->second, line);
        } else if (key == "wrong") {
            Part& part = current_part(line);
            const auto arrow = line.value.find("=>");
            if (arrow == std::string::npos) {
                fail(line.number, "expected 'wrong: ANSWER => explanation'");
            }
            const std::string value = trim(std::string_view(line.value).substr(0, arrow));
            const std::string text = trim(std::string_view(line.value).substr(arrow + 2));
            if (value.empty() || text.empty()) {
                fail(line.number, "expected 'wrong: ANSWER => explanation'");
            }
            auto found = std::ranges::find_if(part.wrong,
                                              [&](const WrongNote& w) { return w.value == value; });
            if (found == part.wrong.end()) {
                if (line.lang != "en") {
                    fail(line.number, "'wrong." + line.lang + ": " + value +
                                          "' before its English 'wrong: " + value + "'");
                }
                part.wrong.push_back({value, {}});
                found = part.wrong.end() - 1;
            }
            Line text_line = line;
            text_line.value = text;
            set_text(found->text, text_line);
        } else {
            fail(line.number, "unknown key '" + key + "'");
        }
    }

    Param parse_param(const Line& line) const {
        const auto equals = line.value.find('=');
        if (equals == std::string::npos) {
            fail(line.number,
                 "expected 'param: NAME = 1 | 2 | 4' or 'param: NAME = LOW..HIGH [step S]'");
        }
        Param param;
        param.name = trim(std::string_view(line.value).substr(0, equals));
        if (!is_identifier(param.name)) {
            fail(line.number, "'" + param.name + "' is not a parameter name (letters, digits, _)");
        }
        for (const auto& other : question_->params) {
            if (other.name == param.name) {
                fail(line.number, "parameter '" + param.name + "' is declared twice");
            }
        }
        std::string spec = trim(std::string_view(line.value).substr(equals + 1));
        if (const auto dots = spec.find(".."); dots != std::string::npos) {
            std::string high = spec.substr(dots + 2);
            std::string step = "1";
            if (const auto at = high.find("step"); at != std::string::npos) {
                step = high.substr(at + 4);
                high = high.substr(0, at);
            }
            const auto lo = parse_integer(spec.substr(0, dots));
            const auto hi = parse_integer(high);
            const auto st = parse_integer(step);
            if (!lo || !hi || !st || *st < 1 || *hi < *lo) {
                fail(line.number, "a range is LOW..HIGH [step S], integers, LOW <= HIGH, S >= 1");
            }
            param.low = *lo;
            param.high = *hi;
            param.step = *st;
            return param;
        }
        for (const auto& piece : split(spec, '|')) {
            const auto value = parse_integer(piece);
            if (!value) {
                fail(line.number, "'" + piece + "' is not an integer value of " + param.name);
            }
            param.values.push_back(*value);
        }
        return param;
    }

    void finish_question() {
        if (!question_) {
            return;
        }
        const Question& q = *question_;
        if (q.text.empty()) {
            fail(q.line, "question '" + q.id + "' has no 'text:'");
        }
        if (q.parts.empty()) {
            fail(q.line, "question '" + q.id + "' has no 'kind:' and 'answer:'");
        }
        for (const auto& part : q.parts) {
            if (part.answer.empty()) {
                if (paper_) {
                    continue;
                }
                fail(part.line, "this part of '" + q.id + "' has no 'answer:'");
            }
            if (part.kind == Kind::choice) {
                if (part.options.size() < 2) {
                    fail(part.line, "a choice needs at least two options");
                }
                if (part.answer.find('{') == std::string::npos) {
                    std::string problem;
                    if (!parse_letters(part.answer, part, problem)) {
                        fail(part.line, "the answer '" + part.answer + "': " + problem);
                    }
                }
            }
        }
        bank_.questions.push_back(std::move(*question_));
        question_.reset();
    }

    std::string_view content_;
    bool paper_ = false;
    Bank bank_;
    std::optional<Question> question_;
};

/// splitmix64: small, fast, and the same on every platform.
class Rng {
  public:
    explicit Rng(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }

  private:
    std::uint64_t state_;
};

Drawn draw_one(const Question& question, std::uint64_t seed) {
    Rng rng(hash64(question.id, seed));
    Drawn drawn;
    drawn.question = &question;
    for (const auto& param : question.params) {
        drawn.values[param.name] = param.at(rng.below(param.count()));
    }
    return drawn;
}

}  // namespace

const std::string& Text::in(std::string_view lang) const {
    static const std::string none;
    if (const auto found = by_lang.find(std::string(lang)); found != by_lang.end()) {
        return found->second;
    }
    if (const auto english = by_lang.find("en"); english != by_lang.end()) {
        return english->second;
    }
    return none;
}

std::uint64_t Param::count() const {
    if (!values.empty()) {
        return values.size();
    }
    return static_cast<std::uint64_t>((high - low) / step) + 1;
}

std::int64_t Param::at(std::uint64_t index) const {
    if (!values.empty()) {
        return values.at(index);
    }
    return low + static_cast<std::int64_t>(index) * step;
}

Bank parse_bank(std::string_view content, const std::string& file, Strictness strictness) {
    return Parser(content, file, strictness).run();
}

Bank load_bank(const std::string& path, Strictness strictness) {
    std::ifstream in(path);
    if (!in) {
        throw BankError(path + ":0: cannot be read");
    }
    std::ostringstream content;
    content << in.rdbuf();
    return parse_bank(content.str(), path, strictness);
}

std::int64_t evaluate(std::string_view expression, const Values& values) {
    return Evaluator(expression, values).run();
}

std::string substitute(std::string_view text, const Values& values) {
    std::string out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        const auto open = text.find('{', pos);
        if (open == std::string_view::npos) {
            out += text.substr(pos);
            break;
        }
        out += text.substr(pos, open - pos);
        if (open + 1 < text.size() && text[open + 1] == '{') {  // "{{" is a brace
            out += '{';
            pos = open + 2;
            continue;
        }
        const auto close = text.find('}', open);
        if (close == std::string_view::npos) {
            throw std::invalid_argument("a '{' without its '}' in: " + std::string(text));
        }
        out += std::to_string(evaluate(text.substr(open + 1, close - open - 1), values));
        pos = close + 1;
    }
    return out;
}

std::uint64_t hash64(std::string_view text, std::uint64_t basis) {
    std::uint64_t hash = basis;
    for (const char c : text) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 1099511628211ull;
    }
    return hash;
}

std::uint64_t quiz_seed(std::string_view student, std::string_view quiz, std::string_view salt) {
    // A separator no id holds, so that ("ab", "c") and ("a", "bc") differ.
    std::string key(student);
    key += '\x1f';
    key += quiz;
    key += '\x1f';
    key += salt;
    return hash64(key);
}

std::string Drawn::variant() const {
    if (values.empty()) {
        return "-";
    }
    std::string out;
    for (const auto& param : question->params) {
        if (!out.empty()) {
            out += ',';
        }
        out += param.name + "=" + std::to_string(values.at(param.name));
    }
    return out;
}

std::vector<Drawn> draw_quiz(const Bank& bank, std::uint64_t seed) {
    std::vector<Drawn> drawn;
    std::set<std::string> pools_done;
    for (const auto& question : bank.questions) {
        if (question.pool.empty()) {
            drawn.push_back(draw_one(question, seed));
            continue;
        }
        if (!pools_done.insert(question.pool).second) {
            continue;
        }
        std::vector<const Question*> members;
        for (const auto& other : bank.questions) {
            if (other.pool == question.pool) {
                members.push_back(&other);
            }
        }
        // Fisher-Yates with our generator, then the first `draw` of them.
        Rng rng(hash64("pool:" + question.pool, seed));
        for (std::size_t i = members.size(); i > 1; --i) {
            std::swap(members[i - 1], members[rng.below(i)]);
        }
        const auto pool = std::ranges::find_if(
            bank.pools, [&](const Pool& p) { return p.name == question.pool; });
        const std::size_t take = pool == bank.pools.end() ? 1 : pool->draw;
        for (std::size_t i = 0; i < take && i < members.size(); ++i) {
            drawn.push_back(draw_one(*members[i], seed));
        }
    }
    return drawn;
}

double attempt_weight(const AttemptPolicy& policy, unsigned attempt) {
    return attempt < policy.weights.size() ? policy.weights[attempt] : 0.0;
}

Drawn variant_for_attempt(const Drawn& first, std::uint64_t seed, unsigned attempt,
                          const AttemptPolicy& policy) {
    if (attempt == 0 || !policy.fresh_variant) {
        return first;
    }
    return draw_one(*first.question, hash64("attempt:" + std::to_string(attempt), seed));
}

PartResult check_part(const Part& part, const Values& values, std::string_view input,
                      const std::optional<std::string>& key) {
    PartResult result;
    const std::string answer = key ? *key : substitute(part.answer, values);
    switch (part.kind) {
        case Kind::number: {
            const auto expected = parse_number(answer);
            if (!expected) {
                throw std::invalid_argument("the key '" + answer + "' is not a number");
            }
            result.expected = format_number(*expected);
            const auto given = parse_number(input);
            if (!given) {
                result.problem = "expected a number, e.g. 42, 0x2a or 2.5";
                return result;
            }
            result.parsed = true;
            result.given = format_number(*given);
            double allowed = 1e-9;
            if (!part.tolerance.empty()) {
                std::string tolerance = part.tolerance;
                const bool relative = tolerance.back() == '%';
                if (relative) {
                    tolerance.pop_back();
                }
                const double amount = parse_number(tolerance).value_or(0);
                allowed =
                    std::max(allowed, relative ? std::fabs(*expected) * amount / 100 : amount);
            }
            result.score = std::fabs(*given - *expected) <= allowed ? 1 : 0;
            if (result.score == 0) {
                for (const auto& note : part.wrong) {
                    const auto value = parse_number(substitute(note.value, values));
                    if (value && std::fabs(*value - *given) <= 1e-9) {
                        result.note = &note;
                        break;
                    }
                }
            }
            return result;
        }
        case Kind::name: {
            const auto alternatives = split(answer, '|');
            result.expected = alternatives.front();
            result.given = trim(input);
            const std::string given = canonical(part.among, normalise_name(input));
            const auto same = [&](const std::string& other) {
                return canonical(part.among, normalise_name(other)) == given;
            };
            if (given.empty()) {
                result.problem = "expected a name, e.g. IBV_WC_SUCCESS";
                return result;
            }
            if (!part.among.empty() && !in_family(part.among, given)) {
                // The bank's own answers and wrong answers are always understood.
                bool listed = std::ranges::any_of(alternatives,
                                                  [&](const std::string& a) { return same(a); });
                for (const auto& note : part.wrong) {
                    for (const auto& value : split(substitute(note.value, values), '|')) {
                        listed = listed || same(value);
                    }
                }
                if (!listed) {
                    static const std::map<std::string, std::string> kinds = {
                        {"errno", "an errno name, e.g. EINVAL"},
                        {"wc-status", "a completion status, e.g. IBV_WC_SUCCESS"},
                        {"qp-state", "a QP state, e.g. RTS"},
                        {"port-state", "a port state, e.g. PORT_ACTIVE"}};
                    result.problem = "'" + result.given + "' is not " + kinds.at(part.among);
                    return result;
                }
            }
            result.parsed = true;
            result.score =
                std::ranges::any_of(alternatives, [&](const std::string& a) { return same(a); })
                    ? 1
                    : 0;
            if (result.score == 0) {
                for (const auto& note : part.wrong) {
                    const auto value = split(substitute(note.value, values), '|');
                    if (std::ranges::any_of(value, [&](const std::string& v) { return same(v); })) {
                        result.note = &note;
                        break;
                    }
                }
            }
            return result;
        }
        case Kind::choice: {
            std::string problem;
            const auto right = parse_letters(answer, part, problem);
            if (!right) {
                throw std::invalid_argument("the key '" + answer + "': " + problem);
            }
            result.expected = show_letters(*right);
            const auto given = parse_letters(input, part, problem);
            if (!given) {
                result.problem = problem + "; give the letter(s) of your choice, e.g. b or a c";
                return result;
            }
            result.parsed = true;
            result.given = show_letters(*given);
            // Each right letter chosen earns its share, each wrong one takes a share away.
            long hits = 0, misses = 0;
            for (const char c : *given) {
                (right->find(c) != std::string::npos ? hits : misses) += 1;
            }
            result.score = std::max(
                0.0, static_cast<double>(hits - misses) / static_cast<double>(right->size()));
            if (result.score < 1) {
                // The note for exactly this answer; else for one wrong letter in it.
                const WrongNote* single = nullptr;
                for (const auto& note : part.wrong) {
                    std::string ignored;
                    const auto letters = parse_letters(note.value, part, ignored);
                    if (!letters) {
                        continue;
                    }
                    if (*letters == *given) {
                        result.note = &note;
                        break;
                    }
                    if (!single && letters->size() == 1 &&
                        given->find((*letters)[0]) != std::string::npos &&
                        right->find((*letters)[0]) == std::string::npos) {
                        single = &note;
                    }
                }
                if (!result.note) {
                    result.note = single;
                }
            }
            return result;
        }
    }
    return result;
}

std::vector<std::optional<std::string>> keys_from_run(const Drawn& drawn, const Runner& runner) {
    const Question& question = *drawn.question;
    std::vector<std::optional<std::string>> keys(question.parts.size());
    if (!question.is_run()) {
        return keys;
    }
    const auto output = runner(substitute(question.run, drawn.values));
    if (!output) {
        return keys;
    }
    for (std::size_t i = 0; i < question.parts.size(); ++i) {
        const auto& read = question.parts[i].read;
        if (read.empty()) {
            continue;
        }
        std::smatch match;
        if (std::regex_search(*output, match, std::regex(substitute(read, drawn.values)))) {
            keys[i] = match[1].str();
        }
    }
    return keys;
}

double question_score(const Question& question, const std::vector<double>& part_scores) {
    if (part_scores.empty()) {
        return 0;
    }
    double sum = 0;
    for (const double score : part_scores) {
        sum += score;
    }
    return question.points * sum / static_cast<double>(part_scores.size());
}

std::string_view kind_name(Kind kind) {
    switch (kind) {
        case Kind::number:
            return "number";
        case Kind::name:
            return "name";
        case Kind::choice:
            return "choice";
    }
    return "?";
}

std::vector<std::string> lint_bank(const Bank& bank, const std::vector<std::string>& langs) {
    std::vector<std::string> problems;
    const auto at = [&](int line, const std::string& why) {
        problems.push_back(bank.file + ":" + std::to_string(line) + ": " + why);
    };
    for (const auto& lang : langs) {
        if (bank.title.by_lang.count(lang) == 0) {
            at(1, "the title has no '" + lang + "' line");
        }
    }
    for (const auto& q : bank.questions) {
        const auto need = [&](const Text& text, const std::string& what, int line) {
            for (const auto& lang : langs) {
                if (text.by_lang.count(lang) == 0) {
                    at(line, q.id + ": '" + what + "' has no '" + lang + "' line");
                }
            }
        };
        need(q.text, "text", q.line);
        need(q.explain, "explain", q.line);
        need(q.reread, "reread", q.line);
        for (const auto& part : q.parts) {
            if (q.parts.size() > 1) {
                need(part.prompt, "prompt", part.line);
            }
            for (const auto& [letter, text] : part.options) {
                need(text, std::string("option ") + letter, part.line);
            }
            for (const auto& note : part.wrong) {
                need(note.text, "wrong: " + note.value, part.line);
            }
            if (q.is_run() && part.read.empty()) {
                at(part.line, q.id + ": a part of a run question needs 'read:'");
            }
        }
        // Every value of every parameter (the others at their first value)
        // must give texts and keys that evaluate.
        std::vector<Values> variants{Values{}};
        for (const auto& param : q.params) {
            variants.front()[param.name] = param.at(0);
        }
        for (const auto& param : q.params) {
            for (std::uint64_t i = 1; i < param.count() && i < 1000; ++i) {
                Values values = variants.front();
                values[param.name] = param.at(i);
                variants.push_back(values);
            }
        }
        for (const auto& values : variants) {
            try {
                for (const auto& [lang, text] : q.text.by_lang) {
                    (void)substitute(text, values);
                }
                (void)substitute(q.run, values);
                for (const auto& part : q.parts) {
                    const auto result = check_part(part, values, "");
                    (void)result;
                    for (const auto& note : part.wrong) {
                        const auto value = substitute(note.value, values);
                        if (part.kind == Kind::number && !parse_number(value)) {
                            at(part.line, q.id + ": wrong value '" + value + "' is not a number");
                        }
                        if (part.kind == Kind::number &&
                            check_part(part, values, value).score > 0) {
                            at(part.line,
                               q.id + ": wrong value '" + value + "' is the right answer");
                        }
                    }
                }
            } catch (const std::exception& e) {
                at(q.line, q.id + " (" + Drawn{&q, values}.variant() + "): " + e.what());
                break;
            }
        }
    }
    return problems;
}

}  // namespace lab::quiz

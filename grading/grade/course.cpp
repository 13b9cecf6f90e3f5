// SPDX-License-Identifier: MIT
#include "course.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <set>
#include <sstream>

#include "lab/check.hpp"

namespace lab::grade {

namespace {

std::vector<std::string> words_of(std::string_view line) {
    std::vector<std::string> words;
    std::istringstream stream{std::string(line)};
    std::string word;
    while (stream >> word) {
        if (word.front() == '#') {
            break;
        }
        words.push_back(word);
    }
    return words;
}

std::vector<std::string_view> lines_of(std::string_view text) {
    std::vector<std::string_view> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        std::string_view line = text.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        lines.push_back(line);
        start = end + 1;
    }
    return lines;
}

std::optional<double> number_of(const std::string& word) {
    char* end = nullptr;
    const double value = std::strtod(word.c_str(), &end);
    if (word.empty() || end != word.c_str() + word.size() || !std::isfinite(value)) {
        return std::nullopt;
    }
    return value;
}

std::optional<int> whole_of(const std::string& word, int most) {
    if (word.empty() || word.size() > 4 ||
        !std::all_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return std::nullopt;
    }
    const int value = std::stoi(word);
    return value <= most ? std::optional<int>(value) : std::nullopt;
}

bool is_exercise_name(const std::string& name) {
    static const std::regex pattern("[0-9][0-9]_[a-z0-9_]+");
    return std::regex_match(name, pattern) && name != kReport;
}

bool is_quiz_name(const std::string& name) {
    static const std::regex pattern("quiz:[0-9][0-9]_[a-z0-9_]+");
    return std::regex_match(name, pattern);
}

// Days since 1970-01-01 of a civil date (proleptic Gregorian).
long long days_from_civil(long long year, unsigned month, unsigned day) {
    year -= month <= 2 ? 1 : 0;
    const long long era = (year >= 0 ? year : year - 399) / 400;
    const auto year_of_era = static_cast<unsigned>(year - era * 400);
    const unsigned day_of_year = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
    const unsigned day_of_era =
        year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    return era * 146097 + static_cast<long long>(day_of_era) - 719468;
}

unsigned days_in_month(long long year, unsigned month) {
    static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : kDays[month - 1];
}

std::string days_text(int days) {
    return std::to_string(days) + (days == 1 ? " day" : " days");
}

}  // namespace

std::optional<Seconds> parse_iso8601(std::string_view text) {
    static const std::regex pattern(
        R"((\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?(Z|([+-])(\d{2}):(\d{2})))");
    std::match_results<std::string_view::const_iterator> match;
    if (!std::regex_match(text.begin(), text.end(), match, pattern)) {
        return std::nullopt;
    }
    const auto field = [&](int i) { return match[i].matched ? std::stoi(match[i].str()) : 0; };
    const long long year = field(1);
    const auto month = static_cast<unsigned>(field(2));
    const auto day = static_cast<unsigned>(field(3));
    const int hour = field(4), minute = field(5), second = field(6);
    if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) || hour > 23 ||
        minute > 59 || second > 59) {
        return std::nullopt;
    }
    Seconds offset = 0;
    if (match[7].str() != "Z") {
        if (field(9) > 23 || field(10) > 59) {
            return std::nullopt;
        }
        offset = (field(9) * 3600LL + field(10) * 60LL) * (match[8].str() == "-" ? -1 : 1);
    }
    return days_from_civil(year, month, day) * 86400 + hour * 3600LL + minute * 60LL + second -
           offset;
}

int days_late(Seconds submitted, Seconds deadline) {
    if (submitted <= deadline) {
        return 0;
    }
    return static_cast<int>((submitted - deadline + 86399) / 86400);
}

CourseConf CourseConf::parse(std::string_view text, const std::string& file,
                             const std::vector<std::string>* known) {
    CourseConf conf;
    std::map<int, std::vector<std::pair<std::string, double>>> weights;
    std::set<std::string> seen_keys;
    std::size_t syllabus_line = 0;
    std::size_t number = 0;
    const auto fail = [&](const std::string& what) {
        throw lab::Error(file + ":" + std::to_string(number) + ": " + what);
    };
    // An exercise or a lesson's quiz of another course: refused when the course's are known.
    const auto check_known = [&](const std::string& name) {
        const std::string folder = is_quiz_name(name)       ? name.substr(kQuizPrefix.size())
                                   : is_exercise_name(name) ? name
                                                            : "";
        if (known && !folder.empty() &&
            std::find(known->begin(), known->end(), folder) == known->end()) {
            fail("'" + name + "': the course has no " +
                 (is_quiz_name(name) ? "lesson " : "exercise ") + folder);
        }
    };
    const auto once = [&](const std::string& key) {
        if (!seen_keys.insert(key).second) {
            fail("a second '" + key + "' line");
        }
    };
    for (const std::string_view line : lines_of(text)) {
        ++number;
        const auto words = words_of(line);
        if (words.empty()) {
            continue;
        }
        const std::string& key = words[0];
        const auto expect = [&](std::size_t count, const char* form) {
            if (words.size() != count) {
                fail("expected '" + std::string(form) + "'");
            }
        };
        if (key == "syllabus") {
            expect(2, "syllabus 10|12|14");
            once(key);
            if (words[1] != "10" && words[1] != "12" && words[1] != "14") {
                fail("the syllabus is 10, 12 or 14 (weeks), not '" + words[1] + "'");
            }
            conf.syllabus = std::stoi(words[1]);
            syllabus_line = number;
        } else if (key == "weight") {
            expect(4, "weight 10|12|14 ASSIGNMENT PERCENT");
            if (words[1] != "10" && words[1] != "12" && words[1] != "14") {
                fail("a weight is for syllabus 10, 12 or 14, not '" + words[1] + "'");
            }
            const std::string& name = words[2];
            if (!is_exercise_name(name) && !is_quiz_name(name) && name != kReport &&
                name != kProject && name != kQuizzes) {
                fail("'" + name + "' is no assignment: an exercise (02_ud_ping), 01_report, " +
                     "project, quizzes or quiz:NN_name");
            }
            check_known(name);
            const auto percent = number_of(words[3]);
            if (!percent || *percent < 0 || *percent > 100) {
                fail("'" + words[3] + "' is not a percent (0 to 100)");
            }
            auto& list = weights[std::stoi(words[1])];
            for (const auto& [other, weight] : list) {
                if (other == name) {
                    fail("a second weight of " + name + " for syllabus " + words[1]);
                }
                if ((other == kQuizzes && is_quiz_name(name)) ||
                    (name == kQuizzes && is_quiz_name(other))) {
                    fail(
                        "weigh the quizzes as one column (quizzes) or per lesson (quiz:NN_name), "
                        "not both");
                }
            }
            list.emplace_back(name, *percent);
            double sum = 0;
            for (const auto& entry : list) {
                sum += entry.second;
            }
            if (sum > 100 + 1e-9) {
                fail("the weights of syllabus " + words[1] + " add up to " + points_text(sum) +
                     ", above 100");
            }
        } else if (key == "deadline") {
            expect(3, "deadline ASSIGNMENT 2027-03-14T23:59:00+08:00");
            const std::string& name = words[1];
            if (!is_exercise_name(name) && !is_quiz_name(name) && name != kReport &&
                name != kProject) {
                fail("'" + name + "' is no assignment with a deadline: an exercise (02_ud_ping), " +
                     "01_report, project or quiz:NN_name");
            }
            check_known(name);
            const auto moment = parse_iso8601(words[2]);
            if (!moment) {
                fail("'" + words[2] +
                     "' is not a date and time with its offset, such as 2027-03-14T23:59:00+08:00");
            }
            if (!conf.deadlines.emplace(name, *moment).second) {
                fail("a second deadline of " + name);
            }
        } else if (key == "late-days" || key == "late-limit") {
            expect(2, key == "late-days" ? "late-days DAYS" : "late-limit DAYS");
            once(key);
            const auto days = whole_of(words[1], 365);
            if (!days) {
                fail("'" + words[1] + "' is not a whole number of days (0 to 365)");
            }
            (key == "late-days" ? conf.late.free_days : conf.late.limit) = *days;
        } else if (key == "late-penalty") {
            expect(2, "late-penalty POINTS");
            once(key);
            const auto points = number_of(words[1]);
            if (!points || *points < 0 || *points > 100) {
                fail("'" + words[1] + "' is not a number of points of 100 (0 to 100)");
            }
            conf.late.penalty = *points;
        } else if (key == "scores") {
            expect(3, "scores 01_report|project FILE");
            if (words[1] != kReport && words[1] != kProject) {
                fail("hand-entered scores are for 01_report or project, not '" + words[1] + "'");
            }
            if (!conf.score_files.emplace(words[1], words[2]).second) {
                fail("a second scores file for " + words[1]);
            }
        } else if (key == "term-salt") {
            expect(2, "term-salt WORD");
            once(key);
            conf.term_salt = words[1];
        } else {
            fail("unknown line '" + key +
                 "' (syllabus, weight, deadline, late-days, late-penalty, late-limit, scores, "
                 "term-salt)");
        }
    }
    if (conf.syllabus == 0) {
        number = 0;
        fail("no 'syllabus 10|12|14' line");
    }
    if (weights[conf.syllabus].empty()) {
        number = syllabus_line;
        fail("syllabus " + std::to_string(conf.syllabus) + " has no weight lines");
    }
    conf.weights = weights[conf.syllabus];
    return conf;
}

double CourseConf::weight(const std::string& assignment) const {
    for (const auto& [name, percent] : weights) {
        if (name == assignment) {
            return percent;
        }
    }
    return 0;
}

double CourseConf::total_weight() const {
    double sum = 0;
    for (const auto& entry : weights) {
        sum += entry.second;
    }
    return sum;
}

bool CourseConf::quizzes_per_lesson() const {
    return std::any_of(weights.begin(), weights.end(),
                       [](const auto& entry) { return is_quiz_name(entry.first); });
}

std::map<std::string, CommitTime> parse_commits(std::string_view text) {
    std::map<std::string, CommitTime> commits;
    for (const std::string_view line : lines_of(text)) {
        const std::size_t first = line.find('\t');
        if (first == std::string_view::npos) {
            continue;
        }
        const std::size_t second = line.find('\t', first + 1);
        const std::string seconds(line.substr(first + 1, second == std::string_view::npos
                                                             ? std::string_view::npos
                                                             : second - first - 1));
        CommitTime commit;
        if (!seconds.empty()) {
            char* end = nullptr;
            const long long moment = std::strtoll(seconds.c_str(), &end, 10);
            if (end == seconds.c_str() + seconds.size()) {
                commit.time = moment;
            }
        }
        if (second != std::string_view::npos) {
            commit.note = clean_text(line.substr(second + 1), 200);
        }
        commits[std::string(line.substr(0, first))] = commit;
    }
    return commits;
}

std::vector<QuizScore> parse_quizzes(std::string_view text) {
    std::vector<QuizScore> scores;
    std::size_t number = 0;
    for (const std::string_view line : lines_of(text)) {
        ++number;
        if (line.empty()) {
            continue;
        }
        std::vector<std::string> fields;
        std::size_t start = 0;
        while (true) {
            const std::size_t tab = line.find('\t', start);
            fields.emplace_back(
                line.substr(start, tab == std::string_view::npos ? tab : tab - start));
            if (tab == std::string_view::npos) {
                break;
            }
            start = tab + 1;
        }
        const auto score = fields.size() == 3 ? number_of(fields[1]) : std::nullopt;
        const auto max = fields.size() == 3 ? number_of(fields[2]) : std::nullopt;
        if (!score || !max || *score < 0 || *max <= 0 || *score > *max) {
            throw lab::Error("quizzes.tsv, line " + std::to_string(number) +
                             ": expected 'NN_name<TAB>score<TAB>max'");
        }
        scores.push_back({fields[0], *score, *max});
    }
    return scores;
}

std::map<std::string, double> parse_scores_csv(std::string_view text, const std::string& file) {
    std::map<std::string, double> scores;
    std::size_t number = 0;
    for (const std::string_view raw : lines_of(text)) {
        ++number;
        std::string line(raw);
        line.erase(std::remove_if(line.begin(), line.end(),
                                  [](char c) { return c == ' ' || c == '\t' || c == '"'; }),
                   line.end());
        if (line.empty() || (number == 1 && line.rfind("student,", 0) == 0)) {
            continue;
        }
        const std::size_t comma = line.find(',');
        const std::string name = line.substr(0, comma);
        const auto score =
            comma == std::string::npos ? std::nullopt : number_of(line.substr(comma + 1));
        if (name.empty() || !score || *score < 0 || *score > 100) {
            throw lab::Error(file + ":" + std::to_string(number) +
                             ": expected 'student,score' with a score from 0 to 100");
        }
        if (!scores.emplace(name, *score).second) {
            throw lab::Error(file + ":" + std::to_string(number) + ": a second score for " + name);
        }
    }
    return scores;
}

std::vector<std::string> other_columns(const CourseConf& conf) {
    std::vector<std::string> columns{std::string(kReport)};
    if (conf.weight(std::string(kProject)) > 0 || conf.score_files.count(std::string(kProject))) {
        columns.emplace_back(kProject);
    }
    if (conf.quizzes_per_lesson()) {
        for (const auto& entry : conf.weights) {
            if (is_quiz_name(entry.first)) {
                columns.push_back(entry.first);
            }
        }
    } else {
        columns.emplace_back(kQuizzes);
    }
    return columns;
}

GradebookRow gradebook_row(const CourseConf& conf, const StudentOutcome& student,
                           const StudentRecord& record) {
    GradebookRow row{student.name, {}, {}, 0, conf.late.free_days, 0, record.notes};
    for (const auto& exercise : student.exercises) {
        row.exercises.push_back({exercise.name, exercise.points(), exercise.max_points(),
                                 exercise.points(), 0, 0, false});
    }

    // What the commit times say, one note per kind ("no git history: ...").
    std::map<std::string, std::string> said;  // note -> exercise numbers
    for (const auto& exercise : row.exercises) {
        const auto commit = record.commits.find(exercise.name);
        if (commit != record.commits.end() && !commit->second.note.empty()) {
            std::string& numbers = said[commit->second.note];
            numbers += (numbers.empty() ? "" : ", ") + exercise.name.substr(0, 2);
        }
    }
    for (const auto& [note, numbers] : said) {
        row.notes.push_back(note + " (" + numbers + ")");
    }

    // The late rule, deadline by deadline: free days first, then the penalty, past the limit 0.
    std::vector<ExerciseRow*> dated;
    for (auto& exercise : row.exercises) {
        const auto commit = record.commits.find(exercise.name);
        if (conf.deadlines.count(exercise.name) && commit != record.commits.end() &&
            commit->second.time) {
            exercise.days_late = days_late(*commit->second.time, conf.deadlines.at(exercise.name));
            exercise.dated = true;
            dated.push_back(&exercise);
        }
    }
    std::stable_sort(dated.begin(), dated.end(), [&](const ExerciseRow* a, const ExerciseRow* b) {
        return conf.deadlines.at(a->name) < conf.deadlines.at(b->name);
    });
    for (ExerciseRow* exercise : dated) {
        const int late = exercise->days_late;
        if (late == 0) {
            continue;
        }
        const std::string prefix = exercise->name.substr(0, 2) + ": " + days_text(late) + " late";
        if (late > conf.late.limit) {
            exercise->score = 0;
            row.notes.push_back(prefix + ", past the limit of " + days_text(conf.late.limit) +
                                ": scored 0");
            continue;
        }
        exercise->free_days = std::min(late, row.free_days_left);
        row.free_days_left -= exercise->free_days;
        row.free_days_used += exercise->free_days;
        const int charged = late - exercise->free_days;
        const double penalty = conf.late.penalty / 100 * exercise->max * charged;
        exercise->score = std::max(0.0, exercise->checks - penalty);
        row.notes.push_back(prefix + ": " + std::to_string(exercise->free_days) + " free" +
                            (charged > 0 ? ", " + std::to_string(charged) + " at -" +
                                               points_text(conf.late.penalty / 100 * exercise->max)
                                         : std::string()));
    }

    for (const std::string& column : other_columns(conf)) {
        std::optional<double> value;
        if (column == kQuizzes || is_quiz_name(column)) {
            if (record.quizzes) {
                double score = 0, max = 0;
                for (const QuizScore& quiz : *record.quizzes) {
                    if (column == kQuizzes || "quiz:" + quiz.quiz == column) {
                        score += quiz.score;
                        max += quiz.max;
                    }
                }
                if (max > 0) {
                    value = 100 * score / max;
                }
            }
        } else if (const auto hand = record.hand.find(column); hand != record.hand.end()) {
            value = hand->second;
        }
        row.other[column] = value;
    }

    for (const auto& exercise : row.exercises) {
        if (exercise.max > 0) {
            row.total += conf.weight(exercise.name) * exercise.score / exercise.max;
        }
    }
    for (const auto& [column, value] : row.other) {
        row.total += conf.weight(column) * value.value_or(0) / 100;
    }
    return row;
}

std::string csv_cell(const std::string& text) {
    if (text.find_first_of(",\"\n") == std::string::npos) {
        return text;
    }
    std::string quoted = "\"";
    for (const char c : text) {
        quoted += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
    }
    return quoted + "\"";
}

std::string course_gradebook_csv(const CourseConf& conf, const std::vector<Exercise>& course,
                                 const std::vector<GradebookRow>& rows) {
    const auto others = other_columns(conf);
    std::string csv = "student";
    for (const Exercise& exercise : course) {
        csv += "," + exercise.name + "," + exercise.name + ":late";
    }
    for (const std::string& column : others) {
        csv += "," + column;
    }
    csv += ",late_days_used,late_days_left,total,notes\n";
    for (const GradebookRow& row : rows) {
        csv += row.student;  // names are [A-Za-z0-9._-] (grading/grade.sh)
        for (const Exercise& exercise : course) {
            const auto found = std::find_if(row.exercises.begin(), row.exercises.end(),
                                            [&](const auto& e) { return e.name == exercise.name; });
            if (found == row.exercises.end()) {
                csv += ",,";
                continue;
            }
            csv += "," + points_text(found->score) + "," +
                   (found->dated ? std::to_string(found->days_late) : std::string());
        }
        for (const std::string& column : others) {
            const auto value = row.other.find(column);
            csv += "," + (value != row.other.end() && value->second ? points_text(*value->second)
                                                                    : std::string());
        }
        std::string notes;
        for (const std::string& note : row.notes) {
            notes += (notes.empty() ? "" : "; ") + note;
        }
        csv += "," + std::to_string(row.free_days_used) + "," + std::to_string(row.free_days_left) +
               "," + points_text(row.total) + "," + csv_cell(notes) + "\n";
    }
    return csv;
}

std::string course_table(const CourseConf& conf, const std::vector<Exercise>& course,
                         const std::vector<StudentOutcome>& students,
                         const std::vector<GradebookRow>& rows) {
    const auto pad = [](std::string text, std::size_t width) {
        text.resize(std::max(text.size() + 1, width), ' ');
        return text;
    };
    const auto others = other_columns(conf);
    const auto short_name = [](const std::string& column) {
        return column == kReport    ? std::string("rep")
               : column == kProject ? std::string("proj")
               : column == kQuizzes ? std::string("quiz")
                                    : "q" + column.substr(kQuizPrefix.size(), 2);
    };
    std::size_t name_width = 9;
    for (const auto& row : rows) {
        name_width = std::max(name_width, row.student.size() + 2);
    }
    std::string table = pad("student", name_width);
    for (const Exercise& exercise : course) {
        table += pad(exercise.name.substr(0, 2), 9);
    }
    for (const std::string& column : others) {
        table += pad(short_name(column), 6);
    }
    table += pad("late", 6) + pad("left", 6) + "total\n";
    for (const GradebookRow& row : rows) {
        table += pad(row.student, name_width);
        for (const auto& exercise : row.exercises) {
            table +=
                pad(points_text(exercise.score) +
                        (exercise.days_late > 0 ? "/" + std::to_string(exercise.days_late) + "d"
                                                : std::string()),
                    9);
        }
        for (const std::string& column : others) {
            const auto value = row.other.find(column);
            table += pad(value != row.other.end() && value->second ? points_text(*value->second)
                                                                   : std::string("-"),
                         6);
        }
        table += pad(std::to_string(row.free_days_used), 6) +
                 pad(std::to_string(row.free_days_left), 6) + points_text(row.total) + "\n";
    }
    table += "\n";
    for (const Exercise& exercise : course) {
        table += "  " + exercise.name.substr(0, 2) + " = " + exercise.name + "\n";
    }
    table += "  80/2d: 80 points after the late rule, handed in 2 days late; rep, " +
             std::string(conf.quizzes_per_lesson() ? "qNN" : "quiz") +
             ": percent; late, left: free late days used and left of " +
             std::to_string(conf.late.free_days) + "; total: weighted by syllabus " +
             std::to_string(conf.syllabus) + ", out of " + points_text(conf.total_weight()) +
             " (grading/course.conf)\n";
    bool any = false;
    for (std::size_t i = 0; i < students.size() && i < rows.size(); ++i) {
        for (std::size_t e = 0; e < students[i].exercises.size(); ++e) {
            const auto& exercise = students[i].exercises[e];
            if (exercise.points() == 0 && exercise.max_points() > 0) {
                if (!any) {
                    table += "\nExercises that scored 0:\n";
                    any = true;
                }
                table += "  " + students[i].name + ", " + exercise.name + ": " +
                         clean_text(exercise.summary(), 240) + "\n";
            }
        }
    }
    any = false;
    for (const GradebookRow& row : rows) {
        for (const std::string& note : row.notes) {
            if (!any) {
                table += "\nNotes:\n";
                any = true;
            }
            table += "  " + row.student + ": " + note + "\n";
        }
    }
    return table;
}

}  // namespace lab::grade

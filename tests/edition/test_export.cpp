// SPDX-License-Identifier: MIT
// What ./lab export writes (grading/export.sh), read file by file: the
// student edition keeps the course and leaves out the solutions, the
// instructor's own checks and guide, and everything built on the solutions;
// its README is the students'; no student-facing text points at solutions/;
// no line of a reference solution appears anywhere in it; and no answer the
// instructor keeps apart (docs/instructor/exercise-answers.md) does either,
// nor a deck's speaker note marked for the instructor, nor any part of a
// graded quiz's key (grading/quizzes/). The GitHub Classroom edition is the
// same with the workflow in .github/workflows/.
// (tests/edition/fresh-clone-test.sh builds, runs, tests and grades a fresh
// clone of both.)
//
// A line of a solution counts only if it says something of the solution. It
// does not when, trimmed of blanks, it
//   - has fewer than 12 letters, digits or underscores (`{`, `});`, `++i;`,
//     `return rkey;`, `break;`): such lines are in any C++ file;
//   - is a preprocessor line (#include, #pragma): it names a header the
//     skeleton or the standard library has;
//   - is a line of the exercise's own folder (the skeleton, the given code,
//     the header): the student has it already;
//   - is a line, or a part of a line, of the code the edition must carry and
//     a student reads anyway: the lessons, common/, the exercises' code,
//     grading/ and the visible checks (tests/exercises/). The checks play the peer of the
//     student's program and set up by themselves what each check needs, so
//     they make the same verbs calls (a UD QP brought to RTS, a window
//     bound): a course that judges from outside cannot hide those.
// Every other line of every solution must appear nowhere in the edition, not
// even inside a longer line (a slide's code block, a README's quote).
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "grading/text_files.hpp"
#include "quiz.hpp"
#include "support/catch.hpp"
#include "support/process.hpp"

namespace fs = std::filesystem;

using lab::test::read_text;

namespace {

const fs::path kSource = LAB_SOURCE_DIR;
const fs::path kWork = fs::path(LAB_BUILD_DIR) / "tests" / "edition";

std::string trimmed(const std::string& line) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) {
        return "";
    }
    return line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
}

std::vector<std::string> text_lines(const fs::path& path) {
    std::vector<std::string> lines;
    std::string line;
    for (const char c : read_text(path) + "\n") {
        if (c == '\n') {
            lines.push_back(line);
            line.clear();
        } else {
            line += c;
        }
    }
    return lines;
}

bool says_nothing(const std::string& line) {
    const auto word_characters = std::count_if(line.begin(), line.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
    });
    return word_characters < 12 || line.rfind('#', 0) == 0;
}

bool is_code(const fs::path& path) {
    const std::string extension = path.extension().string();
    return extension == ".cpp" || extension == ".hpp";
}

// Every code file under @p folder (only its own files when not @p recursive), appended.
void add_code(const fs::path& folder, bool recursive, std::string& code) {
    const auto add = [&](const fs::directory_entry& entry) {
        if (entry.is_regular_file() && is_code(entry.path())) {
            code += read_text(entry.path()) + "\n";
        }
    };
    if (recursive) {
        std::for_each(fs::recursive_directory_iterator(folder), fs::recursive_directory_iterator(),
                      add);
    } else {
        std::for_each(fs::directory_iterator(folder), fs::directory_iterator(), add);
    }
}

// Every file of @p root (but .git), relative to it.
std::vector<std::string> files_of(const fs::path& root) {
    std::vector<std::string> files;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
         ++it) {
        if (it->path().filename() == ".git") {
            it.disable_recursion_pending();
            continue;
        }
        if (it->is_regular_file()) {
            files.push_back(fs::relative(it->path(), root).string());
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

// ./lab export --MODE into a fresh folder of this build; the folder.
// Exports the @p mode edition into its own @p folder: ctest runs the test cases
// of this file two at a time, and two exports into one folder would collide.
fs::path exported(const std::string& mode, const std::string& folder) {
    const fs::path out = kWork / folder;
    fs::remove_all(out);
    const auto run =
        lab::test::run({(kSource / "lab").string(), "export", "--" + mode, out.string()},
                       std::chrono::seconds(300));
    INFO(run.out << run.err);
    REQUIRE(run.exit_code == 0);
    REQUIRE(run.out.find("export: the " + mode + " edition is in " + out.string()) !=
            std::string::npos);
    return out;
}

}  // namespace

TEST_CASE("the student edition keeps the course and leaves out what is the instructor's",
          "[edition]") {
    const fs::path edition = exported("student", "student-kept");
    const auto files = files_of(edition);
    const std::set<std::string> present(files.begin(), files.end());
    for (const std::string kept :
         {"lab", ".ci/run", "CMakeLists.txt", "LICENSE", "LICENSE-docs", "THIRD-PARTY.md",
          "lessons/01_devices/main.cpp", "common/lab/verbs.hpp",
          "exercises/01_noncontiguous_sge/sge.cpp", "exercises/README.md",
          "tests/exercises/check_05_fix_the_connection.cpp",
          "tests/exercises/subject_05_fix_the_connection.cpp", "grading/grade.sh",
          "grading/points.conf", "slides/ex01_noncontiguous_sge.md", "docs/Doxyfile",
          "bench/run.sh", "quizzes/03_completion_queue.quiz", "tools/quiz/quiz.hpp"}) {
        INFO(kept);
        CHECK(present.count(kept) == 1);
    }
    CHECK(fs::is_directory(edition / ".git"));
    static const std::regex left_out(
        R"(^(solutions/|tests/exercises/hidden/|docs/instructor(\.md$|\.zh-CN\.md$|/)|bench/grade-class\.sh$|tests/grading/similarity/|README\.student(\.zh-CN)?\.md$|build/))");
    for (const auto& file : files) {
        INFO(file);
        CHECK_FALSE(std::regex_search(file, left_out));
    }
    // The skeletons as they are in the course, not finished.
    CHECK(read_text(edition / "exercises/01_noncontiguous_sge/sge.cpp") ==
          read_text(kSource / "exercises/01_noncontiguous_sge/sge.cpp"));

    // The students' README and its Chinese twin, their twin links pointing at
    // each other under their new names, and the row that records what the
    // twin is in step with; no student-facing text that points at the solutions.
    const auto renamed = [](std::string text, const std::string& from, const std::string& to) {
        for (auto at = text.find(from); at != std::string::npos;
             at = text.find(from, at + to.size())) {
            text.replace(at, from.size(), to);
        }
        return text;
    };
    CHECK(read_text(edition / "README.md") == renamed(read_text(kSource / "README.student.md"),
                                                      "(README.student.zh-CN.md)",
                                                      "(README.zh-CN.md)"));
    const bool chinese = fs::exists(kSource / "README.student.zh-CN.md");
    CHECK(fs::exists(edition / "README.zh-CN.md") == chinese);
    if (chinese) {
        CHECK(read_text(edition / "README.zh-CN.md") ==
              renamed(read_text(kSource / "README.student.zh-CN.md"), "(README.student.md)",
                      "(README.md)"));
    }
    const std::string twins = read_text(edition / "docs/twins.md");
    CHECK(twins.find("| `README.student.md` |") == std::string::npos);
    const std::regex student_row(
        R"(\| `README\.student\.md` \| `README\.student\.zh-CN\.md` \| ([^|]*) \| ([^|]*) \|)");
    std::smatch row;
    const std::string source_twins = read_text(kSource / "docs/twins.md");
    REQUIRE(std::regex_search(source_twins, row, student_row));
    CHECK(twins.find("| `README.md` | `README.zh-CN.md` | " + row[1].str() + " | " + row[2].str() +
                     " |") != std::string::npos);
    for (const auto& file : files) {
        const bool student_facing =
            fs::path(file).extension() == ".md" || file.rfind("lessons/", 0) == 0 ||
            file.rfind("exercises/", 0) == 0 || file.rfind("slides/", 0) == 0;
        if (!student_facing) {
            continue;
        }
        INFO(file);
        const std::string text = read_text(edition / file);
        CHECK(text.find("solutions/") == std::string::npos);
        CHECK(text.find("sol0") == std::string::npos);  // solution programs: sol01_...
    }
    // Every lesson and exercise is linked from the students' README.
    const std::string readme = read_text(edition / "README.md");
    for (const std::string folder : {"lessons", "exercises"}) {
        for (const auto& entry : fs::directory_iterator(kSource / folder)) {
            if (entry.is_directory()) {
                INFO(entry.path());
                CHECK(readme.find("(" + folder + "/" + entry.path().filename().string() +
                                  "/README.md)") != std::string::npos);
            }
        }
    }
    // The instructor's own checks: neither their files nor their names.
    for (const auto& entry : fs::directory_iterator(edition / "tests/exercises")) {
        INFO(entry.path());
        CHECK(read_text(entry.path()).find("TEST_CASE(\"hidden:") == std::string::npos);
    }
}

TEST_CASE("no line of a reference solution appears in the student edition", "[edition]") {
    const fs::path edition = exported("student", "student-no-solution");
    std::string shipped_code;  // what a student reads anyway (see the top)
    for (const std::string folder : {"lessons", "common", "exercises", "grading"}) {
        add_code(kSource / folder, true, shipped_code);
    }
    add_code(kSource / "tests/exercises", false, shipped_code);  // not hidden/
    // The course's own test code, shipped too: a line it shares with a solution
    // is an idiom (a deadline, a poll), not the solution's answer.
    add_code(kSource / "tests/support", false, shipped_code);
    add_code(kSource / "tests/vm", false, shipped_code);
    // The edition's text, file by file (binary files are skipped).
    std::vector<std::pair<std::string, std::string>> texts;
    for (const auto& file : files_of(edition)) {
        std::string text = read_text(edition / file);
        if (text.find('\0') == std::string::npos) {
            texts.emplace_back(file, std::move(text));
        }
    }
    REQUIRE(texts.size() > 100);
    std::size_t looked_for = 0;
    std::vector<std::string> found;
    for (const auto& entry : fs::recursive_directory_iterator(kSource / "solutions")) {
        if (!entry.is_regular_file() || !is_code(entry.path())) {
            continue;
        }
        for (const auto& raw : text_lines(entry.path())) {
            const std::string line = trimmed(raw);
            if (says_nothing(line) || shipped_code.find(line) != std::string::npos) {
                continue;
            }
            ++looked_for;
            for (const auto& [file, text] : texts) {
                if (text.find(line) != std::string::npos) {
                    found.push_back(fs::relative(entry.path(), kSource).string() + ": \"" + line +
                                    "\" is in " + file);
                }
            }
        }
    }
    std::string listing;
    for (const auto& hit : found) {
        listing += hit + "\n";
    }
    INFO(listing);
    CHECK(found.empty());
    // Most of a solution is its own (276 of the 695 lines of the seven): a
    // filter that let everything through would show here.
    CHECK(looked_for > 200);
}

namespace {

// @p text with every run of blanks and line breaks made one space, and the
// Markdown marks that a copy may drop (` and *) left out.
std::string normalized(const std::string& text) {
    std::string out;
    bool blank = false;
    for (const char c : text) {
        if (c == '`' || c == '*') {
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            blank = true;
            continue;
        }
        if (blank && !out.empty()) {
            out += ' ';
        }
        blank = false;
        out += c;
    }
    return out;
}

// The prose of a Markdown page (no code blocks, headings, tables, comments or
// twin links), cut into sentences and clauses: at ". ", "; " and ": ", and at
// the Chinese 。；：. Only pieces of 40 bytes or more: shorter ones may be
// anywhere.
std::vector<std::string> prose_pieces(const fs::path& page) {
    std::string prose;
    bool fenced = false;
    for (const auto& line : text_lines(page)) {
        const std::string text = trimmed(line);
        if (text.rfind("```", 0) == 0) {
            fenced = !fenced;
            continue;
        }
        if (fenced || text.rfind("#", 0) == 0 || text.rfind("|", 0) == 0 ||
            text.rfind("<!--", 0) == 0 || text.find("[中文]") != std::string::npos ||
            text.find("[English]") != std::string::npos) {
            prose += "\n";
            continue;
        }
        prose += (text.rfind("- ", 0) == 0 ? text.substr(2) : text) + "\n";
    }
    std::string all = normalized(prose) + " ";
    std::vector<std::string> pieces;
    std::string piece;
    const auto cut = [&] {
        const std::string kept = trimmed(piece);
        if (kept.size() >= 40) {
            pieces.push_back(kept);
        }
        piece.clear();
    };
    static const std::vector<std::string> chinese_stops = {"。", "；", "："};
    for (std::size_t at = 0; at < all.size(); ++at) {
        const char c = all[at];
        if ((c == '.' || c == ';' || c == ':') && all[at + 1] == ' ') {
            cut();
            continue;
        }
        const auto stop = std::find_if(
            chinese_stops.begin(), chinese_stops.end(),
            [&](const std::string& mark) { return all.compare(at, mark.size(), mark) == 0; });
        if (stop != chinese_stops.end()) {
            cut();
            at += stop->size() - 1;
            continue;
        }
        piece += c;
    }
    cut();
    return pieces;
}

}  // namespace

TEST_CASE("the student edition gives no exercise's answer away", "[edition]") {
    const fs::path edition = exported("student", "student-no-answers");
    // The instructor's page of answers stays out, in both languages...
    CHECK_FALSE(fs::exists(edition / "docs/instructor/exercise-answers.md"));
    CHECK_FALSE(fs::exists(edition / "docs/instructor/exercise-answers.zh-CN.md"));
    // ...and so does every sentence of it: in a deck's notes, a README, anywhere.
    std::vector<std::string> answers;
    for (const std::string page : {"exercise-answers.md", "exercise-answers.zh-CN.md"}) {
        const auto pieces = prose_pieces(kSource / "docs/instructor" / page);
        INFO(page);
        CHECK(pieces.size() >= 25);  // a cutter that found nothing would show here
        answers.insert(answers.end(), pieces.begin(), pieces.end());
    }
    std::vector<std::string> found;
    static const std::regex comment(R"(<!--([\s\S]*?)-->)");
    static const std::regex marked(
        R"(^\s*answers?\b|for the instructor|instructor[- ]only|answer key|给教师|仅供教师|仅限教师)",
        std::regex::icase);
    for (const auto& file : files_of(edition)) {
        const std::string raw = read_text(edition / file);
        if (raw.find('\0') != std::string::npos) {
            continue;  // binary
        }
        const std::string text = normalized(raw);
        for (const auto& answer : answers) {
            if (text.find(answer) != std::string::npos) {
                found.push_back(file + " gives the answer \"" + answer + "\"");
            }
        }
        // No deck keeps a speaker note meant for the instructor alone.
        if (file.rfind("slides/", 0) == 0 && fs::path(file).extension() == ".md") {
            for (auto it = std::sregex_iterator(raw.begin(), raw.end(), comment);
                 it != std::sregex_iterator(); ++it) {
                const std::string note = (*it)[1].str();
                if (std::regex_search(note, marked)) {
                    found.push_back(file + " has a note for the instructor: " + normalized(note));
                }
            }
        }
    }
    std::string listing;
    for (const auto& hit : found) {
        listing += hit + "\n";
    }
    INFO(listing);
    CHECK(found.empty());
}

TEST_CASE("the GitHub Classroom edition is the student edition with the workflow", "[edition]") {
    const fs::path classroom = exported("classroom", "classroom");
    CHECK(read_text(classroom / ".github/workflows/classroom.yml") ==
          read_text(kSource / "grading/github-classroom/classroom.yml"));
    CHECK_FALSE(fs::exists(classroom / "solutions"));
    CHECK_FALSE(fs::exists(classroom / "tests/exercises/hidden"));
    // What the workflow's grader takes from the repository: the files each
    // exercise names, in exercises/NN_name/ (one level down, as intake.sh reads it).
    for (const std::string file : {"exercises/01_noncontiguous_sge/sge.cpp",
                                   "exercises/05_fix_the_connection/connection.cpp",
                                   "exercises/07_memory_window/window.cpp"}) {
        INFO(file);
        CHECK(fs::exists(classroom / file));
    }
    const auto student = files_of(exported("student", "student-beside-classroom"));
    auto with_workflow = files_of(classroom);
    with_workflow.erase(
        std::remove(with_workflow.begin(), with_workflow.end(), ".github/workflows/classroom.yml"),
        with_workflow.end());
    CHECK(with_workflow == student);
    // A second export into a folder that is not empty is refused.
    const auto again =
        lab::test::run({(kSource / "lab").string(), "export", "--student", classroom.string()});
    CHECK(again.exit_code == 2);
    CHECK(again.err.find("is not empty") != std::string::npos);
}

namespace {}  // namespace

TEST_CASE("the student edition holds no graded quiz's key", "[edition]") {
    // The instructor's banks (grading/quizzes) stay out; their papers
    // (quizzes/graded) go, and no explanation, wrong-answer note or answer
    // line of a graded bank is anywhere in the edition.
    const fs::path edition = exported("student", "student-no-quiz-key");
    std::vector<std::string> pieces;  // squashed
    std::set<std::string> ids;
    std::size_t banks = 0;
    for (const auto& entry : fs::directory_iterator(kSource / "grading/quizzes")) {
        if (entry.path().extension() != ".quiz") {
            continue;
        }
        ++banks;
        const lab::quiz::Bank bank = lab::quiz::load_bank(entry.path().string());
        INFO(bank.quiz);
        CHECK(fs::exists(edition / "quizzes/graded" / (bank.quiz + ".paper")));
        // A text's longest stretch outside its {expressions}, if it has 60
        // characters or more: long enough to be found only where the bank's
        // text went (a shorter phrase may well be in the lesson it explains).
        const auto stretches = [&](const lab::quiz::Text& text) {
            for (const auto& [lang, value] : text.by_lang) {
                std::string piece, longest;
                int depth = 0;
                const auto characters = [](const std::string& bytes) {
                    return std::ranges::count_if(bytes, [](char b) {
                        return (static_cast<unsigned char>(b) & 0xC0) != 0x80;
                    });
                };
                for (const char c : value + "{") {
                    if (c == '{' || c == '}') {
                        if (depth == 0 && characters(piece) > characters(longest)) {
                            longest = piece;
                        }
                        piece.clear();
                        depth += c == '{' ? 1 : -1;
                    } else if (depth == 0) {
                        piece += c;
                    }
                }
                if (characters(longest) >= 60) {
                    pieces.push_back(lab::test::squashed(longest));
                }
            }
        };
        for (const auto& q : bank.questions) {
            ids.insert(q.id);
            stretches(q.explain);
            // (Not the read patterns: one says where the output shows the
            // answer, which the question's text says too; the papers hold none.)
            for (const auto& part : q.parts) {
                for (const auto& note : part.wrong) {
                    stretches(note.text);
                }
            }
        }
    }
    REQUIRE(banks >= 4);
    REQUIRE(pieces.size() >= 100);
    std::vector<std::string> found;
    for (const auto& file : files_of(edition)) {
        if (file.rfind("grading/quizzes/", 0) == 0) {
            found.push_back(file + " is the instructor's bank");  // (and its text is below)
        }
        const std::string raw = read_text(edition / file);
        if (raw.find('\0') != std::string::npos) {
            continue;  // binary
        }
        const std::string text = lab::test::squashed(raw);
        for (const auto& piece : pieces) {
            if (text.find(piece) != std::string::npos) {
                found.push_back(file + " holds \"" + piece + "\"");
            }
        }
        // A graded question's id may be in its paper, never beside an answer line.
        const bool answers = std::regex_search(raw, std::regex(R"((^|\n)answer:)"));
        for (const auto& id : ids) {
            if (answers && raw.find("question: " + id + "\n") != std::string::npos) {
                found.push_back(file + " holds the key of " + id);
            }
        }
    }
    std::string listing;
    for (const auto& hit : found) {
        listing += hit + "\n";
    }
    INFO(listing);
    CHECK(found.empty());
}

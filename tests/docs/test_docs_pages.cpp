// SPDX-License-Identifier: MIT
// The course pages around the lessons: every lesson's README ends with its
// self-check questions, the instructor's answers answer each of them, and
// nothing a student reads points at the instructor's material (which the
// student edition leaves out). No device, no network.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/catch.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kSourceDir = LAB_SOURCE_DIR;
const fs::path kAnswers = kSourceDir / "docs/instructor/self-check-answers.md";

std::vector<std::string> read_lines(const fs::path& path) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
        lines.push_back(line);
    }
    return lines;
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::vector<fs::path> lesson_folders() {
    std::vector<fs::path> folders;
    for (const auto& entry : fs::directory_iterator(kSourceDir / "lessons")) {
        if (entry.is_directory() &&
            std::regex_match(entry.path().filename().string(), std::regex("[0-9]{2}_[a-z0-9_]+"))) {
            folders.push_back(entry.path());
        }
    }
    std::sort(folders.begin(), folders.end());
    return folders;
}

/// The numbers of the numbered items ("1. ...") that start a line in
/// lines[first, end): the questions of a self-check, or their answers.
std::vector<int> numbered_items(const std::vector<std::string>& lines, std::size_t first,
                                std::size_t end) {
    static const std::regex item("^([0-9]+)\\. .*");
    std::vector<int> numbers;
    for (std::size_t i = first; i < end; ++i) {
        std::smatch match;
        if (std::regex_match(lines[i], match, item)) {
            numbers.push_back(std::stoi(match[1].str()));
        }
    }
    return numbers;
}

/// The questions of a lesson README's last section, which must be "## Self-check".
struct SelfCheck {
    std::string last_heading;  ///< the README's last "## " heading
    std::vector<int> questions;
};

SelfCheck self_check_of(const fs::path& readme) {
    const auto lines = read_lines(readme);
    SelfCheck result;
    std::size_t start = lines.size();
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].rfind("## ", 0) == 0) {
            result.last_heading = lines[i];
            start = i + 1;
        }
    }
    result.questions = numbered_items(lines, start, lines.size());
    return result;
}

/// The numbered answers under "## Lesson NN: ..." of the answers page.
std::vector<int> answers_for(const std::vector<std::string>& lines, const std::string& number) {
    const std::string heading = "## Lesson " + number + ":";
    const auto begin = std::find_if(lines.begin(), lines.end(), [&](const std::string& line) {
        return line.rfind(heading, 0) == 0;
    });
    if (begin == lines.end()) {
        return {};
    }
    const auto end = std::find_if(
        begin + 1, lines.end(), [](const std::string& line) { return line.rfind("## ", 0) == 0; });
    return numbered_items(lines, static_cast<std::size_t>(begin - lines.begin()) + 1,
                          static_cast<std::size_t>(end - lines.begin()));
}

bool counts_from_one(const std::vector<int>& numbers) {
    for (std::size_t i = 0; i < numbers.size(); ++i) {
        if (numbers[i] != static_cast<int>(i) + 1) {
            return false;
        }
    }
    return true;
}

}  // namespace

TEST_CASE("every lesson README ends with a Self-check of 3 to 5 numbered questions", "[unit]") {
    const auto folders = lesson_folders();
    REQUIRE(folders.size() >= 12);
    for (const auto& folder : folders) {
        const auto check = self_check_of(folder / "README.md");
        INFO(folder.filename().string() << "/README.md: last section '" << check.last_heading
                                        << "', " << check.questions.size() << " questions");
        CHECK(check.last_heading == "## Self-check");
        CHECK(check.questions.size() >= 3);
        CHECK(check.questions.size() <= 5);
        CHECK(counts_from_one(check.questions));
    }
}

TEST_CASE("the instructor's answers answer every self-check question", "[unit]") {
    if (!fs::exists(kAnswers)) {
        // The student edition leaves the instructor's material out.
        WARN("no " << kAnswers.string() << " (a student edition): nothing to compare");
        return;
    }
    const auto answers = read_lines(kAnswers);
    for (const auto& folder : lesson_folders()) {
        const std::string number = folder.filename().string().substr(0, 2);
        const auto questions = self_check_of(folder / "README.md").questions;
        const auto answered = answers_for(answers, number);
        INFO("lesson " << number << ": " << questions.size() << " questions, " << answered.size()
                       << " answers under '## Lesson " << number << ":'");
        CHECK(answered.size() == questions.size());
        CHECK(counts_from_one(answered));
    }
}

TEST_CASE("nothing a student reads points at the instructor's material", "[unit]") {
    std::vector<fs::path> pages = {kSourceDir / "docs/readings.md", kSourceDir / "docs/projects.md",
                                   kSourceDir / "exercises/README.md"};
    for (const auto& folder : lesson_folders()) {
        pages.push_back(folder / "README.md");
    }
    for (const auto& entry : fs::directory_iterator(kSourceDir / "exercises")) {
        if (entry.is_directory() && fs::exists(entry.path() / "README.md")) {
            pages.push_back(entry.path() / "README.md");
        }
    }
    for (const auto& entry : fs::directory_iterator(kSourceDir / "slides")) {
        if (entry.path().extension() == ".md") {
            pages.push_back(entry.path());
        }
    }
    // Plain searches: std::regex over every deck takes seconds in the micro-VM.
    const std::vector<std::string> needles = {"docs/instructor", "instructor.md",
                                              "self-check-answers", "ex01-report-rubric"};
    for (const auto& page : pages) {
        REQUIRE(fs::exists(page));
        const std::string text = read_file(page);
        std::string found;
        for (const auto& needle : needles) {
            if (text.find(needle) != std::string::npos) {
                found = needle;
            }
        }
        INFO(fs::relative(page, kSourceDir).string()
             << (found.empty() ? "" : " names the instructor's material: '" + found + "'"));
        CHECK(found.empty());
    }
}

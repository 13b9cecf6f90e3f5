// SPDX-License-Identifier: MIT
// The lesson pages' shape: every lesson's README is a core a student reads
// in about ten minutes (the same sections in the same order, at most 1,500
// words of prose) and then optional "## Deeper: ..." sections; its
// self-check questions have their answers folded under them, in English and
// in Chinese; and nothing a student reads points at the instructor's
// material (which the student edition leaves out). No device, no network.
#include <algorithm>
#include <filesystem>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "docs/markdown.hpp"
#include "support/catch.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kSourceDir = LAB_SOURCE_DIR;

/// The sections of a lesson README's core, in their order.
const std::vector<std::string> kCoreHeadings = {
    "## What you will learn",
    "## The verbs of this lesson",
    "## Run it",
    "## What you see",
    "## Things to try",
    "## Common errors",
    "## Self-check",
};
const std::string kDeeper = "## Deeper: ";
const std::string kDeeperChinese = "## 深入：";  // the twin's "Deeper: "
constexpr std::size_t kMostCoreWords = 1500;

std::vector<fs::path> lesson_folders() {
    return docs::lesson_folders(kSourceDir);
}

/// A page's lines outside fenced code blocks, each with its 1-based number.
struct ProseLine {
    int number = 0;
    std::string text;
};

std::vector<ProseLine> prose_lines(const std::string& markdown) {
    std::vector<ProseLine> prose;
    bool in_code = false;
    int number = 0;
    for (const auto& line : docs::split_lines(markdown)) {
        ++number;
        if (docs::is_fence(docs::trim(line))) {
            in_code = !in_code;
            continue;
        }
        if (!in_code) {
            prose.push_back({number, line});
        }
    }
    return prose;
}

/// What the tests read of a lesson README.
struct LessonPage {
    std::vector<std::string> core_headings;   ///< the "## " headings before the first Deeper one
    std::vector<std::string> later_headings;  ///< the "## " headings from the first Deeper one on
    std::size_t core_words = 0;               ///< words of prose before the first Deeper heading
    std::vector<int> questions;               ///< numbered items of the Self-check before <details>
    std::vector<int> answers;                 ///< numbered items inside its <details>
    int details_opened = 0, details_closed = 0;
};

LessonPage read_lesson_page(const std::string& markdown) {
    static const std::regex item("^([0-9]+)\\. .*");
    LessonPage page;
    bool deeper = false, in_self_check = false, in_details = false;
    for (const auto& [number, line] : prose_lines(markdown)) {
        const bool heading = line.rfind("## ", 0) == 0;
        deeper = deeper || line.rfind(kDeeper, 0) == 0 || line.rfind(kDeeperChinese, 0) == 0;
        if (!deeper) {  // every word outside code counts, the headings' too
            std::istringstream words(line);
            page.core_words += static_cast<std::size_t>(std::distance(
                std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()));
        }
        if (heading) {
            (deeper ? page.later_headings : page.core_headings).push_back(line);
            // The self-check is the core's last section, whatever its
            // heading's language (a Chinese twin translates it): what an
            // earlier section numbered is forgotten.
            in_self_check = !deeper;
            if (in_self_check) {
                page.questions.clear();
                page.answers.clear();
                page.details_opened = page.details_closed = 0;
            }
            continue;
        }
        if (!in_self_check) {
            continue;
        }
        const std::string stripped = docs::trim(line);
        if (stripped.rfind("<details>", 0) == 0) {
            ++page.details_opened;
            in_details = true;
        } else if (stripped == "</details>") {
            ++page.details_closed;
            in_details = false;
        }
        std::smatch match;
        if (std::regex_match(line, match, item)) {
            (in_details ? page.answers : page.questions).push_back(std::stoi(match[1].str()));
        }
    }
    return page;
}

bool counts_from_one(const std::vector<int>& numbers) {
    for (std::size_t i = 0; i < numbers.size(); ++i) {
        if (numbers[i] != static_cast<int>(i) + 1) {
            return false;
        }
    }
    return true;
}

std::string joined(const std::vector<std::string>& lines) {
    std::string text;
    for (const auto& line : lines) {
        text += (text.empty() ? "" : " | ") + line;
    }
    return text;
}

/// Every failure the shape of one README shows, one line each (empty: none).
std::vector<std::string> shape_problems(const std::string& name, const LessonPage& page) {
    std::vector<std::string> problems;
    if (page.core_headings != kCoreHeadings) {
        problems.push_back(name + ": the core's sections are '" + joined(page.core_headings) +
                           "'; they must be '" + joined(kCoreHeadings) +
                           "', in that order, before any '" + kDeeper + "...' section");
    }
    for (const auto& heading : page.later_headings) {
        if (heading.rfind(kDeeper, 0) != 0) {
            problems.push_back(name + ": '" + heading + "' comes after the core; name it '" +
                               kDeeper + "...' or move it into the core");
        }
    }
    if (page.core_words > kMostCoreWords) {
        problems.push_back(name + ": the core has " + std::to_string(page.core_words) +
                           " words of prose, more than " + std::to_string(kMostCoreWords) +
                           "; move depth into a '" + kDeeper + "...' section");
    }
    if (page.questions.size() < 3 || page.questions.size() > 5 ||
        !counts_from_one(page.questions)) {
        problems.push_back(name + ": the Self-check has " + std::to_string(page.questions.size()) +
                           " questions; it needs 3 to 5, numbered from 1");
    }
    if (page.details_opened != 1 || page.details_closed != 1) {
        problems.push_back(name +
                           ": the Self-check needs its answers in one <details> block "
                           "(found " +
                           std::to_string(page.details_opened) + " opened, " +
                           std::to_string(page.details_closed) + " closed)");
    }
    if (page.answers.size() != page.questions.size() || !counts_from_one(page.answers)) {
        problems.push_back(name + ": " + std::to_string(page.questions.size()) + " questions but " +
                           std::to_string(page.answers.size()) +
                           " numbered answers in the <details> block");
    }
    return problems;
}

std::vector<std::string> page_problems(const fs::path& readme) {
    if (!fs::exists(readme)) {
        return {fs::relative(readme, kSourceDir).string() + ": missing"};
    }
    return shape_problems(fs::relative(readme, kSourceDir).string(),
                          read_lesson_page(docs::read_file(readme)));
}

const std::string kGoodPage = R"(# Lesson 99 — a lesson

## What you will learn
Words.
## The verbs of this lesson
## Run it
```sh
./lab run 99_lesson with many words that are code and do not count
```
## What you see
## Things to try
## Common errors
## Self-check
1. One?
2. Two?
3. Three?

<details><summary>Answers</summary>

1. Yes.
2. Yes.
3. Yes.

</details>

## Deeper: more
)";

}  // namespace

TEST_CASE("lesson pages: the shape check passes a good page and catches each fault", "[unit]") {
    CHECK(shape_problems("good", read_lesson_page(kGoodPage)).empty());
    const auto problems_with = [](const std::string& from, const std::string& to) {
        std::string page = kGoodPage;
        const auto at = page.find(from);
        REQUIRE(at != std::string::npos);
        page.replace(at, from.size(), to);
        return shape_problems("bad", read_lesson_page(page));
    };
    const auto says = [](const std::vector<std::string>& problems, const std::string& phrase) {
        INFO("looking for '" << phrase << "' among " << problems.size() << " problems");
        return std::any_of(problems.begin(), problems.end(), [&](const std::string& problem) {
            return problem.find(phrase) != std::string::npos;
        });
    };
    CHECK(says(problems_with("## Run it\n", ""), "the core's sections are"));
    CHECK(says(problems_with("## Deeper: more", "## More"), "the core's sections are"));
    CHECK(says(problems_with("## Deeper: more", "## Deeper: more\n## Extra"),
               "comes after the core"));
    CHECK(
        problems_with("3. Yes.\n", "") ==
        std::vector<std::string>{"bad: 3 questions but 2 numbered answers in the <details> block"});
    CHECK(problems_with("3. Three?\n", "") ==
          std::vector<std::string>{
              "bad: the Self-check has 2 questions; it needs 3 to 5, numbered from 1",
              "bad: 2 questions but 3 numbered answers in the <details> block"});
    CHECK(says(problems_with("</details>", ""), "in one <details> block"));
    std::string wordy;
    for (int i = 0; i < 1500; ++i) {
        wordy += "word ";
    }
    CHECK(says(problems_with("Words.", wordy), "words of prose, more than 1500"));
}

TEST_CASE("lesson pages: every README is a core, its answers folded, then Deeper sections",
          "[unit]") {
    const auto folders = lesson_folders();
    REQUIRE(folders.size() >= 12);
    for (const auto& folder : folders) {
        for (const auto& problem : page_problems(folder / "README.md")) {
            FAIL_CHECK(problem);
        }
    }
}

TEST_CASE("lesson pages: every Chinese README folds as many answers as it asks questions",
          "[unit]") {
    for (const auto& folder : lesson_folders()) {
        const auto twin = folder / "README.zh-CN.md";
        if (!fs::exists(twin)) {
            continue;
        }
        const auto page = read_lesson_page(docs::read_file(twin));
        const auto english = read_lesson_page(docs::read_file(folder / "README.md"));
        INFO(fs::relative(twin, kSourceDir).string()
             << ": " << page.questions.size() << " questions, " << page.answers.size()
             << " answers in " << page.details_opened
             << " <details> block(s); the English page has " << english.questions.size());
        CHECK(page.details_opened == 1);
        CHECK(page.questions == english.questions);
        CHECK(page.answers == english.answers);
    }
}

TEST_CASE("nothing a student reads points at the instructor's material", "[unit]") {
    std::vector<fs::path> pages = {kSourceDir / "docs/readings.md", kSourceDir / "docs/projects.md",
                                   kSourceDir / "docs/devices.md",
                                   kSourceDir / "exercises/README.md"};
    for (const auto& folder : lesson_folders()) {
        pages.push_back(folder / "README.md");
        pages.push_back(folder / "README.zh-CN.md");
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
        const std::string text = docs::read_file(page);
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

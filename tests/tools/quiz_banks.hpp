// SPDX-License-Identifier: MIT
// What the practice and the graded quizzes' tests share: the banks of a
// folder, a file's text, and the check that a run question's key is what its
// lesson's README shows.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "quiz.hpp"
#include "support/catch.hpp"

namespace lab::test::quiz {

namespace fs = std::filesystem;

inline const fs::path kSource = LAB_SOURCE_DIR;

inline std::string read_file(const fs::path& path) {
    std::ifstream in(path);
    std::ostringstream content;
    content << in.rdbuf();
    return content.str();
}

inline bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

/// The banks (*.quiz) in @p folder of the source tree, in name order.
inline std::vector<fs::path> banks_in(const std::string& folder) {
    std::vector<fs::path> banks;
    for (const auto& entry : fs::directory_iterator(kSource / folder)) {
        if (entry.path().extension() == ".quiz") {
            banks.push_back(entry.path());
        }
    }
    std::ranges::sort(banks);
    return banks;
}

/// A run question whose command is the lesson with no arguments reads its
/// answer from the output the lesson's README shows under "What you see"
/// (run on rxe): its pattern must find it there, and the bank's key must be
/// what it finds. Returns how many parts were checked.
inline int check_keys_against_readme(const std::vector<fs::path>& banks) {
    using namespace lab::quiz;
    int checked = 0;
    for (const auto& path : banks) {
        const Bank bank = load_bank(path.string());
        const std::string readme = read_file(kSource / "lessons" / bank.quiz / "README.md");
        const auto from = readme.find("\n## What you see");
        REQUIRE(from != std::string::npos);
        const std::string sample = readme.substr(from, readme.find("\n## ", from + 1) - from);
        for (const auto& q : bank.questions) {
            if (q.run != "./lab run " + bank.quiz || !q.params.empty()) {
                continue;
            }
            const Drawn drawn{&q, {}};
            const auto keys = keys_from_run(drawn, [&](const std::string&) { return sample; });
            for (std::size_t p = 0; p < q.parts.size(); ++p) {
                INFO(q.id << " part " << p + 1 << ": " << q.parts[p].read);
                REQUIRE(keys[p].has_value());
                CHECK(check_part(q.parts[p], {}, *keys[p]).score == 1);
                ++checked;
            }
        }
    }
    return checked;
}

}  // namespace lab::test::quiz

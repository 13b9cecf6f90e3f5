// SPDX-License-Identifier: MIT
/**
 * @file markdown.hpp
 * @brief What the docs tests read in the course's Markdown pages and Marp
 * decks: files, fenced code blocks and the comments inside them.
 *
 * Header-only: each docs test is one program (lab_add_test), and the deck
 * checks (test_slide_code.cpp) and the translation checks
 * (test_translation.cpp) read the pages the same way.
 */
#pragma once

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace docs {

namespace fs = std::filesystem;

inline std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

inline std::string trim(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) {
        return {};
    }
    const auto last = text.find_last_not_of(" \t\r");
    return std::string(text.substr(first, last - first + 1));
}

/// The lines of a text, without their line ends; a last line without one counts.
inline std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        lines.push_back(line);
    }
    return lines;
}

/// The lesson folders under @p source_dir (lessons/NN_name), in lesson order.
inline std::vector<fs::path> lesson_folders(const fs::path& source_dir) {
    std::vector<fs::path> folders;
    for (const auto& entry : fs::directory_iterator(source_dir / "lessons")) {
        const std::string name = entry.path().filename().string();
        const bool numbered = name.size() > 3 &&
                              std::isdigit(static_cast<unsigned char>(name[0])) &&
                              std::isdigit(static_cast<unsigned char>(name[1])) && name[2] == '_';
        if (entry.is_directory() && numbered) {
            folders.push_back(entry.path());
        }
    }
    std::sort(folders.begin(), folders.end());
    return folders;
}

/// True for a line that opens or closes a fenced code block (``` or ~~~).
inline bool is_fence(std::string_view stripped) {
    return stripped.rfind("```", 0) == 0 || stripped.rfind("~~~", 0) == 0;
}

/// One fenced code block of a page or deck.
struct CodeBlock {
    int line = 0;          ///< line of the opening fence, 1-based
    std::string info;      ///< the fence's whole info string ("cpp lessons/01_devices/main.cpp")
    std::string language;  ///< first word of the info string
    std::string source;    ///< second word: the file it quotes (may be empty)
    std::vector<std::string> lines;
};

inline std::vector<CodeBlock> code_blocks(const std::string& markdown) {
    std::vector<CodeBlock> blocks;
    std::optional<CodeBlock> open;
    std::string fence;
    int number = 0;
    for (const std::string& line : split_lines(markdown)) {
        ++number;
        const std::string stripped = trim(line);
        if (!open) {
            if (is_fence(stripped)) {
                fence = stripped.substr(0, stripped.find_first_not_of(stripped[0]));
                CodeBlock block;
                block.line = number;
                block.info = trim(stripped.substr(fence.size()));
                std::istringstream info(block.info);
                info >> block.language >> block.source;
                open = block;
            }
        } else if (stripped.rfind(fence, 0) == 0 && trim(stripped.substr(fence.size())).empty()) {
            blocks.push_back(*open);
            open.reset();
        } else {
            open->lines.push_back(line);
        }
    }
    return blocks;
}

inline bool is_c_or_cpp(const std::string& language) {
    static const std::vector<std::string> kLanguages = {"c", "cpp", "c++", "cc", "h", "hpp", "cxx"};
    return std::find(kLanguages.begin(), kLanguages.end(), language) != kLanguages.end();
}

/// How comments are written in a code block's language.
enum class CommentStyle {
    none,     ///< program output, plain text: nothing in it is a comment
    c,        ///< C and C++: // to the end of the line, /* ... */
    hash,     ///< shell, CMake, YAML: # at the start of a line or after a blank
    mermaid,  ///< a Mermaid diagram: %% to the end of the line
};

inline CommentStyle comment_style(const std::string& language) {
    static const std::vector<std::string> kHash = {"sh",   "bash", "shell",      "console", "cmake",
                                                   "yaml", "yml",  "dockerfile", "python",  "make",
                                                   "ini",  "conf", "toml"};
    if (is_c_or_cpp(language)) {
        return CommentStyle::c;
    }
    if (std::find(kHash.begin(), kHash.end(), language) != kHash.end()) {
        return CommentStyle::hash;
    }
    return language == "mermaid" ? CommentStyle::mermaid : CommentStyle::none;
}

/// A comment in a code block: line index (0-based, in the block) and byte range.
struct CommentSpan {
    std::size_t line = 0;
    std::size_t begin = 0;
    std::size_t end = 0;
};

/**
 * The comments of a code block. String and character literals are skipped
 * (a "//" or "#" inside quotes is not a comment); a C block comment may run
 * over several lines.
 */
inline std::vector<CommentSpan> comment_spans(const std::vector<std::string>& lines,
                                              CommentStyle style) {
    std::vector<CommentSpan> spans;
    bool in_block_comment = false;
    for (std::size_t row = 0; row < lines.size(); ++row) {
        const std::string& line = lines[row];
        std::size_t i = 0;
        if (in_block_comment) {
            const std::size_t end = line.find("*/");
            spans.push_back({row, 0, end == std::string::npos ? line.size() : end + 2});
            if (end == std::string::npos) {
                continue;
            }
            in_block_comment = false;
            i = end + 2;
        }
        char quote = 0;
        for (; i < line.size(); ++i) {
            const char c = line[i];
            if (quote != 0) {
                if (c == '\\' && !(style == CommentStyle::hash && quote == '\'')) {
                    ++i;  // an escaped character (a shell's '...' has no escapes)
                } else if (c == quote) {
                    quote = 0;
                }
                continue;
            }
            if (style == CommentStyle::c) {
                if (c == '"' || c == '\'') {
                    quote = c;
                } else if (line.compare(i, 2, "//") == 0) {
                    spans.push_back({row, i, line.size()});
                    break;
                } else if (line.compare(i, 2, "/*") == 0) {
                    const std::size_t end = line.find("*/", i + 2);
                    spans.push_back({row, i, end == std::string::npos ? line.size() : end + 2});
                    if (end == std::string::npos) {
                        in_block_comment = true;
                        break;
                    }
                    i = end + 1;
                }
            } else if (style == CommentStyle::hash) {
                if (c == '"' || c == '\'') {
                    quote = c;
                } else if (c == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
                    spans.push_back({row, i, line.size()});
                    break;
                }
            } else if (style == CommentStyle::mermaid && line.compare(i, 2, "%%") == 0) {
                spans.push_back({row, i, line.size()});
                break;
            }
        }
    }
    return spans;
}

/// A line without its trailing blanks.
inline std::string rtrim(std::string line) {
    line.erase(line.find_last_not_of(" \t\r") + 1);
    return line;
}

/**
 * The lines of a code block that must be the same in every translation: the
 * block without its comments (which a translation may translate), without the
 * blanks a removed comment leaves and without lines that held only a comment.
 * Program output and plain text (no comment syntax) are every line, exactly.
 * A Mermaid diagram keeps its shape (participants, arrows, blocks) and loses
 * its labels, which are text: what follows the first ':' of a line, the name
 * after "as", the words after loop/alt/else/opt/par/critical/break.
 */
inline std::vector<std::string> code_without_comments(const CodeBlock& block) {
    const CommentStyle style = comment_style(block.language);
    if (style == CommentStyle::none) {
        return block.lines;
    }
    std::vector<std::string> lines = block.lines;
    const auto spans = comment_spans(lines, style);
    for (auto span = spans.rbegin(); span != spans.rend(); ++span) {
        lines[span->line].erase(span->begin, span->end - span->begin);
    }
    std::vector<std::string> result;
    for (std::string& line : lines) {
        if (style == CommentStyle::mermaid) {
            if (const auto colon = line.find(':'); colon != std::string::npos) {
                line.erase(colon);
            }
            if (const auto as = line.find(" as "); as != std::string::npos) {
                line.erase(as);
            }
            std::istringstream words(line);
            std::string first;
            words >> first;
            static const std::vector<std::string> kBlocks = {"loop", "alt",      "else", "opt",
                                                             "par",  "critical", "break"};
            if (std::find(kBlocks.begin(), kBlocks.end(), first) != kBlocks.end()) {
                line = line.substr(0, line.find(first) + first.size());
            }
        }
        line = rtrim(line);
        if (!trim(line).empty()) {
            result.push_back(line);
        }
    }
    return result;
}

}  // namespace docs

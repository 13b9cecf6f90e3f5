// SPDX-License-Identifier: MIT
/**
 * @file translation.hpp
 * @brief The checks that keep the Chinese (zh-CN) edition in step with the
 * English one: the pages that must have a twin (docs/twins.md), the drift
 * between a page and its twin, and the use of the glossary's terms
 * (docs/glossary.md). docs/translating.md says what each check means for a
 * translator; test_translation.cpp proves each catches what it should.
 *
 * What the drift check compares, between an English page and its twin:
 *  - headings: the same number, in the same order, at the same levels (and in
 *    a deck, the same number of slides, each with the same headings);
 *  - code blocks: the same number, the same fence info ("cpp lessons/..."),
 *    and the same lines once comments are removed (program output, plain
 *    text and the shape of a Mermaid diagram exactly);
 *  - links and images: the same number, in the same order, to the same
 *    targets and anchors, except that a link to a page with a Chinese twin
 *    points at the twin, and an image may be its Chinese twin (NAME.zh-CN.svg
 *    for NAME.svg: a diagram with its labels translated); every anchor a
 *    Chinese page links to exists;
 *  - tables: the same number, each with the same rows and columns;
 *  - the twin links, as the first line after the first heading:
 *    "English | [中文](TWIN)" in the English page, "[English](PAGE) | 中文"
 *    in the Chinese one.
 * And a sentence changed in the English page leaves the twin stale: the list
 * of twins records the fingerprint of the English text each twin is in step
 * with (stale_twins).
 */
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <regex>
#include <set>

#include "docs/markdown.hpp"

namespace docs {

// --- UTF-8 -------------------------------------------------------------------

/// The code point that starts at @p at (advanced past it); U+FFFD for a bad byte.
inline char32_t next_code_point(std::string_view text, std::size_t& at) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char first = byte(at);
    int length = first < 0x80           ? 1
                 : (first >> 5) == 0x6  ? 2
                 : (first >> 4) == 0xE  ? 3
                 : (first >> 3) == 0x1E ? 4
                                        : 0;
    if (length == 0 || at + static_cast<std::size_t>(length) > text.size()) {
        ++at;
        return 0xFFFD;
    }
    char32_t point = length == 1 ? first : first & (0x7F >> length);
    for (int i = 1; i < length; ++i) {
        point = (point << 6) | (byte(at + static_cast<std::size_t>(i)) & 0x3F);
    }
    at += static_cast<std::size_t>(length);
    return point;
}

/// A Chinese character (CJK unified ideographs and their extension A).
inline bool is_han(char32_t point) {
    return (point >= 0x4E00 && point <= 0x9FFF) || (point >= 0x3400 && point <= 0x4DBF) ||
           (point >= 0xF900 && point <= 0xFAFF);
}

/// Chinese punctuation: the CJK symbols and the full-width forms that are not letters or digits.
inline bool is_cjk_punctuation(char32_t point) {
    return (point >= 0x3000 && point <= 0x303F) || (point >= 0xFF01 && point <= 0xFF0F) ||
           (point >= 0xFF1A && point <= 0xFF20) || (point >= 0xFF3B && point <= 0xFF40) ||
           (point >= 0xFF5B && point <= 0xFF65);
}

inline bool has_han(std::string_view text) {
    for (std::size_t at = 0; at < text.size();) {
        if (is_han(next_code_point(text, at))) {
            return true;
        }
    }
    return false;
}

inline std::string lowercase_ascii(std::string text) {
    for (char& c : text) {
        if (c >= 'A' && c <= 'Z') {
            c = static_cast<char>(c - 'A' + 'a');
        }
    }
    return text;
}

// --- tables ------------------------------------------------------------------

/// The cells of a table row: split at each '|' that is not escaped, outer pipes dropped.
inline std::vector<std::string> table_cells(const std::string& row) {
    std::string line = trim(row);
    std::vector<std::string> cells;
    std::string cell;
    for (std::size_t i = 0; i < line.size(); ++i) {
        if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
            cell += "\\|";
            ++i;
        } else if (line[i] == '|') {
            cells.push_back(trim(cell));
            cell.clear();
        } else {
            cell += line[i];
        }
    }
    cells.push_back(trim(cell));
    if (!line.empty() && line.front() == '|') {
        cells.erase(cells.begin());
    }
    if (!line.empty() && line.back() == '|' && !cells.empty()) {
        cells.pop_back();
    }
    return cells;
}

inline bool is_table_separator(const std::string& row) {
    const std::string line = trim(row);
    return !line.empty() && line.front() == '|' &&
           line.find_first_not_of("|:- \t") == std::string::npos &&
           line.find('-') != std::string::npos;
}

// --- the pages -----------------------------------------------------------------

/**
 * The anchor GitHub gives a heading: the text as shown (code marks and link
 * targets dropped), lower-case, punctuation removed (ASCII and Chinese alike),
 * letters, digits, '-' and '_' kept, each space a '-'.
 */
inline std::string github_slug(const std::string& heading) {
    static const std::regex kLink(R"(!?\[([^\]]*)\]\([^)]*\))");
    const std::string shown = std::regex_replace(heading, kLink, "$1");
    std::string slug;
    for (std::size_t at = 0; at < shown.size();) {
        const std::size_t start = at;
        const char32_t point = next_code_point(shown, at);
        if (point < 0x80) {
            const char c = static_cast<char>(point);
            if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_') {
                slug += c;
            } else if (c >= 'A' && c <= 'Z') {
                slug += static_cast<char>(c - 'A' + 'a');
            } else if (c == ' ') {
                slug += '-';
            }
        } else if (!is_cjk_punctuation(point) && !(point >= 0x2000 && point <= 0x2BFF) &&
                   !(point >= 0xA0 && point <= 0xBF) && point != 0xD7 && point != 0xF7) {
            slug += shown.substr(start, at - start);  // a letter or digit of another script
        }
    }
    return slug;
}

struct Heading {
    int line = 0;   ///< 1-based
    int slide = 0;  ///< the slide it is on (decks), 0-based; 0 on a page
    int level = 0;  ///< 1 for "#", 2 for "##", ...
    std::string text;
};

struct Link {
    int line = 0;
    std::string target;  ///< as written: a path, a path#anchor, #anchor or a URL
    bool image = false;
};

struct Table {
    int line = 0;                                ///< its first row
    std::vector<std::vector<std::string>> rows;  ///< the header row and the body, not the separator
};

/// What the checks read of one page or deck.
struct Page {
    std::string path;  ///< repository-relative, e.g. lessons/01_devices/README.md
    bool deck = false;
    int slides = 1;
    std::vector<Heading> headings;
    std::vector<CodeBlock> blocks;
    std::vector<Link> links;
    std::vector<Table> tables;
    std::set<std::string>
        anchors;            ///< the anchors a link may name: heading slugs, {#label}, <a id>
    int twin_line = 0;      ///< the first line of text after the first heading (0: none)
    std::string twin_text;  ///< that line, trimmed
};

/// A deck is a Marp file in slides/ (or slides/zh-CN/), not the folder's README.
inline bool is_deck_path(const std::string& path) {
    const fs::path p(path);
    return (path.rfind("slides/", 0) == 0) && p.filename() != "README.md" && p.extension() == ".md";
}

/// The line with its HTML comments removed; @p in_comment carries an open comment to the next line.
inline std::string without_html_comments(const std::string& line, bool& in_comment) {
    std::string visible;
    std::size_t at = 0;
    while (at < line.size()) {
        if (in_comment) {
            const std::size_t end = line.find("-->", at);
            if (end == std::string::npos) {
                return visible;
            }
            in_comment = false;
            at = end + 3;
        } else {
            const std::size_t start = line.find("<!--", at);
            if (start == std::string::npos) {
                visible += line.substr(at);
                break;
            }
            visible += line.substr(at, start - at);
            in_comment = true;
            at = start + 4;
        }
    }
    return visible;
}

/// The line with the text of its inline code spans (`...`) blanked, so that code is not read as
/// links.
inline std::string without_inline_code(std::string line) {
    for (std::size_t at = 0; (at = line.find('`', at)) != std::string::npos;) {
        const std::size_t run = line.find_first_not_of('`', at) == std::string::npos
                                    ? line.size() - at
                                    : line.find_first_not_of('`', at) - at;
        const std::string ticks(run, '`');
        const std::size_t close = line.find(ticks, at + run);
        if (close == std::string::npos) {
            break;
        }
        std::fill(line.begin() + static_cast<std::ptrdiff_t>(at),
                  line.begin() + static_cast<std::ptrdiff_t>(close + run), ' ');
        at = close + run;
    }
    return line;
}

/// The links and images of one line: [text](target), ![alt](target), <https://...>.
inline std::vector<Link> links_in_line(const std::string& line, int number) {
    std::vector<Link> links;
    for (std::size_t at = 0; (at = line.find("](", at)) != std::string::npos;) {
        std::size_t end = at + 2;
        int depth = 0;
        for (; end < line.size(); ++end) {
            if (line[end] == '(') {
                ++depth;
            } else if (line[end] == ')') {
                if (depth == 0) {
                    break;
                }
                --depth;
            }
        }
        if (end >= line.size()) {
            break;
        }
        std::string target = trim(line.substr(at + 2, end - at - 2));
        target = target.substr(
            0, target.find_first_of(" \t"));  // a title after the target is not part of it
        if (target.size() > 1 && target.front() == '<' && target.back() == '>') {
            target = target.substr(1, target.size() - 2);
        }
        // The '[' that opens this link's text: an image if a '!' stands before it.
        bool image = false;
        int brackets = 0;
        for (std::size_t back = at; back-- > 0;) {
            if (line[back] == ']') {
                ++brackets;
            } else if (line[back] == '[') {
                if (brackets == 0) {
                    image = back > 0 && line[back - 1] == '!';
                    break;
                }
                --brackets;
            }
        }
        links.push_back({number, target, image});
        at = end;
    }
    static const std::regex kAutolink(R"(<(https?://[^>\s]+)>)");
    for (auto match = std::sregex_iterator(line.begin(), line.end(), kAutolink);
         match != std::sregex_iterator(); ++match) {
        links.push_back({number, (*match)[1].str(), false});
    }
    return links;
}

inline Page parse_page(const std::string& path, const std::string& text) {
    Page page;
    page.path = path;
    page.deck = is_deck_path(path);
    page.blocks = code_blocks(text);
    const std::vector<std::string> lines = split_lines(text);
    std::size_t index = 0;
    if (page.deck && !lines.empty() && trim(lines[0]) == "---") {  // the front matter
        for (index = 1; index < lines.size() && trim(lines[index]) != "---"; ++index) {
        }
        ++index;
    }
    static const std::regex kHeading(R"(^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$)");
    static const std::regex kLabel(R"(\s*\{#([A-Za-z0-9_-]+)\}$)");
    static const std::regex kAnchor(R"(<a\s+(?:id|name)\s*=\s*"([^"]+)\")");
    std::map<std::string, int> slug_count;
    bool in_fence = false;
    std::string fence;
    bool in_comment = false;
    bool in_table = false;
    int first_heading = 0;
    for (std::size_t i = index; i < lines.size(); ++i) {
        const int number = static_cast<int>(i) + 1;
        const std::string stripped = trim(lines[i]);
        if (in_fence) {
            if (stripped.rfind(fence, 0) == 0 && trim(stripped.substr(fence.size())).empty()) {
                in_fence = false;
            }
            continue;
        }
        if (!in_comment && is_fence(stripped)) {
            in_fence = true;
            fence = stripped.substr(0, stripped.find_first_not_of(stripped[0]));
            in_table = false;
            continue;
        }
        const bool comment_before = in_comment;
        const std::string visible = without_html_comments(lines[i], in_comment);
        const std::string shown = trim(visible);
        if (page.deck && !comment_before && shown == "---" &&
            (i == 0 || trim(lines[i - 1]).empty())) {
            ++page.slides;
            in_table = false;
            continue;
        }
        std::smatch match;
        if (std::regex_match(visible, match, kHeading)) {
            std::string heading = match[2].str();
            heading = heading.substr(0, heading.find_last_not_of("# \t") + 1);  // closing #s
            std::smatch label;
            if (std::regex_search(heading, label, kLabel)) {
                page.anchors.insert(label[1].str());
                heading = heading.substr(0, static_cast<std::size_t>(label.position(0)));
            }
            page.headings.push_back(
                {number, page.slides - 1, static_cast<int>(match[1].length()), heading});
            std::string slug = github_slug(heading);
            const int seen = slug_count[slug]++;
            page.anchors.insert(seen == 0 ? slug : slug + "-" + std::to_string(seen));
            if (first_heading == 0) {
                first_heading = number;
            }
        }
        if (!shown.empty() && shown.front() == '|') {
            if (!is_table_separator(shown)) {
                if (!in_table) {
                    page.tables.push_back({number, {}});
                }
                page.tables.back().rows.push_back(table_cells(shown));
            }
            in_table = true;
        } else {
            in_table = false;
        }
        const std::string code_free = without_inline_code(visible);
        for (const Link& link : links_in_line(code_free, number)) {
            page.links.push_back(link);
        }
        for (auto anchor = std::sregex_iterator(code_free.begin(), code_free.end(), kAnchor);
             anchor != std::sregex_iterator(); ++anchor) {
            page.anchors.insert((*anchor)[1].str());
        }
    }
    if (first_heading != 0) {
        // A line that is only an HTML comment (a licence line, a Marp directive) is not text.
        bool in_comment = false;
        for (std::size_t i = static_cast<std::size_t>(first_heading); i < lines.size(); ++i) {
            if (!trim(without_html_comments(lines[i], in_comment)).empty()) {
                page.twin_line = static_cast<int>(i) + 1;
                page.twin_text = trim(lines[i]);
                break;
            }
        }
    }
    return page;
}

// --- twins -------------------------------------------------------------------

/**
 * Where a page's Chinese twin lives: README.md -> README.zh-CN.md beside it,
 * slides/NAME.md -> slides/zh-CN/NAME.md, docs/NAME.md -> docs/NAME.zh-CN.md.
 */
inline std::string twin_path(const std::string& english) {
    const fs::path path(english);
    if (english.rfind("slides/", 0) == 0 && path.parent_path() == "slides") {
        return "slides/zh-CN/" + path.filename().string();
    }
    return (path.parent_path() / (path.stem().string() + ".zh-CN.md")).generic_string();
}

/**
 * The Chinese twin of an image, beside it: docs/diagrams/qp_states.svg ->
 * docs/diagrams/qp_states.zh-CN.svg (docs/diagrams/render.sh draws both).
 */
inline std::string image_twin_path(const std::string& image) {
    const fs::path path(image);
    return (path.parent_path() / (path.stem().string() + ".zh-CN" + path.extension().string()))
        .generic_string();
}

/// The repository-relative path from the folder of page @p from to @p to.
inline std::string relative_path(const std::string& from, const std::string& to) {
    return fs::path(to).lexically_relative(fs::path(from).parent_path()).generic_string();
}

/// The twin links each edition has as its first line after the first heading.
inline std::string english_twin_line(const std::string& english) {
    return "English | [中文](" + relative_path(english, twin_path(english)) + ")";
}
inline std::string chinese_twin_line(const std::string& english) {
    return "[English](" + relative_path(twin_path(english), english) + ") | 中文";
}

/// A link target taken apart: a file of the repository (or a URL) and an anchor.
struct Target {
    bool external = false;  ///< a URL: compared as written
    std::string path;       ///< repository-relative, or the URL
    std::string anchor;     ///< after '#', may be empty
    bool operator==(const Target&) const = default;
};

inline Target resolve_target(const std::string& page, const std::string& target) {
    Target result;
    if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) {
        result.external = true;
        result.path = target;
        return result;
    }
    const std::size_t hash = target.find('#');
    const std::string file = target.substr(0, hash);
    if (hash != std::string::npos) {
        result.anchor = target.substr(hash + 1);
    }
    result.path = file.empty()
                      ? page
                      : (fs::path(page).parent_path() / file).lexically_normal().generic_string();
    return result;
}

inline std::string describe(const Target& target) {
    return target.path + (target.anchor.empty() ? "" : "#" + target.anchor);
}

/// What the drift check knows of the repository.
struct Tree {
    std::map<std::string, std::string>
        twins;  ///< English page -> its Chinese twin, for the translated pages
    /// The text of a repository file, or nothing when it does not exist.
    std::function<std::optional<std::string>(const std::string&)> read;
};

/**
 * Every way the Chinese page @p chinese drifted from its English twin
 * @p english; empty when they agree. Each entry starts with what differs
 * ("headings:", "slides:", "code:", "links:", "anchors:", "tables:",
 * "twin links:") and names the lines in both pages.
 */
inline std::vector<std::string> drift(const Page& english, const Page& chinese, const Tree& tree) {
    std::vector<std::string> found;
    const std::string& en = english.path;
    const std::string& zh = chinese.path;
    const auto at = [](const std::string& path, int line) {
        return path + ":" + std::to_string(line);
    };

    // Headings, and the slides of a deck.
    if (english.slides != chinese.slides) {
        found.push_back("slides: " + en + " has " + std::to_string(english.slides) + " slides, " +
                        zh + " has " + std::to_string(chinese.slides));
    }
    const std::size_t headings = std::min(english.headings.size(), chinese.headings.size());
    for (std::size_t i = 0; i < headings; ++i) {
        const Heading& a = english.headings[i];
        const Heading& b = chinese.headings[i];
        if (a.level != b.level || a.slide != b.slide) {
            found.push_back("headings: heading " + std::to_string(i + 1) + " is " +
                            std::string(a.level, '#') + " \"" + a.text + "\"" +
                            (english.deck ? " on slide " + std::to_string(a.slide + 1) : "") +
                            " (" + at(en, a.line) + ") but " + std::string(b.level, '#') + " \"" +
                            b.text + "\"" +
                            (chinese.deck ? " on slide " + std::to_string(b.slide + 1) : "") +
                            " (" + at(zh, b.line) + ")");
            break;  // the rest follow from the first difference
        }
    }
    if (english.headings.size() != chinese.headings.size()) {
        const bool more = english.headings.size() > chinese.headings.size();
        const Heading& extra = more ? english.headings[headings] : chinese.headings[headings];
        found.push_back("headings: " + en + " has " + std::to_string(english.headings.size()) +
                        " headings, " + zh + " has " + std::to_string(chinese.headings.size()) +
                        "; the first without a twin is \"" + extra.text + "\" (" +
                        at(more ? en : zh, extra.line) + ")");
    }

    // Code blocks: the same fences and the same code, comments aside.
    if (english.blocks.size() != chinese.blocks.size()) {
        found.push_back("code: " + en + " has " + std::to_string(english.blocks.size()) +
                        " code blocks, " + zh + " has " + std::to_string(chinese.blocks.size()));
    }
    for (std::size_t i = 0; i < std::min(english.blocks.size(), chinese.blocks.size()); ++i) {
        const CodeBlock& a = english.blocks[i];
        const CodeBlock& b = chinese.blocks[i];
        const std::string where = "code: block " + std::to_string(i + 1) + " (" + at(en, a.line) +
                                  ", " + at(zh, b.line) + ")";
        if (a.info != b.info) {
            found.push_back(where + ": the fence says \"" + a.info + "\" in English, \"" + b.info +
                            "\" in Chinese");
            continue;
        }
        const auto code_a = code_without_comments(a);
        const auto code_b = code_without_comments(b);
        for (std::size_t line = 0; line < std::max(code_a.size(), code_b.size()); ++line) {
            const std::string left = line < code_a.size() ? code_a[line] : "(nothing)";
            const std::string right = line < code_b.size() ? code_b[line] : "(nothing)";
            if (left != right) {
                found.push_back(where + ": code line " + std::to_string(line + 1) +
                                " (comments aside) differs: \"" + left + "\" in English, \"" +
                                right + "\" in Chinese");
                break;
            }
        }
    }

    // Links: the same targets, a page with a twin replaced by its twin.
    const auto without_twin_link = [](const Page& page) {
        std::vector<Link> links;
        for (const Link& link : page.links) {
            if (link.line != page.twin_line) {
                links.push_back(link);
            }
        }
        return links;
    };
    const std::vector<Link> links_en = without_twin_link(english);
    const std::vector<Link> links_zh = without_twin_link(chinese);
    if (links_en.size() != links_zh.size()) {
        found.push_back("links: " + en + " has " + std::to_string(links_en.size()) +
                        " links and images, " + zh + " has " + std::to_string(links_zh.size()));
    }
    for (std::size_t i = 0; i < std::min(links_en.size(), links_zh.size()); ++i) {
        Target expected = resolve_target(en, links_en[i].target);
        if (!expected.external) {
            if (const auto twin = tree.twins.find(expected.path); twin != tree.twins.end()) {
                expected.path = twin->second;
            }
        }
        const Target actual = resolve_target(zh, links_zh[i].target);
        // A Chinese page may show the Chinese twin of an English image.
        const bool image_twin =
            links_en[i].image && links_zh[i].image && !expected.external &&
            actual == Target{false, image_twin_path(expected.path), expected.anchor};
        if ((expected != actual && !image_twin) || links_en[i].image != links_zh[i].image) {
            const std::string kind = links_en[i].image ? "image" : "link";
            found.push_back("links: " + kind + " " + std::to_string(i + 1) + " (" +
                            at(en, links_en[i].line) + ", " + at(zh, links_zh[i].line) +
                            ") goes to " + describe(expected) + " in the Chinese page (" +
                            (expected.external ? "the same URL"
                             : tree.twins.contains(resolve_target(en, links_en[i].target).path)
                                 ? "the twin of the English page's target"
                                 : "the English page's target, which has no twin yet") +
                            "), not to " + describe(actual) + " (written " + links_zh[i].target +
                            ")");
        }
    }
    // Every file a Chinese page links to exists, with the anchor named.
    for (const Link& link : chinese.links) {
        const Target target = resolve_target(zh, link.target);
        if (target.external) {
            continue;
        }
        const auto text =
            target.path == zh ? std::optional<std::string>("") : tree.read(target.path);
        if (!text) {
            found.push_back("links: " + at(zh, link.line) + " links to " + target.path +
                            ", which does not exist");
            continue;
        }
        if (target.anchor.empty() || fs::path(target.path).extension() != ".md") {
            continue;
        }
        const Page linked = target.path == zh ? chinese : parse_page(target.path, *text);
        if (!linked.anchors.contains(target.anchor)) {
            found.push_back(
                "anchors: " + at(zh, link.line) + " links to #" + target.anchor + " in " +
                target.path +
                ", which has no such anchor (a heading whose GitHub anchor it is, a {#label}, or "
                "<a id=\"" +
                target.anchor + "\"></a>)");
        }
    }

    // Tables: the same number, each with the same rows and columns.
    if (english.tables.size() != chinese.tables.size()) {
        found.push_back("tables: " + en + " has " + std::to_string(english.tables.size()) +
                        " tables, " + zh + " has " + std::to_string(chinese.tables.size()));
    }
    const auto shape = [](const Table& table) {
        std::string text = std::to_string(table.rows.size()) + " rows of ";
        std::set<std::size_t> widths;
        for (const auto& row : table.rows) {
            widths.insert(row.size());
        }
        for (const std::size_t width : widths) {
            text += (width == *widths.begin() ? "" : "/") + std::to_string(width);
        }
        return text + " cells";
    };
    for (std::size_t i = 0; i < std::min(english.tables.size(), chinese.tables.size()); ++i) {
        const Table& a = english.tables[i];
        const Table& b = chinese.tables[i];
        bool same = a.rows.size() == b.rows.size();
        for (std::size_t row = 0; same && row < a.rows.size(); ++row) {
            same = a.rows[row].size() == b.rows[row].size();
        }
        if (!same) {
            found.push_back("tables: table " + std::to_string(i + 1) + " (" + at(en, a.line) +
                            ", " + at(zh, b.line) + ") has " + shape(a) + " in English, " +
                            shape(b) + " in Chinese");
        }
    }

    // The twin links at the top.
    if (english.twin_text != english_twin_line(en)) {
        found.push_back("twin links: the first line after " + en + "'s first heading (" +
                        at(en, english.twin_line) + ") must be \"" + english_twin_line(en) +
                        "\", not \"" + english.twin_text + "\"");
    }
    if (chinese.twin_text != chinese_twin_line(en)) {
        found.push_back("twin links: the first line after " + zh + "'s first heading (" +
                        at(zh, chinese.twin_line) + ") must be \"" + chinese_twin_line(en) +
                        "\", not \"" + chinese.twin_text + "\"");
    }
    return found;
}

// --- the list of twins (docs/twins.md) -----------------------------------------

/// One row of docs/twins.md.
struct TwinEntry {
    int line = 0;
    std::string english;
    std::string chinese;
    std::string status;   ///< "translated" or "pending"
    std::string in_step;  ///< the fingerprint of the English page the twin is in step with
};

/**
 * A fingerprint of a page's text that a change of wording changes and a change
 * of line breaks or indentation does not: FNV-1a (64 bits) of its words, in
 * hexadecimal (16 digits).
 */
inline std::string fingerprint(std::string_view text) {
    std::uint64_t hash = 14695981039346656037ULL;
    const auto add = [&](unsigned char byte) {
        hash ^= byte;
        hash *= 1099511628211ULL;
    };
    bool space = false;
    bool started = false;
    for (const char c : text) {
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            space = started;
            continue;
        }
        if (space) {
            add(' ');
            space = false;
        }
        add(static_cast<unsigned char>(c));
        started = true;
    }
    static const char* const kDigits = "0123456789abcdef";
    std::string hex(16, '0');
    for (int i = 15; i >= 0; --i, hash >>= 4) {
        hex[static_cast<std::size_t>(i)] = kDigits[hash & 0xF];
    }
    return hex;
}

/**
 * The fingerprint docs/twins.md records for an English page: of its text
 * without its twin link line (English | [中文](...)). That line says where
 * the twin is, not what the page says, and the student edition rewrites it
 * when README.student.md becomes the edition's README.md.
 */
inline std::string page_fingerprint(const std::string& text) {
    std::string kept;
    for (const std::string& line : split_lines(text)) {
        if (!line.starts_with("English | [中文](")) {
            kept += line + '\n';
        }
    }
    return fingerprint(kept);
}

/// The columns of the list of twins.
inline const std::vector<std::string>& twins_header() {
    static const std::vector<std::string> kHeader = {"English", "中文", "status", "in step with"};
    return kHeader;
}

/// The rows of every table with the columns of twins_header(); backquotes around cells dropped.
inline std::vector<TwinEntry> parse_twins(const std::string& markdown) {
    std::vector<TwinEntry> entries;
    const Page page = parse_page("docs/twins.md", markdown);
    const auto unquote = [](std::string text) {
        std::erase(text, '`');
        return trim(text);
    };
    for (const Table& table : page.tables) {
        if (table.rows.empty() || table.rows[0] != twins_header()) {
            continue;
        }
        for (std::size_t row = 1; row < table.rows.size(); ++row) {
            const auto& cells = table.rows[row];
            TwinEntry entry;
            entry.line =
                table.line + static_cast<int>(row) + 1;  // the separator row comes after the header
            entry.english = cells.size() > 0 ? unquote(cells[0]) : "";
            entry.chinese = cells.size() > 1 ? unquote(cells[1]) : "";
            entry.status = cells.size() > 2 ? unquote(cells[2]) : "";
            entry.in_step = cells.size() > 3 ? unquote(cells[3]) : "";
            entries.push_back(entry);
        }
    }
    return entries;
}

/**
 * The translated pages whose English page has changed since the twin was last
 * brought in step with it: its fingerprint is no longer the one in the list.
 * The drift check sees a section, a code block, a link or a table that
 * changes; this sees a changed sentence.
 */
inline std::vector<std::string> stale_twins(
    const std::vector<TwinEntry>& entries,
    const std::function<std::optional<std::string>(const std::string&)>& read) {
    std::vector<std::string> stale;
    for (const TwinEntry& entry : entries) {
        const auto english = read(entry.english);
        if (entry.status != "translated" || !english || !read(entry.chinese)) {
            continue;
        }
        const std::string now = page_fingerprint(*english);
        if (now != entry.in_step) {
            stale.push_back("docs/twins.md:" + std::to_string(entry.line) + ": " + entry.english +
                            " has changed since " + entry.chinese +
                            " was brought in step with it (git diff shows what): carry the change "
                            "over, then write " +
                            now + " under \"in step with\" (it says " + entry.in_step + ")");
        }
    }
    return stale;
}

/**
 * The pages a student or instructor reads, which must each have a Chinese
 * twin in the end: the top README and the student edition's, each lesson's
 * and exercise's README, exercises/README.md, every deck, the cheat sheet, the instructor's guide
 * and the readings (those of them that exist).
 */
inline std::vector<std::string> pages_needing_twins(const fs::path& root) {
    std::vector<std::string> pages;
    const auto add = [&](const std::string& path) {
        if (fs::is_regular_file(root / path)) {
            pages.push_back(path);
        }
    };
    add("README.md");
    add("README.student.md");  // the student edition's README.md
    add("exercises/README.md");
    for (const char* folder : {"lessons", "exercises"}) {
        if (!fs::is_directory(root / folder)) {
            continue;
        }
        for (const auto& entry : fs::directory_iterator(root / folder)) {
            const std::string name = entry.path().filename().string();
            if (entry.is_directory() && name.size() > 3 &&
                std::isdigit(static_cast<unsigned char>(name[0])) != 0 &&
                std::isdigit(static_cast<unsigned char>(name[1])) != 0 && name[2] == '_') {
                add(std::string(folder) + "/" + name + "/README.md");
            }
        }
    }
    if (fs::is_directory(root / "slides")) {
        for (const auto& entry : fs::directory_iterator(root / "slides")) {
            const std::string name = entry.path().filename().string();
            static const std::regex kDeck(R"((ex)?[0-9][0-9]_[0-9A-Za-z_]+\.md)");
            if (entry.is_regular_file() && std::regex_match(name, kDeck)) {
                pages.push_back("slides/" + name);
            }
        }
    }
    for (const char* page : {"docs/cheatsheet.md", "docs/instructor.md", "docs/readings.md"}) {
        add(page);
    }
    std::sort(pages.begin(), pages.end());
    return pages;
}

/// Every Chinese page in the tree: *.zh-CN.md anywhere, and the decks in slides/zh-CN/.
inline std::vector<std::string> chinese_pages(const fs::path& root) {
    std::vector<std::string> pages;
    for (auto entry = fs::recursive_directory_iterator(root);
         entry != fs::recursive_directory_iterator(); ++entry) {
        const std::string name = entry->path().filename().string();
        if (entry->is_directory() &&
            (name == ".git" || name == "build" || name == "node_modules")) {
            entry.disable_recursion_pending();
            continue;
        }
        const std::string path = entry->path().lexically_relative(root).generic_string();
        const bool twin = name.size() > 9 && name.ends_with(".zh-CN.md");
        const bool deck = path.rfind("slides/zh-CN/", 0) == 0 && name.ends_with(".md");
        if (entry->is_regular_file() && (twin || deck)) {
            pages.push_back(path);
        }
    }
    std::sort(pages.begin(), pages.end());
    return pages;
}

/**
 * What is wrong with the list of twins: a status other than translated or
 * pending, a twin not where twin_path() puts it, a page listed twice, a page
 * marked translated whose twin is missing, a pending page whose twin exists
 * (mark it translated, so that the drift check compares it), a page that
 * needs a twin but is not listed, a Chinese page that is not listed. A row
 * whose English page does not exist (yet, or no longer: the student edition
 * has no instructor's guide) is fine while its twin does not exist either.
 */
inline std::vector<std::string> twin_list_problems(
    const std::vector<TwinEntry>& entries, const std::vector<std::string>& needing_twins,
    const std::vector<std::string>& chinese,
    const std::function<bool(const std::string&)>& exists) {
    std::vector<std::string> problems;
    std::set<std::string> listed;
    std::set<std::string> listed_chinese;
    for (const TwinEntry& entry : entries) {
        const std::string where = "docs/twins.md:" + std::to_string(entry.line) + ": ";
        if (entry.status != "translated" && entry.status != "pending") {
            problems.push_back(where + "status \"" + entry.status +
                               "\": write translated or pending");
        }
        const bool hex = entry.in_step.size() == 16 &&
                         entry.in_step.find_first_not_of("0123456789abcdef") == std::string::npos;
        if (entry.status == "translated" && !hex) {
            problems.push_back(where + "\"in step with\" is the fingerprint of " + entry.english +
                               " (16 hexadecimal digits; the test that compares it prints it)");
        } else if (entry.status == "pending" && entry.in_step != "—") {
            problems.push_back(where + "a pending row has — under \"in step with\"");
        }
        if (entry.chinese != twin_path(entry.english)) {
            problems.push_back(where + "the twin of " + entry.english + " is " +
                               twin_path(entry.english) + ", not " + entry.chinese);
        }
        if (!listed.insert(entry.english).second) {
            problems.push_back(where + entry.english + " is listed twice");
        }
        listed_chinese.insert(entry.chinese);
        const bool english_exists = exists(entry.english);
        const bool chinese_exists = exists(entry.chinese);
        if (!english_exists && chinese_exists) {
            problems.push_back(where + entry.chinese + " exists, but its English page " +
                               entry.english + " does not");
        } else if (english_exists && entry.status == "translated" && !chinese_exists) {
            problems.push_back(where + entry.english + " is marked translated, but " +
                               entry.chinese + " does not exist");
        } else if (entry.status == "pending" && chinese_exists) {
            problems.push_back(where + entry.chinese +
                               " exists: mark it translated, so that the drift check compares it");
        }
    }
    for (const std::string& page : needing_twins) {
        if (!listed.contains(page)) {
            problems.push_back("docs/twins.md: " + page +
                               " needs a Chinese twin and is not listed (add it: | " + page +
                               " | " + twin_path(page) + " | pending |)");
        }
    }
    for (const std::string& page : chinese) {
        if (!listed_chinese.contains(page)) {
            problems.push_back("docs/twins.md: " + page +
                               " is a Chinese page, but no row names it as a twin");
        }
    }
    return problems;
}

// --- the glossary (docs/glossary.md) -------------------------------------------

/// One term of the glossary.
struct Term {
    int line = 0;
    std::string english;       ///< the English term, its abbreviation removed ("queue pair")
    std::string abbreviation;  ///< "QP", or empty
    std::string chinese;       ///< the Chinese name the literature uses ("队列对")
    /// The 中文 column in full-width brackets: a description in everyday words, used freely.
    bool description = false;
    /// What Chinese pages write: the Chinese name, or the English kept.
    std::string pages;
    std::vector<std::string> avoid;
    std::string definition;
    std::string definition_zh;
    /// True when Chinese pages keep the English word (QP, rkey, verbs).
    [[nodiscard]] bool kept() const { return pages != chinese; }
};

struct Glossary {
    std::vector<Term> terms;
    std::vector<std::string> errors;  ///< rows that break the format (the check fails on any)
    /// The term whose English or abbreviation is @p english (case aside), or nullptr.
    [[nodiscard]] const Term* find(std::string_view english) const {
        const std::string wanted = lowercase_ascii(std::string(english));
        for (const Term& term : terms) {
            if (lowercase_ascii(term.english) == wanted ||
                (!term.abbreviation.empty() && lowercase_ascii(term.abbreviation) == wanted)) {
                return &term;
            }
        }
        return nullptr;
    }
};

inline const std::vector<std::string>& glossary_header() {
    static const std::vector<std::string> kHeader = {"English", "中文",       "Chinese pages write",
                                                     "avoid",   "definition", "释义"};
    return kHeader;
}

/// Full-width brackets, as UTF-8.
inline constexpr std::string_view kOpenFull = "（";
inline constexpr std::string_view kCloseFull = "）";

/// The terms of every table of @p markdown whose header is glossary_header(), and what is wrong
/// with any row.
inline Glossary parse_glossary(const std::string& markdown) {
    Glossary glossary;
    const Page page = parse_page("docs/glossary.md", markdown);
    static const std::regex kAbbreviation(R"(^(.*?)\s*\(([^()]+)\)$)");
    for (const Table& table : page.tables) {
        if (table.rows.empty() || table.rows[0] != glossary_header()) {
            continue;
        }
        for (std::size_t row = 1; row < table.rows.size(); ++row) {
            const auto& cells = table.rows[row];
            const int line = table.line + static_cast<int>(row) + 1;
            const std::string where = "docs/glossary.md:" + std::to_string(line) + ": ";
            if (cells.size() != glossary_header().size()) {
                glossary.errors.push_back(where + std::to_string(cells.size()) +
                                          " cells; a row has " +
                                          std::to_string(glossary_header().size()));
                continue;
            }
            Term term;
            term.line = line;
            std::smatch match;
            if (std::regex_match(cells[0], match, kAbbreviation)) {
                term.english = match[1].str();
                term.abbreviation = match[2].str();
            } else {
                term.english = cells[0];
            }
            term.chinese = cells[1];
            if (term.chinese.starts_with(kOpenFull) && term.chinese.ends_with(kCloseFull)) {
                term.description = true;
                term.chinese = trim(term.chinese.substr(
                    kOpenFull.size(), term.chinese.size() - kOpenFull.size() - kCloseFull.size()));
            }
            term.pages = cells[2];
            if (cells[3] != "—" && !cells[3].empty()) {
                std::string rest = cells[3];
                for (std::size_t at; (at = rest.find("、")) != std::string::npos;
                     rest.erase(0, at + 3)) {
                    term.avoid.push_back(trim(rest.substr(0, at)));
                }
                term.avoid.push_back(trim(rest));
            }
            term.definition = cells[4];
            term.definition_zh = cells[5];
            for (std::size_t cell = 0; cell < 4; ++cell) {
                if (cells[cell].find('`') != std::string::npos) {
                    glossary.errors.push_back(
                        where +
                        "no code marks (`) in the first four columns: they are matched as written");
                }
            }
            if (term.english.empty() || term.chinese.empty() || term.pages.empty() ||
                term.definition.empty() || term.definition_zh.empty()) {
                glossary.errors.push_back(where + "every column but \"avoid\" needs text");
            }
            if (term.kept() && term.pages != term.abbreviation && term.pages != term.english) {
                glossary.errors.push_back(
                    where + "\"Chinese pages write\" is either the 中文 column (" + term.chinese +
                    ") or the English kept (" +
                    (term.abbreviation.empty() ? term.english : term.abbreviation) + "), not \"" +
                    term.pages + "\"");
            }
            // English with a Chinese example at most ("Step 5" is 第 5 步), and Chinese.
            std::size_t latin = 0;
            std::size_t han = 0;
            for (std::size_t at = 0; at < term.definition.size();) {
                const char32_t point = next_code_point(term.definition, at);
                latin += (point < 0x80 && std::isalpha(static_cast<int>(point)) != 0) ? 1 : 0;
                han += is_han(point) ? 1 : 0;
            }
            if (latin <= han || !has_han(term.definition_zh)) {
                glossary.errors.push_back(where +
                                          "the definition is in English, the 释义 in Chinese");
            }
            if (glossary.find(term.english) != nullptr) {
                glossary.errors.push_back(where + "\"" + term.english +
                                          "\" is in the glossary twice");
            }
            glossary.terms.push_back(term);
        }
    }
    // A rendering to avoid must not be what another row asks for.
    for (const Term& term : glossary.terms) {
        for (const std::string& wrong : term.avoid) {
            for (const Term& other : glossary.terms) {
                if (wrong == other.pages || (!other.description && wrong == other.chinese)) {
                    glossary.errors.push_back("docs/glossary.md:" + std::to_string(term.line) +
                                              ": \"" + wrong + "\" is to be avoided, but line " +
                                              std::to_string(other.line) + " asks for it");
                }
            }
        }
    }
    if (glossary.terms.empty()) {
        glossary.errors.emplace_back(
            "docs/glossary.md: no table with the columns | English | 中文 | Chinese pages "
            "write | avoid | definition | 释义 |");
    }
    return glossary;
}

/// The Chinese headings of a deck's objectives, recap and what-can-go-wrong slides, from the
/// glossary.
struct DeckHeadings {
    std::string objectives = "Objectives";
    std::string recap = "Recap";
    std::string what_can_go_wrong = "What can go wrong";
};

inline DeckHeadings chinese_deck_headings(const Glossary& glossary) {
    DeckHeadings headings;
    for (auto [english, chinese] :
         {std::pair{"objectives", &headings.objectives}, std::pair{"recap", &headings.recap},
          std::pair{"what can go wrong", &headings.what_can_go_wrong}}) {
        const Term* term = glossary.find(english);
        *chinese = term != nullptr
                       ? term->pages
                       : "(docs/glossary.md has no row \"" + std::string(english) + "\")";
    }
    return headings;
}

// --- the glossary check ----------------------------------------------------------

/**
 * The prose of a Chinese page, where the glossary applies, with everything
 * else blanked (replaced by '\x01', so that offsets and lines stay): code
 * blocks but the comments in them, inline code, link targets, HTML tags,
 * URLs and the marks of HTML comments (speaker notes are prose).
 */
struct Prose {
    std::string text;                                        ///< the page, non-prose blanked
    std::vector<std::pair<std::size_t, std::size_t>> units;  ///< paragraphs, and comments in code
    std::vector<std::pair<std::size_t, std::size_t>>
        latin_link_texts;         ///< [text] with no Chinese in it
    std::vector<bool> table_row;  // per line: a table row
    std::vector<std::size_t> line_starts;
    [[nodiscard]] int line_of(std::size_t offset) const {
        return static_cast<int>(std::upper_bound(line_starts.begin(), line_starts.end(), offset) -
                                line_starts.begin());
    }
};

inline constexpr char kBlank = '\x01';

inline Prose prose_of(const std::string& markdown) {
    Prose prose;
    prose.text = markdown;
    std::string& text = prose.text;
    const auto blank = [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end && i < text.size(); ++i) {
            if (text[i] != '\n') {
                text[i] = kBlank;
            }
        }
    };
    const std::vector<std::string> lines = split_lines(markdown);
    std::size_t offset = 0;
    for (const std::string& line : lines) {
        prose.line_starts.push_back(offset);
        offset += line.size() + 1;
    }
    // Code blocks: blanked, their comments kept (each is a unit of its own).
    std::vector<bool> in_code(lines.size(), false);
    for (const CodeBlock& block : code_blocks(markdown)) {
        const std::size_t open = static_cast<std::size_t>(block.line) - 1;
        const std::size_t close = std::min(open + block.lines.size() + 1, lines.size() - 1);
        for (std::size_t row = open; row <= close; ++row) {
            in_code[row] = true;
            blank(prose.line_starts[row], prose.line_starts[row] + lines[row].size());
        }
        const CommentStyle style = comment_style(block.language);
        if (style != CommentStyle::c && style != CommentStyle::hash) {
            continue;
        }
        for (const CommentSpan& span : comment_spans(block.lines, style)) {
            const std::size_t start = prose.line_starts[open + 1 + span.line];
            for (std::size_t i = span.begin; i < span.end; ++i) {
                text[start + i] = markdown[start + i];
            }
            prose.units.emplace_back(start + span.begin, start + span.end);
        }
    }
    // Paragraphs: runs of non-blank lines outside code blocks.
    for (std::size_t row = 0; row < lines.size();) {
        if (in_code[row] || trim(lines[row]).empty()) {
            ++row;
            continue;
        }
        const std::size_t first = row;
        while (row < lines.size() && !in_code[row] && !trim(lines[row]).empty()) {
            ++row;
        }
        prose.units.emplace_back(prose.line_starts[first],
                                 prose.line_starts[row - 1] + lines[row - 1].size());
    }
    for (std::size_t row = 0; row < lines.size(); ++row) {
        prose.table_row.push_back(!in_code[row] && trim(lines[row]).starts_with("|"));
    }
    // Inline code: a run of backquotes to the next run as long, within a paragraph.
    for (std::size_t at = 0; (at = text.find('`', at)) != std::string::npos;) {
        const std::size_t run = text.find_first_not_of('`', at) == std::string::npos
                                    ? text.size() - at
                                    : text.find_first_not_of('`', at) - at;
        std::size_t close = at + run;
        while ((close = text.find(std::string(run, '`'), close)) != std::string::npos &&
               text.compare(close + run, 1, "`") == 0) {
            close = text.find_first_not_of('`', close);
        }
        const std::size_t paragraph_end = text.find("\n\n", at);
        if (close == std::string::npos || close > paragraph_end) {
            at += run;
            continue;
        }
        blank(at, close + run);
        at = close + run;
    }
    // Link targets, and the text of links written in Latin letters only (titles, names).
    for (std::size_t at = 0; (at = text.find("](", at)) != std::string::npos;) {
        std::size_t end = at + 2;
        for (int depth = 0; end < text.size() && text[end] != '\n'; ++end) {
            if (text[end] == '(') {
                ++depth;
            } else if (text[end] == ')' && depth-- == 0) {
                break;
            }
        }
        if (end >= text.size() || text[end] != ')') {
            at += 2;
            continue;
        }
        for (std::size_t back = at, depth = 0; back-- > 0;) {
            if (text[back] == ']') {
                ++depth;
            } else if (text[back] == '[' && depth-- == 0) {
                if (!has_han(std::string_view(text).substr(back, at - back))) {
                    prose.latin_link_texts.emplace_back(back, at);
                }
                break;
            }
        }
        blank(at + 1, end + 1);
        at = end;
    }
    // HTML tags, the marks of HTML comments, URLs.
    static const std::regex kTag(R"(<[A-Za-z/][^<>\n]*>|<!--|-->|https?://[^\s)>\]\x01]+)");
    std::vector<std::pair<std::size_t, std::size_t>> tags;
    for (auto match = std::sregex_iterator(text.begin(), text.end(), kTag);
         match != std::sregex_iterator(); ++match) {
        tags.emplace_back(static_cast<std::size_t>(match->position(0)),
                          static_cast<std::size_t>(match->position(0) + match->length(0)));
    }
    for (const auto& [begin, end] : tags) {
        blank(begin, end);
    }
    return prose;
}

/// A place where a Chinese page uses a term differently from the glossary.
struct GlossaryFinding {
    int line = 0;
    std::string what;
};

/**
 * Where the Chinese page @p markdown uses a term differently from the
 * glossary. In its prose (text, table cells, headings, speaker notes, the
 * comments inside code blocks; not code, inline code, link targets):
 *  1. a rendering in a term's "avoid" column appears;
 *  2. a term kept in English (QP, rkey, verbs) appears as its Chinese name
 *     without the English beside it: a gloss is the name followed by brackets
 *     that hold the English, 队列对（QP）, or inside brackets that hold or
 *     follow the English, QP（队列对）, or on a table row that names the English;
 *  3. a term Chinese pages translate appears in English, in a paragraph or
 *     comment written in Chinese, outside brackets and outside a link whose
 *     text is all Latin letters (a title).
 * An appearance inside a longer glossary name does not count (接收队列 in 共享接收队列).
 * A description in the 中文 column (in （…）) is free to use.
 */
inline std::vector<GlossaryFinding> glossary_findings(const std::string& markdown,
                                                      const Glossary& glossary) {
    const Prose prose = prose_of(markdown);
    const std::string& text = prose.text;
    std::vector<GlossaryFinding> found;

    // Brackets, half- and full-width: each group's [open, close) range.
    std::vector<std::pair<std::size_t, std::size_t>> groups;
    {
        std::vector<std::size_t> open;
        for (std::size_t at = 0; at < text.size();) {
            const std::size_t start = at;
            const char32_t point = next_code_point(text, at);
            if (point == '(' || point == 0xFF08) {
                open.push_back(start);
            } else if ((point == ')' || point == 0xFF09) && !open.empty()) {
                groups.emplace_back(open.back(), at);
                open.pop_back();
            }
        }
    }
    const auto inside_group = [&](std::size_t begin, std::size_t end) {
        return std::any_of(groups.begin(), groups.end(), [&](const auto& group) {
            return group.first < begin && end <= group.second;
        });
    };

    // The glossary's own names: a match inside a longer one does not count.
    std::vector<std::pair<std::size_t, std::size_t>> names;
    for (const Term& term : glossary.terms) {
        for (const std::string* name : {&term.chinese, &term.pages}) {
            if ((name == &term.chinese && term.description) || !has_han(*name)) {
                continue;
            }
            for (std::size_t at = 0; (at = text.find(*name, at)) != std::string::npos;
                 at += name->size()) {
                names.emplace_back(at, at + name->size());
            }
        }
    }
    const auto covered = [&](std::size_t begin, std::size_t end) {
        return std::any_of(names.begin(), names.end(), [&](const auto& name) {
            return name.first <= begin && end <= name.second &&
                   name.second - name.first > end - begin;
        });
    };

    // English in a piece of the original text: an abbreviation as written, a term in any case.
    const auto latin_word_at = [](std::string_view haystack, std::size_t at, std::size_t length) {
        const auto word = [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
        };
        return (at == 0 || !word(haystack[at - 1])) &&
               (at + length >= haystack.size() || !word(haystack[at + length]));
    };
    const auto names_english = [&](const Term& term, std::string_view piece) {
        const std::string lower = lowercase_ascii(std::string(piece));
        // The abbreviation and the word pages write as written; the English term in any case.
        const std::vector<std::pair<std::string, bool>> forms = {
            {term.abbreviation, true}, {term.pages, true}, {term.english, false}};
        for (const auto& [form, exact] : forms) {
            if (form.empty() || has_han(form)) {
                continue;
            }
            const std::string hay = exact ? std::string(piece) : lower;
            const std::string needle = exact ? form : lowercase_ascii(form);
            for (std::size_t at = 0; (at = hay.find(needle, at)) != std::string::npos; ++at) {
                if (latin_word_at(hay, at, needle.size())) {
                    return true;
                }
            }
        }
        return false;
    };
    const auto skip_blanks = [&](std::size_t at) {
        while (at < text.size() && (text[at] == ' ' || text[at] == '\n' || text[at] == '\t')) {
            ++at;
        }
        return at;
    };
    const auto glossed = [&](const Term& term, std::size_t begin, std::size_t end) {
        // 队列对（QP）: brackets right after it that hold the English.
        const std::size_t next = skip_blanks(end);
        for (const auto& group : groups) {
            if (group.first == next &&
                names_english(term, std::string_view(markdown).substr(
                                        group.first, group.second - group.first))) {
                return true;
            }
        }
        // QP（队列对）, （Queue Pair，队列对，QP）: inside brackets that hold or follow the
        // English.
        for (const auto& group : groups) {
            if (group.first < begin && end <= group.second) {
                if (names_english(term, std::string_view(markdown).substr(
                                            group.first, group.second - group.first))) {
                    return true;
                }
                std::size_t before = group.first;
                while (before > 0 &&
                       (markdown[before - 1] == ' ' || markdown[before - 1] == '\t')) {
                    --before;
                }
                const std::size_t line_start = markdown.rfind('\n', before == 0 ? 0 : before - 1);
                const std::size_t from = line_start == std::string::npos ? 0 : line_start + 1;
                const std::string_view left =
                    std::string_view(markdown).substr(from, before - from);
                for (const std::string& form : {term.abbreviation, term.pages, term.english}) {
                    if (!form.empty() && !has_han(form) && left.size() >= form.size() &&
                        lowercase_ascii(std::string(left.substr(left.size() - form.size()))) ==
                            lowercase_ascii(form)) {
                        return true;
                    }
                }
            }
        }
        // A table row that names the English in another cell.
        const int line = prose.line_of(begin);
        if (prose.table_row[static_cast<std::size_t>(line - 1)]) {
            const std::size_t start = prose.line_starts[static_cast<std::size_t>(line - 1)];
            const std::size_t stop = markdown.find('\n', start);
            if (names_english(term, std::string_view(markdown).substr(
                                        start, stop == std::string::npos ? std::string::npos
                                                                         : stop - start))) {
                return true;
            }
        }
        return false;
    };
    const auto english_name = [](const Term& term) {
        return term.abbreviation.empty() ? term.english
                                         : term.english + " (" + term.abbreviation + ")";
    };

    for (const Term& term : glossary.terms) {
        // 1. Renderings to avoid.
        for (const std::string& wrong : term.avoid) {
            for (std::size_t at = 0; (at = text.find(wrong, at)) != std::string::npos;
                 at += wrong.size()) {
                if (!covered(at, at + wrong.size())) {
                    found.push_back({prose.line_of(at),
                                     "\"" + wrong + "\" is not this course's word for " +
                                         english_name(term) + ": write \"" + term.pages + "\""});
                }
            }
        }
        // 2. A term kept in English, written in Chinese without its English beside it.
        if (term.kept() && !term.description && has_han(term.chinese)) {
            for (std::size_t at = 0; (at = text.find(term.chinese, at)) != std::string::npos;
                 at += term.chinese.size()) {
                if (!covered(at, at + term.chinese.size()) &&
                    !glossed(term, at, at + term.chinese.size())) {
                    found.push_back({prose.line_of(at),
                                     "\"" + term.chinese + "\" alone: Chinese pages write \"" +
                                         term.pages + "\" for " + english_name(term) +
                                         ", the Chinese name only as a gloss beside it, " +
                                         term.chinese + "（" + term.pages + "）"});
                }
            }
        }
        // 3. A term Chinese pages translate, left in English in Chinese text.
        if (!term.kept() && !term.english.empty()) {
            const std::string lower = lowercase_ascii(term.english);
            const std::string lower_text = lowercase_ascii(text);
            for (std::size_t at = 0; (at = lower_text.find(lower, at)) != std::string::npos; ++at) {
                const auto boundary = [&](std::size_t i, bool before) {
                    if (before ? i == 0 : i >= text.size()) {
                        return true;
                    }
                    const char c = text[before ? i - 1 : i];
                    const bool joined =
                        std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' ||
                        c == '/' ||
                        (c == '.' &&
                         (before || (i + 1 < text.size() &&
                                     std::isalnum(static_cast<unsigned char>(text[i + 1])) != 0)));
                    return !joined;
                };
                // The term, or its plural.
                std::size_t end = at + lower.size();
                if (lower_text.compare(end, 1, "s") == 0 && boundary(end + 1, false)) {
                    end += 1;
                } else if (lower_text.compare(end, 2, "es") == 0 && boundary(end + 2, false)) {
                    end += 2;
                }
                // As written, or with a capital first letter (a sentence or heading starts with
                // it).
                const std::string written = text.substr(at, lower.size());
                std::string capitalised = term.english;
                capitalised[0] =
                    static_cast<char>(std::toupper(static_cast<unsigned char>(capitalised[0])));
                if (!boundary(at, true) || !boundary(end, false) ||
                    (written != term.english && written != capitalised)) {
                    continue;
                }
                const bool in_chinese_unit =
                    std::any_of(prose.units.begin(), prose.units.end(), [&](const auto& unit) {
                        return unit.first <= at && end <= unit.second &&
                               has_han(std::string_view(text).substr(unit.first,
                                                                     unit.second - unit.first));
                    });
                const bool in_latin_link = std::any_of(
                    prose.latin_link_texts.begin(), prose.latin_link_texts.end(),
                    [&](const auto& link) { return link.first <= at && end <= link.second; });
                if (in_chinese_unit && !in_latin_link && !inside_group(at, end)) {
                    found.push_back({prose.line_of(at),
                                     "\"" + text.substr(at, end - at) +
                                         "\" left in English: Chinese pages write \"" + term.pages +
                                         "\" (the English only as a gloss in brackets)"});
                }
            }
        }
    }
    std::stable_sort(found.begin(), found.end(),
                     [](const auto& a, const auto& b) { return a.line < b.line; });
    return found;
}

/**
 * Lines of Chinese prose broken between two Chinese characters (or Chinese
 * punctuation): a browser shows the line break as a space there, which
 * Chinese text does not have. Break a line next to a Latin word or a space,
 * or not at all.
 */
inline std::vector<GlossaryFinding> broken_lines(const std::string& markdown) {
    const Prose prose = prose_of(markdown);
    const std::vector<std::string> lines = split_lines(prose.text);
    std::vector<GlossaryFinding> found;
    const auto last_point = [](const std::string& line) {
        const std::string text = rtrim(line);
        std::size_t at = text.size();
        while (at > 0 && (static_cast<unsigned char>(text[at - 1]) & 0xC0) == 0x80) {
            --at;
        }
        if (at > 0) {
            --at;
        }
        return at < text.size() ? next_code_point(text, at) : char32_t{0};
    };
    const auto first_point = [](const std::string& line) {
        const std::string text = trim(line);
        std::size_t at = 0;
        return text.empty() ? char32_t{0} : next_code_point(text, at);
    };
    const auto chinese = [](char32_t point) { return is_han(point) || is_cjk_punctuation(point); };
    for (std::size_t row = 0; row + 1 < lines.size(); ++row) {
        if (chinese(last_point(lines[row])) && chinese(first_point(lines[row + 1])) &&
            !prose.table_row[row] && !prose.table_row[row + 1]) {
            found.push_back({static_cast<int>(row) + 1,
                             "a line break between two Chinese characters shows as a space"});
        }
    }
    return found;
}

}  // namespace docs

// SPDX-License-Identifier: MIT
// The drift check: code on the slides must still be code in the lessons.
//
// A C or C++ code block in a deck (slides/*.md) names the file it quotes in its
// fence, e.g. "```cpp lessons/01_devices/main.cpp" (or a system header:
// "```c <infiniband/verbs.h>"). The block must appear in
// that file, whitespace aside (line breaks and indentation may differ, so a
// re-formatted lesson still matches). A line "// ..." in a block skips code:
// the pieces before and after it must appear in that order. When a lesson
// changes, the slide that quotes it fails here until it is updated.
//
// A text block may quote too: "```text lessons/11_rdma_cm/README.md" (the
// expected output of a run, as the lesson's README records it) is checked the
// same way; a text block that names no file is not checked.
//
// A quote of the course's own code must be whole statements: no bracket left
// open, no statement cut off, not comments alone.
//
// Also checked: every image a deck shows exists, and every deck has the parts
// a class needs (an objectives slide, a recap, speaker notes on every slide;
// a lesson or exercise deck also the code it teaches, the expected output of
// a run and what can go wrong). No npm, no network.
//
// The Chinese decks (slides/zh-CN/) are checked the same way. Their code
// quotes may translate the comments, so there the comments are left out on
// both sides; their objectives, recap and what-can-go-wrong slides are found
// by the Chinese headings docs/glossary.md gives for those words.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "docs/translation.hpp"
#include "support/catch.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kSourceDir = LAB_SOURCE_DIR;

using docs::code_blocks;
using docs::CodeBlock;
using docs::is_c_or_cpp;
using docs::read_file;
using docs::trim;

/// The text with all whitespace removed: quotes survive re-indenting and re-wrapping.
std::string without_whitespace(std::string_view text) {
    std::string result;
    for (const char c : text) {
        if (std::isspace(static_cast<unsigned char>(c)) == 0) {
            result += c;
        }
    }
    return result;
}

bool is_elision(const std::string& line) {
    const std::string stripped = trim(line);
    return stripped == "// ..." || stripped == "..." || stripped == "/* ... */";
}

/// The pieces of a block between elision lines, whitespace removed, empty ones dropped.
std::vector<std::string> pieces(const std::vector<std::string>& lines) {
    std::vector<std::string> result{""};
    for (const std::string& line : lines) {
        if (is_elision(line)) {
            result.emplace_back();
        } else {
            result.back() += without_whitespace(line);
        }
    }
    std::erase_if(result, [](const std::string& piece) { return piece.empty(); });
    return result;
}

/// Empty when every piece appears in @p file_text in order; else the first piece that does not.
std::optional<std::string> first_missing_piece(const std::vector<std::string>& block_lines,
                                               const std::string& file_text) {
    const std::string haystack = without_whitespace(file_text);
    std::size_t from = 0;
    for (const std::string& piece : pieces(block_lines)) {
        const std::size_t at = haystack.find(piece, from);
        if (at == std::string::npos) {
            return piece;
        }
        from = at + piece.size();
    }
    return std::nullopt;
}

/**
 * Why a quote is not whole statements, or nothing when it is. A slide that
 * stops inside a call, or shows a comment where the code should be, teaches a
 * fragment: every bracket a quote opens must close in it (a line "// ..." may
 * stand for the code in between), and its last code must end a statement
 * (";" or "}") or be a preprocessor line. Comments, string and character
 * literals are skipped, so brackets inside them do not count.
 */
std::optional<std::string> statement_problem(const std::vector<std::string>& lines) {
    std::string code;  // the quote without comments, literals and elisions
    bool in_block_comment = false;
    for (const std::string& line : lines) {
        if (is_elision(line)) {
            continue;
        }
        for (std::size_t i = 0; i < line.size(); ++i) {
            if (in_block_comment) {
                if (line.compare(i, 2, "*/") == 0) {
                    in_block_comment = false;
                    ++i;
                }
            } else if (line.compare(i, 2, "/*") == 0) {
                in_block_comment = true;
                ++i;
            } else if (line.compare(i, 2, "//") == 0) {
                break;
            } else if (line[i] == '"' || line[i] == '\'') {
                const char quote = line[i];
                for (++i; i < line.size() && line[i] != quote; ++i) {
                    i += line[i] == '\\' ? 1 : 0;
                }
                code += "0";
            } else {
                code += line[i];
            }
        }
        code += '\n';
    }
    const std::string last_line = [&] {
        std::istringstream in(code);
        std::string line;
        std::string last;
        while (std::getline(in, line)) {
            if (!trim(line).empty()) {
                last = trim(line);
            }
        }
        return last;
    }();
    if (last_line.empty()) {
        return "it holds comments only: show the code they describe";
    }
    std::string open;
    for (const char c : code) {
        if (c == '(' || c == '[' || c == '{') {
            open += c;
        } else if (c == ')' || c == ']' || c == '}') {
            const char expected = c == ')' ? '(' : c == ']' ? '[' : '{';
            if (open.empty() || open.back() != expected) {
                return std::string("'") + c + "' closes a bracket the quote did not open";
            }
            open.pop_back();
        }
    }
    if (!open.empty()) {
        return std::string("'") + open.back() +
               "' is never closed: quote to the end of the statement (\"// ...\" may skip "
               "the middle)";
    }
    if (last_line.front() != '#' && last_line.back() != ';' && last_line.back() != '}') {
        return "it stops inside a statement, after \"" + last_line + "\"";
    }
    return std::nullopt;
}

/// True for a system header such as <infiniband/verbs.h> (the verbs' own
/// declarations, quoted on some slides), false for a path in this repository.
bool is_system_header(const std::string& source) {
    return source.size() > 2 && source.front() == '<' && source.back() == '>';
}

/// A quoted file: a path in this repository, or a system header.
fs::path resolve(const std::string& source) {
    if (is_system_header(source)) {
        const std::string header = source.substr(1, source.size() - 2);
        for (const char* include_dir : {"/usr/include", "/usr/local/include"}) {
            const fs::path candidate = fs::path(include_dir) / header;
            if (fs::is_regular_file(candidate)) {
                return candidate;
            }
        }
        return fs::path("/usr/include") / header;
    }
    return kSourceDir / source;
}

/// Every deck: slides/*.md, then the Chinese ones, slides/zh-CN/*.md.
std::vector<fs::path> decks() {
    std::vector<fs::path> result;
    for (const fs::path& folder : {kSourceDir / "slides", kSourceDir / "slides" / "zh-CN"}) {
        if (!fs::is_directory(folder)) {
            continue;
        }
        std::vector<fs::path> found;
        for (const auto& entry : fs::directory_iterator(folder)) {
            if (entry.path().extension() == ".md" && entry.path().filename() != "README.md") {
                found.push_back(entry.path());
            }
        }
        std::sort(found.begin(), found.end());
        result.insert(result.end(), found.begin(), found.end());
    }
    return result;
}

bool is_chinese_deck(const fs::path& deck) {
    return deck.parent_path().filename() == "zh-CN";
}

/// The deck's path in the repository, for messages: slides/NAME.md or slides/zh-CN/NAME.md.
std::string deck_name(const fs::path& deck) {
    return deck.lexically_relative(kSourceDir).generic_string();
}

/**
 * What a slide quotes, as the check compares it: the whole block in an
 * English deck; in a Chinese one, the block and the file without their
 * comments, which a translation may translate.
 */
std::optional<std::string> missing_quote(const fs::path& deck, const CodeBlock& block,
                                         const fs::path& source) {
    if (!is_chinese_deck(deck)) {
        return first_missing_piece(block.lines, read_file(source));
    }
    const auto uncommented = [](CodeBlock code) {
        // "// ..." stands for code left out: kept, as "...", when the comments go.
        for (std::string& line : code.lines) {
            line = is_elision(line) ? "..." : line;
        }
        return docs::code_without_comments(code);
    };
    CodeBlock file;
    file.language = block.language;
    file.lines = docs::split_lines(read_file(source));
    std::string file_text;
    for (const std::string& line : uncommented(file)) {
        file_text += line + "\n";
    }
    return first_missing_piece(uncommented(block), file_text);
}

/// Image paths of Markdown images "![...](path)" in a deck.
std::vector<std::string> images(const std::string& markdown) {
    std::vector<std::string> result;
    std::size_t at = 0;
    while ((at = markdown.find("![", at)) != std::string::npos) {
        const std::size_t close = markdown.find("](", at);
        const std::size_t end = close == std::string::npos ? close : markdown.find(')', close);
        if (end == std::string::npos) {
            break;
        }
        result.push_back(markdown.substr(close + 2, end - close - 2));
        at = end;
    }
    return result;
}

}  // namespace

TEST_CASE("the drift check matches quotes whatever their layout", "[docs][drift]") {
    const std::string lesson =
        "int main() {\n"
        "    ibv_pd* pd = ibv_alloc_pd(context);\n"
        "    const int flags = IBV_ACCESS_LOCAL_WRITE |\n"
        "                      IBV_ACCESS_REMOTE_WRITE;\n"
        "    ibv_mr* mr = ibv_reg_mr(pd, buffer, size, flags);\n"
        "}\n";
    CHECK_FALSE(first_missing_piece({"ibv_pd* pd = ibv_alloc_pd(context);"}, lesson));
    // Re-wrapped and re-indented: still the same code.
    CHECK_FALSE(first_missing_piece(
        {"const int flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;"}, lesson));
    // Elided, in order.
    CHECK_FALSE(first_missing_piece({"ibv_pd* pd = ibv_alloc_pd(context);", "// ...",
                                     "ibv_mr* mr = ibv_reg_mr(pd, buffer, size, flags);"},
                                    lesson));
}

TEST_CASE("the drift check catches code that changed", "[docs][drift]") {
    const std::string lesson =
        "ibv_mr* mr = ibv_reg_mr(pd, buffer, size, IBV_ACCESS_LOCAL_WRITE);\n";
    // The slide still shows an argument the lesson no longer has.
    const auto missing =
        first_missing_piece({"ibv_mr* mr = ibv_reg_mr(pd, buffer, size, flags);"}, lesson);
    REQUIRE(missing);
    CHECK(*missing == "ibv_mr*mr=ibv_reg_mr(pd,buffer,size,flags);");
    // Pieces in the wrong order.
    const std::string two = "first();\nsecond();\n";
    CHECK(first_missing_piece({"second();", "// ...", "first();"}, two));
}

TEST_CASE("code blocks and their sources are read from the fence", "[docs][drift]") {
    const auto blocks = code_blocks(
        "# slide\n"
        "```cpp lessons/01_devices/main.cpp\n"
        "int x = 0;\n"
        "```\n"
        "```sh\n"
        "./lab run 01_devices\n"
        "```\n");
    REQUIRE(blocks.size() == 2);
    CHECK(blocks[0].line == 2);
    CHECK(blocks[0].language == "cpp");
    CHECK(blocks[0].source == "lessons/01_devices/main.cpp");
    CHECK(blocks[0].lines == std::vector<std::string>{"int x = 0;"});
    CHECK(blocks[1].language == "sh");
    CHECK(blocks[1].source.empty());
}

TEST_CASE("every C++ block on a slide still appears in the file it quotes", "[docs][drift]") {
    const auto all_decks = decks();
    REQUIRE_FALSE(all_decks.empty());
    int quotes = 0;
    for (const fs::path& deck : all_decks) {
        for (const CodeBlock& block : code_blocks(read_file(deck))) {
            if (!is_c_or_cpp(block.language)) {
                continue;
            }
            INFO(deck_name(deck) << ":" << block.line);
            // Every C/C++ block says what it quotes, so that none can drift unseen.
            REQUIRE_FALSE(block.source.empty());
            const fs::path source = resolve(block.source);
            INFO("quotes " << block.source);
            REQUIRE(fs::is_regular_file(source));
            const auto missing = missing_quote(deck, block, source);
            INFO("this part of the slide is not in "
                 << block.source << " (whitespace ignored): " << missing.value_or(""));
            CHECK_FALSE(missing);
            ++quotes;
        }
    }
    // The decks do quote code; a parser that found none would check nothing.
    CHECK(quotes > 0);
}

TEST_CASE("the statement check tells whole statements from fragments", "[docs][drift]") {
    CHECK_FALSE(statement_problem({"int x = f(1, 2);"}));
    CHECK_FALSE(statement_problem({"if (a) {", "    // ...", "}"}));
    CHECK_FALSE(statement_problem({"check(f(\"(\"), \"no ) here\"); // a ( in a comment"}));
    CHECK_FALSE(statement_problem({"struct S {", "    int a;  ///< one", "    // ...", "};"}));
    CHECK_FALSE(statement_problem({"#include <infiniband/verbs.h>"}));
    CHECK(statement_problem({"// only a comment", "// and another"}));
    CHECK(statement_problem({"check(ibv_post_send(qp, &wr, &bad), \"ibv_post_send\","}));
    CHECK(statement_problem({"if (attr.atomic_cap == IBV_ATOMIC_NONE) {"}));
    CHECK(statement_problem({"x = y)"}));
    CHECK(statement_problem({"int x = 1 +"}));
}

TEST_CASE("every C++ quote of the course's code is whole statements", "[docs][drift]") {
    // The verbs' own headers are quoted in excerpts of declarations; the
    // course's code (lessons, common/, exercises, solutions) is quoted whole.
    int quotes = 0;
    for (const fs::path& deck : decks()) {
        for (const CodeBlock& block : code_blocks(read_file(deck))) {
            if (!is_c_or_cpp(block.language) || block.source.empty() ||
                is_system_header(block.source)) {
                continue;
            }
            const auto problem = statement_problem(block.lines);
            INFO(deck_name(deck) << ":" << block.line << " quotes " << block.source << ": "
                                 << problem.value_or(""));
            CHECK_FALSE(problem);
            ++quotes;
        }
    }
    CHECK(quotes > 0);
}

TEST_CASE("every text block that names a file still appears in it", "[docs][drift]") {
    int quotes = 0;
    for (const fs::path& deck : decks()) {
        for (const CodeBlock& block : code_blocks(read_file(deck))) {
            if (block.language != "text" || block.source.empty()) {
                continue;
            }
            INFO(deck_name(deck) << ":" << block.line << " quotes " << block.source);
            const fs::path source = resolve(block.source);
            REQUIRE(fs::is_regular_file(source));
            const auto missing = missing_quote(deck, block, source);
            INFO("this part of the slide is not in "
                 << block.source << " (whitespace ignored): " << missing.value_or(""));
            CHECK_FALSE(missing);
            ++quotes;
        }
    }
    CHECK(quotes > 0);
}

TEST_CASE("every image on a slide exists", "[docs]") {
    for (const fs::path& deck : decks()) {
        for (const std::string& image : images(read_file(deck))) {
            if (image.rfind("http", 0) == 0) {
                FAIL(deck_name(deck)
                     << " loads " << image << " from the network: decks must work offline");
            }
            INFO(deck_name(deck) << " shows " << image);
            CHECK(fs::is_regular_file(deck.parent_path() / image));
        }
    }
}

TEST_CASE("every lesson deck belongs to a lesson or exercise that exists", "[docs]") {
    // NN_name.md is the deck of lessons/NN_name, exNN_name.md of exercises/NN_name;
    // 00_introduction is the one deck without a folder. A renamed lesson shows up here.
    for (const fs::path& deck : decks()) {
        const std::string name = deck.stem().string();
        if (name == "00_introduction") {
            continue;
        }
        INFO(deck_name(deck));
        if (name.rfind("ex", 0) == 0) {
            CHECK(fs::is_directory(kSourceDir / "exercises" / name.substr(2)));
        } else {
            CHECK(fs::is_directory(kSourceDir / "lessons" / name));
        }
    }
}

namespace {

/// One slide of a deck: its first heading, its speaker notes, its code blocks.
struct Slide {
    int line = 0;            ///< where it starts in the deck, 1-based
    std::string heading;     ///< the text of its first "# " heading
    bool lead = false;       ///< a title slide (class lead)
    bool has_notes = false;  ///< an HTML comment that is not only directives
    std::vector<CodeBlock> blocks;
};

/// True when an HTML comment holds Marp directives only ("_class: lead").
bool is_directive_comment(const std::string& comment) {
    static const std::vector<std::string> kDirectives = {"class",
                                                         "paginate",
                                                         "footer",
                                                         "header",
                                                         "backgroundColor",
                                                         "backgroundImage",
                                                         "backgroundPosition",
                                                         "backgroundRepeat",
                                                         "backgroundSize",
                                                         "color",
                                                         "theme",
                                                         "style",
                                                         "headingDivider",
                                                         "size",
                                                         "math",
                                                         "lang",
                                                         "transition",
                                                         "fragment"};
    std::istringstream lines(comment);
    std::string line;
    bool any = false;
    while (std::getline(lines, line)) {
        std::string text = trim(line);
        if (text.empty()) {
            continue;
        }
        if (text.front() == '_') {
            text.erase(0, 1);
        }
        const auto colon = text.find(':');
        if (colon == std::string::npos ||
            std::find(kDirectives.begin(), kDirectives.end(), trim(text.substr(0, colon))) ==
                kDirectives.end()) {
            return false;
        }
        any = true;
    }
    return any;
}

/// The slides of a Marp deck: split at "---" lines outside code blocks, after the front matter.
std::vector<Slide> slides_of(const std::string& markdown) {
    std::vector<std::string> lines;
    std::istringstream in(markdown);
    for (std::string line; std::getline(in, line);) {
        lines.push_back(line);
    }
    std::size_t index = 0;
    if (!lines.empty() && trim(lines[0]) == "---") {
        for (index = 1; index < lines.size() && trim(lines[index]) != "---"; ++index) {
        }
        ++index;
    }
    std::vector<Slide> slides(1);
    slides.back().line = static_cast<int>(index) + 1;
    std::string text;
    const auto finish = [&] {
        Slide& slide = slides.back();
        for (const CodeBlock& block : code_blocks(text)) {
            slide.blocks.push_back(block);
        }
        // Comments outside code blocks: notes, or directives.
        std::string outside;
        bool in_fence = false;
        std::istringstream body(text);
        for (std::string line; std::getline(body, line);) {
            const std::string stripped = trim(line);
            if (stripped.rfind("```", 0) == 0 || stripped.rfind("~~~", 0) == 0) {
                in_fence = !in_fence;
            } else if (!in_fence) {
                outside += line + "\n";
                if (slide.heading.empty() && stripped.rfind("# ", 0) == 0) {
                    slide.heading = trim(stripped.substr(2));
                }
            }
        }
        for (std::size_t at = 0; (at = outside.find("<!--", at)) != std::string::npos;) {
            const std::size_t end = outside.find("-->", at);
            const std::string comment = outside.substr(at + 4, end - at - 4);
            if (is_directive_comment(comment)) {
                slide.lead = slide.lead || comment.find("lead") != std::string::npos;
            } else if (!trim(comment).empty()) {
                slide.has_notes = true;
            }
            at = end == std::string::npos ? outside.size() : end;
        }
    };
    bool in_fence = false;
    for (std::size_t i = index; i < lines.size(); ++i) {
        const std::string stripped = trim(lines[i]);
        if (stripped.rfind("```", 0) == 0 || stripped.rfind("~~~", 0) == 0) {
            in_fence = !in_fence;
        }
        if (!in_fence && stripped == "---" && (i == 0 || trim(lines[i - 1]).empty())) {
            finish();
            text.clear();
            slides.emplace_back();
            slides.back().line = static_cast<int>(i) + 2;
            continue;
        }
        text += lines[i] + "\n";
    }
    finish();
    return slides;
}

/// True when @p heading starts with @p word, ASCII case aside ("Objectives" for "objectives").
bool starts_with_word(const std::string& heading, std::string_view word) {
    if (heading.size() < word.size()) {
        return false;
    }
    for (std::size_t i = 0; i < word.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(heading[i])) !=
            std::tolower(static_cast<unsigned char>(word[i]))) {
            return false;
        }
    }
    return true;
}

/**
 * What a deck lacks of the parts a class needs; empty when it is complete.
 * @p headings are the words its objectives, recap and what-can-go-wrong
 * slides start with: English by default, the glossary's Chinese for a deck
 * in slides/zh-CN/.
 */
std::vector<std::string> missing_parts(const std::string& name, const std::string& markdown,
                                       const docs::DeckHeadings& headings = {}) {
    const std::vector<Slide> slides = slides_of(markdown);
    std::vector<std::string> missing;
    const auto has_heading = [&](std::string_view word) {
        return std::any_of(slides.begin(), slides.end(), [&](const Slide& slide) {
            return starts_with_word(slide.heading, word);
        });
    };
    if (!has_heading(headings.objectives)) {
        missing.emplace_back("an objectives slide (heading \"" + headings.objectives + "\")");
    }
    if (!has_heading(headings.recap)) {
        missing.emplace_back("a recap slide (heading \"" + headings.recap + "\")");
    }
    for (std::size_t i = 0; i < slides.size(); ++i) {
        if (!slides[i].has_notes && !slides[i].lead) {
            missing.push_back("speaker notes on slide " + std::to_string(i + 1) + " (line " +
                              std::to_string(slides[i].line) + ")");
        }
    }
    if (name == "00_introduction") {
        return missing;
    }
    // A lesson or exercise deck: the code it teaches, its output, its errors.
    const std::string folder = name.rfind("ex", 0) == 0 ? "exercises/" + name.substr(2, 2)
                                                        : "lessons/" + name.substr(0, 2);
    bool quotes_code = false;
    bool quotes_output = false;
    for (const Slide& slide : slides) {
        for (const CodeBlock& block : slide.blocks) {
            const bool own = block.source.rfind(folder, 0) == 0;
            quotes_code = quotes_code || (own && is_c_or_cpp(block.language));
            quotes_output = quotes_output || (block.language == "text" && !block.source.empty());
        }
    }
    if (!quotes_code) {
        missing.push_back("a quote of its own code (```cpp " + folder + "...)");
    }
    if (!quotes_output) {
        missing.emplace_back("the expected output of a run (```text FILE, a quote of a real run)");
    }
    if (!has_heading(headings.what_can_go_wrong)) {
        missing.emplace_back("a \"" + headings.what_can_go_wrong + "\" slide");
    }
    return missing;
}

}  // namespace

TEST_CASE("the deck check finds slides, notes and headings", "[docs][decks]") {
    const std::string deck =
        "---\nmarp: true\n---\n\n<!-- _class: lead -->\n\n# Title\n\n---\n\n"
        "# Objectives\n\n- one\n\n<!--\nSay why.\n-->\n\n---\n\n"
        "<!-- _class: dense -->\n\n# Recap\n\n```text\n---\n```\n";
    const auto slides = slides_of(deck);
    REQUIRE(slides.size() == 3);
    CHECK(slides[0].lead);
    CHECK_FALSE(slides[0].has_notes);
    CHECK(slides[1].heading == "Objectives");
    CHECK(slides[1].has_notes);
    CHECK(slides[2].heading == "Recap");
    CHECK_FALSE(slides[2].has_notes);  // a directive is not a note
    const auto missing = missing_parts("00_introduction", deck);
    REQUIRE(missing.size() == 1);
    CHECK(missing[0].find("speaker notes on slide 3") != std::string::npos);
    // A lesson deck needs more: its code, its output, what can go wrong.
    CHECK(missing_parts("04_queue_pair", deck).size() == 4);
    // A Chinese deck is read by the glossary's Chinese headings, not the English ones.
    const docs::DeckHeadings chinese{"学习目标", "小结", "常见错误"};
    CHECK(missing_parts("00_introduction", deck, chinese).size() == 3);
    const std::string zh_deck =
        "---\nmarp: true\n---\n\n# 学习目标\n\n<!--\n说明。\n-->\n\n---\n\n# "
        "小结\n\n<!--\n回顾。\n-->\n";
    CHECK(missing_parts("00_introduction", zh_deck, chinese).empty());
    CHECK(missing_parts("00_introduction", zh_deck).size() == 2);
}

TEST_CASE("every deck has the parts a class needs", "[docs][decks]") {
    const docs::Glossary glossary =
        docs::parse_glossary(read_file(kSourceDir / "docs" / "glossary.md"));
    const docs::DeckHeadings chinese = docs::chinese_deck_headings(glossary);
    int decks_checked = 0;
    for (const fs::path& deck : decks()) {
        const auto missing = missing_parts(deck.stem().string(), read_file(deck),
                                           is_chinese_deck(deck) ? chinese : docs::DeckHeadings{});
        std::string list;
        for (const std::string& part : missing) {
            list += "\n  - " + part;
        }
        INFO(deck_name(deck) << " lacks:" << list);
        CHECK(missing.empty());
        ++decks_checked;
    }
    // The introduction, twelve lessons and the exercises: a parser that found
    // fewer decks would check too little.
    CHECK(decks_checked >= 20);
}

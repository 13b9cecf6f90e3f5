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
// Also checked: every image a deck shows exists. No npm, no network.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "support/catch.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kSourceDir = LAB_SOURCE_DIR;

/// One fenced code block of a deck.
struct CodeBlock {
    int line = 0;          ///< line of the opening fence, 1-based
    std::string language;  ///< first word of the fence's info string
    std::string source;    ///< second word: the file it quotes (may be empty)
    std::vector<std::string> lines;
};

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string trim(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) {
        return {};
    }
    const auto last = text.find_last_not_of(" \t\r");
    return std::string(text.substr(first, last - first + 1));
}

std::vector<CodeBlock> code_blocks(const std::string& markdown) {
    std::vector<CodeBlock> blocks;
    std::istringstream in(markdown);
    std::string line;
    int number = 0;
    std::optional<CodeBlock> open;
    std::string fence;
    while (std::getline(in, line)) {
        ++number;
        const std::string stripped = trim(line);
        if (!open) {
            if (stripped.rfind("```", 0) == 0 || stripped.rfind("~~~", 0) == 0) {
                fence = stripped.substr(0, stripped.find_first_not_of(stripped[0]));
                std::istringstream info(stripped.substr(fence.size()));
                CodeBlock block;
                block.line = number;
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

bool is_c_or_cpp(const std::string& language) {
    static const std::vector<std::string> kLanguages = {"c", "cpp", "c++", "cc", "h", "hpp", "cxx"};
    return std::find(kLanguages.begin(), kLanguages.end(), language) != kLanguages.end();
}

/// A quoted file: a path in this repository, or a system header such as
/// <infiniband/verbs.h> (the verbs' own declarations, quoted on some slides).
fs::path resolve(const std::string& source) {
    if (source.size() > 2 && source.front() == '<' && source.back() == '>') {
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

std::vector<fs::path> decks() {
    std::vector<fs::path> result;
    for (const auto& entry : fs::directory_iterator(kSourceDir / "slides")) {
        if (entry.path().extension() == ".md" && entry.path().filename() != "README.md") {
            result.push_back(entry.path());
        }
    }
    std::sort(result.begin(), result.end());
    return result;
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
        const std::string deck_name = "slides/" + deck.filename().string();
        for (const CodeBlock& block : code_blocks(read_file(deck))) {
            if (!is_c_or_cpp(block.language)) {
                continue;
            }
            INFO(deck_name << ":" << block.line);
            // Every C/C++ block says what it quotes, so that none can drift unseen.
            REQUIRE_FALSE(block.source.empty());
            const fs::path source = resolve(block.source);
            INFO("quotes " << block.source);
            REQUIRE(fs::is_regular_file(source));
            const auto missing = first_missing_piece(block.lines, read_file(source));
            INFO("this part of the slide is not in "
                 << block.source << " (whitespace ignored): " << missing.value_or(""));
            CHECK_FALSE(missing);
            ++quotes;
        }
    }
    // The decks do quote code; a parser that found none would check nothing.
    CHECK(quotes > 0);
}

TEST_CASE("every image on a slide exists", "[docs]") {
    for (const fs::path& deck : decks()) {
        for (const std::string& image : images(read_file(deck))) {
            if (image.rfind("http", 0) == 0) {
                FAIL("slides/" << deck.filename().string() << " loads " << image
                               << " from the network: decks must work offline");
            }
            INFO("slides/" << deck.filename().string() << " shows " << image);
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
        INFO("slides/" << deck.filename().string());
        if (name.rfind("ex", 0) == 0) {
            CHECK(fs::is_directory(kSourceDir / "exercises" / name.substr(2)));
        } else {
            CHECK(fs::is_directory(kSourceDir / "lessons" / name));
        }
    }
}

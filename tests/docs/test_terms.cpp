// SPDX-License-Identifier: MIT
// Every term is defined where it is first used: the first lesson README (in
// lesson order) whose prose uses a glossary term this test watches (the wire
// headers such as RETH, abbreviations such as PSN) defines the term or links
// its row in docs/glossary.md, at that first use or before it in the same
// paragraph. Later lessons may use it freely. English READMEs only: a Chinese
// twin has the same links (test_translation). No device, no network.
//
// A definition is one of:
//  - a link to the glossary row: [RETH](../../docs/glossary.md#reth);
//  - the term in bold followed by what it is: **RETH**: ..., | **GRH** | ... |;
//  - the term followed by its expansion in brackets: RETH (the RDMA extended
//    transport header), or the expansion followed by the term: the packet
//    sequence number (PSN).
// Prose is what a reader sees as text: not code blocks, inline code, HTML
// comments or tags, or link targets. Each watched term has its glossary row,
// and no other page has a glossary row's anchor (the reference site keeps one
// list of anchors for all pages).
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "docs/translation.hpp"
#include "support/catch.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kSourceDir = LAB_SOURCE_DIR;

/// A term the check watches, as the lessons write it, and the anchor of its glossary row.
struct Watched {
    std::string_view term;  ///< letters, digits and '_' only (it is put into regular expressions)
    std::string_view id;
};

/// The glossary terms the lessons write as abbreviations: the headers on the wire first, then the
/// rest. A term added here needs a row in docs/glossary.md with this anchor.
const std::vector<Watched> kWatched = {
    {"BTH", "bth"},
    {"RETH", "reth"},
    {"AETH", "aeth"},
    {"DETH", "deth"},
    {"ImmDt", "immdt"},
    {"AtomicETH", "atomiceth"},
    {"AtomicAckETH", "atomicacketh"},
    {"ICRC", "icrc"},
    {"LRH", "lrh"},
    {"GRH", "grh"},
    {"PSN", "psn"},
    {"RNR", "rnr"},
    {"ACK", "ack"},
    {"NAK", "nak"},
    {"MTU", "mtu"},
    {"SGE", "sge"},
    {"WR", "wr"},
    {"WC", "wc"},
    {"CQE", "cqe"},
    {"WQE", "wqe"},
    {"QPN", "qpn"},
    {"GID", "gid"},
    {"LID", "lid"},
    {"GUID", "guid"},
    {"P_Key", "p_key"},
    {"Q_Key", "q_key"},
    {"QP", "qp"},
    {"CQ", "cq"},
    {"PD", "pd"},
    {"MR", "mr"},
    {"MW", "mw"},
    {"SRQ", "srq"},
    {"AH", "ah"},
    {"HCA", "hca"},
    {"RC", "rc"},
    {"UC", "uc"},
    {"UD", "ud"},
    {"XRC", "xrc-term"},
    {"RTR", "rtr"},
    {"RTS", "rts"},
    {"SQD", "sqd"},
    {"SQE", "sqe"},
    {"ODP", "odp-term"},
    {"CM", "cm"},
    {"MAD", "mad"},
    {"RDMA", "rdma"},
    {"RoCE", "roce"},
    {"iWARP", "iwarp"},
};

/// A lesson's README: its path as the report names it, and its text.
struct Readme {
    std::string path;  ///< lessons/07_rdma_write/README.md
    std::string text;
};

/**
 * The lines of a README as the check reads them, numbered as in the file:
 * the lines of code blocks and the fences are blank (a code block ends a
 * paragraph), HTML comments and inline code are blanked out.
 */
std::vector<std::string> visible_lines(const std::string& markdown) {
    std::vector<std::string> lines;
    bool in_fence = false;
    std::string fence;
    bool in_comment = false;
    for (const std::string& line : docs::split_lines(markdown)) {
        const std::string stripped = docs::trim(line);
        if (in_fence) {
            if (stripped.rfind(fence, 0) == 0 &&
                docs::trim(stripped.substr(fence.size())).empty()) {
                in_fence = false;
            }
            lines.emplace_back();
            continue;
        }
        if (!in_comment && docs::is_fence(stripped)) {
            in_fence = true;
            fence = stripped.substr(0, stripped.find_first_not_of(stripped[0]));
            lines.emplace_back();
            continue;
        }
        lines.push_back(docs::without_inline_code(docs::without_html_comments(line, in_comment)));
    }
    return lines;
}

/// The text a reader sees in a visible line: link targets and HTML tags removed.
std::string shown_text(const std::string& line) {
    static const std::regex kTarget(R"(\]\([^)]*\))");
    static const std::regex kTag(R"(<[^>]*>)");
    return std::regex_replace(std::regex_replace(line, kTarget, "]"), kTag, " ");
}

/// The glossary rows a visible line links: the anchors of its links to glossary.md.
std::set<std::string> linked_rows(const std::string& line) {
    static const std::regex kGlossaryLink(R"(\]\(\s*<?[^)\s>]*glossary\.md#([A-Za-z0-9_-]+))");
    std::set<std::string> rows;
    for (auto match = std::sregex_iterator(line.begin(), line.end(), kGlossaryLink);
         match != std::sregex_iterator(); ++match) {
        rows.insert((*match)[1].str());
    }
    return rows;
}

bool is_word_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

/// True when @p term stands in @p text as a whole word (or with a plural "s": WRs, PSNs).
bool uses(std::string_view text, std::string_view term) {
    for (std::size_t at = text.find(term); at != std::string_view::npos;
         at = text.find(term, at + 1)) {
        const std::size_t end = at + term.size();
        const bool starts = at == 0 || !is_word_char(text[at - 1]);
        const bool ends =
            end >= text.size() || !is_word_char(text[end]) ||
            (text[end] == 's' && (end + 1 >= text.size() || !is_word_char(text[end + 1])));
        if (starts && ends) {
            return true;
        }
    }
    return false;
}

/**
 * True when the brackets after a term hold its expansion: two words or more,
 * one of them a lower-case word of three letters or more that is not a
 * connecting word ("RETH (the RDMA extended transport header)", "ICRC
 * (invariant CRC)"), and not a reference ("see lesson 04") or a size ("16
 * bytes", "RC only").
 */
bool is_expansion(const std::string& inside) {
    static const std::set<std::string> kConnecting = {
        "see",  "lesson", "lessons", "here",  "below", "above", "for",   "and",   "or",    "on",
        "in",   "at",     "with",    "from",  "to",    "by",    "not",   "no",    "one",   "two",
        "if",   "when",   "which",   "where", "its",   "this",  "that",  "these", "those", "both",
        "each", "every",  "all",     "only",  "also",  "but",   "bytes", "bits",  "as",    "the",
        "an",   "is",     "are",     "was",   "were",  "now",   "then"};
    static const std::regex kWord("[A-Za-z]{2,}");
    std::vector<std::string> words;
    for (auto match = std::sregex_iterator(inside.begin(), inside.end(), kWord);
         match != std::sregex_iterator(); ++match) {
        words.push_back(match->str());
    }
    if (words.size() < 2) {
        return false;
    }
    std::string first = words.front();
    std::transform(first.begin(), first.end(), first.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (first != "the" && first != "an" && kConnecting.count(first) != 0) {
        return false;
    }
    return std::any_of(words.begin(), words.end(), [](const std::string& word) {
        return word.size() >= 3 &&
               std::all_of(word.begin(), word.end(), [](char c) { return c >= 'a' && c <= 'z'; }) &&
               kConnecting.count(word) == 0;
    });
}

/// How a line defines a term: **TERM** followed by what it is, TERM (its expansion), or its
/// expansion (TERM). Made once per term.
struct Definition {
    explicit Definition(std::string_view term)
        : word(term),
          // **TERM**: ..., **TERM** (...), **TERM** — ..., | **TERM** | ... |
          bold(R"(\*\*)" + word + R"(\*\*\s*(?:[:|,(]|—|–|-).*[A-Za-z])"),
          // TERM (expansion ...), the brackets closed on this line or not
          after("(?:^|[^A-Za-z0-9_])" + word + R"(s?\s*\(([^)]*))"),
          // expansion (TERM), expansion (the TERM, ...)
          before(R"([A-Za-z]{2,}\s*\((?:the |an? )?)" + word + R"(s?[),;:])") {}

    /// True when @p text (what a reader sees of one line) defines the term.
    [[nodiscard]] bool in(const std::string& text) const {
        if (text.find(word) == std::string::npos) {
            return false;
        }
        if (std::regex_search(text, bold)) {
            return true;
        }
        std::string plain = text;  // bold marks do not matter below: **RETH (the ... header)**
        plain.erase(std::remove(plain.begin(), plain.end(), '*'), plain.end());
        for (auto match = std::sregex_iterator(plain.begin(), plain.end(), after);
             match != std::sregex_iterator(); ++match) {
            if (is_expansion((*match)[1].str())) {
                return true;
            }
        }
        return std::regex_search(plain, before);
    }

    std::string word;
    std::regex bold, after, before;
};

bool is_blank(const std::string& line) {
    return docs::trim(line).empty();
}
bool is_heading(const std::string& line) {
    return docs::trim(line).rfind('#', 0) == 0;
}

/// The last line (1-based) of the paragraph that holds line @p number; for a heading, the
/// paragraph after it. A paragraph ends at a blank line, a code block or a heading.
int paragraph_end(const std::vector<std::string>& lines, int number) {
    auto at = static_cast<std::size_t>(number - 1);
    if (is_heading(lines[at])) {
        while (at + 1 < lines.size() && is_blank(lines[at + 1])) {
            ++at;
        }
        if (at + 1 < lines.size()) {
            ++at;
        }
    }
    while (at + 1 < lines.size() && !is_blank(lines[at + 1]) && !is_heading(lines[at + 1])) {
        ++at;
    }
    return static_cast<int>(at) + 1;
}

/**
 * The terms of @p watched that a README of @p readmes (in lesson order) is
 * the first to use without defining or linking them at that first use or
 * before it: one line each, with the file, the line and what to do.
 */
std::vector<std::string> undefined_terms(const std::vector<Readme>& readmes,
                                         const std::vector<Watched>& watched) {
    std::vector<Definition> definitions;
    for (const Watched& entry : watched) {
        definitions.emplace_back(entry.term);
    }
    std::vector<std::string> found;
    std::set<std::string_view> settled;  // used, defined or linked by a README read so far
    for (const Readme& readme : readmes) {
        const std::vector<std::string> lines = visible_lines(readme.text);
        std::vector<std::string> shown;
        std::vector<std::set<std::string>> linked;
        for (const std::string& line : lines) {
            shown.push_back(shown_text(line));
            linked.push_back(linked_rows(line));
        }
        std::vector<std::pair<int, std::string>> here;  // (line, finding): in line order
        for (std::size_t t = 0; t < watched.size(); ++t) {
            const Watched& entry = watched[t];
            if (settled.count(entry.term) != 0) {
                continue;
            }
            int first_use = 0;
            int first_definition = 0;
            for (std::size_t i = 0; i < lines.size() && (first_use == 0 || first_definition == 0);
                 ++i) {
                if (first_use == 0 && uses(shown[i], entry.term)) {
                    first_use = static_cast<int>(i) + 1;
                }
                if (first_definition == 0 &&
                    (linked[i].count(std::string(entry.id)) != 0 || definitions[t].in(shown[i]))) {
                    first_definition = static_cast<int>(i) + 1;
                }
            }
            if (first_use != 0 || first_definition != 0) {
                settled.insert(entry.term);  // later lessons may use it freely
            }
            if (first_use == 0 ||
                (first_definition != 0 && first_definition <= paragraph_end(lines, first_use))) {
                continue;
            }
            const std::string term(entry.term);
            const std::string where = readme.path + ":" + std::to_string(first_use) + ": " + term +
                                      " is used here first (no earlier lesson defines or links it)";
            if (first_definition == 0) {
                here.emplace_back(first_use,
                                  where +
                                      ", and this README neither defines nor links it: "
                                      "link its glossary row, [" +
                                      term + "](../../docs/glossary.md#" + std::string(entry.id) +
                                      "), or define it here: " + term +
                                      " (what it stands for), or **" + term + "**: what it is");
            } else {
                here.emplace_back(first_use,
                                  where + ", but this README defines or links it only at line " +
                                      std::to_string(first_definition) +
                                      ": define or link it at this first use, or before it");
            }
        }
        std::stable_sort(here.begin(), here.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        for (auto& entry : here) {
            found.push_back(std::move(entry.second));
        }
    }
    return found;
}

/// The lessons' English READMEs, in lesson order.
std::vector<Readme> lesson_readmes() {
    std::vector<Readme> readmes;
    for (const fs::path& folder : docs::lesson_folders(kSourceDir)) {
        const fs::path readme = folder / "README.md";
        readmes.push_back({fs::relative(readme, kSourceDir).string(), docs::read_file(readme)});
    }
    return readmes;
}

std::string joined(const std::vector<std::string>& lines) {
    std::string text;
    for (const std::string& line : lines) {
        text += "\n  " + line;
    }
    return text;
}

const std::vector<Watched> kFixtureTerms = {{"RETH", "reth"}, {"PSN", "psn"}, {"WR", "wr"}};

/// The findings for made-up READMEs lessons/01_a/README.md, lessons/02_b/README.md, ...
std::vector<std::string> findings(const std::vector<std::string>& texts) {
    std::vector<Readme> readmes;
    char name = 'a';
    int number = 1;
    for (const std::string& text : texts) {
        readmes.push_back(
            {"lessons/0" + std::to_string(number++) + "_" + std::string(1, name++) + "/README.md",
             text});
    }
    return undefined_terms(readmes, kFixtureTerms);
}

}  // namespace

TEST_CASE("terms: the check fails on a term used before it is defined", "[docs][terms]") {
    // A made-up lesson that uses RETH and defines it nowhere.
    const auto undefined = findings({"# Lesson 01 — a\n\nText.\n\nThe RETH carries the rkey.\n"});
    INFO(joined(undefined));
    REQUIRE(undefined.size() == 1);
    CHECK(undefined[0].rfind("lessons/01_a/README.md:5: RETH is used here first", 0) == 0);
    CHECK(undefined[0].find("[RETH](../../docs/glossary.md#reth)") != std::string::npos);

    // Defined only in a later paragraph: too late, and the line is named.
    const auto late = findings(
        {"# Lesson 01 — a\n\nThe RETH carries the rkey.\n\nRETH (the RDMA extended transport "
         "header) is 16 bytes.\n"});
    INFO(joined(late));
    REQUIRE(late.size() == 1);
    CHECK(late[0].find("RETH is used here first") != std::string::npos);
    CHECK(late[0].find("defines or links it only at line 5") != std::string::npos);

    // Brackets that hold no expansion do not define: a size, a reference.
    CHECK(findings({"A RETH (16 bytes).\n"}).size() == 1);
    CHECK(findings({"The RETH (see lesson 09).\n"}).size() == 1);
    CHECK(findings({"The RETH (RC only).\n"}).size() == 1);
    // Another term's expansion that starts with this one does not define it.
    CHECK(findings({"Over RoCE (RETH over Ethernet).\n"}).size() == 1);
    // Bold alone is not a definition.
    CHECK(findings({"The **RETH** travels first.\n"}).size() == 1);
    // A plural is a use.
    CHECK(findings({"Two WRs.\n"}).size() == 1);
    // The first lesson to use it is named, not a later one.
    const auto first = findings({"No terms.\n", "A PSN.\n", "A PSN again.\n"});
    INFO(joined(first));
    REQUIRE(first.size() == 1);
    CHECK(first[0].rfind("lessons/02_b/README.md:1: PSN", 0) == 0);
}

TEST_CASE("terms: a link or a definition at the first use passes", "[docs][terms]") {
    // A link to the glossary row, with any text.
    CHECK(findings({"The [RETH](../../docs/glossary.md#reth) carries the rkey.\n"}).empty());
    CHECK(findings({"See the [header](../../docs/glossary.md#reth).\n\nThe RETH.\n"}).empty());
    // The term in bold, then what it is: a sentence, a table row.
    CHECK(findings({"**RETH**: the RDMA extended transport header.\n"}).empty());
    CHECK(findings({"| term | meaning |\n|---|---|\n| **RETH** | RDMA extended transport "
                    "header |\n"})
              .empty());
    CHECK(findings({"**RETH** — the header with the rkey.\n"}).empty());
    CHECK(findings({"Its twin, **RETH** (`rxe_reth`), carries the rkey.\n"}).empty());
    // TERM (expansion), also over two lines, and expansion (TERM).
    CHECK(findings({"The RETH (the RDMA extended transport header) carries it.\n"}).empty());
    CHECK(findings({"The RETH (the RDMA extended\ntransport header) carries it.\n"}).empty());
    CHECK(findings({"Each packet's packet sequence number (PSN).\n"}).empty());
    CHECK(findings({"Their PSNs (packet sequence numbers) count packets.\n"}).empty());
    CHECK(findings({"In each packet's header (the PSN, which counts packets).\n"}).empty());
    // Later in the same paragraph is at the first use.
    CHECK(findings({"The RETH comes first.\nIt is the RDMA extended transport header\n"
                    "([RETH](../../docs/glossary.md#reth)).\n"})
              .empty());
    // A heading's first use is defined in the paragraph under it.
    CHECK(findings({"## The RETH\n\nRETH (the RDMA extended transport header) is 16 bytes.\n"})
              .empty());
    // An earlier lesson's definition or link serves the later ones.
    CHECK(findings({"The [RETH](../../docs/glossary.md#reth).\n", "The RETH again.\n"}).empty());
    CHECK(findings({"See the [row](glossary.md#reth).\n", "The RETH again.\n"}).empty());
}

TEST_CASE("terms: code, comments, tags and link targets are not uses", "[docs][terms]") {
    CHECK(findings({"```text\nRC RDMA WRITE ONLY (RETH: rkey 0x1234)\n```\n"}).empty());
    CHECK(findings({"````mermaid\nA->>B: WRITE (RETH)\n````\n"}).empty());
    CHECK(findings({"The `RETH` field, `IBV_WR_SEND`.\n"}).empty());
    CHECK(findings({"<!-- RETH -->\n<a id=\"RETH\"></a>\n[text](https://example.org/RETH)\n"})
              .empty());
    // Whole words only: IBV_WR_SEND, WRITE, PSNX.
    CHECK(findings({"IBV_WR_SEND, a WRITE, a PSNX.\n"}).empty());
}

TEST_CASE("terms: every watched term has a glossary row with its anchor", "[docs][terms]") {
    const std::string glossary_text = docs::read_file(kSourceDir / "docs" / "glossary.md");
    const docs::Glossary glossary = docs::parse_glossary(glossary_text);
    std::set<std::string> anchors;
    static const std::regex kAnchor(R"re(<a id="([^"]+)"></a>)re");
    for (auto match = std::sregex_iterator(glossary_text.begin(), glossary_text.end(), kAnchor);
         match != std::sregex_iterator(); ++match) {
        anchors.insert((*match)[1].str());
    }
    std::set<std::string_view> seen;
    for (const Watched& entry : kWatched) {
        INFO(entry.term);
        CHECK(std::regex_match(std::string(entry.term), std::regex("[A-Za-z0-9_]+")));
        CHECK(seen.insert(entry.term).second);
        CHECK(glossary.find(entry.term) != nullptr);
        CHECK(anchors.count(std::string(entry.id)) == 1);
    }
}

TEST_CASE("terms: no other page of the course uses a glossary row's anchor", "[docs][terms]") {
    // The reference site (Doxygen) keeps one list of anchors and page names for every page: a
    // glossary anchor that another page has too is a warning there, and warnings are errors.
    static const std::regex kAnchor(R"re(<a\s+(?:id|name)\s*=\s*"([^"]+)")re");
    static const std::regex kLabel(R"(\{#([A-Za-z0-9_-]+)\})");
    const auto names_in = [](const std::string& text, const std::regex& pattern) {
        std::set<std::string> names;
        for (auto match = std::sregex_iterator(text.begin(), text.end(), pattern);
             match != std::sregex_iterator(); ++match) {
            names.insert((*match)[1].str());
        }
        return names;
    };
    const fs::path glossary_path = kSourceDir / "docs" / "glossary.md";
    const std::set<std::string> glossary = names_in(docs::read_file(glossary_path), kAnchor);
    REQUIRE(glossary.size() >= 100);
    std::vector<std::string> clashes;
    for (auto entry = fs::recursive_directory_iterator(kSourceDir);
         entry != fs::recursive_directory_iterator(); ++entry) {
        const std::string name = entry->path().filename().string();
        if (entry->is_directory() &&
            (name == "build" || name == "node_modules" || name.rfind('.', 0) == 0)) {
            entry.disable_recursion_pending();
            continue;
        }
        if (!entry->is_regular_file() || entry->path().extension() != ".md" ||
            entry->path() == glossary_path) {
            continue;
        }
        const std::string text = docs::read_file(entry->path());
        for (const std::regex* pattern : {&kAnchor, &kLabel}) {
            for (const std::string& used : names_in(text, *pattern)) {
                if (glossary.count(used) != 0) {
                    clashes.push_back(fs::relative(entry->path(), kSourceDir).string() +
                                      " has the anchor or page name \"" + used +
                                      "\" of a glossary row: give the glossary's row the id \"" +
                                      used + "-term\" (and its links)");
                }
            }
        }
    }
    INFO(joined(clashes));
    CHECK(clashes.empty());
}

TEST_CASE("terms: the first lesson to use a glossary term defines it or links its row",
          "[docs][terms]") {
    const std::vector<Readme> readmes = lesson_readmes();
    REQUIRE(readmes.size() >= 12);
    const std::vector<std::string> found = undefined_terms(readmes, kWatched);
    for (const std::string& line : found) {
        std::cerr << line << '\n';  // one line each, whole, for an editor to jump to
    }
    INFO(found.size() << " term(s) used before they are defined or linked (listed above, "
                         "file:line: term: what to do)");
    CHECK(found.empty());
}

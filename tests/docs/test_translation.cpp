// SPDX-License-Identifier: MIT
// The Chinese edition stays in step with the English one (tests/docs/translation.hpp):
//  - twins: docs/twins.md lists every page that needs a Chinese twin, and
//    says which are translated; a translated page must exist, and must not
//    drift from its English twin (headings, code, links and anchors, tables,
//    the twin links at the top), and must be in step with the English text
//    (the fingerprint the list records);
//  - glossary: docs/glossary.md is well formed, and every Chinese page uses
//    its terms as it says.
// Each check is first shown to catch what it should on small fixtures, then
// run on the course's pages. No npm, no network, no device.
#include <map>
#include <string>
#include <vector>

#include "docs/translation.hpp"
#include "support/catch.hpp"

namespace fs = std::filesystem;
using namespace docs;

namespace {

const fs::path kSourceDir = LAB_SOURCE_DIR;

/// "code: block 2 ..." -> "code"
std::string kind_of(const std::string& finding) {
    return finding.substr(0, finding.find(':'));
}

std::set<std::string> kinds(const std::vector<std::string>& findings) {
    std::set<std::string> result;
    for (const std::string& finding : findings) {
        result.insert(kind_of(finding));
    }
    return result;
}

std::string joined(const std::vector<std::string>& lines) {
    std::string text;
    for (const std::string& line : lines) {
        text += "\n  " + line;
    }
    return text;
}

/// The text with its first @p from replaced by @p to; fails the test if @p from is not in it.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

// --- a lesson README and its twin, and a deck and its twin ---------------------

const std::string kEnglish = R"(# Lesson 99 — fixture

English | [中文](README.zh-CN.md)

**Slides:** [slides/99_fixture.md](../../slides/99_fixture.md).
See [lesson 98](../98_other/README.md#run-it) and [the introduction](../../slides/00_introduction.md).

![The ten steps](../../docs/diagrams/ten_steps.svg)

## New verbs

| call | what it does |
|------|--------------|
| `ibv_open_device` | opens a device |
| `ibv_close_device` | closes it |

## Run

```sh
./lab run 99_fixture        # the first device
```

```cpp lessons/99_fixture/main.cpp
// Open the device.
ibv_context* context = ibv_open_device(device); /* may fail */
```

## Sample output

```
Step 1: 1 RDMA device(s) found
```

```mermaid
sequenceDiagram
    participant C as client
    C->>S: ibv_post_send(SEND)
```
)";

const std::string kChinese = R"(# 第 99 课：示例

[English](README.md) | 中文

**幻灯片：** [slides/zh-CN/99_fixture.md](../../slides/zh-CN/99_fixture.md)。
参见[第 98 课](../98_other/README.md#run-it)和[入门幻灯片](../../slides/00_introduction.md)。

![verbs 程序的十个步骤](../../docs/diagrams/ten_steps.svg)

## 新的 verbs

| 调用 | 作用 |
|------|------|
| `ibv_open_device` | 打开设备 |
| `ibv_close_device` | 关闭设备 |

## 运行

```sh
./lab run 99_fixture        # 第一个设备
```

```cpp lessons/99_fixture/main.cpp
// 打开设备。
ibv_context* context = ibv_open_device(device); /* 可能失败 */
```

## 示例输出

```
Step 1: 1 RDMA device(s) found
```

```mermaid
sequenceDiagram
    participant C as 客户端
    C->>S: ibv_post_send(SEND)
```
)";

const std::string kEnglishDeck = R"(---
marp: true
---

# Lesson 99

English | [中文](zh-CN/99_fixture.md)

---

# Objectives

- open a device

<!--
Say why.
-->
)";

const std::string kChineseDeck = R"(---
marp: true
lang: zh-CN
---

# 第 99 课

[English](../99_fixture.md) | 中文

---

# 学习目标

- 打开设备

<!--
说明原因。
-->
)";

const std::string kEnglishPath = "lessons/99_fixture/README.md";
const std::string kChinesePath = "lessons/99_fixture/README.zh-CN.md";

/// The repository the fixtures live in: the pages they link to, and which have twins.
Tree fixture_tree() {
    static const std::map<std::string, std::string> kFiles = {
        {kEnglishPath, kEnglish},
        {kChinesePath, kChinese},
        {"lessons/98_other/README.md", "# Lesson 98\n\n## Run it\n"},
        {"slides/00_introduction.md", "# Introduction\n"},
        {"slides/99_fixture.md", kEnglishDeck},
        {"slides/zh-CN/99_fixture.md", kChineseDeck},
        {"docs/diagrams/ten_steps.svg", "<svg/>"},
        {"docs/diagrams/ten_steps.zh-CN.svg", "<svg/>"},
        {"docs/diagrams/qp_states.zh-CN.svg", "<svg/>"},
    };
    Tree tree;
    tree.twins = {{kEnglishPath, kChinesePath},
                  {"slides/99_fixture.md", "slides/zh-CN/99_fixture.md"}};
    tree.read = [](const std::string& path) -> std::optional<std::string> {
        const auto file = kFiles.find(path);
        return file == kFiles.end() ? std::nullopt : std::optional(file->second);
    };
    return tree;
}

std::vector<std::string> drift_of(const std::string& chinese) {
    return drift(parse_page(kEnglishPath, kEnglish), parse_page(kChinesePath, chinese),
                 fixture_tree());
}

}  // namespace

TEST_CASE("twins: a page reads as headings, code, links, anchors and tables", "[docs][twins]") {
    const Page page = parse_page(kEnglishPath, kEnglish);
    REQUIRE(page.headings.size() == 4);
    CHECK(page.headings[0].level == 1);
    CHECK(page.headings[0].text == "Lesson 99 — fixture");
    CHECK(page.headings[3].text == "Sample output");
    CHECK(page.blocks.size() == 4);
    REQUIRE(page.links.size() == 5);
    CHECK(page.links[0].target == "README.zh-CN.md");
    CHECK(page.links[2].target == "../98_other/README.md#run-it");
    CHECK(page.links[4].image);
    REQUIRE(page.tables.size() == 1);
    CHECK(page.tables[0].rows.size() == 3);  // the separator row is not a row
    CHECK(page.twin_text == "English | [中文](README.zh-CN.md)");
    // A comment between the title and the twin links (a licence line) is not text.
    const Page licensed = parse_page(
        kEnglishPath, replaced(kEnglish, "fixture\n\n",
                               "fixture\n<!-- SPDX-License-Identifier: CC-BY-4.0 -->\n\n"));
    CHECK(licensed.twin_text == "English | [中文](README.zh-CN.md)");
    CHECK(licensed.twin_line == page.twin_line + 1);
    // GitHub's anchors: punctuation dropped, Chinese kept.
    CHECK(page.anchors.contains("lesson-99--fixture"));
    CHECK(page.anchors.contains("new-verbs"));
    CHECK(github_slug("Variant: rdma_cm's own data path (rdma_verbs.h)") ==
          "variant-rdma_cms-own-data-path-rdma_verbsh");
    CHECK(github_slug("第 99 课：示例") == "第-99-课示例");
    CHECK(github_slug("Step 1: `ibv_get_device_list`") == "step-1-ibv_get_device_list");
    // A deck: its slides, each heading on its slide; notes and code are not headings.
    const Page deck = parse_page("slides/99_fixture.md", kEnglishDeck);
    CHECK(deck.deck);
    CHECK(deck.slides == 2);
    REQUIRE(deck.headings.size() == 2);
    CHECK(deck.headings[1].slide == 1);
}

TEST_CASE("twins: the twin of each page, and the links between them", "[docs][twins]") {
    CHECK(twin_path("README.md") == "README.zh-CN.md");
    CHECK(twin_path("lessons/01_devices/README.md") == "lessons/01_devices/README.zh-CN.md");
    CHECK(twin_path("exercises/README.md") == "exercises/README.zh-CN.md");
    CHECK(twin_path("slides/01_devices.md") == "slides/zh-CN/01_devices.md");
    CHECK(twin_path("docs/cheatsheet.md") == "docs/cheatsheet.zh-CN.md");
    CHECK(english_twin_line("slides/01_devices.md") == "English | [中文](zh-CN/01_devices.md)");
    CHECK(chinese_twin_line("slides/01_devices.md") == "[English](../01_devices.md) | 中文");
    CHECK(chinese_twin_line("docs/readings.md") == "[English](readings.md) | 中文");
    CHECK(image_twin_path("docs/diagrams/qp_states.svg") == "docs/diagrams/qp_states.zh-CN.svg");
}

TEST_CASE("drift: a faithful translation passes (comments and labels translated)",
          "[docs][drift][twins]") {
    const auto found = drift_of(kChinese);
    INFO(joined(found));
    CHECK(found.empty());
    const auto deck = drift(parse_page("slides/99_fixture.md", kEnglishDeck),
                            parse_page("slides/zh-CN/99_fixture.md", kChineseDeck), fixture_tree());
    INFO(joined(deck));
    CHECK(deck.empty());
}

TEST_CASE("drift: a Chinese page may show the Chinese twin of an English image",
          "[docs][drift][twins]") {
    const std::string image = "![verbs 程序的十个步骤](../../docs/diagrams/ten_steps.svg)";
    const auto with_image = [&](const std::string& target) {
        return replaced(kChinese, image, "![verbs 程序的十个步骤](" + target + ")");
    };
    // The same diagram with its labels in Chinese, beside the English one.
    auto found = drift_of(with_image("../../docs/diagrams/ten_steps.zh-CN.svg"));
    INFO(joined(found));
    CHECK(found.empty());
    // Any other image is still refused: another diagram's twin, a twin elsewhere or of
    // another type, another diagram.
    for (const char* other :
         {"../../docs/diagrams/qp_states.zh-CN.svg", "../../docs/diagrams/zh-CN/ten_steps.svg",
          "../../docs/diagrams/ten_steps.zh-CN.png", "../../docs/diagrams/qp_states.svg"}) {
        found = drift_of(with_image(other));
        INFO(other << ":" << joined(found));
        CHECK(kinds(found).contains("links"));
    }
    // The rule is for images only: a link may not go to a file named like a twin
    // (here one that exists) in place of the English page's target.
    Tree tree = fixture_tree();
    const auto reader = tree.read;
    tree.read = [reader](const std::string& path) -> std::optional<std::string> {
        return path == "slides/00_introduction.zh-CN.md" ? std::optional<std::string>("# 入门\n")
                                                         : reader(path);
    };
    found = drift(parse_page(kEnglishPath, kEnglish),
                  parse_page(kChinesePath, replaced(kChinese, "(../../slides/00_introduction.md)",
                                                    "(../../slides/00_introduction.zh-CN.md)")),
                  tree);
    INFO(joined(found));
    CHECK(kinds(found) == std::set<std::string>{"links"});
    // And the image's twin must exist.
    tree.read = [reader](const std::string& path) -> std::optional<std::string> {
        return path == "docs/diagrams/ten_steps.zh-CN.svg" ? std::nullopt : reader(path);
    };
    found = drift(parse_page(kEnglishPath, kEnglish),
                  parse_page(kChinesePath, with_image("../../docs/diagrams/ten_steps.zh-CN.svg")),
                  tree);
    INFO(joined(found));
    CHECK(kinds(found) == std::set<std::string>{"links"});
}

TEST_CASE("drift: each kind of drift is caught", "[docs][drift][twins]") {
    struct Case {
        const char* what;
        std::string from;
        std::string to;
        const char* kind;
    };
    const std::vector<Case> cases = {
        {"a heading one level deeper", "## 运行", "### 运行", "headings"},
        {"a section left out", "## 示例输出\n", "", "headings"},
        {"a heading added", "## 运行\n", "## 运行\n\n### 提示\n", "headings"},
        {"a command changed", "./lab run 99_fixture        # 第一个设备",
         "./lab run 99_fixtures  # 第一个设备", "code"},
        {"an API name translated", "ibv_open_device(device); /* 可能失败 */", "打开设备(device);",
         "code"},
        {"program output translated", "Step 1: 1 RDMA device(s) found",
         "第 1 步：找到 1 个 RDMA 设备", "code"},
        {"the quoted file dropped from a fence", "```cpp lessons/99_fixture/main.cpp", "```cpp",
         "code"},
        {"a code block left out", "```\nStep 1: 1 RDMA device(s) found\n```\n", "", "code"},
        {"a diagram's arrow changed", "C->>S: ibv_post_send(SEND)", "S->>C: ibv_post_send(SEND)",
         "code"},
        {"a link to the English deck, which has a twin", "(../../slides/zh-CN/99_fixture.md)",
         "(../../slides/99_fixture.md)", "links"},
        {"a link to a twin that does not exist", "(../../slides/00_introduction.md)",
         "(../../slides/zh-CN/00_introduction.md)", "links"},
        {"an anchor changed", "README.md#run-it)", "README.md#运行)", "links"},
        {"a link left out", "和[入门幻灯片](../../slides/00_introduction.md)", "", "links"},
        {"an image left out", "![verbs 程序的十个步骤](../../docs/diagrams/ten_steps.svg)", "",
         "links"},
        {"a table row left out", "| `ibv_close_device` | 关闭设备 |\n", "", "tables"},
        {"a table column left out",
         "| 调用 | 作用 |\n|------|------|\n| `ibv_open_device` | 打开设备 |\n| `ibv_close_device` "
         "| 关闭设备 |",
         "| 调用 |\n|------|\n| `ibv_open_device` |\n| `ibv_close_device` |", "tables"},
        {"the twin links missing", "[English](README.md) | 中文\n\n", "", "twin links"},
        {"the twin links pointing elsewhere", "[English](README.md) | 中文",
         "[English](../README.md) | 中文", "twin links"},
    };
    for (const Case& c : cases) {
        const auto found = drift_of(replaced(kChinese, c.from, c.to));
        INFO(c.what << ":" << joined(found));
        CHECK(kinds(found).contains(c.kind));
    }
    // An anchor the linked Chinese page does not have (its heading translated, no <a id>).
    Tree tree = fixture_tree();
    tree.twins["lessons/98_other/README.md"] = "lessons/98_other/README.zh-CN.md";
    const auto reader = tree.read;
    tree.read = [reader](const std::string& path) -> std::optional<std::string> {
        if (path == "lessons/98_other/README.zh-CN.md") {
            return "# 第 98 课\n\n## 运行\n";
        }
        return reader(path);
    };
    const std::string chinese =
        replaced(kChinese, "../98_other/README.md#run-it", "../98_other/README.zh-CN.md#run-it");
    auto found = drift(parse_page(kEnglishPath, kEnglish), parse_page(kChinesePath, chinese), tree);
    INFO(joined(found));
    CHECK(kinds(found) == std::set<std::string>{"anchors"});
    // ... and none once the Chinese page keeps the English anchor.
    tree.read = [reader](const std::string& path) -> std::optional<std::string> {
        if (path == "lessons/98_other/README.zh-CN.md") {
            return "# 第 98 课\n\n<a id=\"run-it\"></a>\n\n## 运行\n";
        }
        return reader(path);
    };
    found = drift(parse_page(kEnglishPath, kEnglish), parse_page(kChinesePath, chinese), tree);
    INFO(joined(found));
    CHECK(found.empty());
    // The English page must link to its twin too.
    found = drift(
        parse_page(kEnglishPath, replaced(kEnglish, "English | [中文](README.zh-CN.md)\n\n", "")),
        parse_page(kChinesePath, kChinese), fixture_tree());
    CHECK(kinds(found).contains("twin links"));
    // A deck with a slide more.
    found = drift(parse_page("slides/99_fixture.md", kEnglishDeck),
                  parse_page("slides/zh-CN/99_fixture.md",
                             kChineseDeck + "\n---\n\n# 小结\n\n<!--\n回顾。\n-->\n"),
                  fixture_tree());
    CHECK(kinds(found).contains("slides"));
}

TEST_CASE("drift: code is compared without its comments", "[docs][drift]") {
    const auto code = [](const std::string& language, const std::vector<std::string>& lines) {
        CodeBlock block;
        block.language = language;
        block.lines = lines;
        return code_without_comments(block);
    };
    using Lines = std::vector<std::string>;
    CHECK(code("cpp", {"int x = 1;  // one", "// a whole line",
                       "f(\"// not a comment\"); /* gone */ g();", "/* two", "   lines */ h();"}) ==
          Lines{"int x = 1;", "f(\"// not a comment\");  g();", " h();"});
    CHECK(code("sh", {"./lab run 01_devices   # the first device", "# a note", "echo '#1' x#y"}) ==
          Lines{"./lab run 01_devices", "echo '#1' x#y"});
    CHECK(code("text", {"Step 1: found  ", "# not a comment in output"}) ==
          Lines{"Step 1: found  ", "# not a comment in output"});
    CHECK(code("mermaid",
               {"sequenceDiagram", "    participant C as client app", "    C->>S: post a send",
                "    Note over S: checks the rkey", "    loop every message", "    end"}) ==
          Lines{"sequenceDiagram", "    participant C", "    C->>S", "    Note over S", "    loop",
                "    end"});
}

namespace {

const std::string kGlossary = R"(# Glossary

| English | 中文 | Chinese pages write | avoid | definition | 释义 |
|---------|------|---------------------|-------|------------|------|
| queue pair (QP) | 队列对 | QP | 队列偶 | A send and a receive queue. | 一对队列。 |
| receive queue (RQ) | 接收队列 | 接收队列 | 接受队列 | Where receives wait. | 接收请求排队的地方。 |
| shared receive queue (SRQ) | 共享接收队列 | SRQ | — | A receive queue many QPs share. | 多个 QP 共用的接收队列。 |
| memory region (MR) | 内存区域 | MR | 内存区 | Registered memory. | 已注册的内存。 |
| completion channel | 完成通道 | 完成通道 | 完成频道 | A file descriptor for events. | 用于事件的文件描述符。 |
| Ready to Receive (RTR) | （准备接收） | RTR | — | A QP state. | QP 的一个状态。 |
| objectives | 学习目标 | 学习目标 | — | A deck's first slide. | 幻灯片的第一页。 |
)";

std::vector<std::string> misuses(const std::string& markdown) {
    const Glossary glossary = parse_glossary(kGlossary);
    REQUIRE(glossary.errors.empty());
    std::vector<std::string> result;
    for (const GlossaryFinding& finding : glossary_findings(markdown, glossary)) {
        result.push_back(std::to_string(finding.line) + ": " + finding.what);
    }
    return result;
}

}  // namespace

TEST_CASE("glossary: the table is read row by row", "[docs][glossary]") {
    const Glossary glossary = parse_glossary(kGlossary);
    INFO(joined(glossary.errors));
    REQUIRE(glossary.errors.empty());
    REQUIRE(glossary.terms.size() == 7);
    const Term* qp = glossary.find("Queue pair");
    REQUIRE(qp != nullptr);
    CHECK(qp->abbreviation == "QP");
    CHECK(qp->chinese == "队列对");
    CHECK(qp->kept());
    CHECK(qp->avoid == std::vector<std::string>{"队列偶"});
    const Term* channel = glossary.find("completion channel");
    REQUIRE(channel != nullptr);
    CHECK_FALSE(channel->kept());
    const Term* rtr = glossary.find("Ready to Receive");
    REQUIRE(rtr != nullptr);
    CHECK(rtr->description);
    CHECK(rtr->chinese == "准备接收");
    CHECK(chinese_deck_headings(glossary).objectives == "学习目标");
}

TEST_CASE("glossary: rows that break the format are refused", "[docs][glossary]") {
    const std::string header =
        "| English | 中文 | Chinese pages write | avoid | definition | 释义 |\n|-|-|-|-|-|-|\n";
    const auto errors = [&](const std::string& row) {
        return parse_glossary(header + row + "\n").errors;
    };
    CHECK(errors("| queue pair (QP) | 队列对 | QP | — | A pair. | 一对。 |").empty());
    CHECK_FALSE(errors("| queue pair (QP) | 队列对 | QP | — | A pair. |").empty());  // a cell short
    CHECK_FALSE(errors("| queue pair (QP) | 队列对 | Qp | — | A pair. | 一对。 |")
                    .empty());  // neither form
    CHECK_FALSE(errors("| queue pair (QP) | 队列对 | QP | — | 一对。 | A pair. |")
                    .empty());  // languages swapped
    CHECK_FALSE(errors("| `queue pair` (QP) | 队列对 | QP | — | A pair. | 一对。 |")
                    .empty());  // code marks
    CHECK_FALSE(errors("| queue pair (QP) | 队列对 | QP | 队列对 | A pair. | 一对。 |")
                    .empty());  // avoids itself
    CHECK_FALSE(errors("| queue pair (QP) | 队列对 | QP | — | A pair. | 一对。 |\n"
                       "| Queue Pair (QP) | 队列对 | QP | — | A pair. | 一对。 |")
                    .empty());  // twice
    CHECK_FALSE(parse_glossary("# no table\n").errors.empty());
}

TEST_CASE("glossary: the check catches each kind of misuse", "[docs][glossary]") {
    // 1. A rendering to avoid, in text or in a comment inside code.
    CHECK(misuses("# 标题\n\n创建一个队列偶。\n").size() == 1);
    CHECK(misuses("```cpp\nwait(channel);  // 等待完成频道\n```\n").size() == 1);
    CHECK(misuses("把 WR 放进接受队列。\n").size() == 1);
    // ... but not inside the name the glossary asks for (内存区 in 内存区域).
    CHECK(misuses("注册一块内存区域（MR）。\n").empty());
    // 2. A term kept in English, written as its Chinese name alone.
    CHECK(misuses("先创建队列对，再连接。\n").size() == 1);
    CHECK(misuses("使用共享接收队列。\n").size() == 1);
    // ... but a gloss beside the English is fine, in any of its forms.
    CHECK(misuses("队列对（QP）是通信的端点。\n").empty());
    CHECK(misuses("队列对 (QP) 是通信的端点。\n").empty());
    CHECK(misuses("QP（队列对）是通信的端点。\n").empty());
    CHECK(misuses("这是 QP（queue pair，队列对）。\n").empty());
    CHECK(misuses("| QP | 队列对 |\n|---|---|\n").empty());
    CHECK(misuses("共享接收队列（SRQ）由多个 QP 共用。\n").empty());
    // ... and a description in everyday words is free (准备接收 for RTR).
    CHECK(misuses("QP 进入 RTR 状态后就可以准备接收数据。\n").empty());
    // 3. A translated term left in English in Chinese text.
    CHECK(misuses("用 completion channel 等待事件。\n").size() == 1);
    CHECK(misuses("Completion channels 用于等待。\n").size() == 1);
    // ... but not as a gloss in brackets, in code, in an English-only link text, or in English
    // text.
    CHECK(misuses("完成通道（completion channel）用于等待。\n").empty());
    CHECK(misuses("调用 `completion channel` 之前。\n").empty());
    CHECK(misuses("参见 [The completion channel](https://example.org/cc)。\n").empty());
    CHECK(misuses("```cpp\nwait(channel);  // the completion channel\n```\n").empty());
    CHECK(misuses("The completion channel is a file descriptor.\n").empty());
    // Findings name the line.
    const auto found = misuses("# 标题\n\n第一段。\n\n用 completion channel 等待。\n");
    REQUIRE(found.size() == 1);
    CHECK(found[0].rfind("5: ", 0) == 0);
}

TEST_CASE("glossary: a line broken between two Chinese characters is caught", "[docs][glossary]") {
    CHECK(broken_lines("第一行的中文\n接着写下去。\n").size() == 1);
    CHECK(broken_lines("第一行的中文，\n接着写下去。\n").size() == 1);
    CHECK(broken_lines("第一行写到 QP\n接着写下去。\n").empty());
    CHECK(broken_lines("第一行的中文\n`code` 开头。\n").empty());
    CHECK(broken_lines("一段。\n\n另一段。\n").empty());
    CHECK(broken_lines("```\n输出一\n输出二\n```\n").empty());
}

TEST_CASE("twins: the list check catches each kind of mistake", "[docs][twins]") {
    const std::set<std::string> files = {"README.md",
                                         "README.zh-CN.md",
                                         "lessons/01_devices/README.md",
                                         "slides/01_devices.md",
                                         "slides/zh-CN/01_devices.md",
                                         "docs/cheatsheet.md"};
    const auto exists = [&](const std::string& path) { return files.contains(path); };
    const std::vector<std::string> needing = {
        "README.md", "docs/cheatsheet.md", "lessons/01_devices/README.md", "slides/01_devices.md"};
    const std::vector<std::string> chinese = {"README.zh-CN.md", "slides/zh-CN/01_devices.md"};
    const auto problems = [&](const std::string& rows) {
        return twin_list_problems(
            parse_twins("| English | 中文 | status | in step with |\n|-|-|-|-|\n" + rows), needing,
            chinese, exists);
    };
    const std::string good =
        "| README.md | README.zh-CN.md | translated | `0123456789abcdef` |\n"
        "| `lessons/01_devices/README.md` | `lessons/01_devices/README.zh-CN.md` | pending | — |\n"
        "| slides/01_devices.md | slides/zh-CN/01_devices.md | translated | 00000000ffffffff |\n"
        "| docs/cheatsheet.md | docs/cheatsheet.zh-CN.md | pending | — |\n"
        "| docs/readings.md | docs/readings.zh-CN.md | pending | — |\n";  // not written yet: fine
    INFO(joined(problems(good)));
    CHECK(problems(good).empty());
    const auto one = [&](const std::string& from, const std::string& to,
                         const std::string& expected) {
        const auto found = problems(replaced(good, from, to));
        INFO(from << " -> " << to << ":" << joined(found));
        CHECK(std::any_of(found.begin(), found.end(), [&](const std::string& problem) {
            return problem.find(expected) != std::string::npos;
        }));
    };
    one("README.zh-CN.md | translated | `0123456789abcdef`", "README.zh-CN.md | pending | —",
        "mark it translated");
    one("docs/cheatsheet.zh-CN.md | pending | —",
        "docs/cheatsheet.zh-CN.md | translated | 0123456789abcdef", "does not exist");
    one("docs/cheatsheet.zh-CN.md | pending", "docs/cheatsheet.zh-CN.md | done",
        "write translated or pending");
    one("| docs/cheatsheet.md | docs/cheatsheet.zh-CN.md | pending | — |\n", "",
        "docs/cheatsheet.md needs a Chinese twin");
    one("slides/zh-CN/01_devices.md | translated", "slides/01_devices.zh-CN.md | translated",
        "the twin of");
    one("| README.md | README.zh-CN.md | translated | `0123456789abcdef` |\n", "",
        "README.zh-CN.md is a Chinese page");
    one("00000000ffffffff", "new", "16 hexadecimal digits");
    one("docs/readings.zh-CN.md | pending | —",
        "docs/readings.zh-CN.md | pending | 0123456789abcdef", "a pending row has —");
}

TEST_CASE("twins: a changed sentence in an English page makes its twin stale", "[docs][twins]") {
    const std::string english = "# Lesson 99\n\nOne sentence that is translated.\n";
    // Line breaks and indentation are not a change of the text; words are.
    CHECK(fingerprint(english) ==
          fingerprint("# Lesson 99\n\nOne sentence\n  that is translated.\n"));
    CHECK(fingerprint(english) !=
          fingerprint("# Lesson 99\n\nOne sentence that was translated.\n"));
    CHECK(fingerprint(english).size() == 16);
    // The twin link line is not part of what a twin must be in step with.
    CHECK(page_fingerprint("# Lesson 99\nEnglish | [中文](README.zh-CN.md)\n\nOne sentence.\n") ==
          page_fingerprint("# Lesson 99\nEnglish | [中文](README.x.zh-CN.md)\n\nOne sentence.\n"));
    CHECK(page_fingerprint("# Lesson 99\nEnglish | [中文](README.zh-CN.md)\n\nOne sentence.\n") ==
          fingerprint("# Lesson 99\n\nOne sentence.\n"));
    std::map<std::string, std::string> files = {
        {"lessons/99_fixture/README.md", english},
        {"lessons/99_fixture/README.zh-CN.md", "# 第 99 课\n"}};
    const auto read = [&](const std::string& path) -> std::optional<std::string> {
        const auto file = files.find(path);
        return file == files.end() ? std::nullopt : std::optional(file->second);
    };
    const auto list = [](const std::string& in_step) {
        return parse_twins(
            "| English | 中文 | status | in step with |\n|-|-|-|-|\n"
            "| lessons/99_fixture/README.md | lessons/99_fixture/README.zh-CN.md | translated | " +
            in_step + " |\n");
    };
    CHECK(stale_twins(list(fingerprint(english)), read).empty());
    files["lessons/99_fixture/README.md"] = "# Lesson 99\n\nOne sentence that was translated.\n";
    const auto stale = stale_twins(list(fingerprint(english)), read);
    REQUIRE(stale.size() == 1);
    // The message says what to write once the twin is in step again.
    CHECK(stale[0].find(fingerprint(files["lessons/99_fixture/README.md"])) != std::string::npos);
}

// --- the course's own pages ------------------------------------------------------

namespace {

std::vector<TwinEntry> course_twins() {
    return parse_twins(read_file(kSourceDir / "docs" / "twins.md"));
}

bool exists_in_course(const std::string& path) {
    return fs::is_regular_file(kSourceDir / path);
}

Tree course_tree() {
    Tree tree;
    for (const TwinEntry& entry : course_twins()) {
        if (entry.status == "translated" && exists_in_course(entry.english) &&
            exists_in_course(entry.chinese)) {
            tree.twins[entry.english] = entry.chinese;
        }
    }
    tree.read = [](const std::string& path) -> std::optional<std::string> {
        if (!exists_in_course(path)) {
            return std::nullopt;
        }
        return read_file(kSourceDir / path);
    };
    return tree;
}

}  // namespace

TEST_CASE("twins: docs/twins.md lists every page that needs a twin", "[docs][twins]") {
    const auto entries = course_twins();
    REQUIRE_FALSE(entries.empty());
    const auto needing = pages_needing_twins(kSourceDir);
    // The top README, twelve lessons, seven exercises and their README, the decks:
    // fewer would mean the list of pages was read wrongly.
    CHECK(needing.size() >= 40);
    const auto problems =
        twin_list_problems(entries, needing, chinese_pages(kSourceDir), exists_in_course);
    INFO(joined(problems));
    CHECK(problems.empty());
    std::size_t translated = 0;
    for (const TwinEntry& entry : entries) {
        translated += entry.status == "translated" ? 1 : 0;
    }
    // How far the translation is: shown in the test's output.
    WARN("the Chinese edition: " << translated << " of " << entries.size()
                                 << " pages translated (docs/twins.md)");
}

TEST_CASE("twins: every translated page agrees with its English twin", "[docs][twins][drift]") {
    const Tree tree = course_tree();
    REQUIRE_FALSE(tree.twins.empty());
    for (const auto& [english, chinese] : tree.twins) {
        const auto found = drift(parse_page(english, read_file(kSourceDir / english)),
                                 parse_page(chinese, read_file(kSourceDir / chinese)), tree);
        INFO(chinese << " has drifted from " << english
                     << " (docs/translating.md says how to bring it back):" << joined(found));
        CHECK(found.empty());
    }
}

TEST_CASE("twins: every translated page is in step with its English page's text", "[docs][twins]") {
    const auto stale = stale_twins(course_twins(), course_tree().read);
    INFO(joined(stale));
    CHECK(stale.empty());
}

TEST_CASE("glossary: docs/glossary.md is well formed", "[docs][glossary]") {
    const Glossary glossary = parse_glossary(read_file(kSourceDir / "docs" / "glossary.md"));
    INFO(joined(glossary.errors));
    CHECK(glossary.errors.empty());
    // The terms every lesson uses, and the headings the deck checks look for.
    for (const char* term : {"queue pair", "completion queue", "protection domain", "memory region",
                             "work request", "shared receive queue", "memory window", "remote key",
                             "verbs", "RoCE", "objectives", "recap", "what can go wrong"}) {
        INFO(term);
        CHECK(glossary.find(term) != nullptr);
    }
    CHECK(glossary.terms.size() >= 100);
}

TEST_CASE("glossary: every Chinese page uses the terms as the glossary does", "[docs][glossary]") {
    const Glossary glossary = parse_glossary(read_file(kSourceDir / "docs" / "glossary.md"));
    REQUIRE(glossary.errors.empty());
    const auto pages = chinese_pages(kSourceDir);
    REQUIRE_FALSE(pages.empty());
    for (const std::string& page : pages) {
        const std::string text = read_file(kSourceDir / page);
        std::vector<std::string> found;
        for (const auto& finding : glossary_findings(text, glossary)) {
            found.push_back(page + ":" + std::to_string(finding.line) + ": " + finding.what);
        }
        for (const auto& finding : broken_lines(text)) {
            found.push_back(page + ":" + std::to_string(finding.line) + ": " + finding.what);
        }
        INFO(page << " (docs/glossary.md decides the terms):" << joined(found));
        CHECK(found.empty());
    }
}

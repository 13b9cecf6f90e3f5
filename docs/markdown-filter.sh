#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Doxygen input filter for the Markdown pages (FILTER_PATTERNS in docs/Doxyfile).
# The READMEs link files by their place in the repository, which reads well
# on a forge; in the built documentation (a flat html/ folder):
#  - a slide deck, e.g. [slides/01_devices.md](../../slides/01_devices.md),
#    becomes the rendered deck, labelled as such: ./lab slides writes
#    build/site/slides/NAME.html next to build/site/docs/html/ (Doxygen would
#    otherwise look for a page of that name, and fail);
#  - a diagram, e.g. (../../docs/diagrams/qp_states.svg), becomes its bare name,
#    which Doxygen finds in IMAGE_PATH and copies next to the pages;
#  - a lesson's README, e.g. (lessons/05_exchange/README.md#addressing), becomes
#    the lesson's page, lesson_05_exchange.html#addressing (the page label
#    given below): Doxygen 1.9.8 cannot resolve the file's path once the page
#    has a label, and 1.9.4 left links with an anchor pointing at the .md file;
#  - a link to the device page, e.g. (../../docs/devices.md#dead-peer), becomes
#    devices.html#dead-peer: the page has a name, so Doxygen 1.9.8 cannot find
#    it by its path, and 1.9.4 would leave the link pointing at the .md file;
#  - a folded block, <details><summary>Answers</summary> ... </details> (the
#    self-check answers under a lesson's questions), is shown unfolded under
#    its summary in bold: Doxygen 1.9.4 closes a <details> at the first blank
#    line inside it, and stops at one whose list runs into its end;
#  - in an inline code span, a "::" at its start or after a space (an
#    IPv4-mapped GID such as `::ffff:a.b.c.d`, or `GID[  2]: ::ffff:...`) gets
#    an invisible joiner between the colons: Doxygen would take "::ffff" for
#    a link to a symbol and warn. (lab::check is left alone.)
# The Chinese twins (NAME.zh-CN.md, slides/zh-CN/NAME.md; docs/translating.md):
#  - a twin of a page with a name gets that name with _zh_cn (lesson_01_devices_zh_cn,
#    index_zh_cn for the main page's), and a link to a page with a name, the
#    twin links at the top included, becomes a link to that page (the same
#    limit of Doxygen 1.9.8); a page without a name is found by its path;
#  - a Chinese deck, e.g. (../../slides/zh-CN/01_devices.md), becomes
#    ../../slides/zh-CN/01_devices.html, which ./lab slides writes;
#  - in a Chinese page, an anchor <a id="NAME"></a> (the English page's anchor,
#    kept above a translated heading so that links into the page work on a
#    forge) becomes <a id="PAGE-NAME"></a>, and a link within the page,
#    (#NAME), (#PAGE-NAME): Doxygen keeps one list of anchors for the whole
#    site, and the English page (or another twin) has NAME too;
#  - in a Chinese page, **bold** outside code becomes <b>bold</b>: Doxygen
#    takes ** for emphasis only next to a space or ASCII punctuation, and
#    Chinese has neither around a bold word (及其**类型**（…）).
# Generated from the sources, so that they cannot go stale:
#  - a lesson's README gets the page name lesson_NN_name, and a closing
#    section that links the headers of common/ its main.cpp includes
#    (docs/course_map.sh; the header pages link back, docs/header-filter.sh);
#  - the line "<!-- the decks -->" of docs/slides.md becomes the list of every
#    deck in slides/, with the cheat sheet.
# shellcheck disable=SC2016 # the backquotes are literal Markdown, not commands
set -euo pipefail
file=$1
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lesson=
chinese=
case "$file" in
*.zh-CN.md | */slides/zh-CN/*.md) chinese=yes ;;
esac
case "$file" in
*lessons/[0-9][0-9]_*/README.md | *lessons/[0-9][0-9]_*/README.zh-CN.md)
    lesson=$(basename "$(dirname "$file")")
    ;;
esac

# The name Doxygen gives a page, or nothing: the main page is index, a lesson's
# README lesson_NN_name, a page whose first heading says {#name} that name, the
# Chinese twin of a page with a name that name with _zh_cn.
page_name() { # FILE (absolute)
    local page=$1 name
    case "$page" in
    "$repo/README.md") name=index ;;
    "$repo"/lessons/[0-9][0-9]_*/README.md) name=lesson_$(basename "$(dirname "$page")") ;;
    *.zh-CN.md)
        name=$(page_name "${page%.zh-CN.md}.md")
        name=${name:+${name}_zh_cn}
        ;;
    *) [ -f "$page" ] && name=$(sed -n 's/^# .*{#\([A-Za-z0-9_]*\)}[[:space:]]*$/\1/p' "$page" | head -n 1) ;;
    esac
    echo "${name:-}"
}
self=$(cd "$(dirname "$file")" && pwd)/$(basename "$file")
label=$(page_name "$self")
# Only a name the page does not give itself is added to its first heading.
added_label=
grep -q '^# .*{#' "$file" || added_label=$label
[ "$self" = "$repo/README.md" ] && added_label=

# Links to a page with a name go to the page: every link to a Chinese twin,
# and the twin links at the top (README.md <-> README.zh-CN.md, ...).
twin_rewrites=()
english_twin=/ # a Chinese page's English twin, as its links name it (/: none)
[ -z "$chinese" ] || english_twin=$(basename "${self%.zh-CN.md}").md
while IFS= read -r target; do
    path=$(cd "$(dirname "$self")" && realpath -m "$target")
    name=$(page_name "$path")
    quoted=$(printf '%s' "$target" | sed 's/[][\.*^$#|+?(){}]/\\&/g')
    if [ -n "$name" ]; then
        twin_rewrites+=(-e "s#\\]\\(${quoted}(\\#[^)]*)?\\)#](${name}.html\\1)#g")
    elif [ "$target" = README.md ] || [ "$target" = README.zh-CN.md ]; then
        # A page without a name is found by its path; a bare README.md would
        # be taken for the main page, a bare README.zh-CN.md for its twin
        # (Doxygen 1.9.8), which has a name and so no longer answers to a path.
        twin_rewrites+=(-e "s#\\]\\(${quoted}(\\#[^)]*)?\\)#](../$(basename "$(dirname "$self")")/${target}\\1)#g")
    fi
done < <(grep -oE '\]\([^)#[:space:]]+\.md(#[^)]*)?\)' "$file" | sed -E 's/^\]\(//; s/(#[^)]*)?\)$//' | sort -u |
    while IFS= read -r target; do
        case "$target" in
        *.zh-CN.md | "$english_twin") echo "$target" ;;
        esac
    done)

rewrite() {
    sed -E \
        -e 's#\[([^]]*/)?slides/zh-CN/([0-9A-Za-z_]+)\.md\]\(#[幻灯片 zh-CN/\2.html](#g' \
        -e 's#\]\(([^)]*/)?slides/zh-CN/([0-9A-Za-z_]+)\.md\)#](../../slides/zh-CN/\2.html)#g' \
        -e 's#\[([^]]*/)?slides/([0-9A-Za-z_]+)\.md\]\(#[the slides, \2.html](#g' \
        -e 's#\]\(([^)]*/)?slides/([0-9A-Za-z_]+)\.md\)#](../../slides/\2.html)#g' \
        -e 's#\]\(([^)]*/)?docs/diagrams/([0-9A-Za-z_]+(\.zh-CN)?\.svg)\)#](\2)#g' \
        -e 's|\]\(([^)]*/)?lessons/([0-9][0-9]_[0-9A-Za-z_]+)/README\.md(#[^)]*)?\)|](lesson_\2.html\3)|g' \
        -e 's|\]\((\.\./)*(docs/)?devices\.md(#[^)]*)?\)|](devices.html\3)|g' \
        -e 's#(`([^`]* )?)::#\1:\&zwj;:#g' \
        -e 's#^[[:space:]]*<details><summary>(.*)</summary>[[:space:]]*$#**\1**#' \
        -e 's#^[[:space:]]*</details>[[:space:]]*$##' \
        "${twin_rewrites[@]}"
}

# **bold** as <b>bold</b>, outside code blocks and inline code.
chinese_emphasis() {
    awk '
        /^[ \t]*(```|~~~)/ { fence = !fence; print; next }
        fence { print; next }
        {
            count = split($0, parts, "`")
            line = ""
            for (i = 1; i <= count; ++i) {
                if (i % 2 == 1) gsub(/\*\*[^*]+\*\*/, "<b>&</b>", parts[i])
                line = line (i > 1 ? "`" : "") parts[i]
            }
            gsub(/<b>\*\*/, "<b>", line)
            gsub(/\*\*<\/b>/, "</b>", line)
            print line
        }'
}

# In an English page, a heading that a link within the page names by its
# GitHub anchor, [...](#deeper-byte-order), gets that anchor as its label
# ({#deeper-byte-order}) unless an <a id> gives it already: Doxygen takes the
# link for a reference, and does not name headings the way a forge does.
heading_labels() {
    if [ -n "$chinese" ]; then
        cat
        return
    fi
    local wanted
    wanted=$({ grep -oE '\]\(#[^)]+\)' "$file" || true; } | sed -E 's/^\]\(#//; s/\)$//' | sort -u | tr '\n' ' ')
    awk -v wanted=" $wanted " '
        /^[ \t]*(```|~~~)/ { fence = !fence }
        !fence && /<a id="[^"]*"><\/a>/ {
            id = $0; sub(/.*<a id="/, "", id); sub(/".*/, "", id); given[id] = 1
        }
        { lines[NR] = $0 }
        END {
            fence = 0
            for (i = 1; i <= NR; ++i) {
                line = lines[i]
                if (line ~ /^[ \t]*(```|~~~)/) fence = !fence
                if (!fence && line ~ /^#+ / && line !~ /\{#[^}]*\}[ \t]*$/) {
                    slug = tolower(line)
                    sub(/^#+ /, "", slug)
                    gsub(/[^a-z0-9 _-]/, "", slug)
                    gsub(/ /, "-", slug)
                    if (index(wanted, " " slug " ") && !(slug in given)) line = line " {#" slug "}"
                }
                print line
            }
        }'
}

deck_list() {
    local deck name title line
    for deck in "$repo"/slides/[0-9]*.md "$repo"/slides/ex[0-9]*.md; do
        [ -f "$deck" ] || continue
        name=$(basename "$deck" .md)
        title=$(sed -n 's/^title: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$deck" | head -n 1)
        line="- [${title:-$name}](../../slides/$name.html) ([PDF](../../slides/$name.pdf), [handout](../../slides/$name-handout.pdf))"
        # The Chinese twin, where there is one.
        [ -f "$repo/slides/zh-CN/$name.md" ] &&
            line+=" · [中文](../../slides/zh-CN/$name.html) ([PDF](../../slides/zh-CN/$name.pdf), [讲义](../../slides/zh-CN/$name-handout.pdf))"
        echo "$line"
    done
    echo "- [The verbs cheat sheet](../../slides/cheatsheet.pdf) (one page, PDF; also as a page here: @ref cheatsheet)"
}

{
    # The page name: the first heading gets {#NAME} unless it has one.
    awk -v label="$added_label" 'label != "" && done == 0 && /^# / { $0 = $0 " {#" label "}"; done = 1 } { print }' "$file" |
        heading_labels |
        if [ "$(basename "$file")" = slides.md ] && [ "$(basename "$(dirname "$file")")" = docs ]; then
            while IFS= read -r line; do
                if [ "$line" = '<!-- the decks -->' ]; then deck_list; else printf '%s\n' "$line"; fi
            done
        else
            cat
        fi
    if [ -n "$lesson" ]; then
        echo
        if [ -n "$chinese" ]; then
            echo "## 本课用到的课程库"
            echo
            echo "\`main.cpp\` 包含的 \`common/\` 头文件（每个页面都写明是哪一课讲的）："
        else
            echo "## The course library in this lesson"
            echo
            echo "The headers of \`common/\` that \`main.cpp\` includes (each page says which lesson taught it):"
        fi
        echo
        "$repo/docs/course_map.sh" headers "$lesson" | while read -r header; do
            echo "- @ref $header \"lab/$header\""
        done
    fi
} | rewrite | if [ -n "$chinese" ]; then
    sed -E -e "s#<a id=\"([^\"]+)\"></a>#<a id=\"${label:-zh_cn}-\\1\"></a>#g" \
        -e "s#\\]\\(\\#([^)]+)\\)#](\\#${label:-zh_cn}-\\1)#g" | chinese_emphasis
else
    cat
fi

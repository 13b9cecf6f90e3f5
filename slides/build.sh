#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Render the slide decks (slides/*.md and the Chinese ones, slides/zh-CN/*.md,
# Marp Markdown) to HTML, check their layout in a headless Chromium, and print
# the PDFs: each deck, a handout per deck (several slides a page, with the
# speaker notes) and the one-page cheat sheet (and its Chinese twin). Marp,
# playwright-core and the browser are installed on first use (slides/setup.sh).
# The HTML needs no network when it is opened (no CDN: emoji images and math
# are off in .marprc.yml, and the output is checked).
#
#   slides/build.sh [--no-pdf] [--png] [--out DIR] [DECK...]
#
# DECK is a deck's name without .md (e.g. 01_devices, zh-CN/01_devices), or
# the path of a Markdown file; default: every deck. Output (default
# build/site): DIR/slides/NAME.html, NAME.pdf, NAME-handout.pdf,
# cheatsheet.pdf, the Chinese ones in DIR/slides/zh-CN/, and
# DIR/docs/diagrams/*.svg, so that the decks' image paths (../docs/diagrams/...,
# ../../docs/diagrams/... from zh-CN/) work the same in the source tree and in
# the output. A link between a deck and its twin ([中文](zh-CN/NAME.md)) points
# at the twin's HTML in the output.
# Fails (exit 1) when Marp warns, when a deck loads anything from the network,
# or when a slide does not fit: content over its frame or into the footer,
# text smaller than the footer (tools/check_layout.mjs). --no-pdf renders the
# HTML and runs the checks only (what the test slides_layout runs). --png also
# draws every slide as a picture, DIR/slides/png/[zh-CN/]NAME.NNN.png, to look
# at one by one (a translation, say).
set -euo pipefail

slides=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$slides")
out=$repo/build/site
pdf=yes
png=no
decks=()
while [ $# -gt 0 ]; do
    case "$1" in
    --no-pdf) pdf=no ;;
    --png) png=yes ;;
    --out)
        [ $# -ge 2 ] || { echo "slides: --out needs a directory" >&2; exit 2; }
        out=$2
        shift
        ;;
    -h | --help)
        awk 'NR > 1 && !/^#/ {exit} NR > 1 && !/SPDX-License-Identifier:/ {sub(/^# ?/, ""); print}' "${BASH_SOURCE[0]}"
        exit 0
        ;;
    -*) echo "slides: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *.md)
        [ -f "$1" ] || { echo "slides: no file '$1'" >&2; exit 2; }
        decks+=("$(cd "$(dirname "$1")" && pwd)/$(basename "$1")")
        ;;
    *)
        [ -f "$slides/$1.md" ] || { echo "slides: no deck '$1' (the decks: $(cd "$slides" && for deck in [0-9e]*.md zh-CN/[0-9e]*.md; do [ -f "$deck" ] && printf '%s ' "${deck%.md}"; done))" >&2; exit 2; }
        decks+=("$slides/$1.md")
        ;;
    esac
    shift
done
if [ ${#decks[@]} -eq 0 ]; then
    for deck in "$slides"/[0-9]*.md "$slides"/ex[0-9]*.md "$slides"/zh-CN/[0-9]*.md "$slides"/zh-CN/ex[0-9]*.md; do
        [ -f "$deck" ] && decks+=("$deck")
    done
fi
mkdir -p "$out/slides" "$out/docs/diagrams"
out=$(cd "$out" && pwd)

"$slides/setup.sh"
cd "$slides"
cp "$repo"/docs/diagrams/*.svg "$out/docs/diagrams/"

# Marp renders a folder in one run (one browser for all the PDFs): the decks
# asked for are linked into a staging folder whose ../docs is the repository's,
# so that image paths resolve there as they do in the source tree. A Chinese
# deck goes to its zh-CN/ subfolder, which Marp keeps in the output.
stage=$out/.stage
rm -rf "$stage"
mkdir -p "$stage/slides/zh-CN"
ln -s "$repo/docs" "$stage/docs"
names=()
for deck in "${decks[@]}"; do
    name=$(basename "$deck" .md)
    [ "$(basename "$(dirname "$deck")")" = zh-CN ] && name=zh-CN/$name
    ln -s "$deck" "$stage/slides/$name.md"
    names+=("$name")
done

log=$(mktemp)
trap 'rm -f "$log"' EXIT
marp() { # DEST MARP-OPTION...
    local dest=$1
    shift
    node_modules/.bin/marp --config-file .marprc.yml --theme-set theme --no-stdin \
        -I "$stage/slides" -o "$dest" "$@" >"$log" 2>&1 || { cat "$log" >&2; return 1; }
    # --allow-local-files (the diagrams in PDFs) always draws one warning about
    # itself; any other warning is a problem in a deck.
    if grep -E '\[ *WARN *\]' "$log" | grep -v 'Insecure local file accessing' >&2; then
        echo "slides: Marp warned (above): fix the deck" >&2
        return 1
    fi
}

status=0
started=$SECONDS
marp "$out/slides" --html false || exit 1
# Links between the twins name the Markdown, which a forge shows; in the output
# they go to the HTML.
for name in "${names[@]}"; do
    sed -i -E 's#href="((\.\./|zh-CN/)?[0-9A-Za-z_]+)\.md"#href="\1.html"#g' "$out/slides/$name.html"
done
for name in "${names[@]}"; do
    # The decks must work offline: nothing fetched from elsewhere at view time.
    if grep -Eo '(src|href)="https?://[^"]*"|url\(["'"'"']?https?://[^)]*\)|@import[^;]*https?://' \
        "$out/slides/$name.html" | grep -v 'xmlns' >&2; then
        echo "slides: $name.html loads something from the network (above)" >&2
        status=1
    fi
done
echo "slides: ${#names[@]} deck(s) rendered to HTML in $((SECONDS - started)) s"

# The layout check: every slide measured in Chromium.
html=()
for name in "${names[@]}"; do html+=("$out/slides/$name.html"); done
(cd "$repo" && node "$slides/tools/check_layout.mjs" --source-dir "$stage/slides" "${html[@]}") || status=1

if [ "$pdf" = yes ]; then
    started=$SECONDS
    marp "$out/slides" --html false --pdf --allow-local-files --browser-timeout 120 || status=1
    # Handouts (several slides a page, with the notes) and the cheat sheet,
    # each in Chinese too where its twin exists.
    cheatsheets=(--cheatsheet "$repo/docs/cheatsheet.md")
    [ -f "$repo/docs/cheatsheet.zh-CN.md" ] && cheatsheets+=(--cheatsheet "$repo/docs/cheatsheet.zh-CN.md")
    node tools/print.mjs --out "$out/slides" "${cheatsheets[@]}" "${decks[@]}" || status=1
    echo "slides: PDFs, handouts and the cheat sheet printed in $((SECONDS - started)) s"
fi
if [ "$png" = yes ]; then
    started=$SECONDS
    rm -rf "$out/slides/png"
    marp "$out/slides/png" --html false --images png --allow-local-files --browser-timeout 120 || status=1
    echo "slides: every slide drawn in $out/slides/png/ in $((SECONDS - started)) s"
fi
rm -rf "$stage"

# An index of every deck rendered so far, for a browser.
{
    echo '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>rdma-verbs-lab slides</title>'
    echo "<style>body{font-family:'DejaVu Sans','Noto Sans CJK SC',sans-serif;max-width:46em;margin:2em auto;line-height:1.6}</style></head><body>"
    echo '<h1>rdma-verbs-lab: slides</h1><ul>'
    for file in "$out"/slides/*.html; do
        name=$(basename "$file" .html)
        case "$name" in index | *-handout | cheatsheet) continue ;; esac
        title=$(sed -n 's/^title: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$slides/$name.md" 2>/dev/null | head -n 1)
        line="<li><a href=\"$name.html\">${title:-$name}</a>"
        [ -f "$out/slides/$name.pdf" ] && line+=" (<a href=\"$name.pdf\">PDF</a>"
        [ -f "$out/slides/$name-handout.pdf" ] && line+=", <a href=\"$name-handout.pdf\">handout</a>"
        [ -f "$out/slides/$name.pdf" ] && line+=")"
        # The Chinese twin, where it is rendered.
        if [ -f "$out/slides/zh-CN/$name.html" ]; then
            line+=" · <a href=\"zh-CN/$name.html\" lang=\"zh-CN\">中文</a>"
            [ -f "$out/slides/zh-CN/$name.pdf" ] && line+=" (<a href=\"zh-CN/$name.pdf\">PDF</a>"
            [ -f "$out/slides/zh-CN/$name-handout.pdf" ] && line+=", <a href=\"zh-CN/$name-handout.pdf\" lang=\"zh-CN\">讲义</a>"
            [ -f "$out/slides/zh-CN/$name.pdf" ] && line+=")"
        fi
        echo "$line</li>"
    done
    echo '</ul>'
    [ -f "$out/slides/cheatsheet.pdf" ] &&
        echo '<p><a href="cheatsheet.pdf">The verbs cheat sheet</a> (one page, PDF)</p>'
    [ -f "$out/slides/zh-CN/cheatsheet.pdf" ] &&
        echo '<p lang="zh-CN"><a href="zh-CN/cheatsheet.pdf">verbs 速查表</a>（一页，PDF）</p>'
    echo '<p>Reference documentation: <a href="../docs/html/index.html">docs</a> (./lab docs)</p></body></html>'
} >"$out/slides/index.html"
[ $status -eq 0 ] || { echo "slides: some decks failed (above)" >&2; exit 1; }
echo "slides: open $out/slides/index.html"

#!/usr/bin/env bash
# Render the slide decks (slides/*.md, Marp Markdown) to HTML, and to PDF where
# Chromium is installed. Marp comes from npm, pinned by package-lock.json and
# installed with 'npm ci' into slides/node_modules; the HTML needs no network
# when it is opened (no CDN: emoji images and math are turned off in
# .marprc.yml, and this script checks the output for remote resources).
#
#   slides/build.sh [--no-pdf] [--out DIR] [DECK...]
#
# DECK is a deck's name without .md (e.g. 01_devices); default: all of them.
# Output (default build/site): DIR/slides/NAME.html, DIR/slides/NAME.pdf, and
# DIR/docs/diagrams/*.svg, so that the decks' relative image paths
# (../docs/diagrams/...) work the same in the source tree and in the output.
# Marp's warnings are errors.
set -euo pipefail

slides=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$slides")
out=$repo/build/site
pdf=auto
decks=()
while [ $# -gt 0 ]; do
    case "$1" in
    --no-pdf) pdf=no ;;
    --out)
        [ $# -ge 2 ] || { echo "slides: --out needs a directory" >&2; exit 2; }
        out=$2
        shift
        ;;
    -h | --help)
        sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    -*) echo "slides: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *)
        [ -f "$slides/$1.md" ] || { echo "slides: no deck '$1' (the decks: $(cd "$slides" && for deck in [0-9e]*.md; do printf '%s ' "${deck%.md}"; done))" >&2; exit 2; }
        decks+=("$slides/$1.md")
        ;;
    esac
    shift
done
if [ ${#decks[@]} -eq 0 ]; then
    for deck in "$slides"/[0-9]*.md "$slides"/ex[0-9]*.md; do
        [ -f "$deck" ] && decks+=("$deck")
    done
fi
mkdir -p "$out/slides" "$out/docs/diagrams"
out=$(cd "$out" && pwd)

command -v npm >/dev/null || {
    echo "slides: npm is missing (Debian: apt-get install npm)" >&2
    exit 2
}
cd "$slides"
# npm ci installs exactly what package-lock.json says; run it again only when
# the lockfile changed since the last install.
stamp=node_modules/.lab-installed
if [ ! -x node_modules/.bin/marp ] || [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ]; then
    echo "slides: npm ci (Marp, pinned by package-lock.json)"
    npm ci --no-audit --no-fund --loglevel=error >/dev/null
    touch "$stamp"
fi

chrome=${CHROME_PATH:-}
if [ -z "$chrome" ]; then
    for candidate in chromium chromium-browser google-chrome; do
        if command -v "$candidate" >/dev/null; then
            chrome=$(command -v "$candidate")
            break
        fi
    done
fi
if [ "$pdf" = auto ]; then
    if [ -n "$chrome" ]; then pdf=yes; else pdf=no; fi
    [ "$pdf" = yes ] || echo "slides: no Chromium found: HTML only (Debian: apt-get install chromium)"
fi

cp "$repo"/docs/diagrams/*.svg "$out/docs/diagrams/"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
marp() {
    # Marp runs Chromium without its sandbox when it runs as root, as it must there.
    CHROME_PATH=$chrome node_modules/.bin/marp --config-file .marprc.yml --theme-set theme \
        --no-stdin "$@" >"$log" 2>&1 || { cat "$log" >&2; return 1; }
    # --allow-local-files (the diagrams in PDFs) always draws one warning about
    # itself; any other warning is a problem in a deck.
    if grep -E '\[ *WARN *\]' "$log" | grep -v 'Insecure local file accessing' >&2; then
        echo "slides: Marp warned (above): fix the deck" >&2
        return 1
    fi
}

status=0
for deck in "${decks[@]}"; do
    name=$(basename "$deck" .md)
    html=$out/slides/$name.html
    marp "$deck" --html false -o "$html" || { status=1; continue; }
    # The decks must work offline: nothing fetched from elsewhere at view time.
    if grep -Eo '(src|href)="https?://[^"]*"|url\(["'"'"']?https?://[^)]*\)|@import[^;]*https?://' "$html" |
        grep -v 'xmlns' >&2; then
        echo "slides: $name.html loads something from the network (above)" >&2
        status=1
    fi
    if [ "$pdf" = yes ]; then
        marp "$deck" --html false --pdf --allow-local-files --browser-timeout 120 \
            -o "$out/slides/$name.pdf" || { status=1; continue; }
        echo "slides: $name -> build/${out#"$repo/build/"}/slides/$name.html, .pdf"
    else
        echo "slides: $name -> $html"
    fi
done
[ $status -eq 0 ] || { echo "slides: some decks failed (above)" >&2; exit 1; }

# An index of every deck rendered so far, for a browser.
{
    echo '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>rdma-verbs-lab slides</title>'
    echo '<style>body{font-family:sans-serif;max-width:46em;margin:2em auto;line-height:1.6}</style></head><body>'
    echo '<h1>rdma-verbs-lab: slides</h1><ul>'
    for html in "$out"/slides/*.html; do
        name=$(basename "$html" .html)
        [ "$name" = index ] && continue
        title=$(sed -n 's/^title: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$slides/$name.md" 2>/dev/null | head -n 1)
        line="<li><a href=\"$name.html\">${title:-$name}</a>"
        [ -f "$out/slides/$name.pdf" ] && line+=" (<a href=\"$name.pdf\">PDF</a>)"
        echo "$line</li>"
    done
    echo '</ul><p>Reference documentation: <a href="../docs/html/index.html">docs</a> (./lab docs)</p></body></html>'
} >"$out/slides/index.html"
echo "slides: open $out/slides/index.html"

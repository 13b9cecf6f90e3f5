#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The 'slides' tests: the layout check of the rendered decks (slides/build.sh
# --no-pdf, which measures every slide in a headless Chromium).
#
#   tests/docs/check_slides.sh decks SOURCE_DIR WORK_DIR
#       every deck of the course, English and Chinese (slides/zh-CN/), renders
#       and fits (exit 1 with the check's report if not)
#   tests/docs/check_slides.sh fixture SOURCE_DIR WORK_DIR
#       the check refuses tests/docs/slides/bad_deck.md, naming each broken slide:
#       content that runs off the slide, text on the footer, text smaller than
#       the footer, a code line too long for the slide, a diagram drawn too small;
#       and it reports nothing on the slide that fits
#
# Both install what they need on first use (slides/setup.sh: Chromium and the
# CJK fonts with apt, Marp and playwright-core with npm ci). Exit 77 (CTest:
# skipped) only where that is impossible: not root and no sudo.
set -euo pipefail
mode=$1
source_dir=$2
work=$3

if ! "$source_dir/slides/setup.sh"; then
    if [ "$(id -u)" != 0 ] && ! command -v sudo >/dev/null; then
        echo "SKIPPED: cannot install Chromium or npm packages here (not root, no sudo)"
        exit 77
    fi
    echo "FAILED: slides/setup.sh could not install what the slides need"
    exit 1
fi
rm -rf "$work"
mkdir -p "$work"
started=$SECONDS

case "$mode" in
decks)
    "$source_dir/slides/build.sh" --no-pdf --out "$work"
    echo "slides: every deck fits its frames ($((SECONDS - started)) s)"
    ;;
fixture)
    fixture=$source_dir/tests/docs/slides/bad_deck.md
    status=0
    "$source_dir/slides/build.sh" --no-pdf --out "$work" "$fixture" >"$work/report.txt" 2>&1 || status=$?
    cat "$work/report.txt"
    if [ $status -eq 0 ]; then
        echo "FAILED: the layout check passed a deck with broken slides"
        exit 1
    fi
    failed=0
    expect() { # SLIDE PATTERN WHAT
        if ! grep -E "bad_deck\.md:[0-9]+: slide $1: .*$2" "$work/report.txt" >/dev/null; then
            echo "FAILED: the check did not report $3 on slide $1"
            failed=1
        fi
    }
    expect 2 'runs off the bottom of the slide by [0-9.]+ px \(cut off\)' 'the list that runs off the slide'
    expect 3 'p "This one is placed over the footer\." overlaps the footer' 'the paragraph on the footer'
    expect 4 'text 12 px, smaller than the footer \(16 px\)' 'the 12 px text'
    expect 5 'code "error: a program.s output line.*" runs past the right edge by [0-9.]+ px' 'the code line that is too long'
    expect 6 'diagram \.\./docs/diagrams/qp_states\.svg shows its labels at [0-9.]+ px' 'the small diagram'
    if grep -E 'bad_deck\.md:[0-9]+: slide 1:' "$work/report.txt"; then
        echo "FAILED: the check reported a problem on slide 1, which fits"
        failed=1
    fi
    # Slide numbers come with the line where the slide starts in the source
    # (its heading).
    line=$(grep -n '^# A slide that overflows$' "$fixture" | cut -d: -f1)
    grep -q "bad_deck.md:$line: slide 2:" "$work/report.txt" || {
        echo "FAILED: slide 2 is not reported at line $line of bad_deck.md"
        failed=1
    }
    [ $failed -eq 0 ] || exit 1
    echo "slides: the check caught every broken slide of the fixture ($((SECONDS - started)) s)"
    ;;
*)
    echo "usage: check_slides.sh decks|fixture SOURCE_DIR WORK_DIR" >&2
    exit 2
    ;;
esac

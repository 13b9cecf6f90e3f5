#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build the reference documentation with Doxygen: the top README as the main
# page, every lesson, exercise and solution README, the class containers'
# guide (docker/README.md), the readings and project ideas, and the
# instructor's guide with its rubric and notes (docs/instructor.md,
# docs/instructor/; only when present: the student edition leaves them out)
# as pages, the diagrams, and the API of common/. Warnings are errors
# (WARN_AS_ERROR in docs/Doxyfile).
#
#   docs/build.sh [--out DIR] [--headers-only]
#
# Output (default build/site/docs): DIR/html/index.html. --headers-only checks
# the Doxygen comments of common/lab/*.hpp alone (what the 'docs' test runs).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$repo/build/site/docs
headers_only=0
while [ $# -gt 0 ]; do
    case "$1" in
    --out)
        [ $# -ge 2 ] || { echo "docs: --out needs a directory" >&2; exit 2; }
        out=$2
        shift
        ;;
    --headers-only) headers_only=1 ;;
    -h | --help)
        awk 'NR > 1 && !/^#/ {exit} NR > 1 && !/SPDX-License-Identifier:/ {sub(/^# ?/, ""); print}' "${BASH_SOURCE[0]}"
        exit 0
        ;;
    *) echo "docs: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
done
command -v doxygen >/dev/null || {
    echo "docs: doxygen is missing (Debian: apt-get install doxygen)" >&2
    exit 2
}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$repo"

# The SVGs are committed; a diagram source without its SVG is a mistake.
docs/diagrams/render.sh --check
# Every header of common/ names the lesson that teaches it (the pages link both ways).
docs/course_map.sh check

inputs=(common/lab)
if [ "$headers_only" = 0 ]; then
    inputs+=(README.md docs/diagrams.md docs/slides.md docs/cheatsheet.md docs/readings.md docs/projects.md docs/devices.md)
    for page in lessons/*/README.md exercises/README.md exercises/*/README.md \
        solutions/README.md docker/README.md vm/README.md bench/README.md bench/09_rdma_read.md \
        docs/timings.md THIRD-PARTY.md README.student.md docs/instructor.md docs/instructor/*.md; do
        [ -f "$page" ] && inputs+=("$page")
    done
fi
if [ "$headers_only" = 0 ]; then
    # The Chinese edition's glossary, list of twins and guide, and each page's
    # Chinese twin where it exists, linked both ways by the twin links at the
    # top of both.
    inputs+=(docs/glossary.md docs/twins.md docs/translating.md)
    for page in "${inputs[@]}"; do
        case "$page" in *.md) [ -f "${page%.md}.zh-CN.md" ] && inputs+=("${page%.md}.zh-CN.md") ;; esac
    done
fi

log=$out/doxygen-warnings.log
status=0
# The main page must be one of the inputs (doxygen 1.9.8 warns otherwise).
mainpage=''
[ "$headers_only" = 1 ] || mainpage=$repo/README.md
links=$((1 - headers_only))
LAB_DOCS_LESSON_LINKS=$links LAB_DOCS_OUT=$out LAB_DOCS_MAINPAGE=$mainpage LAB_DOCS_INPUT="${inputs[*]}" doxygen docs/Doxyfile >"$out/doxygen.log" 2>"$log" || status=$?
if [ -s "$log" ] || [ $status -ne 0 ]; then
    cat "$log" >&2
    echo "docs: doxygen reported problems (above); warnings are errors" >&2
    exit 1
fi
if [ "$headers_only" = 0 ]; then
    echo "docs: open $out/html/index.html"
else
    echo "docs: the Doxygen comments of common/lab are complete"
fi

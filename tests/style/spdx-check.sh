#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every file of the course names its licence in an SPDX-License-Identifier
# line in its first five lines (README.md, "Licence"):
#   - code (C++, shell, CMake, JavaScript, CSS, gnuplot, the build and tool
#     configuration: Dockerfile, YAML, Doxyfile, .clang-format, ignore files):
#     MIT, in the file's own comment syntax, after the #! line if it has one;
#   - prose: Markdown pages carry "<!-- SPDX-License-Identifier: CC-BY-4.0 -->"
#     (after the title line, so that the title stays the page's first line);
#     slide decks carry "# SPDX-License-Identifier: CC-BY-4.0" as a YAML
#     comment inside their front matter, because Marp turns every HTML comment
#     of a deck into a speaker note; the diagrams' sources (docs/diagrams/*.dot)
#     are figures of the prose: CC-BY-4.0 too, and so are the quizzes'
#     question banks (quizzes/*.quiz, grading/quizzes/*.quiz) and the graded
#     quizzes' papers (quizzes/graded/*.paper), which carry it as a "#" comment.
# Files that cannot carry a comment are exempt, each for its reason:
#   *.json          JSON has no comments (CMakePresets.json, slides/package*.json:
#                   build files, MIT by the README's rule);
#   *.svg           generated (docs/diagrams/render.sh from the .dot files,
#                   results/plot.gp from the CSV): a comment would be lost at
#                   the next render; they carry their source's licence;
#   *.csv, *.pcap   measured data and a packet capture (no comment syntax;
#                   CC-BY-4.0 with the pages that show them);
#   LICENSE, LICENSE-docs  the licence texts themselves.
#
#   tests/style/spdx-check.sh [DIR]     (default: this checkout)
#
# Lists every file without its line, with the line it needs; exit 1 if any.
# The files are the tracked ones (git ls-files) in a git checkout, else every
# file but build trees, node_modules and .git.
set -uo pipefail
repo=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
cd "$repo" || exit 1

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files | sort)
else
    mapfile -t files < <(find . -type f ! -path './build*' ! -path '*/node_modules/*' ! -path './.git/*' -printf '%P\n' | sort)
fi

# The licence and the form of the line a file needs; "exempt" for the files above.
wanted() { # FILE
    local file=$1 base=${1##*/}
    case "$base" in
    LICENSE | LICENSE-docs | *.json | *.svg | *.csv | *.pcap)
        echo exempt
        return
        ;;
    esac
    case "$base" in
    *.md)
        if [ "$(head -n 1 "$file")" = --- ] && sed -n '2,/^---$/p' "$file" | grep -q '^marp: true'; then
            echo "CC-BY-4.0	# SPDX-License-Identifier: CC-BY-4.0"
        else
            echo "CC-BY-4.0	<!-- SPDX-License-Identifier: CC-BY-4.0 -->"
        fi
        ;;
    *.dot) echo "CC-BY-4.0	// SPDX-License-Identifier: CC-BY-4.0" ;;
    *.quiz | *.paper) echo "CC-BY-4.0	# SPDX-License-Identifier: CC-BY-4.0" ;;
    *.cpp | *.hpp | *.mjs) echo "MIT	// SPDX-License-Identifier: MIT" ;;
    *.css) echo "MIT	/* SPDX-License-Identifier: MIT */" ;;
    *) echo "MIT	# SPDX-License-Identifier: MIT" ;;
    esac
}

missing=0 checked=0 exempt=0
for file in "${files[@]}"; do
    [ -f "$file" ] || continue
    IFS=$'\t' read -r licence line <<<"$(wanted "$file")"
    if [ "$licence" = exempt ]; then
        exempt=$((exempt + 1))
        continue
    fi
    checked=$((checked + 1))
    if ! head -n 5 "$file" | grep -qxF -- "$line"; then
        found=$(head -n 5 "$file" | grep -m 1 'SPDX-License-Identifier:' || true)
        if [ -n "$found" ]; then
            echo "  $file: has '$found' in its first five lines; it needs '$line' ($licence)"
        else
            echo "  $file: no SPDX-License-Identifier line in its first five lines; it needs '$line'"
        fi
        missing=$((missing + 1))
    fi
done
echo "spdx: $checked files checked, $exempt exempt (JSON, generated SVG, data, licence texts)"
if [ "$missing" -gt 0 ]; then
    echo "spdx: $missing file(s) lack their licence line (README.md, \"Licence\", says which licence a file has)"
    exit 1
fi
echo "spdx: every file names its licence"

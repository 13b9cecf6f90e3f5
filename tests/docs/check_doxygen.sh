#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The 'docs' test of the Doxygen comments: runs doxygen over common/lab/*.hpp
# with warnings as errors (docs/build.sh --headers-only). First it makes sure
# the check can fail at all: a header with an undocumented function must be
# refused. Last it builds the whole reference site (./lab docs) the same way.
# Exits 77 (CTest: skipped) when doxygen is not installed.
#
#   tests/docs/check_doxygen.sh SOURCE_DIR WORK_DIR
set -euo pipefail
source_dir=$1
work=$2

if ! command -v doxygen >/dev/null; then
    echo "SKIPPED: doxygen is not installed (Debian: apt-get install doxygen); the Doxygen comments were not checked"
    exit 77
fi
rm -rf "$work"
mkdir -p "$work/bad/lab"

# 1. The configuration must refuse an undocumented declaration.
cat >"$work/bad/lab/undocumented.hpp" <<'HPP'
/// @file undocumented.hpp
/// @brief A header with one function nobody documented.
#pragma once
namespace lab {
int undocumented(int value);
}
HPP
if (cd "$source_dir" && LAB_DOCS_OUT="$work/bad-out" LAB_DOCS_INPUT="$work/bad/lab" LAB_DOCS_MAINPAGE="" \
    doxygen docs/Doxyfile >/dev/null 2>"$work/bad.log"); then
    echo "FAILED: doxygen accepted an undocumented function: docs/Doxyfile does not treat warnings as errors"
    exit 1
fi
grep -q 'undocumented(int value).*is not documented' "$work/bad.log" || {
    echo "FAILED: doxygen failed on the undocumented function, but not for that reason:"
    cat "$work/bad.log"
    exit 1
}

# 2. The real headers.
"$source_dir/docs/build.sh" --headers-only --out "$work/out"

# 3. A brief description on every public declaration: the check must refuse a
#    function whose comment is only a @param line (Doxygen itself accepts it),
#    then pass the real headers.
mkdir -p "$work/nobrief/lab"
cat >"$work/nobrief/lab/nobrief.hpp" <<'HPP'
/// @file nobrief.hpp
/// @brief A header whose one function has no sentence of its own.
#pragma once
namespace lab {
/// @param value any number.
int no_brief(int value);
}
HPP
if "$source_dir/docs/check_briefs.sh" "$work/nobrief/lab" "$work/nobrief-out" >"$work/nobrief.log"; then
    echo "FAILED: docs/check_briefs.sh accepted a function without a brief description"
    exit 1
fi
grep -q 'no_brief' "$work/nobrief.log" || {
    echo "FAILED: docs/check_briefs.sh failed, but did not name the function without a brief:"
    cat "$work/nobrief.log"
    exit 1
}
"$source_dir/docs/check_briefs.sh" "$source_dir/common/lab" "$work/briefs"

# 4. Every header names the lesson that teaches it (the pages link both ways).
"$source_dir/docs/course_map.sh" check

# 5. The whole reference site (./lab docs): every README and page the site
#    holds, with warnings as errors, so that a link Doxygen cannot resolve (an
#    in-page anchor, a file that is not among its pages) fails here.
"$source_dir/docs/build.sh" --out "$work/site"

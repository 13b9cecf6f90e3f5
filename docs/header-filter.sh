#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Doxygen input filter for the headers of common/lab (FILTER_PATTERNS in
# docs/Doxyfile): appends to each header's file page the lesson that teaches
# it and the lessons that use it, read from the sources by docs/course_map.sh,
# so the links cannot go stale. The lines of the header itself are unchanged.
# Only when the lesson pages are part of the build (LAB_DOCS_LESSON_LINKS=1,
# set by docs/build.sh); the headers-only check gets the header as it is.
set -euo pipefail
file=$1
cat "$file"
[ "${LAB_DOCS_LESSON_LINKS:-0}" = 1 ] || exit 0
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
header=$(basename "$file")
taught=$("$repo/docs/course_map.sh" taught "$header")
[ -n "$taught" ] || exit 0
echo
echo "/**"
echo " * @file $header"
echo " * @par Taught in"
echo " * @ref lesson_$taught \"lesson ${taught%%_*} (${taught#*_})\""
users=$("$repo/docs/course_map.sh" users "$header" | grep -vx "$taught" || true)
if [ -n "$users" ]; then
    echo " * @par Used by"
    echo "$users" | while read -r lesson; do
        echo " * @ref lesson_$lesson \"lesson ${lesson%%_*}\""
    done
fi
echo " */"

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The map between the lessons and the course library (common/lab/*.hpp), read
# from the sources so that it cannot go stale: a header is taught in the
# earliest lesson its comments name ("taught in lesson 01", "(lesson 03)"), and
# a lesson uses the headers its main.cpp includes.
#
#   docs/course_map.sh taught HEADER      the lesson folder that teaches HEADER (e.g. 01_devices)
#   docs/course_map.sh users HEADER       the lesson folders whose main.cpp includes HEADER
#   docs/course_map.sh headers LESSON     the headers LESSON's main.cpp includes (e.g. device.hpp)
#   docs/course_map.sh check              every header is taught by a lesson that exists and
#                                         is included by a lesson, a measuring program
#                                         (bench/) or an exercise (exit 1 if not)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

taught() { # HEADER (a file name, e.g. device.hpp)
    local header=$repo/common/lab/$1 number
    number=$(grep -oiE 'lessons? [0-9]{2}' "$header" | grep -oE '[0-9]{2}' | sort -n | head -n 1 || true)
    [ -n "$number" ] || return 0
    find "$repo/lessons" -mindepth 1 -maxdepth 1 -type d -name "${number}_*" -printf '%f\n' | head -n 1
}
users() { # HEADER
    grep -l "#include \"lab/$1\"" "$repo"/lessons/*/main.cpp 2>/dev/null | while read -r file; do
        basename "$(dirname "$file")"
    done
}
headers() { # LESSON
    grep -oE '#include "lab/[a-z_]+\.hpp"' "$repo/lessons/$1/main.cpp" | sed -E 's/.*lab\/([a-z_]+\.hpp)"/\1/' | sort -u
}

case "${1:-}" in
taught) taught "$2" ;;
users) users "$2" ;;
headers) headers "$2" ;;
check)
    status=0
    for path in "$repo"/common/lab/*.hpp; do
        header=$(basename "$path")
        lesson=$(taught "$header")
        if [ -z "$lesson" ]; then
            echo "course map: common/lab/$header names no lesson that teaches it (its comments should say \"taught in lesson NN\")" >&2
            status=1
        elif [ -z "$(users "$header")" ] &&
            ! grep -qs "#include \"lab/$header\"" "$repo"/bench/*.cpp "$repo"/exercises/*/*.cpp; then
            # A lesson's measuring code lives in bench/ (lesson 07's in bench/07_rdma_write.cpp).
            echo "course map: no lesson, measuring program or exercise includes common/lab/$header" >&2
            status=1
        fi
    done
    exit $status
    ;;
*)
    awk 'NR > 1 && !/^#/ {exit} NR > 1 && !/SPDX-License-Identifier:/ {sub(/^# ?/, ""); print}' "${BASH_SOURCE[0]}" >&2
    exit 2
    ;;
esac

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every shell script of the course passes shellcheck: *.sh and scripts with a
# shell #! line in docker/, vm/, setup/, bench/, grading/, slides/, docs/, tests/, plus
# ./lab and .ci/run. Exit 77 (reported as skipped) when shellcheck is missing.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo" || exit 1

if ! command -v shellcheck >/dev/null; then
    echo "shellcheck: NOT RUN: shellcheck is not installed (apt-get install shellcheck)"
    exit 77
fi

scripts=(lab .ci/run)
while IFS= read -r -d '' file; do
    case "$file" in
    *.sh) scripts+=("$file") ;;
    *) head -n 1 "$file" | grep -qE '^#!.*\b(ba|da)?sh\b' && scripts+=("$file") ;;
    esac
done < <(find docker vm setup bench grading slides docs tests -type f ! -path '*/build/*' ! -path '*/node_modules/*' -print0 2>/dev/null | sort -z)

echo "shellcheck $(shellcheck --version | awk '/^version:/ {print $2}') on ${#scripts[@]} scripts"
if shellcheck --external-sources "${scripts[@]}"; then
    printf '  ok  %s\n' "${scripts[@]}"
    exit 0
fi
echo "shellcheck: the findings above must be fixed (each says how)"
exit 1

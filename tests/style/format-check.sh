#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every C++ file of the course is formatted as the repository's .clang-format
# says: common/, lessons/, exercises/, solutions/, tests/, tools/, bench/.
# Prints each file that is not, with the command that fixes it. Exit 77
# (reported as skipped) when clang-format is missing.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo" || exit 1

if ! command -v clang-format >/dev/null; then
    echo "format: NOT RUN: clang-format is not installed (./lab setup installs it)"
    exit 77
fi

mapfile -d '' files < <(find common lessons exercises solutions tests tools bench -type f \
    \( -name '*.cpp' -o -name '*.hpp' \) ! -path '*/build/*' ! -path '*/node_modules/*' -print0 2>/dev/null | sort -z)
echo "$(clang-format --version | head -n 1) on ${#files[@]} files"
unformatted=()
for file in "${files[@]}"; do
    clang-format --dry-run --Werror "$file" >/dev/null 2>&1 || unformatted+=("$file")
done
if [ ${#unformatted[@]} -eq 0 ]; then
    echo "format: all ${#files[@]} files are formatted"
    exit 0
fi
printf '  not formatted: %s\n' "${unformatted[@]}"
echo "format: ${#unformatted[@]} file(s) differ from .clang-format (fix: clang-format -i FILE...)"
exit 1

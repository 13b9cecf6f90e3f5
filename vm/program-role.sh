#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# How a program of the course runs: prints "server-client" (start it without
# an argument, then again with the server's address) or "one-process".
#
#   vm/program-role.sh PROGRAM
#
# The build declares it (the target property LAB_SERVER_CLIENT, written to
# programs.tsv in the build folder; see the top-level CMakeLists.txt). PROGRAM
# is the path of a built program; the programs.tsv of the build folder it sits
# in answers. Exit status 1, with nothing printed, for a program no build
# folder lists (not a lesson or exercise, or a tree configured before the list
# existed).
set -euo pipefail
[ $# -eq 1 ] || {
    echo "usage: vm/program-role.sh PROGRAM" >&2
    exit 2
}
program=$(realpath -m "$1")
dir=$(dirname "$program")
while [ "$dir" != / ]; do
    if [ -f "$dir/programs.tsv" ]; then
        role=$(awk -F '\t' -v file="$program" '$3 == file {print $2; exit}' "$dir/programs.tsv")
        [ -n "$role" ] || exit 1
        echo "$role"
        exit 0
    fi
    dir=$(dirname "$dir")
done
exit 1

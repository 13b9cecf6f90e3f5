#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `./lab COMMAND --help` prints the usage and exits 0 for every command that
# would otherwise build, boot the micro-VM or hand --help to another program.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
failures=0
for command in setup build test run vm bench doctor up down status shell quiz; do
    for flag in --help -h; do
        out=$(cd "$repo" && timeout 20 ./lab "$command" "$flag" 2>&1)
        status=$?
        if [ "$status" -ne 0 ] || ! grep -q '^Usage: ./lab COMMAND' <<<"$out" ||
            grep -q -e 'lab: build' -e 'microvm:' -e 'starting the lab machine' <<<"$out"; then
            echo "./lab $command $flag: status $status, output:" >&2
            head -n 5 <<<"$out" >&2
            failures=$((failures + 1))
        fi
    done
done
echo "lab-help: $failures failure(s)"
[ "$failures" -eq 0 ]

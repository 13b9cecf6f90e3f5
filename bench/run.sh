#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run every benchmark of the course and print one table (what `./lab bench` runs
# on the RDMA target: the host's device or the micro-VM's rxe0).
#
#   bench/run.sh BUILD_DIR [ARGS...]
#
# The contract for a benchmark script bench/NN_name.sh (NN = the lesson) or
# bench/exNN_name.sh (an exercise; run after the lessons):
#   - it is executable and is run as `bench/NN_name.sh BUILD_DIR [ARGS...]`,
#     in order of its name, one at a time;
#   - it runs the lesson's program and its counterpart from perftest or the
#     rdma-core examples in the same run, on the same device, with the same
#     sizes and iteration counts;
#   - it prints one line per measurement on stdout: `name ours theirs ratio`
#     (four fields separated by spaces; name says the unit, e.g.
#     "06_send_recv:4096B[us/iter]"; ratio is ours/theirs, "n/a" when a side
#     failed); anything else goes to stderr;
#   - it exits non-zero when it could not measure at all.
# bench/common.sh has what they share: the device and GID, a server and its
# client on a fresh port, perftest's columns, medians, rows.
# Emulated RDMA is slow: only the ratios mean something, never the absolute numbers.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:?usage: bench/run.sh BUILD_DIR [ARGS...]}
shift
build=$(cd "$build" && pwd)

rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
failed=0
for script in "$here"/[0-9]*.sh "$here"/ex[0-9]*.sh; do
    [ -x "$script" ] || continue
    echo "bench: $(basename "$script")" >&2
    if ! "$script" "$build" "$@" >>"$rows"; then
        echo "bench: $(basename "$script") failed" >&2
        failed=1
    fi
done

printf '%-36s %12s %12s %8s\n' benchmark ours theirs ratio
awk 'NF == 4 { printf "%-36s %12s %12s %8s\n", $1, $2, $3, $4 }' "$rows"
exit "$failed"

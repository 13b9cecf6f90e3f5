#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The student's run loop, timed: `./lab run LESSON` through the lab machine
# (warm: the program built, the machine up) against the throwaway micro-VM
# that boots for every run (RDMA_LAB_MACHINE=never), alternately, side by
# side in one run on this host.
#
#   bench/run-loop.sh [LESSON]        (default 01_devices; BENCH_REPS runs of each, default 5)
#
# Prints every run's wall time and the two medians. It uses a lab machine of
# its own (RDMA_LAB_MACHINE_NAME=bench-run-loop) and stops it at the end. Only
# meaningful where lessons run in a micro-VM; a timing, not a test.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
lesson=${1:-01_devices}
reps=${BENCH_REPS:-5}
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "run-loop: BENCH_REPS must be a positive number" >&2; exit 2; }
export RDMA_LAB_MACHINE_NAME=bench-run-loop

if [ "$("$repo/vm/on-target.sh" --which)" = host ]; then
    echo "run-loop: lessons run on this host's own RDMA device: there is no VM to compare" >&2
    exit 2
fi

seconds() { # COMMAND...: wall time of one quiet run, in seconds with three decimals
    local start end
    start=$(date +%s%N)
    "$@" >/dev/null 2>&1 || { echo "run-loop: '$*' failed" >&2; exit 1; }
    end=$(date +%s%N)
    printf '%d.%03d\n' $(((end - start) / 1000000000)) $(((end - start) / 1000000 % 1000))
}
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

trap '"$repo/lab" down >/dev/null 2>&1 || true' EXIT
"$repo/lab" build >/dev/null
"$repo/lab" up >/dev/null 2>&1
"$repo/lab" run "$lesson" >/dev/null 2>&1 # the first run may still build or load something

warm=() oneshot=()
for i in $(seq "$reps"); do
    warm+=("$(seconds "$repo/lab" run "$lesson")")
    oneshot+=("$(RDMA_LAB_MACHINE=never RDMA_LAB_MACHINE_NAME=bench-run-loop-none seconds "$repo/lab" run "$lesson")")
    echo "run $i: warm ${warm[-1]} s, one-shot VM ${oneshot[-1]} s" >&2
done
printf '%s\n' "./lab run $lesson, median of $reps (s): warm $(printf '%s\n' "${warm[@]}" | median)," \
    "one-shot VM $(printf '%s\n' "${oneshot[@]}" | median)" | paste -sd' '

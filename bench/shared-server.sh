#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# How many students' lab machines one server holds while their lessons run:
# docs/instructor.md, "On one shared server", measured on this host.
#
#   bench/shared-server.sh [K...]     (default 1 2 4; BENCH_REPS rounds each, default 3;
#                                      BENCH_LESSON, default 06_send_recv)
#
# For each K: K lab machines up at once (as K students' machines would be;
# RDMA_LAB_MACHINE_NAME=shared-server-1..K, so they are this checkout's own
# and no student's), then BENCH_REPS rounds in which all K start
# `./lab run LESSON` at the same moment. It prints every run's wall time and
# exit status, the median, the memory the K machines hold (the sum of their
# qemu processes' resident memory) and the least `available` memory seen
# (free -m, every 5 s), then stops the K machines. K = 1 is the baseline.
# The server holds K students while every run passes, the median is at most
# twice K = 1's, and available memory never falls under a tenth of the total.
# A timing on this host, not a test.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
lesson=${BENCH_LESSON:-06_send_recv}
reps=${BENCH_REPS:-3}
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "shared-server: BENCH_REPS must be a positive number" >&2; exit 2; }
[ $# -gt 0 ] || set -- 1 2 4
for k in "$@"; do
    [[ $k =~ ^[1-9][0-9]*$ ]] || { echo "shared-server: '$k' is not a number of students" >&2; exit 2; }
done
if [ "$("$repo/vm/on-target.sh" --which)" = host ]; then
    echo "shared-server: lessons run on this host's own RDMA device, not in lab machines" >&2
    exit 2
fi

work=$(mktemp -d)
up=()
stop_all() {
    local name
    for name in "${up[@]}"; do
        RDMA_LAB_MACHINE_NAME=$name "$repo/lab" down >/dev/null 2>&1 || true
    done
    up=()
}
trap 'stop_all; rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
available_mib() { free -m | awk '/^Mem:/ {print $7}'; }
total_mib=$(free -m | awk '/^Mem:/ {print $2}')

# One student's run: wall time in seconds (three decimals) and exit status.
one_run() { # NAME OUT
    local start end status=0
    start=$(date +%s%N)
    RDMA_LAB_MACHINE_NAME=$1 "$repo/lab" run "$lesson" >"$2.log" 2>&1 || status=$?
    end=$(date +%s%N)
    printf '%d.%03d %d\n' $(((end - start) / 1000000000)) $(((end - start) / 1000000 % 1000)) "$status" >"$2"
}

"$repo/lab" build "$lesson" >/dev/null
echo "$(nproc) cores, $total_mib MiB; $lesson, $reps rounds for each K; $(uptime | sed 's/.*load average/load average/')"
printf '%4s %12s %8s %14s %16s %s\n' K median/s failed "machines/MiB" "least avail/MiB" "runs (s, status)"
baseline=''
for k in "$@"; do
    for i in $(seq "$k"); do
        up+=("shared-server-$i")
        RDMA_LAB_MACHINE_NAME=shared-server-$i "$repo/lab" up >"$work/up-$i.log" 2>&1 || {
            cat "$work/up-$i.log" >&2
            echo "shared-server: lab machine $i of $k did not come up" >&2
            exit 1
        }
    done
    # Every machine runs the lesson once before the rounds (its first run loads what it needs).
    for i in $(seq "$k"); do one_run "shared-server-$i" "$work/warm-$i"; done
    least=$(available_mib)
    (while sleep 5; do available_mib; done) >"$work/free" &
    sampler=$!
    times=() failed=0 runs=''
    for round in $(seq "$reps"); do
        pids=()
        for i in $(seq "$k"); do
            one_run "shared-server-$i" "$work/run-$round-$i" &
            pids+=($!)
        done
        wait "${pids[@]}"
        for i in $(seq "$k"); do
            read -r seconds status <"$work/run-$round-$i"
            times+=("$seconds")
            runs+=" $seconds/$status"
            [ "$status" = 0 ] || failed=$((failed + 1))
        done
    done
    kill "$sampler" 2>/dev/null || true
    wait "$sampler" 2>/dev/null || true
    least=$(cat - "$work/free" <<<"$least" | sort -n | head -n 1)
    held=0
    for i in $(seq "$k"); do
        pid=$(RDMA_LAB_MACHINE_NAME=shared-server-$i "$repo/lab" status | sed -n 's/^  qemu pid \([0-9]*\),.*/\1/p')
        [ -z "$pid" ] || held=$((held + $(awk '/^VmRSS/ {print $2}' "/proc/$pid/status") / 1024))
    done
    middle=$(printf '%s\n' "${times[@]}" | median)
    [ -n "$baseline" ] || baseline=$middle
    printf '%4s %12s %8s %14s %16s%s\n' "$k" "$middle" "$failed" "$held" "$least" "$runs"
    stop_all
done
echo "K = 1's median: $baseline s; the server holds K while no run fails, the median stays under $(awk -v b="$baseline" 'BEGIN {printf "%.1f", 2 * b}') s and available memory over $((total_mib / 10)) MiB"

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Exercise 04 side by side with perftest: the reference solution's
# stream_sends (sol04_throughput; in the student edition, which has no
# solutions, the student's ex04_throughput) against ib_send_bw on the same
# device, with the same message sizes and counts, in one run.
#
#   bench/ex04_throughput.sh BUILD_DIR      (./lab bench runs it on the RDMA target)
#
# Prints one row per message size: name ours theirs ratio (see bench/run.sh),
# bandwidth in MB/s (2^20 bytes, perftest's unit), ratio ours/theirs (higher
# is better; the exercise's target is 0.8 or more). Each figure is the median
# of BENCH_REPS runs (default 3). BENCH_EX04_PROGRAM measures another build of
# the program (e.g. a student's ex04_throughput) instead.
set -euo pipefail
# shellcheck source=bench/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build=${1:?usage: bench/ex04_throughput.sh BUILD_DIR}
program=${BENCH_EX04_PROGRAM:-$build/solutions/04_throughput/sol04_throughput}
if [ -z "${BENCH_EX04_PROGRAM:-}" ] && [ ! -d "$(dirname "$0")/../solutions" ]; then
    program=$build/exercises/04_throughput/ex04_throughput
fi
bench_setup ex04 "$build" "$program" ib_send_bw
# The program runs both ends of its stream itself: no server to start.
ours_runs_alone=1

for size_count in 64:20000 1024:10000 4096:5000; do
    size=${size_count%%:*} count=${size_count#*:}
    theirs_command=(ib_send_bw -d "$device" -x "$gid" -s "$size" -n "$count")
    ours_command=("$program" -d "$device" -s "$size" -n "$count")
    alternate "column_after_header 3" "column_after_header 4"
    row "ex04_send_bw_${size}B" "$ours_median" "$theirs_median"
done
bench_finish

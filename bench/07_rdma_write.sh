#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Lesson 07 side by side with perftest: its write, measured by
# bench_07_rdma_write (bench/07_rdma_write.cpp), --bw against ib_write_bw and
# --lat against ib_write_lat, on the same device, with the same sizes,
# iteration counts and send-queue depth, in one run.
#
#   bench/07_rdma_write.sh BUILD_DIR      (./lab bench runs it on the RDMA target)
#
# Prints one row per measurement: name ours theirs ratio (see bench/run.sh).
# Bandwidth is in MB/s (2^20 bytes, perftest's unit), the ratio ours/theirs
# (higher is better); latency is t_typical (the median) in microseconds, half
# a round trip as ib_write_lat reports it, the ratio ours/theirs (lower is
# better). Each figure is the median of BENCH_REPS runs (default 3).
set -euo pipefail
# shellcheck source=bench/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build=${1:?usage: bench/07_rdma_write.sh BUILD_DIR}
program=$build/bench/bench_07_rdma_write
bench_setup 07 "$build" "$program" ib_write_bw ib_write_lat
depth=64 # writes outstanding: perftest's -t, our --depth
perftest=(-d "$device" -x "$gid" -F)
ours=(-d "$device" -g "$gid")

for size_iters in 4096:4000 65536:1000; do
    size=${size_iters%:*} iters=${size_iters#*:}
    theirs_command=(ib_write_bw "${perftest[@]}" -s "$size" -n "$iters" -t "$depth")
    ours_command=("$program" --bw "${ours[@]}" -s "$size" -n "$iters" --depth "$depth")
    alternate "column_after_header 3" "column_after_header 4"
    row "07_rdma_write:bw:${size}B[MB/s]" "$ours_median" "$theirs_median"
done

for size in 8 4096; do
    theirs_command=(ib_write_lat "${perftest[@]}" -s "$size" -n 2000)
    ours_command=("$program" --lat "${ours[@]}" -s "$size" -n 2000)
    alternate "column_after_header 5" "column_after_header 5"
    row "07_rdma_write:lat:${size}B[us]" "$ours_median" "$theirs_median"
done

bench_finish

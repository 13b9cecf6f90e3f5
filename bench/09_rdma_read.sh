#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Lesson 09 side by side with perftest: its measuring program (bench/09_rdma_read.cpp,
# lesson 09's set-up and reads) --bw against ib_read_bw, --lat against
# ib_read_lat, on the same device, with the same sizes, iteration counts,
# send-queue depth and reads in flight, in one run.
#
#   bench/09_rdma_read.sh BUILD_DIR      (./lab bench runs it on the RDMA target)
#
# Prints one row per measurement: name ours theirs ratio (see bench/run.sh).
# Bandwidth is in MB/s (2^20 bytes, perftest's unit), the ratio ours/theirs
# (higher is better); latency is t_typical (the median) in microseconds, the
# ratio ours/theirs (lower is better). A read's latency is a whole round trip
# (perftest does not halve it, nor do we). Each figure is the median of
# BENCH_REPS runs (default 3).
set -euo pipefail
# shellcheck source=bench/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build=${1:?usage: bench/09_rdma_read.sh BUILD_DIR}
lesson=$build/bench/bench_09_rdma_read
bench_setup 09 "$build" "$lesson" ib_read_bw ib_read_lat
depth=64           # reads posted: perftest's -t, our --depth
reads_in_flight=16 # max_rd_atomic: perftest's -o, our --rd-atomic
perftest=(-d "$device" -x "$gid" -F)
ours=(-d "$device" -g "$gid")

for size_iters in 4096:4000 65536:1000; do
    size=${size_iters%:*} iters=${size_iters#*:}
    theirs_command=(ib_read_bw "${perftest[@]}" -s "$size" -n "$iters" -t "$depth" -o "$reads_in_flight")
    ours_command=("$lesson" --bw "${ours[@]}" -s "$size" -n "$iters" --depth "$depth" --rd-atomic "$reads_in_flight")
    alternate "column_after_header 3" "column_after_header 4"
    row "09_rdma_read:bw:${size}B[MB/s]" "$ours_median" "$theirs_median"
done

for size in 8 4096; do
    theirs_command=(ib_read_lat "${perftest[@]}" -s "$size" -n 2000)
    ours_command=("$lesson" --lat "${ours[@]}" -s "$size" -n 2000)
    alternate "column_after_header 5" "column_after_header 5"
    row "09_rdma_read:lat:${size}B[us]" "$ours_median" "$theirs_median"
done

bench_finish

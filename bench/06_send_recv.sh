#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Lesson 06's ping-pong side by side with ibv_rc_pingpong (rdma-core's example,
# package ibverbs-utils): same device, GID index, message size and iteration
# count, in one run, alternating the two programs.
#
#   bench/06_send_recv.sh BUILD_DIR      (./lab bench runs it on the RDMA target)
#
# Prints one row: name ours theirs ratio (see bench/run.sh): microseconds per
# iteration, as both programs report it ("1000 iters in 0.12 seconds = 120.00
# usec/iter"), the median of BENCH_REPS runs (default 3) of each; ratio
# ours/theirs, lower is better. BENCH_06_SIZE and BENCH_06_ITERS change the
# message size (4096) and the iterations (1000).
set -euo pipefail
# shellcheck source=bench/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build=${1:?usage: bench/06_send_recv.sh BUILD_DIR}
lesson=$build/lessons/06_send_recv/06_send_recv
bench_setup 06 "$build" "$lesson" ibv_rc_pingpong

usec_per_iter() { sed -n 's/.* = \([0-9.]*\) usec\/iter.*/\1/p' | tail -n 1; }

size=${BENCH_06_SIZE:-4096}
iters=${BENCH_06_ITERS:-1000}
theirs_command=(ibv_rc_pingpong -d "$device" -g "$gid" -s "$size" -n "$iters")
ours_command=("$lesson" -d "$device" -g "$gid" -s "$size" -n "$iters")
alternate usec_per_iter usec_per_iter
row "06_send_recv:${size}B[us/iter]" "$ours_median" "$theirs_median"
bench_finish

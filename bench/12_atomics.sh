#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Lesson 12 side by side with perftest: its fetch-and-add, measured by
# bench_12_atomics (bench/12_atomics.cpp), against ib_atomic_bw and
# ib_atomic_lat -A FETCH_AND_ADD,
# on the same device and GID, with the same iteration counts and the same
# number of atomics in flight, in one run.
#
#   bench/12_atomics.sh BUILD_DIR      (./lab bench runs it on the RDMA target)
#
# Prints one row per measurement: name ours theirs ratio (see bench/run.sh).
#   bw:  thousands of atomics per second (perftest's MsgRate), ratio ours/theirs,
#        higher is better; both keep DEPTH atomics in flight (perftest -t and -o).
#   lat: microseconds per atomic, one at a time, the median round trip
#        (perftest's t_typical), ratio ours/theirs, lower is better. An
#        atomic's latency is a whole round trip; neither side halves it.
# Each figure is the median of BENCH_REPS runs (default 3).
set -euo pipefail
# shellcheck source=bench/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build=${1:?usage: bench/12_atomics.sh BUILD_DIR}
program=$build/bench/bench_12_atomics
bench_setup 12 "$build" "$program" ib_atomic_bw ib_atomic_lat
# The kernel tears a QP down after its program exits; without a pause the next
# pair started while it did, and whichever ran second measured low.
bench_pair_pause=1
depth=16
perftest=(-d "$device" -x "$gid" -F -A FETCH_AND_ADD)
ours=(-d "$device" -g "$gid")

# bench_12_atomics prints "client: fetch-and-add: N operations in T s, R per second, ..."
# and, with --depth 1, "client: one at a time: median round trip M us".
# perftest's MsgRate (column 5) is in millions per second; the row is in thousands.
ours_kilo_rate() { sed -n 's/.*fetch-and-add: .* s, \([0-9.]*\) per second.*/\1/p' | awk '{ print $1 / 1000 }'; }
theirs_kilo_rate() { column_after_header 5 | awk '{ print $1 * 1000 }'; }
ours_latency() { sed -n 's/.*median round trip \([0-9.]*\) us.*/\1/p'; }

theirs_command=(ib_atomic_bw "${perftest[@]}" -n 20000 -t "$depth" -o "$depth")
ours_command=("$program" "${ours[@]}" -n 20000 --depth "$depth")
alternate ours_kilo_rate theirs_kilo_rate
row "12_atomics:faa-bw:d${depth}[Kops/s]" "$ours_median" "$theirs_median"

theirs_command=(ib_atomic_lat "${perftest[@]}" -n 5000)
ours_command=("$program" "${ours[@]}" -n 5000 --depth 1)
alternate ours_latency "column_after_header 5"
row "12_atomics:faa-lat[us]" "$ours_median" "$theirs_median"

bench_finish

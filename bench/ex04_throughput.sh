#!/usr/bin/env bash
# Exercise 04 side by side with perftest: the reference solution's
# stream_sends (sol04_throughput) against ib_send_bw on the same device, with
# the same message sizes and counts, in one run.
#
#   bench/ex04_throughput.sh BUILD_DIR      (./lab bench runs it on the RDMA target)
#
# Prints one row per message size: name ours theirs ratio, bandwidth in
# MB/s (2^20 bytes, perftest's unit), ratio ours/theirs (higher is better;
# the exercise's target is 0.8 or more). Each figure is the median of
# BENCH_REPS runs (default 3). BENCH_EX04_PROGRAM measures another build of
# the program (e.g. a student's ex04_throughput) instead.
set -euo pipefail

build=${1:?usage: bench/ex04_throughput.sh BUILD_DIR}
ours=${BENCH_EX04_PROGRAM:-$build/solutions/04_throughput/sol04_throughput}
devices=$build/lessons/01_devices/01_devices
address=${RDMA_LAB_SERVER_ADDR:-127.0.0.1}
reps=${BENCH_REPS:-3}
port=${BENCH_PORT:-18700}

for program in "$ours" "$devices"; do
    [ -x "$program" ] || {
        echo "bench/ex04: $program is not built" >&2
        exit 1
    }
done
info=$("$devices")
device=$(sed -n 's/^Step 2: opened \(\S*\).*/\1/p' <<<"$info")
gid=$(sed -n 's/.*chosen GID index: \([0-9]*\).*/\1/p' <<<"$info")
if [ -z "$device" ] || [ -z "$gid" ]; then
    echo "bench/ex04: could not find the device and GID index" >&2
    exit 1
fi

# The number in column COLUMN of the line after the "#bytes" header.
column_after_header() {
    awk -v column="$1" 'found && NF > 1 { print $column; exit } /#bytes/ { found = 1 }'
}
median() { awk 'NF' | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }

# ib_send_bw as server and client on a fresh TCP port; prints the client's output.
theirs() { # SIZE COUNT
    port=$((port + 1))
    timeout 120 ib_send_bw -d "$device" -x "$gid" -s "$1" -n "$2" -p "$port" >/dev/null 2>&1 &
    local server=$!
    for _ in $(seq 100); do
        ss -ltn "sport = :$port" | grep -q LISTEN && break
        sleep 0.1
    done
    timeout 120 ib_send_bw -d "$device" -x "$gid" -s "$1" -n "$2" -p "$port" "$address" 2>&1 || true
    wait "$server" || true
}

for size_count in 64:20000 1024:10000 4096:5000; do
    size=${size_count%%:*} count=${size_count#*:}
    ours_values='' theirs_values=''
    for _ in $(seq "$reps"); do # alternate, so that a slow phase favours neither
        theirs_values+="$(theirs "$size" "$count" | column_after_header 4)"$'\n'
        ours_values+="$(timeout 120 "$ours" -d "$device" -s "$size" -n "$count" 2>&1 | column_after_header 3)"$'\n'
    done
    awk -v name="ex04_send_bw_${size}B" -v ours="$(median <<<"$ours_values")" \
        -v theirs="$(median <<<"$theirs_values")" 'BEGIN {
        if (ours == "" || theirs == "" || theirs + 0 == 0) { printf "%s %s %s n/a\n", name, ours, theirs; exit }
        printf "%s %.2f %.2f %.2f\n", name, ours, theirs, ours / theirs }'
done

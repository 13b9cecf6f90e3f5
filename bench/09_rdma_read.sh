#!/usr/bin/env bash
# Lesson 09 side by side with perftest: 09_rdma_read --bw against ib_read_bw,
# 09_rdma_read --lat against ib_read_lat, on the same device, with the same
# sizes, iteration counts, send-queue depth and reads in flight, in one run.
#
#   bench/09_rdma_read.sh BUILD_DIR      (./lab bench runs it on the RDMA target)
#
# Prints one row per measurement: name ours theirs ratio ("n/a" when a side
# failed); exits non-zero when nothing could be measured. A read's latency is
# a whole round trip (perftest does not halve it, nor do we). Bandwidth is in
# MB/s (2^20 bytes, perftest's unit), the ratio ours/theirs (higher is
# better); latency is t_typical (the median) in microseconds, the ratio
# ours/theirs (lower is better). Each figure is the median of BENCH_REPS runs
# (default 3), because emulated RDMA is noisy.
set -euo pipefail

build=${1:?usage: bench/09_rdma_read.sh BUILD_DIR}
lesson=$build/lessons/09_rdma_read/09_rdma_read
devices=$build/lessons/01_devices/01_devices
address=${RDMA_LAB_SERVER_ADDR:-127.0.0.1}
reps=${BENCH_REPS:-3}
port_file=$(mktemp)
trap 'rm -f "$port_file"' EXIT
echo "${BENCH_PORT:-18650}" >"$port_file"
depth=64
reads_in_flight=16 # max_rd_atomic: perftest's -o, our --rd-atomic

for program in "$lesson" "$devices"; do
    [ -x "$program" ] || {
        echo "bench/09: $program is not built" >&2
        exit 1
    }
done

# The device and the GID index lesson 01 chooses (RoCE v2, IPv4), for perftest's -d and -x.
info=$("$devices")
device=$(sed -n 's/^Step 2: opened \(\S*\).*/\1/p' <<<"$info")
gid=$(sed -n 's/.*chosen GID index: \([0-9]*\).*/\1/p' <<<"$info")
if [ -z "$device" ] || [ -z "$gid" ]; then
    echo "bench/09: could not find the device and GID index" >&2
    exit 1
fi

# pair PROGRAM ARGS... : run PROGRAM as server and as client on a fresh TCP
# port and print the client's output. perftest's client does not retry its
# connection, so wait until the server listens.
pair() {
    local port
    port=$(($(cat "$port_file") + 1)) # a file, because callers run in subshells
    echo "$port" >"$port_file"
    timeout 120 "$@" -p "$port" >/dev/null 2>&1 &
    local server=$!
    for _ in $(seq 100); do
        ss -ltn "sport = :$port" | grep -q LISTEN && break
        sleep 0.1
    done
    timeout 120 "$@" -p "$port" "$address" 2>&1 || true
    wait "$server" || true
}

# The number in column COLUMN of the line after the "#bytes" header.
column_after_header() {
    awk -v column="$1" 'found && NF > 1 { print $column; exit } /#bytes/ { found = 1 }'
}

median() { awk 'NF' | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }

# compare NAME OURS_COLUMN THEIRS_COLUMN: run theirs_command and ours_command
# (arrays) alternately, BENCH_REPS times each, and print the row of the medians.
# Alternating keeps a slow phase of the emulator from favouring either side.
compare() {
    local name=$1 ours_column=$2 theirs_column=$3 ours_values="" theirs_values=""
    for _ in $(seq "$reps"); do
        theirs_values+="$(pair "${theirs_command[@]}" | column_after_header "$theirs_column")"$'\n'
        ours_values+="$(pair "${ours_command[@]}" | column_after_header "$ours_column")"$'\n'
    done
    local line
    line=$(row "$name" "$(median <<<"$ours_values")" "$(median <<<"$theirs_values")")
    echo "$line"
    [[ $line == *" n/a" ]] || measured=$((measured + 1))
}

row() { # name ours theirs
    awk -v name="$1" -v ours="$2" -v theirs="$3" 'BEGIN {
        if (ours == "" || theirs == "" || theirs + 0 == 0) {
            printf "%s %s %s n/a\n", name, ours == "" ? "-" : ours, theirs == "" ? "-" : theirs; exit }
        printf "%s %.2f %.2f %.2f\n", name, ours, theirs, ours / theirs }'
}

measured=0 # rows with both sides measured
perftest=(-d "$device" -x "$gid" -F)
ours=(-d "$device" -g "$gid")

for size_iters in 4096:4000 65536:1000; do
    size=${size_iters%:*}
    iters=${size_iters#*:}
    theirs_command=(ib_read_bw "${perftest[@]}" -s "$size" -n "$iters" -t "$depth" -o "$reads_in_flight")
    ours_command=("$lesson" --bw "${ours[@]}" -s "$size" -n "$iters" --depth "$depth" --rd-atomic "$reads_in_flight")
    compare "09_rdma_read:bw:${size}B[MB/s]" 3 4
done

for size in 8 4096; do
    iters=2000
    theirs_command=(ib_read_lat "${perftest[@]}" -s "$size" -n "$iters")
    ours_command=("$lesson" --lat "${ours[@]}" -s "$size" -n "$iters")
    compare "09_rdma_read:lat:${size}B[us]" 5 5
done

if [ "$measured" -eq 0 ]; then
    echo "bench/${0##*/}: no measurement succeeded" >&2
    exit 1
fi

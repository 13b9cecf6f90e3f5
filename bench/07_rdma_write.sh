#!/usr/bin/env bash
# Lesson 07 side by side with perftest: 07_rdma_write --bw against ib_write_bw,
# 07_rdma_write --lat against ib_write_lat, on the same device, with the same
# sizes, iteration counts and send-queue depth, in one run.
#
#   bench/07_rdma_write.sh BUILD_DIR      (./lab bench runs it on the RDMA target)
#
# Prints one row per measurement: name ours theirs ratio ("n/a" when a side
# failed); exits non-zero when nothing could be measured. Bandwidth is in
# MB/s (2^20 bytes, perftest's unit), the ratio ours/theirs (higher is
# better); latency is t_typical (the median) in microseconds, the ratio
# ours/theirs (lower is better). Each figure is the median of BENCH_REPS runs
# (default 3), because emulated RDMA is noisy.
set -euo pipefail

build=${1:?usage: bench/07_rdma_write.sh BUILD_DIR}
lesson=$build/lessons/07_rdma_write/07_rdma_write
devices=$build/lessons/01_devices/01_devices
address=${RDMA_LAB_SERVER_ADDR:-127.0.0.1}
reps=${BENCH_REPS:-3}
port_file=$(mktemp)
trap 'rm -f "$port_file"' EXIT
echo "${BENCH_PORT:-18600}" >"$port_file"
depth=64

for program in "$lesson" "$devices"; do
    [ -x "$program" ] || {
        echo "bench/07: $program is not built" >&2
        exit 1
    }
done

# The device and the GID index lesson 01 chooses (RoCE v2, IPv4), for perftest's -d and -x.
info=$("$devices")
device=$(sed -n 's/^Step 2: opened \(\S*\).*/\1/p' <<<"$info")
gid=$(sed -n 's/.*chosen GID index: \([0-9]*\).*/\1/p' <<<"$info")
if [ -z "$device" ] || [ -z "$gid" ]; then
    echo "bench/07: could not find the device and GID index" >&2
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
    theirs_command=(ib_write_bw "${perftest[@]}" -s "$size" -n "$iters" -t "$depth")
    ours_command=("$lesson" --bw "${ours[@]}" -s "$size" -n "$iters" --depth "$depth")
    compare "07_rdma_write:bw:${size}B[MB/s]" 3 4
done

for size in 8 4096; do
    iters=2000
    theirs_command=(ib_write_lat "${perftest[@]}" -s "$size" -n "$iters")
    ours_command=("$lesson" --lat "${ours[@]}" -s "$size" -n "$iters")
    compare "07_rdma_write:lat:${size}B[us]" 5 5
done

if [ "$measured" -eq 0 ]; then
    echo "bench/${0##*/}: no measurement succeeded" >&2
    exit 1
fi

#!/usr/bin/env bash
# Lesson 12 side by side with perftest: 12_atomics (fetch-and-add only:
# --lock-iters 0) against ib_atomic_bw and ib_atomic_lat -A FETCH_AND_ADD,
# on the same device and GID, with the same iteration counts and the same
# number of atomics in flight, in one run.
#
#   bench/12_atomics.sh BUILD_DIR      (./lab bench runs it on the RDMA target)
#
# Prints one row per measurement: name ours theirs ratio (see bench/run.sh);
# exits non-zero when neither row got figures from both sides.
#   bw:  thousands of atomics per second (perftest's MsgRate), ratio ours/theirs,
#        higher is better; both keep DEPTH atomics in flight (perftest -t and -o).
#   lat: microseconds per atomic, one at a time, the median round trip
#        (perftest's t_typical), ratio ours/theirs, lower is better. An
#        atomic's latency is a whole round trip; neither side halves it.
# Each figure is the median of BENCH_REPS runs (default 3), ours and theirs in
# turn: emulated RDMA is noisy, and the load of the machine drifts.
set -euo pipefail

build=${1:?usage: bench/12_atomics.sh BUILD_DIR}
lesson=$build/lessons/12_atomics/12_atomics
devices=$build/lessons/01_devices/01_devices
address=${RDMA_LAB_SERVER_ADDR:-127.0.0.1}
reps=${BENCH_REPS:-3}
depth=16
bw_iters=20000
lat_iters=5000
port_file=$(mktemp)
trap 'rm -f "$port_file"' EXIT
echo "${BENCH_PORT:-18700}" >"$port_file"

for program in "$lesson" "$devices"; do
    [ -x "$program" ] || {
        echo "bench/12: $program is not built" >&2
        exit 1
    }
done

# Device and GID index as lesson 01 chooses them (RoCE v2, IPv4), for perftest's -d and -x.
info=$("$devices")
device=$(sed -n 's/^Step 2: opened \(\S*\).*/\1/p' <<<"$info")
gid=$(sed -n 's/.*chosen GID index: \([0-9]*\).*/\1/p' <<<"$info")
if [ -z "$device" ] || [ -z "$gid" ]; then
    echo "bench/12: could not find the device and GID index" >&2
    exit 1
fi

# pair PROGRAM ARGS...: server and client on a fresh TCP port; prints the
# client's output. perftest's client does not retry, so wait for the listener.
pair() {
    local port
    port=$(($(cat "$port_file") + 1)) # a file: callers run in subshells
    echo "$port" >"$port_file"
    timeout 120 "$@" -p "$port" >/dev/null 2>&1 &
    local server=$!
    for _ in $(seq 100); do
        ss -ltn "sport = :$port" | grep -q LISTEN && break
        sleep 0.1
    done
    timeout 120 "$@" -p "$port" "$address" 2>&1 || true
    wait "$server" || true
    sleep 1 # the kernel tears the QPs down after the programs exit: let it finish first
}

# perftest: column COLUMN of the line after the "#bytes" header.
theirs() {
    awk -v column="$1" 'found && NF > 1 { print $column; exit } /#bytes/ { found = 1 }'
}

# 12_atomics: "client: fetch-and-add: N operations in T s, R per second, L us each (depth D)"
# and, with --depth 1, "client: one at a time: median round trip M us".
ours_rate() { sed -n 's/.*fetch-and-add: .* s, \([0-9.]*\) per second.*/\1/p'; }
ours_latency() { sed -n 's/.*median round trip \([0-9.]*\) us.*/\1/p'; }

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }

# compare OURS_FILTER THEIRS_FILTER -- OURS_COMMAND... -- THEIRS_COMMAND...:
# run the two in turn, BENCH_REPS times each, so that a change in the load of
# the machine hits both alike; prints "ours_median theirs_median" ("-" if missing).
compare() {
    local ours_filter=$1 theirs_filter=$2
    shift 3
    local ours_command=() theirs_command=()
    while [ "$1" != -- ]; do
        ours_command+=("$1")
        shift
    done
    shift
    theirs_command=("$@")
    local ours_values=() theirs_values=()
    for _ in $(seq "$reps"); do
        theirs_values+=("$(pair "${theirs_command[@]}" | eval "$theirs_filter")")
        ours_values+=("$(pair "${ours_command[@]}" | eval "$ours_filter")")
    done
    local ours_median theirs_median
    ours_median=$(printf '%s\n' "${ours_values[@]}" | median)
    theirs_median=$(printf '%s\n' "${theirs_values[@]}" | median)
    echo "${ours_median:--} ${theirs_median:--}" # "-": no figure
}

measured=0 # set by row() when both sides gave a figure

row() { # name ours theirs
    if [ -n "$2" ] && [ "$2" != - ] && [ -n "$3" ] && [ "$3" != - ]; then
        measured=1
    fi
    awk -v name="$1" -v ours="$2" -v theirs="$3" 'BEGIN {
        if (ours == "" || ours == "-" || theirs == "" || theirs == "-" || theirs + 0 == 0) { printf "%s %s %s n/a\n", name, ours, theirs; exit }
        printf "%s %.2f %.2f %.2f\n", name, ours, theirs, ours / theirs }'
}

perftest=(-d "$device" -x "$gid" -F -A FETCH_AND_ADD)
ours=(-d "$device" -g "$gid" --lock-iters 0)

# Bandwidth: perftest reports millions of messages per second (column 5).
figures=$(compare ours_rate "theirs 5" -- \
    "$lesson" "${ours[@]}" -n "$bw_iters" --depth "$depth" -- \
    ib_atomic_bw "${perftest[@]}" -n "$bw_iters" -t "$depth" -o "$depth")
read -r ours_rate_median theirs_mpps <<<"$figures"
row "12_atomics:faa-bw:d${depth}[Kops/s]" \
    "$(awk -v r="$ours_rate_median" 'BEGIN { if (r != "-") printf "%.3f", r / 1000 }')" \
    "$(awk -v m="$theirs_mpps" 'BEGIN { if (m != "-") printf "%.3f", m * 1000 }')"

# Latency: one atomic at a time; perftest's t_typical is column 5.
figures=$(compare ours_latency "theirs 5" -- \
    "$lesson" "${ours[@]}" -n "$lat_iters" --depth 1 -- \
    ib_atomic_lat "${perftest[@]}" -n "$lat_iters")
read -r ours_lat theirs_lat <<<"$figures"
row "12_atomics:faa-lat[us]" "$ours_lat" "$theirs_lat"

# Not one figure on both sides: report failure to bench/run.sh.
[ "$measured" = 1 ] || {
    echo "bench/12: nothing measured (are perftest and the lesson working?)" >&2
    exit 1
}

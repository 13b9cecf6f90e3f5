# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# What the benchmark scripts share (bench/NN_name.sh, bench/exNN_name.sh):
# finding the device, starting a server and its client, reading figures from
# their output, taking medians and printing the rows bench/run.sh collects.
# Source it, then call bench_setup:
#
#   . "$(dirname "${BASH_SOURCE[0]}")/common.sh"
#   bench_setup 07 BUILD_DIR PROGRAM...   # PROGRAMs: what must be built or installed
#
# bench_setup sets: device and gid (the device and the GID
# index lesson 01 chooses: RoCE v2 with an IPv4 address, for perftest's -d
# and -x), address (where a client connects: $RDMA_LAB_SERVER_ADDR, or
# 127.0.0.1), reps ($BENCH_REPS, default 3). Ports start at $BENCH_PORT
# (default 18600), one fresh port per server.
#
# Emulated RDMA is noisy: every figure is the median of reps runs, and the
# two programs of a row run in turn, so that a slow phase of the machine hits
# both alike.

bench_name=bench       # "bench/07" once bench_setup has run; prefixes every message
bench_pair_pause=0     # seconds to wait after each server/client pair
bench_measured=0       # rows that got a figure from both sides
bench_port_file=""
ours_command=()    # set by the script before each call of alternate
theirs_command=()
ours_runs_alone=0  # 1: ours needs no server (it runs both ends itself)

bench_die() {
    echo "$bench_name: $*" >&2
    exit 1
}

# bench_setup NUMBER BUILD_DIR PROGRAM...
bench_setup() {
    bench_name=bench/$1
    local devices=$2/lessons/01_devices/01_devices program
    shift 2
    for program in "$@" "$devices"; do
        [ -x "$program" ] || command -v "$program" >/dev/null || bench_die "$program is not built (or not installed)"
    done
    address=${RDMA_LAB_SERVER_ADDR:-127.0.0.1}
    reps=${BENCH_REPS:-3}
    # The port lives in a file, because figures are read from pairs run in subshells.
    bench_port_file=$(mktemp)
    trap 'rm -f "$bench_port_file"' EXIT
    echo "${BENCH_PORT:-18600}" >"$bench_port_file"
    local info
    info=$("$devices") || bench_die "lesson 01 found no usable device"
    device=$(sed -n 's/^Step 2: opened \(\S*\).*/\1/p' <<<"$info")
    gid=$(sed -n 's/.*chosen GID index: \([0-9]*\).*/\1/p' <<<"$info")
    if [ -z "$device" ] || [ -z "$gid" ]; then
        bench_die "could not find the device and GID index"
    fi
}

# pair PROGRAM ARGS...: PROGRAM ARGS as server and as client (with $address)
# on a fresh TCP port; prints the client's output. perftest's and rdma-core's
# clients do not retry their connection, so the client starts once the server
# listens.
pair() {
    local port
    port=$(($(cat "$bench_port_file") + 1))
    # Skip ports with any socket left, e.g. an earlier run's in TIME_WAIT:
    # not every server here sets SO_REUSEADDR.
    while ss -Htan "sport = :$port" | grep -q .; do
        port=$((port + 1))
    done
    echo "$port" >"$bench_port_file"
    timeout 300 "$@" -p "$port" >/dev/null 2>&1 &
    local server=$!
    for _ in $(seq 200); do
        ss -ltn "sport = :$port" | grep -q LISTEN && break
        sleep 0.1
    done
    timeout 300 "$@" -p "$port" "$address" 2>&1 || true
    wait "$server" || true
    sleep "$bench_pair_pause"
}

# perftest's figures: the number in column COLUMN of the line after the "#bytes" header.
column_after_header() {
    awk -v column="$1" 'found && NF > 1 { print $column; exit } /#bytes/ { found = 1 }'
}

# The median of the numbers on stdin, one per line (blank lines ignored).
median() { awk 'NF' | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }

# alternate OURS_FILTER THEIRS_FILTER: run the commands in the arrays
# theirs_command and ours_command in turn, reps times each, each through
# `pair` (or as they are, with ours_runs_alone=1 for a program that needs no
# server), keep the figure each FILTER (a command reading the output) prints,
# and set ours_median and theirs_median ("" when no run gave a figure).
alternate() {
    local ours_filter=$1 theirs_filter=$2 ours_values="" theirs_values=""
    # A run that fails gives no figure (its row says n/a), and stops nothing:
    # under set -e and pipefail a failing program would end the script silently.
    for _ in $(seq "$reps"); do
        theirs_values+="$(pair "${theirs_command[@]}" | eval "$theirs_filter" || true)"$'\n'
        if [ "$ours_runs_alone" = 1 ]; then
            ours_values+="$(timeout 300 "${ours_command[@]}" 2>&1 | eval "$ours_filter" ||
                echo "$bench_name: ${ours_command[0]##*/} failed" >&2)"$'\n'
        else
            ours_values+="$(pair "${ours_command[@]}" | eval "$ours_filter" || true)"$'\n'
        fi
    done
    # shellcheck disable=SC2034 # read by the calling script
    ours_median=$(median <<<"$ours_values") theirs_median=$(median <<<"$theirs_values")
}

# row NAME OURS THEIRS: print "NAME ours theirs ratio" (ratio ours/theirs, "n/a"
# and "-" for a missing figure) and count the rows measured on both sides.
row() {
    if [ -n "$2" ] && [ -n "$3" ]; then
        bench_measured=$((bench_measured + 1))
    fi
    awk -v name="$1" -v ours="$2" -v theirs="$3" 'BEGIN {
        if (ours == "" || theirs == "" || theirs + 0 == 0) {
            printf "%s %s %s n/a\n", name, ours == "" ? "-" : ours, theirs == "" ? "-" : theirs; exit }
        printf "%s %.2f %.2f %.2f\n", name, ours, theirs, ours / theirs }'
}

# The script's last word: it failed when no row was measured on both sides.
bench_finish() {
    [ "$bench_measured" -gt 0 ] || bench_die "nothing measured (do the program and its counterpart run?)"
}

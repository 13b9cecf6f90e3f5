#!/usr/bin/env bash
# Lesson 06's ping-pong side by side with ibv_rc_pingpong (rdma-core's example,
# package ibverbs-utils): same device, GID index, message size and iteration
# count, in one run, alternating the two programs.
#
#   bench/06_send_recv.sh BUILD_DIR      (bench/run.sh runs it on the RDMA target)
#
# Prints `name ours theirs ratio` rows: microseconds per iteration, as both
# programs report it ("1000 iters in 0.12 seconds = 120.00 usec/iter"), the
# median of BENCH_REPS runs (default 3) of each; ratio ours/theirs, lower is
# better. The client runs to 127.0.0.1, or to $RDMA_LAB_SERVER_ADDR when set.
set -euo pipefail

build=${1:?usage: bench/06_send_recv.sh BUILD_DIR}
lesson=$build/lessons/06_send_recv/06_send_recv
address=${RDMA_LAB_SERVER_ADDR:-127.0.0.1}
reps=${BENCH_REPS:-3}
port=${BENCH_PORT_06:-18700}

[ -x "$lesson" ] || { echo "bench/06: $lesson is not built" >&2; exit 1; }
command -v ibv_rc_pingpong >/dev/null || { echo "bench/06: ibv_rc_pingpong not found (package ibverbs-utils)" >&2; exit 1; }

# The first device, and its RoCE v2 GID with an IPv4 address, read from sysfs
# (the same choice lab::choose_gid makes: by type, not by a fixed index).
device=''
for path in /sys/class/infiniband/*; do
    [ -e "$path" ] && device=${path##*/} && break
done
gid=''
for type_file in /sys/class/infiniband/"$device"/ports/1/gid_attrs/types/*; do
    index=${type_file##*/}
    [ "$(cat "$type_file" 2>/dev/null)" = "RoCE v2" ] || continue
    case $(cat "/sys/class/infiniband/$device/ports/1/gids/$index") in
    0000:0000:0000:0000:0000:ffff:*) gid=$index; break ;;
    esac
done
if [ -z "$device" ] || [ -z "$gid" ]; then
    echo "bench/06: no device with a RoCE v2 IPv4 GID" >&2
    exit 1
fi

# pair PROGRAM ARGS... : server and client on a fresh TCP port; prints the
# client's output. ibv_rc_pingpong's client does not retry, so wait until the
# server listens.
pair() {
    port=$((port + 1))
    timeout 300 "$@" -p "$port" >/dev/null 2>&1 &
    local server=$!
    for _ in $(seq 200); do
        ss -ltn "sport = :$port" | grep -q LISTEN && break
        sleep 0.1
    done
    timeout 300 "$@" -p "$port" "$address" 2>&1 || true
    wait "$server" || true
}

usec_per_iter() { sed -n 's/.* = \([0-9.]*\) usec\/iter.*/\1/p' | tail -n 1; }
median() { awk 'NF' | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }

# The course's target: within 1.1x of ibv_rc_pingpong at 4 KiB x 1000.
size=${BENCH_06_SIZE:-4096}
iters=${BENCH_06_ITERS:-1000}
ours='' theirs=''
for _ in $(seq "$reps"); do
    theirs+="$(pair ibv_rc_pingpong -d "$device" -g "$gid" -s "$size" -n "$iters" | usec_per_iter)"$'\n'
    ours+="$(pair "$lesson" -d "$device" -g "$gid" -s "$size" -n "$iters" | usec_per_iter)"$'\n'
done
ours=$(median <<<"$ours")
theirs=$(median <<<"$theirs")
echo "bench/06: ${size} B x ${iters}: ours ${ours:-?} us/iter, ibv_rc_pingpong ${theirs:-?} us/iter" >&2
awk -v name="06_send_recv:${size}B[us/iter]" -v ours="$ours" -v theirs="$theirs" 'BEGIN {
    if (ours == "" || theirs == "" || theirs + 0 == 0) { printf "%s %s %s n/a\n", name, ours == "" ? "-" : ours, theirs == "" ? "-" : theirs; exit }
    printf "%s %.2f %.2f %.2f\n", name, ours, theirs, ours / theirs }'

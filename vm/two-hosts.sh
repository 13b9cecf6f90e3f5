#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run a lesson across a wire: two micro-VMs, each with its own network card,
# its own IPv4 address and its own rxe0 on that card, joined by a virtual
# Ethernet cable (qemu's socket netdev: frames travel as UDP datagrams over the
# host's loopback, nowhere else).
#
#   vm/two-hosts.sh [--capture FILE] [--netem SPEC] [--client-mtu BYTES] [--timeout SECONDS]
#                   PROGRAM [ARGS...]
#
# The server VM (10.77.1.1) runs PROGRAM ARGS, the client VM (10.77.1.2) runs
# PROGRAM ARGS 10.77.1.1. A one-process lesson (lesson 01, say) runs on both
# hosts unchanged. Output lines carry [server] or [client]. --capture records
# every frame on the wire to FILE (pcap), as seen by the server's card.
# --netem SPEC makes the client's card lossy (tc-netem(8), e.g. "loss 2%"):
# frames it drops never reach the wire, so the capture does not show them.
# --client-mtu BYTES gives the client's card another MTU than the server's
# 1500 (e.g. 4500: its rxe0's active_mtu is then 4096, the server's 1024).
#
# When one side fails (its VM does not boot, or its program exits non-zero)
# the other is stopped after RDMA_LAB_TWO_HOSTS_GRACE seconds (default 10);
# everything is stopped after --timeout seconds (default 300). The last line
# says which side failed. Exit status: 0 when both sides succeeded, else 1.
#
# RDMA_LAB_TWO_HOSTS_FAULT=server-boot|client-boot|server-exit|client-exit
# breaks one side on purpose (the tests use it to check the clean-up).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
server_address=10.77.1.1
client_address=10.77.1.2
timeout_seconds=${RDMA_LAB_TWO_HOSTS_TIMEOUT:-300}
grace=${RDMA_LAB_TWO_HOSTS_GRACE:-10}
fault=${RDMA_LAB_TWO_HOSTS_FAULT:-}
capture=
netem=
client_mtu=

die() {
    echo "two-hosts: $*" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case "$1" in
    --capture)
        [ $# -ge 2 ] || die "--capture needs a file name"
        capture=$2
        shift 2
        ;;
    --netem)
        [ $# -ge 2 ] || die "--netem needs a tc-netem spec, e.g. \"loss 2%\""
        netem=$2
        shift 2
        ;;
    --client-mtu)
        [ $# -ge 2 ] || die "--client-mtu needs a number of bytes, e.g. 4500"
        client_mtu=$2
        shift 2
        ;;
    --timeout)
        [ $# -ge 2 ] || die "--timeout needs a number of seconds"
        timeout_seconds=$2
        shift 2
        ;;
    -h | --help)
        awk 'NR > 1 && !/^#/ {exit} NR > 1 && !/SPDX-License-Identifier:/ {sub(/^# ?/, ""); print}' "$0"
        exit 0
        ;;
    --) shift; break ;;
    *) break ;;
    esac
done
[ $# -ge 1 ] || die "usage: vm/two-hosts.sh [--capture FILE] [--netem SPEC] [--client-mtu BYTES] [--timeout SECONDS] PROGRAM [ARGS...]"
[[ $timeout_seconds =~ ^[0-9]+$ ]] || die "--timeout must be a whole number of seconds, not '$timeout_seconds'"
if [ -n "$client_mtu" ] && { ! [[ $client_mtu =~ ^[0-9]{3,4}$ ]] || [ "$client_mtu" -lt 576 ] || [ "$client_mtu" -gt 9000 ]; }; then
    die "--client-mtu must be a number of bytes from 576 to 9000, not '$client_mtu'"
fi
case "$fault" in "" | server-boot | client-boot | server-exit | client-exit) ;;
*) die "RDMA_LAB_TWO_HOSTS_FAULT must be server-boot, client-boot, server-exit or client-exit, not '$fault'" ;;
esac
program=$1
shift
[ -x "$program" ] || die "$program is not an executable program (build it first: ./lab build)"
program=$(cd "$(dirname "$program")" && pwd)/$(basename "$program")
case "$program" in
"$repo"/*) ;;
*) die "$program is outside the repository, so the VMs cannot see it" ;;
esac

# A one-process program (lesson 01, say) runs on both hosts as it is; the
# build says which programs are a server and a client (vm/program-role.sh).
# A program it does not list gets the server's address on the client side.
pair=1
if [ "$("$here/program-role.sh" "$program" || true)" = one-process ]; then
    pair=0
    echo "two-hosts: $(basename "$program") is a one-process program: it runs on both hosts" >&2
fi

# Two UDP ports on the loopback that nobody uses: one for each end of the wire.
free_udp_port() {
    local port
    for _ in $(seq 50); do
        port=$((20000 + RANDOM % 40000))
        if [ -z "$(ss -Hlnu "sport = :$port" 2>/dev/null)" ]; then
            echo "$port"
            return
        fi
    done
    die "found no free UDP port on the loopback"
}
server_port=$(free_udp_port)
client_port=$(free_udp_port)
while [ "$client_port" = "$server_port" ]; do client_port=$(free_udp_port); done

# Two guests on a shared machine: one CPU and 1 GiB each unless told otherwise.
export RDMA_LAB_VM_CPUS=${RDMA_LAB_VM_CPUS:-1}
export RDMA_LAB_VM_MEMORY=${RDMA_LAB_VM_MEMORY:-1024}

prefix() { sed -u "s/^/[$1] /"; }

start_side() { # SIDE LOCAL_PORT PEER_PORT ADDRESS PEER [EXTRA MICROVM OPTIONS...] -- COMMAND...
    local side=$1 local_port=$2 peer_port=$3 address=$4 peer=$5
    shift 5
    local append=${RDMA_LAB_VM_APPEND:-}
    [ "$fault" = "$side-boot" ] && append="$append rdinit=/no-such-init" # the kernel panics: no /init
    RDMA_LAB_VM_APPEND=$append "$here/microvm.sh" --timeout "$((timeout_seconds + 30))" \
        --wire "$local_port:$peer_port" --address "$address" --peer "$peer" "$@" \
        </dev/null > >(prefix "$side") 2> >(prefix "$side" >&2) &
}

command_for() { # SIDE ARGS...
    local side=$1
    shift
    if [ "$fault" = "$side-exit" ]; then
        printf '%s\0' sh -c "echo 'error: the $side fails on purpose (RDMA_LAB_TWO_HOSTS_FAULT)' >&2; exit 3"
    elif [ "$pair" = 1 ] && [ "$side" = client ]; then
        printf '%s\0' "$program" "$@" "$server_address"
    else
        printf '%s\0' "$program" "$@"
    fi
}

declare -a server_command client_command
mapfile -d '' server_command < <(command_for server "$@")
mapfile -d '' client_command < <(command_for client "$@")
capture_args=()
if [ -n "$capture" ]; then
    : >"$capture" || die "cannot write the capture file $capture"
    capture_args=(--capture "$capture")
fi

echo "two-hosts: server VM $server_address, client VM $client_address, wire udp:$server_port <-> udp:$client_port" >&2
start_side server "$server_port" "$client_port" "$server_address" "$client_address" "${capture_args[@]}" \
    -- "${server_command[@]}"
server_pid=$!
client_args=()
[ -z "$netem" ] || client_args=(--netem "$netem")
[ -z "$client_mtu" ] || client_args+=(--mtu "$client_mtu")
start_side client "$client_port" "$server_port" "$client_address" "$server_address" "${client_args[@]}" \
    -- "${client_command[@]}"
client_pid=$!

# shellcheck disable=SC2317 # called by the trap
stop_all() {
    kill "$server_pid" "$client_pid" 2>/dev/null
    wait "$server_pid" "$client_pid" 2>/dev/null
}
trap 'stop_all; exit 130' INT TERM

describe() { # SIDE STATUS -> what happened to it
    case "$2" in
    0) echo "the $1 succeeded" ;;
    124) echo "the $1 ran out of time" ;;
    125) echo "the $1's VM stopped before the program finished (did it boot?)" ;;
    130 | 143) echo "the $1 was stopped" ;;
    running) echo "the $1 was still running" ;;
    *) echo "the $1 failed with exit status $2" ;;
    esac
}

# Watch both sides. The first failure starts the grace period for the other
# one; the overall deadline stops whatever is left.
server_status=running client_status=running first_failure=
deadline=$((SECONDS + timeout_seconds)) stop_at=
while [ "$server_status" = running ] || [ "$client_status" = running ]; do
    for side in server client; do
        pid_name=${side}_pid status_name=${side}_status
        [ "${!status_name}" = running ] || continue
        kill -0 "${!pid_name}" 2>/dev/null && continue
        wait "${!pid_name}"
        printf -v "$status_name" '%s' "$?"
        if [ "${!status_name}" != 0 ] && [ -z "$first_failure" ]; then
            first_failure=$side
            stop_at=$((SECONDS + grace))
            echo "two-hosts: $(describe "$side" "${!status_name}"); the other side gets ${grace}s to finish" >&2
        fi
    done
    if [ -n "$stop_at" ] && [ $SECONDS -ge "$stop_at" ] || [ $SECONDS -ge $deadline ]; then
        [ $SECONDS -ge $deadline ] && echo "two-hosts: stopping both VMs after ${timeout_seconds}s" >&2
        for side in server client; do
            pid_name=${side}_pid status_name=${side}_status
            if [ "${!status_name}" = running ]; then
                kill "${!pid_name}" 2>/dev/null
                wait "${!pid_name}" 2>/dev/null
                printf -v "$status_name" '%s' 130
                [ -n "$first_failure" ] || first_failure=$side
            fi
        done
        break
    fi
    sleep 0.2
done
sleep 0.2 # let the prefixing pipes flush

if [ "$server_status" = 0 ] && [ "$client_status" = 0 ]; then
    echo "two-hosts: server and client both succeeded" >&2
    exit 0
fi
echo "two-hosts: FAILED: the $first_failure side failed first; $(describe server "$server_status"), $(describe client "$client_status")" >&2
exit 1

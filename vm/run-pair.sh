#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run a two-process lesson: the server, then the client pointed at it.
#
#   vm/run-pair.sh PROGRAM [ARGS...]
#
# Every output line is prefixed with [server] or [client]. The exit status is
# non-zero when either side fails; a side still running after
# RDMA_LAB_PAIR_TIMEOUT seconds (default 120) is stopped, and so is the server
# when the client has failed. Ctrl-C (or a kill) stops both sides.
#
# Without -p/--port in ARGS the pair gets the first port from 18515 (the
# lessons' default) that no other pair on this machine holds and nothing
# listens on, so that several pairs can share one lab machine.
set -uo pipefail

program=$1
shift
address=${RDMA_LAB_SERVER_ADDR:-127.0.0.1}
timeout_seconds=${RDMA_LAB_PAIR_TIMEOUT:-120}
ports=${TMPDIR:-/tmp}/rdma-lab-pair-ports

prefix() { sed -u "s/^/[$1] /"; }

port_given=0
for arg in "$@"; do
    case "$arg" in -p | -p[0-9]* | --port | --port=*) port_given=1 ;; esac
done

port_args=() held_port=''
listening() { # PORT: a TCP socket listens on it
    local hex
    hex=$(printf ':%04X ' "$1")
    grep -q "$hex.* 0A " /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
if [ "$port_given" = 0 ]; then
    mkdir -p "$ports" 2>/dev/null
    for port in $(seq 18515 18614); do
        claim=$ports/$port
        if [ -f "$claim" ] && ! kill -0 "$(cat "$claim" 2>/dev/null)" 2>/dev/null; then
            rm -f "$claim" # left by a pair that was killed
        fi
        listening "$port" && continue
        # noclobber: creating the claim fails when another pair holds the port
        if (set -o noclobber && echo $$ >"$claim") 2>/dev/null; then
            held_port=$port
            break
        fi
    done
    # A machine without /tmp to write to: the lesson's own default, as before.
    [ -z "$held_port" ] || [ "$held_port" = 18515 ] || port_args=(--port "$held_port")
fi

server='' client=''
# shellcheck disable=SC2317 # called by the traps
stop_both() {
    [ -z "$client" ] || kill "$client" 2>/dev/null
    [ -z "$server" ] || kill "$server" 2>/dev/null
}
# shellcheck disable=SC2317
release_port() { [ -z "$held_port" ] || rm -f "$ports/$held_port"; }
trap release_port EXIT
trap 'stop_both; echo "run-pair: interrupted; stopped the server and the client" >&2; exit 130' INT
trap 'stop_both; exit 143' TERM
trap 'stop_both; exit 129' HUP

timeout --kill-after=5 "$timeout_seconds" "$program" "${port_args[@]}" "$@" > >(prefix server) 2> >(prefix server >&2) &
server=$!
sleep 0.3 # the client retries its connection, so this only keeps the log in order
timeout --kill-after=5 "$timeout_seconds" "$program" "${port_args[@]}" "$@" "$address" > >(prefix client) 2> >(prefix client >&2) &
client=$!

wait "$client"
client_status=$?
if [ "$client_status" -ne 0 ]; then
    # The server may wait for a client that will never come back.
    sleep 2
    kill "$server" 2>/dev/null
fi
wait "$server"
server_status=$?
sleep 0.1 # let the prefixing pipes flush
if [ "$server_status" -ne 0 ] || [ "$client_status" -ne 0 ]; then
    echo "run-pair: server exited with $server_status, client with $client_status" >&2
    exit 1
fi

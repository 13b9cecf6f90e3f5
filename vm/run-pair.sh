#!/usr/bin/env bash
# Run a two-process lesson: the server, then the client pointed at it.
#
#   vm/run-pair.sh PROGRAM [ARGS...]
#
# Every output line is prefixed with [server] or [client]. The exit status is
# non-zero when either side fails; a side still running after
# RDMA_LAB_PAIR_TIMEOUT seconds (default 120) is stopped, and so is the server
# when the client has failed.
set -uo pipefail

program=$1
shift
address=${RDMA_LAB_SERVER_ADDR:-127.0.0.1}
timeout_seconds=${RDMA_LAB_PAIR_TIMEOUT:-120}

prefix() { sed -u "s/^/[$1] /"; }

timeout --kill-after=5 "$timeout_seconds" "$program" "$@" > >(prefix server) 2> >(prefix server >&2) &
server=$!
sleep 0.3 # the client retries its connection, so this only keeps the log in order
timeout --kill-after=5 "$timeout_seconds" "$program" "$@" "$address" > >(prefix client) 2> >(prefix client >&2) &
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

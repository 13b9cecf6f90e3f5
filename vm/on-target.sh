#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run a command where RDMA works: on the host's own RDMA device when it has an
# active one (creating rxe0 first when running as root on a kernel with
# rdma_rxe), otherwise inside the micro-VM.
#
#   vm/on-target.sh CMD [ARGS...]
#   vm/on-target.sh --which          prints "host" or "vm"
#
# RDMA_LAB_TARGET=host|vm forces the choice. RDMA_LAB_SERVER_ADDR is set to
# the address a client should connect to. The exit status is the command's.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

die() {
    echo "on-target: $*" >&2
    exit 2
}

# The first device with an ACTIVE port.
host_device() {
    command -v ibv_devinfo >/dev/null || return 0
    { ibv_devinfo 2>/dev/null || true; } | awk '/hca_id:/ {dev=$2} /state:.*PORT_ACTIVE/ && dev {print dev; exit}'
}

choose_target() {
    case "${RDMA_LAB_TARGET:-}" in
    host | vm)
        echo "$RDMA_LAB_TARGET"
        return
        ;;
    "") ;;
    *) die "RDMA_LAB_TARGET must be host or vm, not '$RDMA_LAB_TARGET'" ;;
    esac
    if [ -n "$(host_device)" ]; then
        echo host
    elif [ "$(id -u)" = 0 ] && modprobe -n rdma_rxe >/dev/null 2>&1 &&
        "$here/../setup/setup-rxe.sh" >/dev/null 2>&1 && [ -n "$(host_device)" ]; then
        echo host
    else
        echo vm
    fi
}

# The IPv4 address of the netdev under the host's RDMA device (rdma_cm binds to it).
host_rdma_address() {
    local device netdev
    device=$(host_device)
    netdev=$(rdma link show 2>/dev/null | awk -v d="$device/" 'index($2, d) == 1 {for (i = 1; i < NF; i++) if ($i == "netdev") print $(i + 1); exit}')
    [ -n "$netdev" ] && ip -4 -o addr show dev "$netdev" | awk '{split($4, a, "/"); print a[1]; exit}'
}

[ $# -ge 1 ] || die "usage: vm/on-target.sh CMD [ARGS...] | --which"
if [ "$1" = --which ]; then # only say where commands would run
    choose_target
    exit 0
fi
if [ "$(choose_target)" = host ]; then
    device=$(host_device)
    [ -n "$device" ] || die "RDMA_LAB_TARGET=host, but the host has no active RDMA device (./lab doctor)"
    echo "on-target: running on the host's RDMA device $device" >&2
    if [ -z "${RDMA_LAB_SERVER_ADDR:-}" ]; then
        RDMA_LAB_SERVER_ADDR=$(host_rdma_address || true)
        export RDMA_LAB_SERVER_ADDR=${RDMA_LAB_SERVER_ADDR:-127.0.0.1}
    fi
    exec "$@"
fi
exec "$here/microvm.sh" --timeout "${RDMA_LAB_TIMEOUT:-2400}" -- "$@"

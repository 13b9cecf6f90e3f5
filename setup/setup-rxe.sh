#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Create a Soft-RoCE device on the host: setup/setup-rxe.sh [NETDEV] [RXE_NAME]
#
# Idempotent: when an rxe device already sits on NETDEV it only reports it.
# NETDEV defaults to the interface of the default route. Needs root (or
# CAP_NET_ADMIN) and a kernel with the rdma_rxe module; where the module is
# missing, it says what to install, or to use the micro-VM (./lab vm).
set -euo pipefail

netdev=${1:-$(ip -o route show default 2>/dev/null | awk '{print $5; exit}')}
name=${2:-rxe0}

die() {
    echo "setup-rxe: $*" >&2
    exit 2
}

[ -n "$netdev" ] || die "no default route, so no network interface to use: name one, e.g. setup/setup-rxe.sh eth0"
ip link show "$netdev" >/dev/null 2>&1 || die "network interface '$netdev' does not exist (see 'ip link')"
command -v rdma >/dev/null || die "the 'rdma' tool is missing: install iproute2"

existing=$(rdma link show 2>/dev/null | awk -v dev="$netdev" '$0 ~ "netdev " dev "( |$)" {split($2, a, "/"); print a[1]; exit}')
if [ -n "$existing" ]; then
    echo "setup-rxe: $existing already runs on $netdev"
    exit 0
fi

if [ ! -d /sys/module/rdma_rxe ]; then
    if ! modprobe rdma_rxe 2>/dev/null; then
        hint="use the micro-VM instead: ./lab vm"
        if [ -r /etc/os-release ] && grep -qi ubuntu /etc/os-release; then
            hint="install linux-modules-extra-$(uname -r), or use the micro-VM: ./lab vm"
        fi
        die "this kernel ($(uname -r)) has no rdma_rxe module: $hint"
    fi
fi
modprobe rdma_ucm 2>/dev/null || true

rdma link add "$name" type rxe netdev "$netdev" ||
    die "rdma link add failed (needs root or CAP_NET_ADMIN; in a container: --cap-add NET_ADMIN --network host)"
if command -v ibv_devices >/dev/null && ! ibv_devices | grep -qw "$name"; then
    die "$name was created but libibverbs does not see it: install ibverbs-providers"
fi
echo "setup-rxe: created $name on $netdev"

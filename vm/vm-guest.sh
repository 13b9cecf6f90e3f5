#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs inside the micro-VM, in the host's (read-only) root filesystem, after
# vm-init.sh mounted it. Brings up a Soft-RoCE device on a dummy netdev (or,
# on a wire, on the network card) and runs the command the host left in /run/lab/command. Its exit status becomes
# the VM's (vm-init.sh hands it back to the host through /run/lab/status).
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp LANG=C.UTF-8
stty -onlcr 2>/dev/null # no CR before every LF on the serial console
# The tests recognise the micro-VM by this name (some userlands lack hostname(1)).
hostname rdma-lab-vm 2>/dev/null || echo rdma-lab-vm >/proc/sys/kernel/hostname

ip link set lo up
if [ -f /run/lab/wire ]; then
    # On a wire (vm/two-hosts.sh): rxe0 on the virtio network card, which
    # carries the frames to the other VM.
    # "ADDRESS PEER MTU NETEM...": PEER is - when there is none; NETEM may be empty.
    read -r address peer mtu netem </run/lab/wire
    [ "$peer" != - ] || peer=''
    netdev=
    for path in /sys/class/net/*; do
        [ "$(cat "$path/type" 2>/dev/null)" = 1 ] && [ -e "$path/device" ] && netdev=${path##*/} && break
    done
    [ -n "$netdev" ] || { echo "micro-VM: no network card on the wire (is virtio_net loaded?)" >&2; exit 3; }
else
    # A dummy netdev is enough for rxe: packets to the device's own address are
    # looped back inside the kernel. The address is private to this VM.
    address=10.77.0.1 peer='' mtu=1500 netem='' netdev=lab0
    ip link add lab0 type dummy
fi
ip link set "$netdev" mtu "$mtu" up
ip addr add "$address/24" dev "$netdev"
if ! rdma link add rxe0 type rxe netdev "$netdev"; then
    echo "micro-VM: rdma link add rxe0 failed; the kernel said:" >&2
    dmesg | tail -n 15 >&2
    exit 3
fi
# Wait until the RoCE v2 GID for the IPv4 address is in the table.
IFS=. read -r a b c d <<<"$address"
gid=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d")
for _ in $(seq 50); do
    grep -q "$gid" /sys/class/infiniband/rxe0/ports/1/gids/* 2>/dev/null && break
    sleep 0.1
done
if [ -n "$peer" ]; then
    # Both VMs boot at their own pace. Start the command only when the other
    # VM is up: this VM connected to the peer's listener, or the peer
    # connected to this one's. Otherwise a quick program could finish and
    # power its VM off before the other VM is up. One connection is enough
    # for both: it reached the listener's side even when its caller gave up
    # first (a busy host makes each try slow), so the listener stays up.
    barrier_port=18500
    printf '#!/bin/sh\n: >/tmp/.lab-peer-reached-us\n' >/tmp/.lab-mark-reached
    chmod +x /tmp/.lab-mark-reached
    busybox nc -ll -p "$barrier_port" -e /tmp/.lab-mark-reached >/dev/null 2>&1 &
    deadline=$((SECONDS + 120))
    until [ -f /tmp/.lab-peer-reached-us ] ||
        timeout 5 bash -c "exec 3<>/dev/tcp/$peer/$barrier_port" 2>/dev/null; do
        [ $SECONDS -lt $deadline ] ||
            { echo "micro-VM: the other VM ($peer) did not answer on the wire within 120 s" >&2; exit 4; }
        sleep 0.2
    done
fi
if [ -n "$netem" ]; then
    # A lossy (or slow) wire, from now on: what this VM sends passes netem.
    # shellcheck disable=SC2086 # the spec is several words: loss 2%, delay 5ms ...
    tc qdisc add dev "$netdev" root netem $netem ||
        { echo "micro-VM: tc qdisc add dev $netdev root netem $netem failed" >&2; exit 3; }
    echo "micro-VM: $netdev sends through netem: $netem" >&2
fi
ulimit -l unlimited

# shellcheck disable=SC1091
. /run/lab/env
cd "$(cat /run/lab/cwd)" || exit 3
if [ -f /run/lab/machine ]; then
    # A lab machine (./lab up): serve SSH sessions until told to stop or idle.
    export RDMA_LAB_SERVER_ADDR=$address
    exec "$(cat /run/lab/repo)/vm/machine-guest.sh" "$netdev" "$address"
fi
if [ -n "$peer" ]; then
    export RDMA_LAB_VM_ADDRESS=$address RDMA_LAB_VM_PEER=$peer
    echo "micro-VM: kernel $(uname -r), device rxe0 on $netdev ($address), wire to $peer" >&2
else
    export RDMA_LAB_SERVER_ADDR=$address # the address of lab0, for lessons that start a client
    echo "micro-VM: kernel $(uname -r), device rxe0 on $netdev ($address)" >&2
fi
bash -c "$(cat /run/lab/command)"

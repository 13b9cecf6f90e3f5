#!/usr/bin/env bash
# Runs inside the micro-VM, in the host's (read-only) root filesystem, after
# vm-init.sh mounted it. Brings up a Soft-RoCE device on a dummy netdev and
# runs the command the host left in /run/lab/command. Its exit status becomes
# the VM's (vm-init.sh hands it back to the host through /run/lab/status).
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp LANG=C.UTF-8
stty -onlcr 2>/dev/null # no CR before every LF on the serial console
hostname rdma-lab-vm 2>/dev/null

# A dummy netdev is enough for rxe: packets to the device's own address are
# looped back inside the kernel. The address is private to this VM.
ip link set lo up
ip link add lab0 type dummy
ip link set lab0 mtu 1500 up
ip addr add 10.77.0.1/24 dev lab0
if ! rdma link add rxe0 type rxe netdev lab0; then
    echo "micro-VM: rdma link add rxe0 failed; the kernel said:" >&2
    dmesg | tail -n 15 >&2
    exit 3
fi
# Wait until the RoCE v2 GID for the IPv4 address is in the table.
for _ in $(seq 50); do
    grep -q '0000:0000:0000:0000:0000:ffff:0a4d:0001' /sys/class/infiniband/rxe0/ports/1/gids/* 2>/dev/null && break
    sleep 0.1
done
ulimit -l unlimited

# shellcheck disable=SC1091
. /run/lab/env
cd "$(cat /run/lab/cwd)" || exit 3
export RDMA_LAB_SERVER_ADDR=10.77.0.1 # the address of lab0, for lessons that start a client
echo "micro-VM: kernel $(uname -r), device rxe0 on lab0 (10.77.0.1)" >&2
bash -c "$(cat /run/lab/command)"

#!/bin/busybox sh
# SPDX-License-Identifier: MIT
# shellcheck shell=dash
# /init of the micro-VM's initramfs. It runs under busybox before any real root
# exists: load the virtio and 9p modules, mount the host's root filesystem
# read-only, the repository and the run folder writable, then hand over to
# vm-guest.sh inside that root. Whatever happens, the VM powers off at the end.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

# modules.order lists every module file in dependency order: virtio and 9p
# first (to reach the host's files), then dummy, rdma_rxe and rdma_ucm.
while read -r module; do
    insmod "/modules/$module" || echo "micro-VM: insmod $module failed" >/dev/console
done </modules.order

fail() {
    echo "micro-VM: $*" >/dev/console
    reboot -f
}

mkdir -p /newroot
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=262144 hostroot /newroot ||
    fail "cannot mount the host's root filesystem over 9p"
for dir in proc sys dev tmp run; do
    [ -d "/newroot/$dir" ] || fail "the host root has no /$dir"
done
mount -t proc proc /newroot/proc
mount -t sysfs sysfs /newroot/sys
mount -t devtmpfs devtmpfs /newroot/dev
mkdir -p /newroot/dev/pts /newroot/dev/shm 2>/dev/null
mount -t devpts devpts /newroot/dev/pts 2>/dev/null
mount -t tmpfs tmpfs /newroot/dev/shm
# devtmpfs has no /dev/fd: bash's process substitution needs it.
ln -sf /proc/self/fd /newroot/dev/fd
ln -sf /proc/self/fd/0 /newroot/dev/stdin
ln -sf /proc/self/fd/1 /newroot/dev/stdout
ln -sf /proc/self/fd/2 /newroot/dev/stderr
mount -t tmpfs -o mode=1777 tmpfs /newroot/tmp
mount -t tmpfs -o mode=755 tmpfs /newroot/run
mkdir -p /newroot/run/lab
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 labrun /newroot/run/lab ||
    fail "cannot mount the run folder over 9p"
# RDMA_LAB_VM_FAULT=hang-boot (a test of the host's boot deadline): never say so.
[ "$(cat /newroot/run/lab/fault 2>/dev/null)" != hang-boot ] || while :; do sleep 60; done
: >/newroot/run/lab/booted # tells the host the guest is alive
repo=$(cat /newroot/run/lab/repo)
mkdir -p "/newroot$repo" 2>/dev/null
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=none labrepo "/newroot$repo" ||
    fail "cannot mount the repository at $repo"

chroot /newroot /bin/bash "$repo/vm/vm-guest.sh"
echo "$?" >/newroot/run/lab/status
# RDMA_LAB_VM_FAULT=hang-poweroff (a test of the host's power-off deadline): stay up.
[ "$(cat /newroot/run/lab/fault 2>/dev/null)" != hang-poweroff ] || while :; do sleep 60; done
sync
umount /newroot/run/lab 2>/dev/null
echo 0 >/proc/sys/kernel/printk # keep the "Restarting system" line off the console
reboot -f

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The lab machine's service, inside the micro-VM (vm-guest.sh hands over to it
# once rxe0 is up): an SSH server on the control card for ./lab shell and
# ./lab run, a line in /run/lab/ready for the host, and a watch that powers
# the VM off after RDMA_LAB_IDLE seconds without a session (0: never).
#
#   machine-guest.sh NETDEV ADDRESS      (NETDEV and ADDRESS: where rxe0 sits)
#
# /run/lab (shared with the host's state folder) holds host_key (dropbear's
# format) and authorized_keys, written by vm/machine.sh before the boot.
set -u
netdev=$1 address=$2
repo=$(cat /run/lab/repo)

fail() {
    echo "lab machine: $*" >&2
    echo "$*" >/run/lab/failed
    exit 3
}

# The control card is the one network card with a device: qemu's user-mode
# network, which forwards 127.0.0.1:PORT on the host to port 22 here. No
# default route: the guest reaches nothing (qemu's restrict=on drops it anyway).
control=
for path in /sys/class/net/*; do
    [ "$(cat "$path/type" 2>/dev/null)" = 1 ] && [ -e "$path/device" ] && control=${path##*/} && break
done
[ -n "$control" ] || fail "no control network card (is virtio_net in the initramfs?)"
ip link set "$control" up
ip addr add 10.0.2.15/24 dev "$control"

# The root filesystem is the host's, read-only: give root a home of its own
# (for dropbear's ~/.ssh/authorized_keys) by a private copy of /etc/passwd.
home=/run/lab-home
mkdir -p "$home/.ssh"
chmod 700 "$home" "$home/.ssh"
cp /run/lab/authorized_keys "$home/.ssh/authorized_keys" || fail "no authorized_keys in /run/lab"
chmod 600 "$home/.ssh/authorized_keys"
awk -F: -v OFS=: -v home="$home" '$1 == "root" {$6 = home; $7 = "/bin/bash"} {print}' /etc/passwd >/run/lab-passwd
mount --bind /run/lab-passwd /etc/passwd || fail "cannot replace /etc/passwd"
printf 'cd %q 2>/dev/null\n' "$repo" >"$home/.bashrc"
export HOME=$home

command -v dropbear >/dev/null || fail "dropbear is missing on the host: ./lab setup installs it (dropbear-bin)"
# -s: keys only; -j -k: no port forwarding; -m: no motd; -e: sessions inherit
# this environment (PATH, the memlock limit, RDMA_LAB_SERVER_ADDR).
dropbear -F -E -s -j -k -m -e -r /run/lab/host_key -p 10.0.2.15:22 -P /run/dropbear.pid \
    2>>/tmp/dropbear.log &
server=$!
for _ in $(seq 100); do
    grep -q ':0016 .* 0A ' /proc/net/tcp 2>/dev/null && break
    sleep 0.05
done
kill -0 "$server" 2>/dev/null || fail "dropbear did not start: $(tail -n 3 /tmp/dropbear.log)"
echo "kernel=$(uname -r) device=rxe0 netdev=$netdev address=$address" >/run/lab/ready

# A session is a command running for a connection: a child of one of
# dropbear's connection processes, which are the listener's children. (The
# host keeps one connection open for all its sessions, so a connection alone
# is not a session.) The machine is idle while it has none.
sessions() {
    local stat rest pid count=0
    local -A parent_of=()
    for stat in /proc/[0-9]*/stat; do
        read -r rest <"$stat" 2>/dev/null || continue
        pid=${stat#/proc/}
        pid=${pid%/stat}
        rest=${rest##*) }
        # shellcheck disable=SC2086 # state ppid ...: split on purpose
        set -- $rest
        parent_of[$pid]=$2
    done
    for pid in "${!parent_of[@]}"; do
        [ "${parent_of[${parent_of[$pid]}]:-}" = "$server" ] && count=$((count + 1))
    done
    echo "$count"
}
idle_limit=$(cat /run/lab/idle 2>/dev/null || echo 1800)
last_busy=$SECONDS
while kill -0 "$server" 2>/dev/null; do
    sleep 2
    [ ! -f /run/lab/stop ] || break
    [ "$(sessions)" = 0 ] || last_busy=$SECONDS
    if [ "$idle_limit" -gt 0 ] && [ $((SECONDS - last_busy)) -ge "$idle_limit" ]; then
        cat /run/lab/idle_text >/run/lab/stopped 2>/dev/null || echo "${idle_limit}s" >/run/lab/stopped
        break
    fi
done
kill "$server" 2>/dev/null
exit 0

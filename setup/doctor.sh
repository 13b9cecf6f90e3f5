#!/usr/bin/env bash
# ./lab doctor: check what RDMA programs need on this machine and say what to fix.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
problems=0
ok() { printf '  ok    %s\n' "$*"; }
bad() {
    printf '  FIX   %s\n' "$*"
    problems=$((problems + 1))
}
note() { printf '  note  %s\n' "$*"; }

# shellcheck disable=SC1091
echo "Host: $(uname -sr), $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
echo "Running on the host:"
if missing=$("$here/install-deps.sh" --check 2>&1); then ok "all packages installed"; else bad "$missing: run ./lab setup"; fi
if [ -d /sys/module/rdma_rxe ]; then
    ok "rdma_rxe is loaded"
elif modprobe -n rdma_rxe >/dev/null 2>&1; then
    note "rdma_rxe is available but not loaded: sudo setup/setup-rxe.sh"
else
    note "this kernel has no rdma_rxe module (Ubuntu: linux-modules-extra-$(uname -r)); the micro-VM will be used"
fi
if ls /dev/infiniband/uverbs* >/dev/null 2>&1; then
    ok "/dev/infiniband has $(cd /dev/infiniband && printf '%s ' *)"
else
    note "/dev/infiniband/uverbs* is missing: no RDMA device on the host (in a container: --device /dev/infiniband)"
fi
if [ -e /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so ] || ls /usr/lib/*/libibverbs/librxe-* >/dev/null 2>&1; then
    ok "the rxe provider library is installed"
else
    bad "the rxe provider library is missing: install ibverbs-providers"
fi
devices=$(ibv_devinfo 2>/dev/null | awk '/hca_id:/ {dev=$2} /state:/ && dev {print dev "(" $2 ")"; dev=""}' | tr '\n' ' ')
if [ -n "$devices" ]; then
    ok "RDMA devices: $devices"
    v2=$(grep -l 'RoCE v2' /sys/class/infiniband/*/ports/1/gid_attrs/types/* 2>/dev/null | wc -l)
    if [ "$v2" -gt 0 ]; then
        ok "GID table has $v2 RoCE v2 entries"
    else
        note "no RoCE v2 GID: is the netdev under the device up, with an address?"
    fi
else
    note "no usable RDMA device on the host; tests run in the micro-VM"
fi
memlock=$(ulimit -l)
if [ "$memlock" = unlimited ] || [ "$memlock" -ge 65536 ]; then
    ok "memlock limit: $memlock KiB"
elif [ -z "$devices" ]; then
    note "memlock limit is $memlock KiB; fine for the micro-VM (it sets its own), too low for a host device"
else
    bad "memlock limit is $memlock KiB: raise it (ulimit -l unlimited; in Docker: --ulimit memlock=-1)"
fi

echo "The micro-VM:"
if command -v qemu-system-x86_64 >/dev/null; then ok "$(qemu-system-x86_64 --version | head -n 1)"; else bad "qemu is missing: ./lab setup"; fi
if [ -w /dev/kvm ]; then
    verdict=$(cat "${RDMA_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rdma-verbs-lab}/kvm-$(uname -r)" 2>/dev/null)
    case "$verdict" in
    ok) ok "KVM works" ;;
    broken) note "/dev/kvm exists but KVM did not boot the guest here; TCG (slower) is used" ;;
    *) note "/dev/kvm is writable; KVM is tried on the first boot" ;;
    esac
else
    note "no usable /dev/kvm: the VM runs under TCG (a few seconds more per boot)"
fi
if ldd "$(command -v busybox || echo /bin/busybox)" >/dev/null 2>&1; then bad "busybox is not static: install busybox-static"; else ok "static busybox"; fi
cache=${RDMA_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rdma-verbs-lab}
if [ -f "$cache/kernel/ready" ]; then
    ok "kernel $(cat "$cache/kernel/ready") unpacked in $cache/kernel"
elif [ -r "/boot/vmlinuz-$(uname -r)" ]; then
    ok "kernel image /boot/vmlinuz-$(uname -r)"
else
    note "no kernel unpacked yet: the first './lab vm' fetches linux-image-amd64 with apt-get download"
fi

if [ "$problems" -eq 0 ]; then
    echo "Nothing to fix."
else
    echo "$problems thing(s) to fix."
    exit 1
fi

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
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

# --- the release and the versions that matter --------------------------------

package_version() { # PACKAGE -> its Debian version without epoch and revision, or "missing"
    local version
    version=$(dpkg-query -W -f='${Version}' "$1" 2>/dev/null) || version=''
    [ -n "$version" ] || { echo missing; return; }
    version=${version#*:}
    echo "${version%%[-+~]*}"
}
major() { echo "${1%%.*}"; }

# RDMA_LAB_OS_RELEASE reads another os-release file (the tests use it).
os_release=${RDMA_LAB_OS_RELEASE:-/etc/os-release}
# shellcheck disable=SC1090
release_id=$(. "$os_release" 2>/dev/null && echo "${ID:-unknown}-${VERSION_ID:-}")
# shellcheck disable=SC1090
release_name=$(. "$os_release" 2>/dev/null && echo "${PRETTY_NAME:-unknown}")
cache=${RDMA_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rdma-verbs-lab}
vm_kernel=$(cat "$cache/kernel/ready" 2>/dev/null || echo "not fetched yet")
[ -d /sys/module/rdma_rxe ] && vm_kernel="none needed (the host has rdma_rxe)"
kernel=$(uname -r)
# The architecture: the micro-VM emulates a machine of the same one (qemu-system-x86_64 or -aarch64).
machine=$(uname -m)
case "$machine" in
x86_64) qemu_binary=qemu-system-x86_64 qemu_package=qemu-system-x86 kernel_package=linux-image-amd64 ;;
aarch64) qemu_binary=qemu-system-aarch64 qemu_package=qemu-system-arm kernel_package=linux-image-arm64 ;;
*) qemu_binary=qemu-system-$machine qemu_package=qemu-system kernel_package=linux-image ;;
esac
rdma_core=$(package_version rdma-core)
catch2=$(package_version catch2)
compiler=$( { g++ -dumpfullversion 2>/dev/null || echo missing; } | head -n 1)
qemu=$("$qemu_binary" --version 2>/dev/null | awk 'NR == 1 {print $4}')
cmake_version=$(cmake --version 2>/dev/null | awk 'NR == 1 {print $3}')
clang_format=$(clang-format --version 2>/dev/null | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -n 1)
doxygen_version=$(doxygen --version 2>/dev/null | awk '{print $1}')
echo "Release: $release_name ($release_id)"
printf '  %-13s %s\n' "architecture" "$machine ($(dpkg --print-architecture 2>/dev/null || echo "$machine"))" "kernel" "$kernel" "VM kernel" "$vm_kernel" "rdma-core" "$rdma_core" "Catch2" "$catch2" \
    "g++" "$compiler" "CMake" "${cmake_version:-missing}" "qemu" "${qemu:-missing}" \
    "clang-format" "${clang_format:-missing}" "doxygen" "${doxygen_version:-missing}"

# What CI verifies on every change: each release with its own packages (the
# host's run and ./lab test --distro). Anything else is expected to work, not proven.
verified=''
case "$release_id" in
debian-12) verified="Debian 12: g++ 12, Catch2 2, rdma-core 44, qemu 7" ;;
debian-13) verified="Debian 13: g++ 14, Catch2 3, rdma-core 56, qemu 10" ;;
esac
echo "Verified combination:"
if [ -z "$verified" ]; then
    printf '  WARN  %s is not verified: CI runs Debian 12 and Debian 13 only. Ubuntu 22.04 and 24.04\n' "$release_name"
    printf '        ship the same kinds of packages and are expected to work; ./lab test tells.\n'
else
    expected_gcc=${verified#*g++ } expected_gcc=${expected_gcc%%,*}
    expected_catch=${verified#*Catch2 } expected_catch=${expected_catch%%,*}
    expected_rdma=${verified#*rdma-core } expected_rdma=${expected_rdma%%,*}
    expected_qemu=${verified##*qemu }
    differs=()
    [ "$(major "$compiler")" = "$expected_gcc" ] || differs+=("g++ $compiler")
    [ "$(major "$catch2")" = "$expected_catch" ] || differs+=("Catch2 $catch2")
    [ "$(major "$rdma_core")" = "$expected_rdma" ] || differs+=("rdma-core $rdma_core")
    [ -z "$qemu" ] || [ "$(major "$qemu")" = "$expected_qemu" ] || differs+=("qemu $qemu")
    if [ ${#differs[@]} -eq 0 ]; then
        printf '  ok    %s, as CI tests it\n' "$verified"
    else
        printf '  WARN  not the combination CI verifies (%s): %s\n' "$verified" "${differs[*]}"
    fi
fi

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
if command -v "$qemu_binary" >/dev/null; then ok "$("$qemu_binary" --version | head -n 1)"; else bad "$qemu_binary is missing ($qemu_package): ./lab setup"; fi
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
for userland in "$cache"/userland-*; do
    [ -f "$userland/ready" ] || continue
    name=${userland##*userland-}
    release=${name%%-*} other_arch=${name#"${name%%-*}"} # other_arch: "-arm64" for another architecture's
    note "Debian $release${other_arch:+ ${other_arch#-}} userland for ./lab test --distro $release${other_arch:+ --arch ${other_arch#-}}: $userland ($(cat "$userland/kernel/ready" 2>/dev/null || echo 'kernel not unpacked yet'))"
done
if [ -f "$cache/kernel/ready" ]; then
    ok "kernel $(cat "$cache/kernel/ready") unpacked in $cache/kernel"
elif [ -r "/boot/vmlinuz-$(uname -r)" ]; then
    ok "kernel image /boot/vmlinuz-$(uname -r)"
else
    note "no kernel unpacked yet: the first './lab vm' fetches $kernel_package with apt-get download"
fi

if [ "$problems" -eq 0 ]; then
    echo "Nothing to fix."
else
    echo "$problems thing(s) to fix."
    exit 1
fi

#!/usr/bin/env bash
# Run one command inside a throwaway micro-VM that has a Soft-RoCE device.
#
#   docker/microvm.sh [--timeout SECONDS] [--] [COMMAND...]
#
# With no command it opens an interactive shell. The VM boots the Debian
# kernel (the host's own if it is installed and ships rdma_rxe, otherwise one
# unpacked into a cache folder with apt-get download + dpkg-deb, never
# installed into /boot). The host's root filesystem is the guest's root,
# read-only over virtio-9p; the repository is shared writable at the same path,
# so build trees and test reports written in the guest appear on the host.
# The VM has no network card: nothing leaves it. Exit status: the command's.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cache=${RDMA_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rdma-verbs-lab}
timeout_seconds=${RDMA_LAB_VM_TIMEOUT:-1800}
memory=${RDMA_LAB_VM_MEMORY:-2048}
cpus=${RDMA_LAB_VM_CPUS:-2}

die() {
    echo "microvm: $*" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case "$1" in
    --timeout)
        [ $# -ge 2 ] || die "--timeout needs a number of seconds"
        timeout_seconds=$2
        shift 2
        ;;
    --) shift; break ;;
    -h | --help)
        sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *) break ;;
    esac
done
[[ $timeout_seconds =~ ^[0-9]+$ ]] || die "--timeout must be a whole number of seconds, not '$timeout_seconds'"

command -v qemu-system-x86_64 >/dev/null ||
    die "qemu-system-x86_64 is missing: install qemu-system-x86 (./lab setup does it)"
[ -x /bin/busybox ] || command -v busybox >/dev/null ||
    die "busybox is missing: install busybox-static (./lab setup does it)"
busybox_path=$(command -v busybox || echo /bin/busybox)
if ldd "$busybox_path" >/dev/null 2>&1; then
    die "$busybox_path is not statically linked: install busybox-static (./lab setup does it)"
fi

# --- the kernel -------------------------------------------------------------

modules_needed=(virtio_pci 9pnet_virtio 9p dummy crc32_generic rdma_rxe rdma_ucm)

kernel_has_rxe() { # BASE VERSION
    [ -f "$1/lib/modules/$2/modules.dep" ] &&
        modprobe -d "$1" -S "$2" --show-depends rdma_rxe >/dev/null 2>&1
}

find_kernel() {
    local version
    version=$(uname -r)
    if [ -r "/boot/vmlinuz-$version" ] && kernel_has_rxe / "$version"; then
        kernel_base=/
        kernel_version=$version
        kernel_image=/boot/vmlinuz-$version
        return
    fi
    local unpacked=$cache/kernel
    if [ -f "$unpacked/ready" ]; then
        kernel_base=$unpacked
        kernel_version=$(cat "$unpacked/ready")
        kernel_image=$unpacked/boot/vmlinuz-$kernel_version
        return
    fi
    command -v apt-get >/dev/null ||
        die "no kernel with rdma_rxe here and no apt-get to fetch one: install your distribution's kernel image"
    echo "microvm: fetching the Debian kernel into $unpacked (once)" >&2
    local work
    work=$(mktemp -d)
    local package
    package=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
    [ -n "$package" ] || die "apt cannot resolve linux-image-amd64: run apt-get update"
    (cd "$work" && apt-get download "$package" >/dev/null 2>&1) ||
        die "apt-get download $package failed: check the package mirror"
    rm -rf "$unpacked.new"
    mkdir -p "$unpacked.new"
    dpkg-deb -x "$work"/*.deb "$unpacked.new"
    rm -rf "$work"
    kernel_version=$(ls "$unpacked.new/lib/modules" | head -n 1)
    depmod -b "$unpacked.new" "$kernel_version"
    echo "$kernel_version" >"$unpacked.new/ready"
    rm -rf "$unpacked"
    mv "$unpacked.new" "$unpacked"
    kernel_base=$unpacked
    kernel_image=$unpacked/boot/vmlinuz-$kernel_version
}

# --- the initramfs (busybox, the modules, /init), built once ----------------

build_initramfs() {
    local key
    key=$( (cat "$here/vm-init.sh" && echo "${modules_needed[*]}") | sha1sum | cut -c1-12)
    initramfs=$cache/initramfs-$kernel_version-$key.cpio.gz
    [ -f "$initramfs" ] && return
    echo "microvm: building $initramfs (once)" >&2
    local tree
    tree=$(mktemp -d)
    mkdir -p "$tree"/{bin,proc,sys,dev,modules,newroot}
    cp "$busybox_path" "$tree/bin/busybox"
    cp "$here/vm-init.sh" "$tree/init"
    chmod 755 "$tree/init"
    local module line path
    : >"$tree/modules.order"
    for module in "${modules_needed[@]}"; do
        while read -r line; do
            path=${line#insmod }
            path=${path%% *}
            [ -n "$path" ] || continue
            local name
            name=$(basename "$path")
            grep -qx "$name" "$tree/modules.order" && continue
            cp "$path" "$tree/modules/$name"
            echo "$name" >>"$tree/modules.order"
        done < <(modprobe -d "$kernel_base" -S "$kernel_version" --show-depends "$module" | grep '^insmod')
    done
    mkdir -p "$cache"
    (cd "$tree" && find . | cpio -o -H newc --quiet | gzip -1) >"$initramfs.tmp"
    mv "$initramfs.tmp" "$initramfs"
    rm -rf "$tree"
}

find_kernel
[ -r "$kernel_image" ] || die "kernel image $kernel_image is missing or unreadable"
build_initramfs

# --- one run ----------------------------------------------------------------

run_dir=$(mktemp -d "${TMPDIR:-/tmp}/rdma-lab-vm.XXXXXX")
qemu_pid=
cleanup() {
    if [ -n "$qemu_pid" ]; then kill "$qemu_pid" 2>/dev/null; fi
    rm -rf "$run_dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "$repo" >"$run_dir/repo"
pwd >"$run_dir/cwd"
interactive=0
if [ $# -eq 0 ]; then
    interactive=1
    echo 'exec bash -i' >"$run_dir/command"
else
    printf '%q ' "$@" >"$run_dir/command"
fi
# Carry the variables a run depends on into the guest.
env | grep -E '^(CI|RDMA_LAB_[A-Z_]*|CTEST_[A-Z_]*|TERM)=' | sed 's/^/export /; s/=\(.*\)$/=\x27\1\x27/' >"$run_dir/env" || true

# KVM when it works. Some hosts (nested virtualisation) open /dev/kvm but
# never run the guest, so a KVM boot that shows no sign of life within
# kvm_grace seconds is abandoned for TCG, and the verdict is cached.
kvm_verdict=$cache/kvm-$(uname -r)
kvm_grace=${RDMA_LAB_KVM_GRACE:-20}
accel=tcg
if [ -w /dev/kvm ] && [ "${RDMA_LAB_VM_ACCEL:-}" != tcg ] && [ "$(cat "$kvm_verdict" 2>/dev/null)" != broken ]; then
    accel=kvm
fi

console_args=(-serial stdio)
[ "$interactive" = 1 ] || console_args=(-chardev stdio,id=console,signal=off -serial chardev:console)

qemu_args() { # ACCEL
    local cpu=max
    [ "$1" = kvm ] && cpu=host
    printf '%s\0' qemu-system-x86_64 -machine q35,accel="$1" -cpu "${RDMA_LAB_VM_CPU:-$cpu}" \
        -smp "$cpus" -m "$memory" -bios qboot.rom -nographic -no-reboot -nic none -monitor none \
        "${console_args[@]}" -kernel "$kernel_image" -initrd "$initramfs" \
        -append "console=ttyS0 quiet loglevel=1 panic=-1 rdinit=/init" \
        -fsdev "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap" \
        -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
        -fsdev "local,id=labrepo,path=$repo,security_model=none" \
        -device virtio-9p-pci,fsdev=labrepo,mount_tag=labrepo \
        -fsdev "local,id=labrun,path=$run_dir,security_model=none" \
        -device virtio-9p-pci,fsdev=labrun,mount_tag=labrun
}

boot() { # ACCEL; returns 99 when KVM showed no sign of life
    local -a qemu_command
    mapfile -d '' qemu_command < <(qemu_args "$1")
    if [ "$interactive" = 1 ]; then
        "${qemu_command[@]}"
        return 0
    fi
    "${qemu_command[@]}" </dev/null 2> >(grep -v 'warning: host doesn' >&2) &
    qemu_pid=$!
    local deadline=$((SECONDS + timeout_seconds)) grace=$((SECONDS + kvm_grace))
    while kill -0 "$qemu_pid" 2>/dev/null; do
        if [ "$1" = kvm ] && [ ! -f "$run_dir/booted" ] && [ $SECONDS -ge $grace ]; then
            kill "$qemu_pid" 2>/dev/null
            wait "$qemu_pid" 2>/dev/null
            qemu_pid=
            return 99
        fi
        if [ $SECONDS -ge $deadline ]; then
            echo "microvm: the command did not finish within ${timeout_seconds}s; stopping the VM" >&2
            kill "$qemu_pid" 2>/dev/null
            wait "$qemu_pid" 2>/dev/null
            exit 124
        fi
        sleep 0.2
    done
    wait "$qemu_pid" || true
    qemu_pid=
    if [ "$1" = kvm ] && [ ! -f "$run_dir/booted" ]; then
        return 99
    fi
    [ "$1" = kvm ] && echo ok >"$kvm_verdict"
    return 0
}

if [ "$accel" = kvm ] && [ "$interactive" = 1 ] && [ "$(cat "$kvm_verdict" 2>/dev/null)" != ok ]; then
    accel=tcg # an interactive shell cannot be retried, so only a KVM known to work is used
fi
if [ "$accel" = kvm ]; then
    if ! boot kvm; then
        echo "microvm: KVM did not start the guest within ${kvm_grace}s; using TCG from now on" >&2
        echo broken >"$kvm_verdict"
        accel=tcg
        rm -f "$run_dir/booted" "$run_dir/status"
    fi
fi
[ "$accel" = tcg ] && boot tcg

if [ ! -f "$run_dir/status" ]; then
    echo "microvm: the VM stopped before the command finished (see the console output above)" >&2
    exit 125
fi
exit "$(cat "$run_dir/status")"

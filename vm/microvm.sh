#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run one command inside a throwaway micro-VM that has a Soft-RoCE device.
#
#   vm/microvm.sh [--timeout SECONDS] [--userland DIR] [WIRE OPTIONS] [--] [COMMAND...]
#
# With no command it opens an interactive shell. The VM boots the Debian
# kernel (the host's own if it is installed and ships rdma_rxe, otherwise one
# unpacked into a cache folder with apt-get download + dpkg-deb, never
# installed into /boot). The host's root filesystem is the guest's root,
# read-only over virtio-9p; the repository is shared writable at the same path,
# so build trees and test reports written in the guest appear on the host.
# --userland DIR boots another release instead (vm/userland.sh makes DIR): its
# kernel (DIR/linux-image.deb, unpacked once) with DIR/root as the guest's root,
# on DIR's architecture (DIR/arch: amd64 or arm64; qemu emulates it when it is
# not the host's).
# Without wire options the VM has no network card: nothing leaves it.
# Exit status: the command's. RDMA_LAB_VM_APPEND adds kernel parameters.
# Nothing waits silently: a VM whose guest has not started within
# RDMA_LAB_VM_BOOT seconds (default 120) is stopped and booted once more, and
# one that has not powered off 15 s after its command ended is stopped; each
# says so in one line. (RDMA_LAB_VM_FAULT=hang-boot|hang-poweroff makes the
# guest hang there on purpose: the tests use it.)
#
# Wire options (vm/two-hosts.sh uses them to join two VMs): the VM gets a
# virtio network card whose frames travel as UDP datagrams over the host's
# loopback, and its rxe0 sits on that card instead of on a dummy netdev.
#   --wire LOCAL_PORT:PEER_PORT   UDP ports on 127.0.0.1: this VM's end, the peer's
#   --address IP                  this VM's IPv4 address on the wire (a /24)
#   --peer IP                     the other VM's address: wait until it answers
#   --capture FILE                record every frame on the wire to FILE (pcap)
#   --netem SPEC                  this VM's card loses, delays or reorders what it sends,
#                                 as tc-netem(8) SPEC says (e.g. "loss 2%"), once both VMs are up
#   --mtu BYTES                   this VM's card's MTU (default 1500; rxe's active_mtu follows it)
#
# Lab machine mode (vm/machine.sh uses it; students use ./lab up):
#   --machine DIR --ssh-port PORT  boot in the background and return once qemu runs; DIR/run is the
#                                 guest's /run/lab, DIR/qemu.pid names qemu, DIR/console.log gets the
#                                 console. The guest's SSH server is reached only through 127.0.0.1:PORT
#                                 (qemu user-mode networking with restrict=on: the guest has no route out)
set -euo pipefail
# depmod and modprobe live in /usr/sbin, which a normal user's PATH often lacks.
export PATH=$PATH:/usr/sbin:/sbin

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cache=${RDMA_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rdma-verbs-lab}
timeout_seconds=${RDMA_LAB_VM_TIMEOUT:-1800}
memory=${RDMA_LAB_VM_MEMORY:-2048}
cpus=${RDMA_LAB_VM_CPUS:-2}
wire='' wire_address='' wire_peer='' capture_file='' netem='' wire_mtu='' prepare=0 userland='' machine='' ssh_port=''

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
    --wire | --address | --peer | --capture | --netem | --mtu)
        [ $# -ge 2 ] || die "$1 needs a value"
        case "$1" in
        --wire) wire=$2 ;;
        --address) wire_address=$2 ;;
        --peer) wire_peer=$2 ;;
        --capture) capture_file=$2 ;;
        --netem) netem=$2 ;;
        --mtu) wire_mtu=$2 ;;
        esac
        shift 2
        ;;
    --machine | --ssh-port)
        [ $# -ge 2 ] || die "$1 needs a value"
        if [ "$1" = --machine ]; then machine=$2; else ssh_port=$2; fi
        shift 2
        ;;
    --userland)
        [ $# -ge 2 ] || die "--userland needs a folder made by vm/userland.sh"
        userland=$(cd "$2" 2>/dev/null && pwd) || die "no userland folder $2"
        if [ ! -d "$userland/root" ] || [ ! -f "$userland/linux-image.deb" ]; then
            die "$2 is not a userland made by vm/userland.sh (root/ or linux-image.deb is missing)"
        fi
        shift 2
        ;;
    --prepare) # fetch the kernel, build the initramfs images, boot nothing (image builds use it)
        prepare=1
        shift
        ;;
    --) shift; break ;;
    -h | --help)
        awk 'NR > 1 && !/^#/ {exit} NR > 1 && !/SPDX-License-Identifier:/ {sub(/^# ?/, ""); print}' "$0"
        exit 0
        ;;
    *) break ;;
    esac
done
[[ $timeout_seconds =~ ^[0-9]+$ ]] || die "--timeout must be a whole number of seconds, not '$timeout_seconds'"
ipv4='^([0-9]{1,3}\.){3}[0-9]{1,3}$'
if [ -n "$wire" ]; then
    [[ $wire =~ ^[0-9]+:[0-9]+$ ]] || die "--wire must be LOCAL_PORT:PEER_PORT, not '$wire'"
    [[ $wire_address =~ $ipv4 ]] || die "--wire needs --address IP (this VM's IPv4 address on the wire)"
    [ -z "$wire_peer" ] || [[ $wire_peer =~ $ipv4 ]] || die "--peer must be an IPv4 address, not '$wire_peer'"
    if [ -n "$wire_mtu" ] && { ! [[ $wire_mtu =~ ^[0-9]{3,4}$ ]] || [ "$wire_mtu" -lt 576 ] || [ "$wire_mtu" -gt 9000 ]; }; then
        die "--mtu must be a number of bytes from 576 to 9000, not '$wire_mtu'"
    fi
elif [ -n "$wire_address$wire_peer$capture_file$netem$wire_mtu" ]; then
    die "--address, --peer, --capture, --netem and --mtu only make sense with --wire"
fi
if [ -n "$machine" ]; then
    [ -d "$machine" ] || die "--machine needs an existing folder, not '$machine'"
    [[ $ssh_port =~ ^[0-9]+$ ]] || die "--machine needs --ssh-port PORT"
    if [ -n "$wire" ] || [ $# -gt 0 ]; then die "--machine takes no command and no wire"; fi
fi

case "${RDMA_LAB_VM_FAULT:-}" in
"" | hang-boot | hang-poweroff) ;;
*) die "RDMA_LAB_VM_FAULT must be hang-boot or hang-poweroff, not '$RDMA_LAB_VM_FAULT'" ;;
esac
boot_seconds=${RDMA_LAB_VM_BOOT:-120}
[[ $boot_seconds =~ ^[0-9]+$ ]] || die "RDMA_LAB_VM_BOOT must be a whole number of seconds, not '$boot_seconds'"

# --- the architecture ----------------------------------------------------------
# Everything that differs between the guest architectures is set here: the
# guest's is the host's, or the userland's (DIR/arch) when it has another.
debian_arch() { # uname -m's name -> Debian's name for the architecture
    case "$1" in
    x86_64) echo amd64 ;;
    aarch64 | arm64) echo arm64 ;;
    *) echo "$1" ;;
    esac
}
# (bash's HOSTTYPE is uname -m's answer, without running a program)
host_arch=$(debian_arch "${HOSTTYPE:-$(uname -m)}")
guest_arch=$host_arch
if [ -n "$userland" ] && [ -f "$userland/arch" ]; then
    guest_arch=$(cat "$userland/arch")
fi
# Sets qemu_binary, qemu_package, qemu_machine, qemu_firmware (arguments),
# console, early_console (the kernel's console before its driver starts),
# kernel_package, tcg_cpu and tcg_append for the guest's architecture.
arch_settings() { # ARCH
    case "$1" in
    amd64)
        qemu_binary=qemu-system-x86_64 qemu_package=qemu-system-x86
        qemu_machine=q35 qemu_firmware=(-bios qboot.rom) console=ttyS0 early_console=earlyprintk=ttyS0
        kernel_package=linux-image-amd64 tcg_cpu=max
        # Under TCG the guest kernel finds the vCPUs' TSCs "unsynchronized" and
        # falls back to the HPET, whose every read traps into qemu: a clock_gettime
        # then costs microseconds, which skews every latency the lessons measure
        # (perftest reads the TSC directly). qemu derives all vCPUs' TSCs from one
        # clock, so they are in step: tell the kernel to trust them.
        tcg_append=" tsc=reliable clocksource=tsc"
        ;;
    arm64)
        # The virt board boots a Linux Image given with -kernel directly: no
        # firmware. Its PL011 UART is ttyAMA0. gic-version=max: GICv3 under TCG,
        # the host's under KVM. Under TCG, -cpu max with the architected pointer
        # authentication (QARMA) costs much emulation time: pauth-impdef=on keeps
        # the feature with qemu's cheap algorithm.
        qemu_binary=qemu-system-aarch64 qemu_package=qemu-system-arm
        qemu_machine=virt,gic-version=max qemu_firmware=() console=ttyAMA0 early_console=earlycon
        kernel_package=linux-image-arm64 tcg_cpu=max,pauth-impdef=on tcg_append=""
        ;;
    *) die "the micro-VM runs amd64 and arm64 guests, not $1" ;;
    esac
}
arch_settings "$guest_arch"

command -v "$qemu_binary" >/dev/null ||
    die "$qemu_binary is missing: install $qemu_package (./lab setup does it)"
[ -x /bin/busybox ] || command -v busybox >/dev/null ||
    die "busybox is missing: install busybox-static (./lab setup does it)"
busybox_path=$(command -v busybox || echo /bin/busybox)
# The initramfs runs on the guest's CPU: another architecture's busybox comes from its userland.
if [ "$guest_arch" != "$host_arch" ]; then
    busybox_path=$userland/root/bin/busybox
    [ -x "$busybox_path" ] || die "the $guest_arch userland $userland has no busybox: install busybox-static in it"
fi
if ldd "$busybox_path" >/dev/null 2>&1; then
    die "$busybox_path is not statically linked: install busybox-static (./lab setup does it)"
fi

# --- the kernel -------------------------------------------------------------

modules_needed=(virtio_pci 9pnet_virtio 9p dummy crc32_generic rdma_rxe rdma_ucm)
# Only a VM on a wire has a network card (and its own initramfs); a lab machine
# has one for its SSH server.
[ -z "$wire" ] || modules_needed+=(virtio_net sch_netem)
[ -z "$machine" ] || modules_needed+=(virtio_net)

# Debian 12's kernel package keeps its modules in lib/modules, Debian 13's in
# usr/lib/modules; either is found.
modules_root() { # BASE -> BASE/lib/modules or BASE/usr/lib/modules
    if [ -d "$1/lib/modules" ]; then echo "$1/lib/modules"; else echo "$1/usr/lib/modules"; fi
}

kernel_has_rxe() { # BASE VERSION
    [ -f "$(modules_root "$1")/$2/modules.dep" ] &&
        modprobe -d "$1" -S "$2" --show-depends rdma_rxe >/dev/null 2>&1
}

# Unpack a kernel package into DEST (never installed): the image, the modules,
# and their dependency list. modprobe -d and depmod -b look in DEST/lib/modules,
# so a package with usr/lib/modules gets a lib -> usr/lib link.
unpack_kernel() { # DEB DEST
    local deb=$1 dest=$2 modules
    rm -rf "$dest.new"
    mkdir -p "$dest.new"
    dpkg-deb -x "$deb" "$dest.new" || die "cannot unpack $deb"
    modules=$(modules_root "$dest.new")
    [ -d "$modules" ] || die "$deb has no lib/modules or usr/lib/modules folder"
    [ -e "$dest.new/lib" ] || ln -s usr/lib "$dest.new/lib"
    kernel_version=$(find "$modules" -mindepth 1 -maxdepth 1 -printf '%f\n' | head -n 1)
    depmod -b "$dest.new" "$kernel_version"
    echo "$kernel_version" >"$dest.new/ready"
    rm -rf "$dest"
    mv "$dest.new" "$dest"
    kernel_base=$dest
    kernel_image=$dest/boot/vmlinuz-$kernel_version
}

find_kernel() {
    local unpacked
    if [ -n "$userland" ]; then
        unpacked=$userland/kernel
        if [ ! -f "$unpacked/ready" ] || [ "$userland/linux-image.deb" -nt "$unpacked/ready" ]; then
            echo "microvm: unpacking the kernel of $userland" >&2
            unpack_kernel "$userland/linux-image.deb" "$unpacked"
            return
        fi
    else
        local version
        version=$(uname -r)
        if [ -r "/boot/vmlinuz-$version" ] && kernel_has_rxe / "$version"; then
            kernel_base=/
            kernel_version=$version
            kernel_image=/boot/vmlinuz-$version
            return
        fi
        unpacked=$cache/kernel
    fi
    if [ -f "$unpacked/ready" ]; then
        kernel_base=$unpacked
        kernel_version=$(cat "$unpacked/ready")
        kernel_image=$unpacked/boot/vmlinuz-$kernel_version
        return
    fi
    command -v apt-get >/dev/null ||
        die "no kernel with rdma_rxe here and no apt-get to fetch one: install your distribution's kernel image"
    local package
    package=$(apt-cache depends "$kernel_package" 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
    [ -n "$package" ] || die "apt cannot resolve $kernel_package: run apt-get update"
    echo "microvm: fetching the Debian kernel $package into $unpacked (once)" >&2
    local work download
    work=$(mktemp -d)
    (cd "$work" && apt-get download "$package" >/dev/null 2>&1) &
    download=$!
    while kill -0 "$download" 2>/dev/null; do # a download of about 70 MiB: say how far it is
        sleep 5
        kill -0 "$download" 2>/dev/null && echo "microvm: kernel package: $(du -sm "$work" | cut -f1) MiB so far" >&2
    done
    wait "$download" || die "apt-get download $package failed: check the package mirror"
    unpack_kernel "$work"/*.deb "$unpacked"
    rm -rf "$work"
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
    local module line path decompress
    : >"$tree/modules.order"
    for module in "${modules_needed[@]}"; do
        while read -r line; do
            path=${line#insmod }
            path=${path%% *}
            [ -n "$path" ] || continue
            local name
            name=$(basename "$path")
            # busybox's insmod takes plain modules: unpack compressed ones.
            case "$name" in
            *.ko.xz) decompress=(xz -dc) ;;
            *.ko.zst) decompress=(zstd -dcq) ;;
            *.ko.gz) decompress=(gzip -dc) ;;
            *) decompress=(cat) ;;
            esac
            name=${name%.ko*}.ko
            grep -qx "$name" "$tree/modules.order" && continue
            "${decompress[@]}" "$path" >"$tree/modules/$name" || die "cannot unpack the module $path"
            echo "$name" >>"$tree/modules.order"
        done < <(modprobe -d "$kernel_base" -S "$kernel_version" --show-depends "$module" | grep '^insmod')
    done
    mkdir -p "$cache"
    (cd "$tree" && find . | cpio -o -H newc --quiet | gzip -1) >"$initramfs.$$.tmp"
    mv "$initramfs.$$.tmp" "$initramfs" # two VMs starting at once may both build it
    rm -rf "$tree"
}

find_kernel
[ -r "$kernel_image" ] || die "kernel image $kernel_image is missing or unreadable"
build_initramfs
if [ "$prepare" = 1 ]; then
    [ -n "$wire" ] || { modules_needed+=(virtio_net sch_netem) && build_initramfs; }
    echo "microvm: kernel $kernel_version and its initramfs images are ready in $cache"
    exit 0
fi

# --- one run ----------------------------------------------------------------

guest_root=/
if [ -n "$userland" ]; then
    guest_root=$userland/root
    # The repository's mount point must exist in the (read-only) guest root.
    [ -d "$guest_root$repo" ] || mkdir -p "$guest_root$repo" ||
        die "cannot make the mount point $guest_root$repo"
fi
qemu_pid=
if [ -n "$machine" ]; then
    # A lab machine keeps its run folder in its state folder (vm/machine.sh
    # fills it with the keys first): it outlives this script.
    run_dir=$machine/run
    mkdir -p "$run_dir"
else
    run_dir=$(mktemp -d "${TMPDIR:-/tmp}/rdma-lab-vm.XXXXXX")
    # shellcheck disable=SC2317 # called by the trap
    cleanup() {
        if [ -n "$qemu_pid" ]; then kill "$qemu_pid" 2>/dev/null; fi
        rm -rf "$run_dir"
    }
    trap cleanup EXIT
    trap 'exit 130' INT TERM
fi

echo "$repo" >"$run_dir/repo"
pwd >"$run_dir/cwd"
interactive=0
if [ -n "$machine" ]; then
    : >"$run_dir/machine" # vm-guest.sh serves SSH sessions instead of running one command
elif [ $# -eq 0 ]; then
    interactive=1
    echo 'exec bash -i' >"$run_dir/command"
else
    printf '%q ' "$@" >"$run_dir/command"
fi
[ -z "$wire" ] || echo "$wire_address ${wire_peer:--} ${wire_mtu:-1500} $netem" >"$run_dir/wire"
[ -z "${RDMA_LAB_VM_FAULT:-}" ] || echo "$RDMA_LAB_VM_FAULT" >"$run_dir/fault"
# Carry the variables a run depends on into the guest (BENCH_*: ./lab bench's
# settings, such as BENCH_REPS).
env | grep -E '^(CI|RDMA_LAB_[A-Z_]*|CTEST_[A-Z_]*|BENCH_[A-Z0-9_]*|TERM)=' | sed 's/^/export /; s/=\(.*\)$/=\x27\1\x27/' >"$run_dir/env" || true

# KVM when it works. Some hosts (nested virtualisation, some clouds) have a
# /dev/kvm that cannot run a guest: qemu aborts, or the guest never starts.
# A first boot with KVM is preceded by a probe that waits at most kvm_grace
# seconds for the kernel's first console line (under KVM it comes within a
# fraction of a second); the verdict is cached per host kernel.
kvm_verdict=$cache/kvm-$(uname -r)
kvm_grace=${RDMA_LAB_KVM_GRACE:-3}

probe_kvm() { # prints ok or broken
    local out pid deadline=$((SECONDS + kvm_grace)) verdict=broken
    out=$(mktemp)
    "$qemu_binary" -machine "$qemu_machine,accel=kvm" -cpu host -m 256 "${qemu_firmware[@]}" -display none -no-reboot \
        -nic none -monitor none -serial "file:$out" -kernel "$kernel_image" \
        -append "console=$console $early_console loglevel=8 panic=-1" >/dev/null 2>&1 &
    pid=$!
    while [ $SECONDS -le "$deadline" ]; do
        if [ -s "$out" ]; then
            verdict=ok
            break
        fi
        if [ ! -d "/proc/$pid" ] || [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = Z ]; then break; fi
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    rm -f "$out"
    echo "$verdict"
}

accel=tcg
# (KVM runs only a guest of the host's own architecture.)
if [ "$guest_arch" = "$host_arch" ] && [ -w /dev/kvm ] && [ "${RDMA_LAB_VM_ACCEL:-}" != tcg ]; then
    verdict=$(cat "$kvm_verdict" 2>/dev/null || true)
    if [ -z "$verdict" ]; then
        verdict=$(probe_kvm)
        mkdir -p "$cache"
        echo "$verdict" >"$kvm_verdict"
        [ "$verdict" = ok ] || echo "microvm: /dev/kvm cannot start a guest on this host; using TCG (checked in ${kvm_grace}s, remembered)" >&2
    fi
    [ "$verdict" != ok ] || accel=kvm
fi

console_args=(-serial stdio)
[ "$interactive" = 1 ] || console_args=(-chardev "stdio,id=console,signal=off" -serial chardev:console)
[ -z "$machine" ] || console_args=(-display none -serial "file:$machine/console.log")

network_args=(-nic none)
if [ -n "$wire" ]; then
    # One MAC per address, so that two VMs on a wire never share one.
    IFS=. read -r _ _ octet3 octet4 <<<"$wire_address"
    network_args=(-netdev "socket,id=wire,udp=127.0.0.1:${wire#*:},localaddr=127.0.0.1:${wire%%:*}"
        -device "virtio-net-pci,netdev=wire,mac=$(printf '52:54:00:4d:%02x:%02x' "$octet3" "$octet4")")
    if [ -n "$capture_file" ]; then
        : >"$capture_file" || die "cannot write the capture file $capture_file"
        network_args+=(-object "filter-dump,id=dump,netdev=wire,file=$capture_file")
    fi
elif [ -n "$machine" ]; then
    # The control card: user-mode networking with restrict=on (the guest
    # reaches nothing, not even the host) and one forward, from 127.0.0.1:PORT
    # on the host to the guest's SSH server.
    network_args=(-netdev "user,id=control,restrict=on,net=10.0.2.0/24,hostfwd=tcp:127.0.0.1:$ssh_port-10.0.2.15:22"
        -device "virtio-net-pci,netdev=control,mac=52:54:00:4c:00:01")
fi

qemu_args() { # ACCEL
    local cpu=$tcg_cpu clock=$tcg_append
    [ "$1" = kvm ] && cpu=host clock=""
    printf '%s\0' "$qemu_binary" -machine "$qemu_machine,accel=$1" -cpu "${RDMA_LAB_VM_CPU:-$cpu}" \
        -smp "$cpus" -m "$memory" "${qemu_firmware[@]}" -nographic -no-reboot "${network_args[@]}" -monitor none \
        "${console_args[@]}" -kernel "$kernel_image" -initrd "$initramfs" \
        -append "console=$console quiet loglevel=1 panic=-1 rdinit=/init$clock${RDMA_LAB_VM_APPEND:+ $RDMA_LAB_VM_APPEND}" \
        -fsdev "local,id=hostroot,path=$guest_root,security_model=none,readonly=on,multidevs=remap" \
        -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
        -fsdev "local,id=labrepo,path=$repo,security_model=none" \
        -device virtio-9p-pci,fsdev=labrepo,mount_tag=labrepo \
        -fsdev "local,id=labrun,path=$run_dir,security_model=none" \
        -device virtio-9p-pci,fsdev=labrun,mount_tag=labrun
}

if [ -n "$machine" ]; then
    # qemu daemonizes once its devices are set up (a port already taken fails
    # here, before it detaches) and leaves its pid in DIR/qemu.pid.
    mapfile -d '' qemu_command < <(qemu_args "$accel")
    # -nographic would claim stdio, which a daemon has not: drop it.
    for i in "${!qemu_command[@]}"; do [ "${qemu_command[$i]}" != -nographic ] || unset 'qemu_command[i]'; done
    : >"$machine/console.log"
    echo "microvm: booting Linux $kernel_version ($accel) as the lab machine${userland:+, root ${userland#"$cache"/}}" >&2
    rm -f "$machine/qemu.pid"
    # Nothing of this script's stdio may stay open in qemu: whoever reads our
    # output (a pipe, a test) would wait for qemu to end.
    if ! "${qemu_command[@]}" -daemonize -pidfile "$machine/qemu.pid" </dev/null >/dev/null 2>"$machine/qemu.log"; then
        grep -v 'warning: host doesn' "$machine/qemu.log" >&2
        die "qemu did not start (see above)"
    fi
    exit 0
fi

boot() { # ACCEL; returns 99 when KVM showed no sign of life, 98 when the guest did not start in time
    local -a qemu_command
    mapfile -d '' qemu_command < <(qemu_args "$1")
    # Under TCG the boot takes 5-10 s before the guest's first line: say so.
    local emulated=''
    [ "$guest_arch" = "$host_arch" ] || emulated=", an emulated $guest_arch machine"
    echo "microvm: booting Linux $kernel_version ($1$emulated)${userland:+, root ${userland#"$cache"/}}" >&2
    if [ "$interactive" = 1 ]; then
        "${qemu_command[@]}"
        return 0
    fi
    "${qemu_command[@]}" </dev/null 2> >(grep -v 'warning: host doesn' >&2) &
    qemu_pid=$!
    local deadline=$((SECONDS + timeout_seconds)) boot_deadline=$((SECONDS + boot_seconds)) poweroff_deadline=''
    # (kill -0 succeeds on a child that has exited but is not yet reaped: look at its state)
    while [ -d "/proc/$qemu_pid" ] && [ "$(awk '{print $3}' "/proc/$qemu_pid/stat" 2>/dev/null)" != Z ]; do
        if [ ! -f "$run_dir/booted" ] && [ $SECONDS -ge $boot_deadline ]; then
            stop_qemu
            return 98
        fi
        if [ -f "$run_dir/status" ]; then
            [ -n "$poweroff_deadline" ] || poweroff_deadline=$((SECONDS + 15))
            if [ $SECONDS -ge "$poweroff_deadline" ]; then
                echo "microvm: the VM did not power off within 15s after its command ended; stopped it" >&2
                stop_qemu
                return 0
            fi
        fi
        if [ $SECONDS -ge $deadline ]; then
            echo "microvm: the command did not finish within ${timeout_seconds}s; stopping the VM" >&2
            stop_qemu
            exit 124
        fi
        sleep 0.1
    done
    wait "$qemu_pid" || true
    qemu_pid=
    if [ "$1" = kvm ] && [ ! -f "$run_dir/booted" ]; then
        return 99
    fi
    return 0
}

stop_qemu() {
    kill "$qemu_pid" 2>/dev/null
    wait "$qemu_pid" 2>/dev/null
    qemu_pid=
}

boot_with_retry() { # ACCEL: a guest that does not start in time gets one more boot
    local status=0
    boot "$1" || status=$?
    [ "$status" = 98 ] || return "$status"
    echo "microvm: the VM did not start within ${boot_seconds}s; stopping it and booting once more" >&2
    rm -f "$run_dir/booted" "$run_dir/status"
    status=0
    boot "$1" || status=$?
    if [ "$status" = 98 ]; then
        echo "microvm: the VM did not start within ${boot_seconds}s twice; giving up" >&2
        exit 125
    fi
    return "$status"
}

if [ "$accel" = kvm ]; then
    if ! boot_with_retry kvm; then
        # The probe passed, yet this boot did not reach the guest: remember it and use TCG.
        echo "microvm: KVM did not start the guest; using TCG from now on" >&2
        echo broken >"$kvm_verdict"
        accel=tcg
        rm -f "$run_dir/booted" "$run_dir/status"
    fi
fi
[ "$accel" = tcg ] && boot_with_retry tcg

if [ ! -f "$run_dir/status" ]; then
    echo "microvm: the VM stopped before the command finished (see the console output above)" >&2
    exit 125
fi
exit "$(cat "$run_dir/status")"

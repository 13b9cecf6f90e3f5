#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A fresh Debian userland for ./lab test --distro: a root filesystem of one
# release (bookworm = Debian 12, trixie = Debian 13) made with debootstrap from
# Debian's mirror, the course's packages installed in it by
# setup/install-deps.sh, and that release's kernel package downloaded beside
# it for the micro-VM. Made once and kept in the cache folder; later runs only
# install what the package list gained.
#
#   vm/userland.sh [--arch ARCH] DISTRO                  make or refresh it; print its folder
#   vm/userland.sh [--arch ARCH] DISTRO -- COMMAND...    run COMMAND in it (chroot), in the current folder
#   vm/userland.sh [--arch ARCH] DISTRO --path           print its folder, make nothing
#
# --arch arm64 (or amd64) makes a userland of that architecture, in its own
# folder (userland-DISTRO-arm64), for the micro-VM to boot on an emulated
# machine of its architecture. Its root is only unpacked, never installed:
# mmdebstrap --variant=extract unpacks what testing the course needs
# (setup/install-deps.sh --tests-only: no compiler, since ./lab cross-compiles
# for it) with everything that depends on, so no program of the other
# architecture and no maintainer script runs; this script then does the
# little those scripts would have done that the tests need. It is made again
# whenever that package list changes. COMMAND runs in it through
# qemu-user-static and binfmt_misc (registered here when missing).
#
# LAB_SYSROOT=DIR: DIR (another userland's root, the sysroot of ./lab's cross
# build for a release other than this machine's) is mounted at the same path
# inside, for a COMMAND such as "env LAB_SYSROOT=DIR ... cmake ...".
#
# The folder holds root/ (the root filesystem; the micro-VM boots it with
# microvm.sh --userland) and linux-image.deb. The repository is mounted at the
# same path inside, so a build tree made in the chroot runs in the VM. Needs
# root (debootstrap or mmdebstrap, chroot, mounts): run as root or with sudo.
# DEBIAN_MIRROR overrides the mirror (default: the one apt uses on this machine).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cache=${RDMA_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rdma-verbs-lab}
# shellcheck source=setup/progress.sh
. "$repo/setup/progress.sh"

die() {
    echo "userland: $*" >&2
    exit 2
}

machine_arch=$(dpkg --print-architecture 2>/dev/null || uname -m)
case "$machine_arch" in x86_64) machine_arch=amd64 ;; aarch64) machine_arch=arm64 ;; esac
arch=$machine_arch
if [ "${1:-}" = --arch ]; then
    arch=${2:-}
    shift 2 || true
fi
case "$arch" in
amd64 | arm64) ;;
*) die "the architectures are amd64 and arm64, not '$arch'" ;;
esac
[ $# -ge 1 ] || die "usage: vm/userland.sh [--arch amd64|arm64] bookworm|trixie [-- COMMAND... | --path]"
distro=$1
shift
case "$distro" in
bookworm | trixie) ;;
*) die "the releases are bookworm (Debian 12) and trixie (Debian 13), not '$distro'" ;;
esac
folder=$cache/userland-$distro
# The machine's own architecture keeps the folder it always had.
[ "$arch" = "$machine_arch" ] || folder=$folder-$arch
root=$folder/root
if [ "${1:-}" = --path ]; then
    echo "$folder"
    exit 0
fi
[ "$(id -u)" = 0 ] || die "making and entering a userland needs root (debootstrap, chroot): sudo ./lab ..."
unpacked=0 # another architecture: a root unpacked by mmdebstrap
[ "$arch" = "$machine_arch" ] || unpacked=1
tools=(unshare chroot debootstrap)
[ "$unpacked" = 0 ] || tools=(unshare chroot mmdebstrap)
for tool in "${tools[@]}"; do
    command -v "$tool" >/dev/null || die "$tool is missing: setup/install-deps.sh --arch $arch installs it"
done

# Run a command inside the userland: its own /proc, /dev, /sys and /tmp, the
# repository at the same path, in a mount namespace of its own (so that every
# mount goes away with the command, whatever happens).
in_root() { # COMMAND...
    cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
    # The host's trusted CAs too, which node (npm) reads besides its own: a
    # network that lets HTTPS through only with the host's trust (a proxy with
    # a CA of its own) must not fail the userland's npm ci.
    mkdir -p "$root/etc/ssl/certs"
    cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/lab-host-ca-certificates.crt" 2>/dev/null || true
    local workdir
    workdir=$(pwd)
    case "$workdir" in "$repo" | "$repo"/*) ;; *) workdir=$repo ;; esac
    # shellcheck disable=SC2016 # expanded by the inner shell
    unshare --mount --propagation private -- sh -c '
        root=$1 repo=$2 workdir=$3 sysroot=$4
        shift 4
        mount -t proc proc "$root/proc" &&
            mount --rbind /dev "$root/dev" &&
            mount --rbind /sys "$root/sys" &&
            mount -t tmpfs -o mode=1777 tmpfs "$root/tmp" &&
            mkdir -p "$root$repo" && # (after /tmp: a repository may live under it)
            mount --bind "$repo" "$root$repo" || exit 3
        if [ -n "$sysroot" ]; then
            mkdir -p "$root$sysroot" && mount --bind "$sysroot" "$root$sysroot" || exit 3
        fi
        exec chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
            HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" CI="${CI:-}" \
            NODE_EXTRA_CA_CERTS=/etc/ssl/certs/lab-host-ca-certificates.crt \
            sh -c "cd \"\$0\" && exec \"\$@\"" "$workdir" "$@"
    ' sh "$root" "$repo" "$workdir" "${LAB_SYSROOT:-}" "$@"
}

# A userland of another architecture runs its programs through qemu-user:
# binfmt_misc hands every arm64 (or amd64) executable to qemu's static
# interpreter. The F flag of Debian's registration opens the interpreter at
# once, so that it works inside the chroot too.
qemu_name() { case "$1" in arm64) echo aarch64 ;; amd64) echo x86_64 ;; esac; }
ensure_binfmt() {
    [ "$arch" != "$machine_arch" ] || return 0
    local name entry
    name=qemu-$(qemu_name "$arch")
    entry=/proc/sys/fs/binfmt_misc/$name
    if [ -f "$entry" ] && head -n 1 "$entry" | grep -qx enabled; then
        return 0
    fi
    [ -f "/usr/lib/binfmt.d/$name.conf" ] ||
        die "$arch programs cannot run here: install qemu-user-static (setup/install-deps.sh --arch $arch)"
    if [ ! -f /proc/sys/fs/binfmt_misc/register ]; then
        mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc ||
            die "cannot mount binfmt_misc, which running $arch programs needs"
    fi
    [ -f "$entry" ] || grep -v '^#' "/usr/lib/binfmt.d/$name.conf" >/proc/sys/fs/binfmt_misc/register ||
        die "cannot register qemu-user-static for $arch programs with binfmt_misc"
    echo 1 >"$entry"
}
ensure_binfmt

if [ "${1:-}" = -- ]; then
    shift
    [ -f "$folder/ready" ] || die "no $distro $arch userland yet: vm/userland.sh --arch $arch $distro makes it"
    in_root "$@"
    exit $?
fi
[ $# -eq 0 ] || die "unknown argument '$1' (see the top of vm/userland.sh)"

mkdir -p "$folder"
log=$folder/make.log
echo "$arch" >"$folder/arch"
# What the userland holds: everything, or (on another architecture, where every
# program is emulated) only what testing the course needs: ./lab builds for it
# with a cross compiler (g++-aarch64-linux-gnu) running natively, this
# machine's or its release's userland's, with this root as the sysroot.
deps_options=()
[ "$unpacked" = 0 ] || deps_options=(--tests-only)

mirror=${DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
    mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
        grep -oE 'https?://[^ ]+/debian/?( |$)' | head -n 1 | tr -d ' ' || true)
    mirror=${mirror:-http://deb.debian.org/debian}
fi
mirror=${mirror%/}
security=${mirror%/debian}/debian-security

# Another architecture: unpack the packages (the root and the kernel package in
# one pass of mmdebstrap), then do what their maintainer scripts would have
# done that the guest needs. dash, the programs and the libraries are in
# place as unpacked (the loader finds the libraries in its built-in multiarch
# folders, without an ld.so.cache); the accounts are base-passwd's master
# copies; awk is mawk (an alternative, set by a script otherwise).
make_unpacked_root() {
    local wanted
    wanted=$("$repo/setup/install-deps.sh" --list "${deps_options[@]}" | sort | paste -sd, -)
    if [ -f "$folder/ready" ] && [ -f "$folder/linux-image.deb" ] &&
        [ "$(cat "$folder/packages" 2>/dev/null)" = "$wanted" ]; then
        return 0
    fi
    rm -f "$folder/ready"
    echo "userland: unpacking a Debian $distro $arch root filesystem and its kernel package from $mirror" \
        "(mmdebstrap --variant=extract: nothing runs in it)" >&2
    rm -rf "$root" "$folder/kernel" "$folder/download"
    mkdir -p "$folder/download"
    # The kernel package: the one linux-image-ARCH depends on, downloaded with
    # the root's package lists while mmdebstrap still has them.
    # shellcheck disable=SC2016 # expanded by the hook's shell
    LAB_DOWNLOAD=$folder/download LAB_KERNEL=linux-image-$arch mmdebstrap --variant=extract \
        --architectures="$arch" --include="$wanted" \
        --setup-hook=/usr/share/mmdebstrap/hooks/merged-usr/setup00.sh \
        --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
        --extract-hook='export APT_CONFIG=$MMDEBSTRAP_APT_CONFIG
            package=$(apt-cache depends "$LAB_KERNEL" | awk "/Depends: linux-image-[0-9]/ {print \$2; exit}")
            [ -n "$package" ] || { echo "apt cannot resolve $LAB_KERNEL" >&2; exit 1; }
            cd "$LAB_DOWNLOAD" && apt-get download "$package"' \
        "$distro" "$root" "deb $mirror $distro main" "deb $mirror $distro-updates main" \
        "deb $security $distro-security main" 2>&1 | progress "userland: mmdebstrap $distro $arch" "$log" lines || {
        first_errors "$log" >&2
        die "mmdebstrap failed (full log: $log)"
    }
    mv "$folder"/download/linux-image-*.deb "$folder/linux-image.deb" ||
        die "the kernel package was not downloaded (full log: $log)"
    rm -rf "$folder/download"
    local master
    for master in passwd group; do
        [ -e "$root/etc/$master" ] || cp "$root/usr/share/base-passwd/$master.master" "$root/etc/$master"
    done
    [ -e "$root/usr/bin/awk" ] || ln -s mawk "$root/usr/bin/awk"
    printf '%s\n' "$wanted" >"$folder/packages"
}
if [ "$unpacked" = 1 ]; then
    make_unpacked_root
    : >"$folder/ready"
    echo "$folder"
    exit 0
fi

# 1. The root filesystem (once): debootstrap's minimal variant.
if [ ! -f "$root/.debootstrap-done" ]; then
    echo "userland: making a Debian $distro $arch root filesystem with debootstrap from $mirror (once, about 2 minutes)" >&2
    rm -rf "$root"
    debootstrap --arch "$arch" --variant=minbase "$distro" "$root" "$mirror" 2>&1 |
        progress "userland: debootstrap $distro" "$log" debootstrap || {
        first_errors "$log" >&2
        die "debootstrap failed (full log: $log)"
    }
    cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror $distro main
deb $mirror $distro-updates main
deb $security $distro-security main
EOF
    # No documentation or translations: the userland is for building and testing.
    cat >"$root/etc/dpkg/dpkg.cfg.d/01-lab-nodoc" <<'EOF'
path-exclude /usr/share/doc/*
path-exclude /usr/share/man/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/info/*
EOF
    : >"$root/.debootstrap-done"
fi

# 2. The course's packages, by the course's own script (each time: it installs
#    only what is missing, in a second when nothing is).
lists_fresh=0 # apt-get update once is enough
if ! in_root "$repo/setup/install-deps.sh" --check >/dev/null 2>&1; then
    echo "userland: installing the course's packages into the $distro userland" >&2
    in_root "$repo/setup/install-deps.sh" || die "installing the packages into the $distro userland failed"
    lists_fresh=1
fi

# 3. The release's kernel package, for the micro-VM (unpacked by microvm.sh).
if [ ! -f "$folder/linux-image.deb" ]; then
    echo "userland: downloading Debian $distro's kernel package" >&2
    rm -rf "$root/var/cache/lab-kernel"
    mkdir -p "$root/var/cache/lab-kernel"
    # shellcheck disable=SC2016 # expanded inside the userland
    in_root sh -c '[ "$2" = 1 ] || apt-get update -q >/dev/null 2>&1 || true
        package=$(apt-cache depends "linux-image-$1" | awk "/Depends: linux-image-[0-9]/ {print \$2; exit}")
        [ -n "$package" ] || { echo "apt cannot resolve linux-image-$1" >&2; exit 1; }
        cd /var/cache/lab-kernel && apt-get download "$package"' sh "$arch" "$lists_fresh" >"$log.kernel" 2>&1 &
    download=$!
    while kill -0 "$download" 2>/dev/null; do
        sleep 5
        kill -0 "$download" 2>/dev/null &&
            echo "userland: kernel package: $(du -sm "$root/var/cache/lab-kernel" | cut -f1) MiB so far" >&2
    done
    wait "$download" || { cat "$log.kernel" >&2; die "downloading the $distro kernel package failed"; }
    mv "$root"/var/cache/lab-kernel/linux-image-*.deb "$folder/linux-image.deb"
    rm -rf "$root/var/cache/lab-kernel"
fi
: >"$folder/ready"
echo "$folder"

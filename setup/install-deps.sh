#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what the course needs from the distribution's packages (verified on
# Debian 12 and 13; Ubuntu should work). Used by './lab setup', './lab test',
# the Dockerfile and the Debian userlands of './lab test --distro', so the list
# lives here only. Prints the packages, then the progress of apt.
#
#   setup/install-deps.sh [--check | --list] [--grader | --tests-only] [--arch arm64]
#       --check: only report what is missing
#       --list: only print the packages, one a line (vm/userland.sh unpacks them)
#       --grader: only what grading needs (the Gradescope image, GitHub's runners)
#       --tests-only: only what running the course's tests in the micro-VM and
#           building them against this root need (the userland of an emulated
#           machine: no static checks, docs, plots or micro-VM of its own);
#       --arch arm64: also what ./lab test --arch arm64 needs on an x86-64 machine
#           (qemu for an arm64 machine, mmdebstrap to unpack an arm64 root,
#           qemu-user-static to run arm64 programs through binfmt_misc, the
#           cross compiler)
set -euo pipefail

check=0 list=0 grader=0 tests_only=0 emulate=''
while [ $# -gt 0 ]; do
    case "$1" in
    --check) check=1 ;;
    --list) list=1 ;;
    --grader) grader=1 ;;
    --tests-only) tests_only=1 ;;
    --arch)
        emulate=${2:-}
        shift
        ;;
    *) echo "install-deps: unknown option '$1'" >&2 && exit 2 ;;
    esac
    shift
done
case "$emulate" in "" | arm64 | amd64) ;; *) echo "install-deps: --arch is arm64 or amd64, not '$emulate'" >&2 && exit 2 ;; esac

# The micro-VM's qemu emulates a machine of this one's architecture.
machine_arch=$(dpkg --print-architecture 2>/dev/null || uname -m)
case "$machine_arch" in
arm64 | aarch64) machine_arch=arm64 qemu_package=qemu-system-arm ;;
*) qemu_package=qemu-system-x86 ;;
esac

packages=(
    # toolchain
    g++ cmake make pkg-config git
    # rdma-core: the verbs and rdma_cm libraries, the rxe provider, the tools
    libibverbs-dev librdmacm-dev ibverbs-providers rdma-core ibverbs-utils rdmacm-utils perftest
    # tests and command lines
    catch2 libcli11-dev
    # the micro-VM (xz and zstd unpack compressed kernel modules), and debootstrap
    # for the Debian userlands of ./lab test --distro
    "$qemu_package" busybox-static cpio kmod iproute2 xz-utils zstd debootstrap
    # the lab machine (./lab up, ./lab shell): an SSH server in the VM, a client here (no service is started)
    dropbear-bin openssh-client
    # checks of the course itself: fuzzing (clang + libFuzzer), C++ format, shell scripts, docs
    clang clang-format shellcheck doxygen graphviz
    # exercise 01's plot
    gnuplot-nox
    # ./lab grade: submissions as .zip, the Gradescope package
    zip unzip
)
# What ./lab grade needs, and no more: the grading platforms' images.
grader_packages=(g++ cmake make pkg-config libibverbs-dev librdmacm-dev ibverbs-providers rdma-core
    catch2 libcli11-dev "$qemu_package" busybox-static cpio kmod iproute2 util-linux zip unzip
    xz-utils zstd)
# Running the tests inside the micro-VM (ctest comes with cmake; busybox: the
# guest's initramfs takes it from the userland; iproute2 brings up rxe0), and
# the headers and libraries a cross compiler builds against. The first line is
# the base system the guest and the tests' scripts use: a root that is only
# unpacked (vm/userland.sh, another architecture) holds what is listed here
# and what it depends on, and nothing else. No rdma-core: its udev rules and
# services are for a machine that boots with systemd; the micro-VM's guest
# brings up its device itself.
tests_only_packages=(base-files base-passwd bash coreutils dash debianutils diffutils findutils grep
    gzip hostname mawk sed tar util-linux
    cmake libibverbs-dev librdmacm-dev ibverbs-providers ibverbs-utils rdmacm-utils perftest catch2
    libcli11-dev busybox-static kmod iproute2 zip unzip)
[ "$grader" = 0 ] || packages=("${grader_packages[@]}")
[ "$tests_only" = 0 ] || packages=("${tests_only_packages[@]}")
if [ -n "$emulate" ] && [ "$emulate" != "$machine_arch" ]; then
    case "$emulate" in
    arm64) packages+=(qemu-system-arm mmdebstrap qemu-user-static g++-aarch64-linux-gnu) ;;
    amd64) packages+=(qemu-system-x86 mmdebstrap qemu-user-static) ;;
    esac
fi
if [ "$list" = 1 ]; then
    printf '%s\n' "${packages[@]}"
    exit 0
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=setup/progress.sh
. "$here/progress.sh"

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

# libFuzzer ships in a package named after clang's major version (Debian 12:
# libclang-rt-14-dev, Debian 13: libclang-rt-19-dev). Its name is known only
# once clang is installed, so it is looked for after the rest.
fuzz_runtime() {
    [ "$grader" = 0 ] && [ "$tests_only" = 0 ] || return 0
    command -v clang >/dev/null || return 0
    local package
    package="libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev"
    installed "$package" && return 0
    # A release that packs libFuzzer elsewhere has no such package: nothing to add.
    apt-cache show "$package" >/dev/null 2>&1 || [ "${1:-}" = --check ] || return 0
    echo "$package"
}

# ./lab grade --class compares submissions with sim_c++ (similarity-tester).
# Debian 12 and Ubuntu ship it; Debian 13 does not (its archive has no
# similarity-tester), and there the similarity report says it is missing.
# Decided from /etc/os-release, as apt-cache is too slow for every check.
similarity_tester() {
    [ "$grader" = 0 ] && [ "$tests_only" = 0 ] || return 0
    installed similarity-tester && return 0
    if (
        . /etc/os-release 2>/dev/null
        [ "${ID:-}" = debian ] && [ "${VERSION_ID%%.*}" -ge 13 ] 2>/dev/null
    ); then
        return 0
    fi
    echo similarity-tester
}

# One dpkg-query for the whole list (./lab runs this check before every command).
missing=()
mapfile -t present < <(dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2>/dev/null |
    awk '/ install ok installed$/ {print $1}')
for package in "${packages[@]}"; do
    [[ " ${present[*]} " == *" $package "* ]] || missing+=("$package")
done
if [ "$check" = 1 ]; then
    runtime=$(fuzz_runtime --check)
    [ -z "$runtime" ] || missing+=("$runtime")
    similarity=$(similarity_tester)
    [ -z "$similarity" ] || missing+=("$similarity")
    [ ${#missing[@]} -eq 0 ] && exit 0
    echo "missing packages: ${missing[*]}"
    exit 1
fi
if ! command -v apt-get >/dev/null; then
    [ ${#missing[@]} -eq 0 ] && exit 0
    echo "install-deps: this is not a Debian or Ubuntu system; install the equivalents of: ${missing[*]}" >&2
    exit 2
fi

sudo=()
if [ "$(id -u)" != 0 ]; then
    sudo=(sudo)
fi

log=${TMPDIR:-/tmp}/rdma-lab-apt.log
: >"$log" 2>/dev/null || log=/dev/null
apt_install() { # PACKAGE...
    if [ ${#sudo[@]} -gt 0 ] && ! command -v sudo >/dev/null; then
        echo "install-deps: run as root, or install: $*" >&2
        exit 2
    fi
    echo "install-deps: installing $*" >&2
    export DEBIAN_FRONTEND=noninteractive
    if [ "$updated" = 0 ]; then
        "${sudo[@]}" apt-get update 2>&1 | progress "install-deps: apt-get update" "$log" lines ||
            { first_errors "$log" >&2; echo "install-deps: apt-get update failed (log: $log)" >&2; exit 2; }
        updated=1
    fi
    "${sudo[@]}" apt-get install -y --no-install-recommends "$@" 2>&1 | progress install-deps "$log" apt || {
        first_errors "$log" >&2
        echo "install-deps: apt-get install failed (full log: $log)" >&2
        exit 2
    }
}
updated=0
similarity=$(similarity_tester)
[ -z "$similarity" ] || missing+=("$similarity")
[ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"
runtime=$(fuzz_runtime)
[ -z "$runtime" ] || apt_install "$runtime"
[ "$updated" = 0 ] || echo "install-deps: done" >&2

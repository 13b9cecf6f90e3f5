#!/usr/bin/env bash
# Install what the course needs from the distribution's packages (Debian 12+
# or Ubuntu 22.04+). Used by './lab setup', './lab test' and the Dockerfile,
# so the list lives here only. Prints the packages before installing them.
#
#   docker/install-deps.sh [--check] [--grader]
#       --check: only report what is missing
#       --grader: only what grading needs (the Gradescope image, GitHub's runners)
set -euo pipefail

check=0 grader=0
for arg in "$@"; do
    case "$arg" in
    --check) check=1 ;;
    --grader) grader=1 ;;
    *) echo "install-deps: unknown option '$arg'" >&2 && exit 2 ;;
    esac
done

packages=(
    # toolchain
    g++ cmake make pkg-config git
    # rdma-core: the verbs and rdma_cm libraries, the rxe provider, the tools
    libibverbs-dev librdmacm-dev ibverbs-providers rdma-core ibverbs-utils rdmacm-utils perftest
    # tests and command lines
    catch2 libcli11-dev
    # the micro-VM
    qemu-system-x86 busybox-static cpio kmod iproute2
    # checks of the course itself: fuzzing (clang + libFuzzer), C++ format, shell scripts, docs
    clang clang-format shellcheck doxygen graphviz
    # exercise 01's plot
    gnuplot-nox
    # ./lab grade: submissions as .zip, the Gradescope package
    zip unzip
)
# What ./lab grade needs, and no more: the grading platforms' images.
grader_packages=(g++ cmake make pkg-config libibverbs-dev librdmacm-dev ibverbs-providers rdma-core
    catch2 libcli11-dev qemu-system-x86 busybox-static cpio kmod iproute2 util-linux zip unzip)
# libFuzzer ships in a versioned package: the one that matches the default clang.
# shellcheck disable=SC1091
os_id=$(. /etc/os-release 2>/dev/null && echo "$ID-${VERSION_ID%%.*}")
if [ "$os_id" = debian-12 ]; then
    packages+=(libclang-rt-14-dev)
elif command -v clang >/dev/null; then
    packages+=("libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev")
fi
[ "$grader" = 1 ] && packages=("${grader_packages[@]}")

missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$package")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
if [ "$check" = 1 ]; then
    echo "missing packages: ${missing[*]}"
    exit 1
fi
if ! command -v apt-get >/dev/null; then
    echo "install-deps: this is not a Debian or Ubuntu system; install the equivalents of: ${missing[*]}" >&2
    exit 2
fi

sudo=()
if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || {
        echo "install-deps: run as root, or install: ${missing[*]}" >&2
        exit 2
    }
    sudo=(sudo)
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q >/dev/null
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"

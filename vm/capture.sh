#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ./lab capture: watch a lesson on the wire.
#
#   vm/capture.sh [--preset P | --build-dir DIR] [--pcap FILE] [--limit N] [--netem SPEC] LESSON [ARGS...]
#
# Builds LESSON, runs it across two micro-VMs (vm/two-hosts.sh) while qemu
# records every Ethernet frame on the virtual wire to a pcap file (default
# build/PRESET/capture/LESSON.pcap; Wireshark opens it), then prints the RoCE
# v2 packets (UDP 4791) decoded from their Base Transport Header: opcode,
# destination QP, PSN, payload length, and the count per opcode. --limit N
# lists at most N packets (default 200; the counts always cover all of them).
# --build-dir uses a tree configured already (the tests do). --netem SPEC
# makes the client's card lossy (tc-netem(8), e.g. "loss 2%"). LESSON may name
# a lesson's variant: 06_send_recv/uc_vs_rc. Exit status: the two-host run's
# (the capture is decoded either way).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cd "$repo"

preset=default
[ "${CI:-}" = true ] && preset=ci
pcap=''
netem=''
limit=200
build=''

die() {
    echo "capture: $*" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case "$1" in
    --preset | --build-dir | --pcap | --limit | --netem)
        [ $# -ge 2 ] || die "$1 needs a value"
        case "$1" in
        --netem) netem=$2 ;;
        --preset) preset=$2 ;;
        --build-dir) build=$(cd "$2" 2>/dev/null && pwd) || die "no build folder $2" ;;
        --pcap) pcap=$2 ;;
        --limit) limit=$2 ;;
        esac
        shift 2
        ;;
    -h | --help)
        awk 'NR > 1 && !/^#/ {exit} NR > 1 && !/SPDX-License-Identifier:/ {sub(/^# ?/, ""); print}' "$0"
        exit 0
        ;;
    *) break ;;
    esac
done
[ $# -ge 1 ] || die "which lesson? e.g. ./lab capture 07_rdma_write"
[[ $limit =~ ^[0-9]+$ ]] || die "--limit must be a number, not '$limit'"
case "$preset" in default | asan | ci) ;; *) die "unknown preset '$preset' (use default, asan or ci)" ;; esac

lesson=${1%%/*}
variant=''
case $1 in */*) variant=${1#*/} ;; esac
shift
dir=$(find lessons -mindepth 1 -maxdepth 1 -type d \( -name "$lesson" -o -name "${lesson}_*" \) | sort | head -n 1)
[ -n "$dir" ] || die "no lesson '$lesson' (the lessons are: $(find lessons -mindepth 1 -maxdepth 1 -type d -printf '%f ' | sort))"
folder=$(basename "$dir")
name=$folder
if [ -n "$variant" ]; then
    [ -f "$dir/$variant.cpp" ] || die "lesson $folder has no program '$variant' ($dir/$variant.cpp)"
    name=${folder%%_*}_$variant
fi

# The lesson and the decoder (tools/roce-decode), built the way ./lab builds them.
build_command=(cmake --build --preset "$preset" --target "$name" roce_decode)
if [ -n "$build" ]; then
    [ -f "$build/CMakeCache.txt" ] || die "$build is not a configured build folder"
    build_command=(cmake --build "$build" --target "$name" roce_decode)
else
    build=$repo/build/$preset
    if [ ! -f "$build/CMakeCache.txt" ]; then
        cmake --preset "$preset" >/dev/null || die "cmake configure failed (cmake --preset $preset shows why)"
    fi
fi
"${build_command[@]}" >"$build/capture-build.log" 2>&1 || {
    grep -E 'error|Error' "$build/capture-build.log" | head -n 20 >&2
    die "building $name and roce-decode failed (full log: ${build#"$repo"/}/capture-build.log)"
}

decoder=$build/tools/roce-decode/roce-decode

[ -n "$pcap" ] || pcap=$build/capture/$name.pcap
mkdir -p "$(dirname "$pcap")"
echo "capture: running $name on two hosts, recording the wire to ${pcap#"$repo"/}" >&2
status=0
netem_args=()
[ -z "$netem" ] || netem_args=(--netem "$netem")
"$here/two-hosts.sh" --capture "$pcap" "${netem_args[@]}" "$build/lessons/$folder/$name" "$@" || status=$?
echo >&2
echo "The wire during $name (RoCE v2 = UDP port 4791):"
"$decoder" --limit "$limit" "$pcap"
exit "$status"

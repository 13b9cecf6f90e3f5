#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ./lab grade --gradescope: the autograder package for Gradescope (and for
# GitHub Classroom's workflow).
#
# Writes build/grade/gradescope/autograder.zip: setup.sh and run_autograder
# at its root (Gradescope's layout), the course without its solutions, and
# the micro-VM's kernel and initramfs (vm-cache/), so that grading needs no
# kernel download and works on any Linux host with qemu. It holds the
# instructor's own checks (tests/exercises/hidden/) unless --visible-only:
# a package GitHub Classroom's workflow fetches can be fetched by students too.
# --per-exercise: also one package per exercise, NN_name/autograder.zip, for a
# Gradescope assignment per exercise: the same package with a file
# "exercises" at its root naming the one exercise run_autograder grades.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${RDMA_LAB_GRADE_OUT:-$repo/build/grade}/gradescope
die() {
    echo "gradescope: $*" >&2
    exit 2
}
left_out='^(solutions|slides|build|docs/instructor)/|^docs/instructor\.md$|(^|/)node_modules/|^\.git'
per_exercise=''
for option; do
    case "$option" in
    --visible-only) left_out+='|^tests/exercises/hidden/' ;;
    --per-exercise) per_exercise=1 ;;
    *) die "unknown option '$option' (./lab grade --gradescope [--visible-only] [--per-exercise])" ;;
    esac
done

# The micro-VM's kernel and initramfs, from its cache (built once if needed).
cache=${RDMA_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rdma-verbs-lab}
"$repo/vm/microvm.sh" --prepare >/dev/null || die "the micro-VM's kernel is not available"
[ -f "$cache/kernel/ready" ] ||
    die "no packaged kernel in $cache/kernel (this host boots the micro-VM with its own kernel; set RDMA_LAB_CACHE to a cache made on a host without rdma_rxe)"
version=$(cat "$cache/kernel/ready")

stage=$(mktemp -d "${TMPDIR:-/tmp}/rdma-lab-gradescope.XXXXXX")
trap 'rm -rf "$stage"' EXIT
# The course as this checkout has it (tracked and new files), without what
# students must not see or the grader does not need: the solutions, the
# instructor's guide and its material, the slides.
(cd "$repo" && git ls-files -co --exclude-standard 2>/dev/null || find . -type f -printf '%P\n') |
    grep -vE "$left_out" |
    (cd "$repo" && xargs -d '\n' cp --parents -t "$stage" 2>/dev/null) || true
[ -x "$stage/grading/grade.sh" ] || die "the course files could not be staged"
[ ! -e "$stage/solutions" ] || die "the solutions must not be packaged"
cp "$repo/grading/gradescope/setup.sh" "$repo/grading/gradescope/run_autograder" "$stage/"
mkdir -p "$stage/vm-cache/kernel/boot"
cp "$cache/kernel/ready" "$stage/vm-cache/kernel/"
cp "$cache/kernel/boot/vmlinuz-$version" "$stage/vm-cache/kernel/boot/"
initramfs=("$cache"/initramfs-"$version"-*.cpio.gz)
[ -f "${initramfs[0]}" ] || die "no initramfs for $version in $cache"
cp "${initramfs[@]}" "$stage/vm-cache/"

mkdir -p "$out"
rm -f "$out/autograder.zip"
(cd "$stage" && zip -qr -X "$out/autograder.zip" .)
echo "gradescope: wrote ${out#"$repo"/}/autograder.zip ($(du -h "$out/autograder.zip" | cut -f1)): upload it as the autograder of a Gradescope programming assignment (README, \"Grading a class\")"
[ -n "$per_exercise" ] || exit 0
one=$(mktemp -d "${TMPDIR:-/tmp}/rdma-lab-gradescope-one.XXXXXX")
trap 'rm -rf "$stage" "$one"' EXIT
count=0
for folder in "$repo"/exercises/[0-9][0-9]_*/; do
    exercise=$(basename "$folder")
    rm -rf "${out:?}/$exercise"
    mkdir -p "$out/$exercise"
    cp "$out/autograder.zip" "$out/$exercise/autograder.zip"
    printf '%s\n' "${exercise%%_*}" >"$one/exercises"
    (cd "$one" && zip -q -X "$out/$exercise/autograder.zip" exercises)
    count=$((count + 1))
done
echo "gradescope: wrote $count packages, one per exercise, ${out#"$repo"/}/NN_name/autograder.zip: upload each as the autograder of that exercise's assignment"

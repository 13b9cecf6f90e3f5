#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The class image, for real: build it (from the student edition, so without
# the solutions), then in containers, as the student,
# run a lesson and the lesson tests through the micro-VM, check the clear
# messages for a container started without what RDMA needs, and run the
# two-container demo. Runs on the build host with a Docker engine;
# without one it says so and exits 77 (CTest reports the test as skipped).
# Under CI (CI=true) docker/ensure-engine.sh installs and starts an engine.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo" || exit 1
export RDMA_LAB_IMAGE=${RDMA_LAB_IMAGE:-rdma-verbs-lab:test}
image=$RDMA_LAB_IMAGE

if [ "$(hostname)" = rdma-lab-vm ]; then
    echo "docker_image: NOT RUN: it builds and starts containers, so it runs on the build host (ctest -L docker), not in the micro-VM"
    exit 77
fi
if ! reason=$(docker/ensure-engine.sh 2>&1); then
    echo "$reason"
    echo "docker_image: NOT RUN: no Docker engine here (as root, docker/ensure-engine.sh --install sets one up; CI=true does it)"
    exit 77
fi

failures=0
started=$SECONDS
step() { echo "--- $* ($((SECONDS - started)) s)"; }
pass() { echo "PASS: $*"; }
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
expect() { # DESCRIPTION FILE PATTERN...: every pattern (grep -E) is in FILE
    local description=$1 file=$2 pattern
    shift 2
    sed -i 's/\x1b\[[0-9;]*m//g' "$file" # no colours
    for pattern in "$@"; do
        if ! grep -qE -- "$pattern" "$file"; then
            fail "$description: no line matches /$pattern/"
            sed 's/^/    | /' "$file" | tail -n 30
            return 1
        fi
    done
    pass "$description"
}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# Where KVM is known not to start a guest (nested virtualisation), every
# fresh container would find out again, 20 s per VM: tell them.
cache=${RDMA_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rdma-verbs-lab}
if [ "$(cat "$cache/kvm-$(uname -r)" 2>/dev/null)" = broken ]; then
    export RDMA_LAB_VM_ACCEL=tcg
fi

# The committed tree when there is one: what CI checks out, and never a file
# half-written in the working tree.
source_args=()
git rev-parse --verify -q HEAD >/dev/null 2>&1 && source_args=(--rev HEAD)
step "building the image $image ${source_args[*]}"
build_started=$SECONDS
if docker/class build "${source_args[@]}" >"$out" 2>&1; then
    pass "image built in $((SECONDS - build_started)) s"
else
    tail -n 40 "$out"
    fail "docker/class build"
    exit 1
fi

# Lesson 06 once the image has it, else lesson 01.
lesson_with_traffic=01_devices
tests_regex=01_
if docker run --rm "$image" test -f lessons/06_send_recv/main.cpp; then
    lesson_with_traffic=06_send_recv
    tests_regex='01_|06_'
fi

step "the student user"
docker run --rm "$image" sh -c 'id -un; pwd; ls build/default/lessons' >"$out" 2>&1
expect "runs as student in the built course" "$out" '^student$' '^/home/student/rdma-verbs-lab$' '^01_devices$'

step "the student edition: no solutions, no hidden checks"
docker run --rm "$image" sh -c 'for path in solutions tests/exercises/hidden docs/instructor.md exercises/01_noncontiguous_sge; do
    if [ -e "$path" ]; then echo "present: $path"; else echo "absent: $path"; fi; done' >"$out" 2>&1
expect "the image is made from the student edition" "$out" '^absent: solutions$' \
    '^absent: tests/exercises/hidden$' '^absent: docs/instructor.md$' '^present: exercises/01_noncontiguous_sge$'

step "./lab run $lesson_with_traffic in a container (micro-VM inside)"
docker/class run "$lesson_with_traffic" >"$out" 2>&1 && status=0 || status=$?
if [ "$status" = 0 ]; then
    if [ "$lesson_with_traffic" = 01_devices ]; then
        expect "./lab run 01_devices" "$out" 'micro-VM: kernel .* device rxe0 on lab0' 'chosen GID index: [0-9]+ \(RoCE v2, ::ffff:10\.77\.0\.1\)'
    else
        expect "./lab run $lesson_with_traffic" "$out" 'micro-VM: kernel' '^\[server\]' '^\[client\]'
    fi
else
    tail -n 30 "$out"
    fail "./lab run $lesson_with_traffic exited with $status"
fi

step "the lab machine in a container: the student user, no /dev/kvm, no vhost device"
docker run --rm --init -e RDMA_LAB_VM_ACCEL=tcg "$image" sh -c \
    './lab up && ./lab shell cat /sys/class/infiniband/rxe0/ports/1/state && ./lab run 01_devices && ./lab down' \
    >"$out" 2>&1 && status=0 || status=$?
if [ "$status" = 0 ]; then
    expect "./lab up, shell, run, down" "$out" 'the lab machine is up: Linux .*, rxe0 on lab0 \(10\.77\.0\.1\)' \
        '^4: ACTIVE$' 'chosen GID index: [0-9]+ \(RoCE v2, ::ffff:10\.77\.0\.1\)' 'the lab machine is down'
else
    tail -n 30 "$out"
    fail "the lab machine in a container exited with $status"
fi

step "the lesson tests in a container"
flags=(--network host --cap-add IPC_LOCK --init -e "RDMA_LAB_VM_ACCEL=${RDMA_LAB_VM_ACCEL:-}")
[ -e /dev/kvm ] && flags+=(--device /dev/kvm --group-add "$(stat -c %g /dev/kvm)")
docker run --rm "${flags[@]}" "$image" ./lab test -L lesson -R "$tests_regex" >"$out" 2>&1 && status=0 || status=$?
if [ "$status" = 0 ]; then
    expect "./lab test -L lesson -R '$tests_regex'" "$out" '100% tests passed, 0 tests failed out of [1-9]'
else
    tail -n 30 "$out"
    fail "./lab test in the container exited with $status"
fi

step "a container without what a host device needs: one clear line per missing thing"
docker run --rm -e RDMA_LAB_TARGET=host "$image" docker/class preflight >"$out" 2>&1 && status=0 || status=$?
[ "$status" != 0 ] || fail "preflight passed without /dev/infiniband"
expect "no device, no IPC_LOCK" "$out" 'no /dev/infiniband/uverbs\* in this container: start it with --device /dev/infiniband' \
    'lacks the IPC_LOCK capability: start it with --cap-add IPC_LOCK'
# A stand-in device node and the capability: only the memlock limit is left.
docker run --rm -e RDMA_LAB_TARGET=host --device /dev/null:/dev/infiniband/uverbs0 --cap-add IPC_LOCK \
    --ulimit memlock=65536:65536 "$image" docker/class preflight >"$out" 2>&1 && status=0 || status=$?
[ "$status" != 0 ] || fail "preflight passed with a 64 KiB memlock limit"
expect "memlock too low" "$out" 'the memlock limit is 64 KiB, too low to register memory: start the container with --ulimit memlock=-1'
if grep -qE 'uverbs|IPC_LOCK' "$out"; then fail "preflight named a problem that is not there"; fi
docker run --rm --user root "$image" sh -c 'rm /usr/bin/qemu-system-x86_64 /usr/bin/qemu-system-aarch64 2>/dev/null; su student -c "docker/class preflight"' >"$out" 2>&1 &&
    status=0 || status=$?
[ "$status" != 0 ] || fail "preflight passed with neither rxe nor qemu"
expect "neither rxe nor qemu" "$out" 'the host has no rxe device and this container has no qemu: create one on the host \(docker/class rxe\) or install qemu-system-(x86|arm)'

step "the instructor's demo: server and client in two containers"
docker/class demo "$lesson_with_traffic" >"$out" 2>&1 && status=0 || status=$?
if [ "$status" = 0 ]; then
    expect "docker/class demo $lesson_with_traffic" "$out" '^\[server\] micro-VM: .*\(10\.77\.1\.1\), wire to 10\.77\.1\.2' \
        '^\[client\] micro-VM: .*\(10\.77\.1\.2\), wire to 10\.77\.1\.1' 'demo finished: server and client succeeded'
else
    tail -n 30 "$out"
    fail "docker/class demo exited with $status"
fi

step "done"
echo "docker_image: $failures failure(s) in $((SECONDS - started)) s"
[ "$failures" -eq 0 ]

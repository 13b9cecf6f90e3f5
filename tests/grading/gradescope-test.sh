#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Gradescope package, for real: build it (./lab grade --gradescope), make
# an image the way Gradescope makes one (the package unpacked in
# /autograder/source, run_autograder copied to /autograder, setup.sh run as
# root), then run /autograder/run_autograder in a container laid out the way
# Gradescope lays it out (/autograder/submission holds the student's files,
# /autograder/results receives results.json), without privileges, and check
# results.json against Gradescope's format and the expected scores. Then the
# same for a package of one exercise (--per-exercise): it holds the same
# files and one more, and grades that exercise only.
#
# Gradescope's image is Ubuntu 22.04; with only Debian's package mirror
# reachable here, the image is Debian 12 (docker/make-base-image.sh).
# Needs a Docker engine; without one it says so and exits 77 (skipped).
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo" || exit 1
image=${RDMA_LAB_GRADESCOPE_IMAGE:-rdma-verbs-lab-gradescope:test} # another name: beside another run

if [ "$(hostname)" = rdma-lab-vm ]; then
    echo "grading_gradescope: NOT RUN: it starts containers, so it runs on the build host (ctest -L docker)"
    exit 77
fi
if ! reason=$(docker/ensure-engine.sh 2>&1); then
    echo "$reason"
    echo "grading_gradescope: NOT RUN: no Docker engine here (as root, docker/ensure-engine.sh --install sets one up; CI=true does it)"
    exit 77
fi

failures=0
started=$SECONDS
step() { echo "--- $* ($((SECONDS - started)) s)"; }
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
work=$(mktemp -d "${TMPDIR:-/tmp}/rdma-lab-gradescope-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

step "the base image"
docker/make-base-image.sh >"$work/base.log" 2>&1 || {
    tail -n 20 "$work/base.log"
    fail "docker/make-base-image.sh"
    exit 1
}

step "./lab grade --gradescope --per-exercise"
out=$work/out
RDMA_LAB_GRADE_OUT=$out grading/grade.sh --gradescope --per-exercise >"$work/package.log" 2>&1 || {
    cat "$work/package.log"
    fail "grade.sh --gradescope --per-exercise"
    exit 1
}
# One package per exercise: the whole package, and a file "exercises" naming the one.
unzip -Z1 "$out/gradescope/autograder.zip" | sort >"$work/all.list"
for folder in exercises/[0-9][0-9]_*/; do
    exercise=$(basename "$folder")
    one=$out/gradescope/$exercise/autograder.zip
    if [ ! -f "$one" ]; then
        fail "no $one"
        continue
    fi
    unzip -Z1 "$one" | sort >"$work/one.list"
    if [ "$(comm -13 "$work/all.list" "$work/one.list")" != exercises ] ||
        [ -n "$(comm -23 "$work/all.list" "$work/one.list")" ]; then
        fail "$exercise's package is not the whole package and a file 'exercises'"
    fi
    [ "$(unzip -p "$one" exercises)" = "${exercise%%_*}" ] || fail "$exercise's package names $(unzip -p "$one" exercises)"
done
unzip -p "$out/gradescope/05_fix_the_connection/autograder.zip" exercises >"$work/exercises-05"
zip=$out/gradescope/autograder.zip
mkdir -p "$work/context/source"
unzip -q "$zip" -d "$work/context/source"
for file in setup.sh run_autograder; do
    [ -x "$work/context/source/$file" ] || fail "$file is not at the root of autograder.zip"
done
[ ! -e "$work/context/source/solutions" ] || fail "autograder.zip holds the solutions"

step "the image, as Gradescope builds it (apt, then setup.sh as root)"
cat >"$work/context/Dockerfile" <<'DOCKERFILE'
FROM debian:bookworm
RUN apt-get update -q && apt-get install -y -q --no-install-recommends python3 ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY source /autograder/source
RUN cp /autograder/source/run_autograder /autograder/run_autograder \
    && mkdir -p /autograder/submission /autograder/results \
    && apt-get update -q && /autograder/source/setup.sh && rm -rf /var/lib/apt/lists/*
WORKDIR /autograder
DOCKERFILE
if ! docker build -q -t "$image" "$work/context" >"$work/build.log" 2>&1; then
    tail -n 40 "$work/build.log"
    fail "the image did not build"
    exit 1
fi

step "run_autograder on a submission: exercises 01-03 and 05-07 done, 04 untouched (bare files)"
mkdir -p "$work/submission" "$work/results"
for exercise in 01_noncontiguous_sge 02_ud_ping 03_srq_server 05_fix_the_connection 06_recover_qp 07_memory_window; do
    cp solutions/$exercise/*.cpp "$work/submission/"
done
cp exercises/04_throughput/throughput.cpp "$work/submission/"
flags=(--rm -v "$work/submission:/autograder/submission:ro" -v "$work/results:/autograder/results")
[ -n "${RDMA_LAB_VM_ACCEL:-}" ] && flags+=(-e "RDMA_LAB_VM_ACCEL=$RDMA_LAB_VM_ACCEL")
docker run "${flags[@]}" "$image" /autograder/run_autograder >"$work/run.log" 2>&1
echo "run_autograder ended with status $? after $((SECONDS - started)) s"
tail -n 12 "$work/run.log"

step "results.json in Gradescope's format"
[ -s "$work/results/results.json" ] || fail "no /autograder/results/results.json"
docker run --rm -v "$work/results:/autograder/results:ro" "$image" python3 - <<'PYTHON' || fail "results.json"
import json
with open("/autograder/results/results.json") as f:
    results = json.load(f)
problems = []
if not isinstance(results.get("score"), (int, float)):
    problems.append("no numeric score")
tests = results.get("tests", [])
if len(tests) != 52:
    problems.append("%d tests, expected 52 (one per check: 45, and the instructor's 7)" % len(tests))
hidden = [t for t in tests if t.get("name", "").split(": ", 1)[-1].startswith("hidden:")]
if len(hidden) != 7 or any(t.get("visibility") != "after_published" for t in hidden):
    problems.append("the instructor's checks: %d, not all shown after publishing" % len(hidden))
for test in tests:
    for key, kind in (("name", str), ("score", (int, float)), ("max_score", (int, float)),
                      ("status", str), ("output", str), ("visibility", str)):
        if not isinstance(test.get(key), kind):
            problems.append("%s: %s missing or of the wrong type" % (test.get("name"), key))
    if test.get("status") not in ("passed", "failed"):
        problems.append("%s: status %r" % (test.get("name"), test.get("status")))
    if test.get("visibility") not in ("hidden", "after_due_date", "after_published", "visible"):
        problems.append("%s: visibility %r" % (test.get("name"), test.get("visibility")))
    untouched = test.get("name", "").startswith("04_")
    if (test.get("status") == "passed") == untouched:
        problems.append("%s: %s" % (test.get("name"), test.get("status")))
    if untouched and "TODO" not in test.get("output", ""):
        problems.append("%s: the output does not name the TODO" % test.get("name"))
if abs(sum(t.get("score", 0) for t in tests) - results.get("score", -1)) > 1e-6:
    problems.append("the score is not the sum of the tests' scores")
if results.get("score") != 600:
    problems.append("score %r, expected 600 (seven exercises of 100, exercise 04 failed)" % results.get("score"))
for problem in problems:
    print("results.json: " + problem)
print("results.json: %d tests, score %s" % (len(tests), results.get("score")))
raise SystemExit(1 if problems else 0)
PYTHON

step "run_autograder of exercise 05's own package (its file 'exercises' in the same image)"
mkdir -p "$work/results-05"
docker run --rm -v "$work/submission:/autograder/submission:ro" -v "$work/results-05:/autograder/results" \
    -v "$work/exercises-05:/autograder/source/exercises:ro" "$image" /autograder/run_autograder >"$work/run-05.log" 2>&1
echo "run_autograder ended with status $? after $((SECONDS - started)) s"
tail -n 4 "$work/run-05.log"
docker run --rm -v "$work/results-05:/autograder/results:ro" "$image" python3 - <<'PYTHON' || fail "results.json of exercise 05"
import json
with open("/autograder/results/results.json") as f:
    results = json.load(f)
tests = results.get("tests", [])
problems = []
if not tests or any(not t.get("name", "").startswith("05_") for t in tests):
    problems.append("tests of other exercises: %s" % sorted({t.get("name", "")[:3] for t in tests}))
if sum(t.get("max_score", 0) for t in tests) != 100 or results.get("score") != 100:
    problems.append("score %r of %r, expected 100 of 100" % (results.get("score"), sum(t.get("max_score", 0) for t in tests)))
for problem in problems:
    print("results.json (05): " + problem)
print("results.json (05): %d tests, score %s" % (len(tests), results.get("score")))
raise SystemExit(1 if problems else 0)
PYTHON

step "done"
echo "grading_gradescope: $failures failure(s) in $((SECONDS - started)) s"
[ "$failures" -eq 0 ]

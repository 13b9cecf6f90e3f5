#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The editions on their own, as a class gets them.
#
# The student edition: ./lab export --student, a fresh git clone of it, and
# there the README's commands:
#   ./lab test -R "$LAB_EDITION_TESTS"   a part of its suite that CI can afford
#                   (default: lesson 01's tests, for which ./lab test builds
#                   lesson 01 and its test program only; "none" skips it);
#   ./lab run 01_devices                 lesson 01 on rxe;
#   ./lab grade --exercises "$LAB_EDITION_EXERCISES"
#                   the student's work (here the untouched skeletons) graded
#                   by the visible checks alone: every exercise 0 of 70
#                   points, and no instructor's check (default: exercise 01,
#                   which CI can afford; "all": every exercise).
# The GitHub Classroom edition: cloned as the workflow checks it out
# (submission/), graded the way the workflow's steps grade it: the grader
# package (./lab grade --gradescope) fetched by its URL (file://) and
# unzipped, then its run_autograder --submission --github-output, with the
# exercises the workflow lists; every runner the workflow names gets its
# payload. Only setup.sh is not run here (it installs packages and builds the
# grader; grading_gradescope runs it in a container): the grader uses this
# checkout's build instead (RDMA_LAB_GRADE_BUILD).
#
# Each ./lab boots its own micro-VM, so this runs on the build host (label
# edition). LAB_BUILD_DIR: this checkout's build (ctest sets it).
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${LAB_BUILD_DIR:-$repo/build/default}
tests=${LAB_EDITION_TESTS:-^test_01_devices:}
exercises=${LAB_EDITION_EXERCISES:-01}
# A student's machine, not CI: under CI=true the clone's ./lab test would
# also run the other Debian release's whole leg.
unset CI

if [ "$(hostname)" = rdma-lab-vm ]; then
    echo "edition_fresh_clone: NOT RUN: it boots micro-VMs, so it runs on the build host (ctest -L edition)"
    exit 77
fi

failures=0
started=$SECONDS
step() { echo "--- $* ($((SECONDS - started)) s)"; }
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
# Inside the checkout's build folder: the micro-VM sees this checkout, and the
# grader writes its output where the micro-VM can reach it.
work=$build/tests/edition-fresh-clone
rm -rf "$work"
mkdir -p "$work"

# --- the student edition ---------------------------------------------------------
step "./lab export --student, then a fresh clone"
"$repo/lab" export --student "$work/edition" >"$work/export.log" 2>&1 || {
    cat "$work/export.log"
    fail "./lab export --student"
    exit 1
}
git clone -q "$work/edition" "$work/clone" || {
    fail "git clone of the student edition"
    exit 1
}
cd "$work/clone" || exit 1
[ ! -e solutions ] || fail "the clone has solutions/"

if [ "$tests" = none ]; then
    step "./lab test in the clone: not run (LAB_EDITION_TESTS=none)"
else
    step "./lab test -R '$tests' in the clone"
    ./lab test -R "$tests" >"$work/test.log" 2>&1
    status=$?
    tail -n 15 "$work/test.log"
    [ "$status" = 0 ] || fail "./lab test in the clone ended with status $status"
    grep -qE '^totals: [1-9][0-9]* passed, 0 failed$' "$work/test.log" ||
        fail "./lab test in the clone passed no test, or failed some"
    if [ -z "${LAB_EDITION_TESTS:-}" ] && ! grep -q 'test_01_devices' "$work/test.log"; then
        fail "lesson 01's tests did not run in the clone"
    fi
fi

step "./lab run 01_devices in the clone"
./lab run 01_devices >"$work/run.log" 2>&1 || fail "./lab run 01_devices in the clone"
grep -q 'rxe0' "$work/run.log" || {
    tail -n 20 "$work/run.log"
    fail "lesson 01 did not list rxe0"
}

grade_args=()
[ "$exercises" = all ] || grade_args=(--exercises "$exercises")
step "./lab grade ${grade_args[*]} in the clone: the skeletons, by the visible checks"
./lab grade "${grade_args[@]}" >"$work/grade.log" 2>&1
status=$?
sed -n '/^Scores/,$p' "$work/grade.log"
[ "$status" = 1 ] || fail "./lab grade on the skeletons ended with status $status (1: checks failed)"
graded=0
for exercise in exercises/[0-9][0-9]_*/; do
    name=$(basename "$exercise")
    [ "$exercises" = all ] || [[ ",$exercises," == *",${name%%_*},"* ]] || continue
    graded=$((graded + 1))
    grep -qE "^  $name +0 of 70 points" "$work/grade.log" || fail "$name is not scored 0 of 70"
done
[ "$graded" -gt 0 ] || fail "no exercise of the clone matches '$exercises'"
! grep -q 'hidden:' "$work/grade.log" || fail "the student edition ran an instructor's check"
grep -q "^  total  .* 0 of $((graded * 70)) points" "$work/grade.log" || fail "the total is not 0 of $((graded * 70))"

# --- the GitHub Classroom edition, as its workflow grades it ----------------------
step "./lab export --classroom, checked out as the workflow does (submission/)"
cd "$work" || exit 1
"$repo/lab" export --classroom "$work/classroom" >"$work/export-classroom.log" 2>&1 || fail "./lab export --classroom"
workflow=$work/classroom/.github/workflows/classroom.yml
[ -f "$workflow" ] || fail "the classroom edition has no .github/workflows/classroom.yml"
mkdir -p "$work/runner"
git clone -q "$work/classroom" "$work/runner/submission" || fail "git clone of the classroom edition"

step "the grader package, fetched by its URL and unzipped (the workflow's second step)"
RDMA_LAB_GRADE_OUT=$work/package "$repo/grading/grade.sh" --gradescope >"$work/package.log" 2>&1 || {
    cat "$work/package.log"
    fail "./lab grade --gradescope"
}
GRADER_URL=file://$work/package/gradescope/autograder.zip
(cd "$work/runner" && curl -fsSL "$GRADER_URL" -o autograder.zip && mkdir grader && unzip -q autograder.zip -d grader) ||
    fail "fetching and unzipping the grader as the workflow does"
if [ ! -x "$work/runner/grader/run_autograder" ] || [ ! -x "$work/runner/grader/setup.sh" ]; then
    fail "the grader has no run_autograder or setup.sh at its root"
fi

step "run_autograder --submission --github-output, with the workflow's exercises"
workflow_exercises=$(sed -n 's/^ *RDMA_LAB_EXERCISES: "\([0-9,]*\)"$/\1/p' "$workflow")
runners=$(sed -n 's/^ *runners: *\([a-z0-9,]*\)$/\1/p' "$workflow")
if [ -z "$workflow_exercises" ] || [ -z "$runners" ]; then
    fail "the workflow names no exercises or runners"
fi
: >"$work/runner/github_output"
(cd "$work/runner" && RDMA_LAB_EXERCISES=$workflow_exercises RDMA_LAB_GRADE_BUILD=$build \
    grader/run_autograder --submission "$PWD/submission" --github-output "$work/runner/github_output") \
    >"$work/autograder.log" 2>&1
status=$?
[ "$status" = 0 ] || [ "$status" = 1 ] || {
    tail -n 30 "$work/autograder.log"
    fail "run_autograder ended with status $status"
}
for runner in ${runners//,/ }; do
    line=$(grep "^$runner=" "$work/runner/github_output")
    if [ -z "$line" ]; then
        fail "no payload for the workflow's runner $runner"
        continue
    fi
    json=$(base64 -d <<<"${line#*=}")
    # The skeletons fail; the grader is the instructor's, so its checks count.
    grep -q '^{"version":1,"status":"fail","max_score":100,"tests":\[' <<<"$json" ||
        fail "$runner: $(head -c 200 <<<"$json")"
done
echo "payloads: $(cut -d= -f1 "$work/runner/github_output" | tr '\n' ' ')"

step "done"
echo "edition_fresh_clone: $failures failure(s) in $((SECONDS - started)) s"
[ "$failures" -eq 0 ] && rm -rf "$work"
[ "$failures" -eq 0 ]

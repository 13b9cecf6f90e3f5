#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The grading run inside the micro-VM (one boot for a whole class): for every
# student and exercise whose program was built, run the exercise's check
# program against it. The check programs run as root here; each starts the
# student's program in its sandbox (an unprivileged user with nothing but a
# scratch folder, LAB_SANDBOX=strict).
#
#   grading/in-vm.sh COURSE WORK STUDENT...
#
# COURSE is the staged course (EXERCISE.check names each check program),
# WORK holds STUDENT/build/EXERCISE/program; results go to
# WORK/STUDENT/results/EXERCISE.tsv (one line per check) and .log (the check
# program's own output). RDMA_LAB_GRADE_JOBS check programs run at once
# (default 2, one per virtual CPU); an exercise that ran out of time beside
# another is graded again, alone, at the end (see below). When COURSE holds
# quiz-runs.tsv, the graded quizzes' run questions are re-run first, in the
# same boot (grading/quiz-runs.sh; grade.sh stages the list).
set -uo pipefail
course=$1 work=$2
shift 2
jobs=${RDMA_LAB_GRADE_JOBS:-2}
check_timeout=${RDMA_LAB_CHECK_TIMEOUT:-20}
export LAB_SANDBOX=strict RDMA_LAB_CHECK_TIMEOUT=$check_timeout

mapfile -t exercises <"$course/exercises.txt"

# Each check program starts once per student, and the repository reaches the
# VM over 9p without a page cache: every start read its 14 MB again, 1 to 2 s
# in the emulated CPU. A copy in the VM's memory (its /tmp) starts in a
# fraction of that. Where /tmp cannot take them, they run where they are.
declare -A check_program
checks_copy=$(mktemp -d /tmp/lab-checks.XXXXXX 2>/dev/null) || checks_copy=
trap '[ -z "$checks_copy" ] || rm -rf "$checks_copy"' EXIT
for exercise in "${exercises[@]}"; do
    check_program[$exercise]=$(cat "$course/$exercise.check")
    copy=$checks_copy/$(basename "${check_program[$exercise]}")
    if [ -n "$checks_copy" ] && cp "${check_program[$exercise]}" "$copy" 2>/dev/null; then
        check_program[$exercise]=$copy
    fi
done

if [ -s "$course/quiz-runs.tsv" ]; then
    bash "$course/quiz-runs.sh" "$(cat "$course/quiz-runs.build")" "$(cat "$course/quiz-runs.out")" \
        "$course/quiz-runs.tsv"
fi

grade_one() { # STUDENT EXERCISE
    local student=$1 exercise=$2 results=$work/$1/results
    local checks
    checks=$(grep -c . "$course/$exercise.checks")
    mkdir -p "$results"
    rm -f "$results/$exercise.tsv"
    local started=$EPOCHREALTIME
    # A check takes at most its deadline and a few seconds more; the check program as a whole too.
    LAB_SUBJECT=$work/$student/build/$exercise/program LAB_GRADE_RESULTS=$results/$exercise.tsv \
        timeout -k 10 $((checks * (check_timeout + 15) + 30)) "${check_program[$exercise]}" \
        >"$results/$exercise.log" 2>&1
    # (where the time goes: bench/grade-class.sh adds these up per exercise)
    awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.2f\n", b - a}' >"$results/$exercise.seconds"
    echo "grade: $student $exercise: $(grep -c '^pass' "$results/$exercise.tsv" 2>/dev/null || true) of $checks checks passed"
}

# (its first output, when it is graded again, stays beside it)
first_try() { # STUDENT EXERCISE
    local results=$work/$1/results
    mv "$results/$2.tsv" "$results/$2.first-try.tsv"
    mv "$results/$2.log" "$results/$2.first-try.log"
}

running=0
for student in "$@"; do
    for exercise in "${exercises[@]}"; do
        [ -x "$work/$student/build/$exercise/program" ] || continue
        grade_one "$student" "$exercise" &
        running=$((running + 1))
        if [ "$running" -ge "$jobs" ]; then
            wait -n
            running=$((running - 1))
        fi
    done
done
wait

# A check that ran out of time while another check program ran beside it may
# have lost that time to its neighbour, not to its own code: a submission
# that spins keeps a virtual CPU busy, and a busy host slows both. So an
# exercise with some checks passed and some out of time is graded again, on
# its own, once the others are done; its second result counts. One whose
# checks all failed is not: its program hangs or sleeps from the start, and
# would only cost the class its deadlines a second time.
if [ "$jobs" -gt 1 ]; then
    for student in "$@"; do
        for exercise in "${exercises[@]}"; do
            results=$work/$student/results/$exercise.tsv
            [ -f "$results" ] || continue
            grep -q $'^fail\t[^\t]*\tno result within' "$results" || continue
            grep -q '^pass' "$results" || continue
            echo "grade: $student $exercise: a check ran out of time while another ran beside it; graded again, alone"
            first_try "$student" "$exercise"
            grade_one "$student" "$exercise"
        done
    done
fi

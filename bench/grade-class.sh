#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The grading benchmark: ./lab grade --class on a made-up class of STUDENTS
# submissions (default 30) of every exercise, timed from start to
# gradebook. It runs on this host (grading boots its own micro-VM); the target
# is 30 students in at most 10 minutes on a 2-core machine without KVM.
#
#   bench/grade-class.sh [STUDENTS]
#
# The class: two students in three hand in every solution, the others the
# solutions with one exercise left as the skeleton (which fails every check,
# each with its reason), and every student has taken every graded quiz.
# Prints the time in all, per student, and of the phases (compile, checks,
# the quizzes' re-runs), the similarity report's summary and the
# gradebook's first lines.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
students=${1:-30}
[[ $students =~ ^[1-9][0-9]*$ ]] || {
    echo "usage: bench/grade-class.sh [STUDENTS]" >&2
    exit 2
}
work=$repo/build/bench-grade-class
rm -rf "$work"
mkdir -p "$work/class"
exercises=() # every exercise that has a solution
for folder in "$repo"/solutions/[0-9][0-9]_*/; do
    exercises+=("$(basename "$folder")")
done
for ((i = 1; i <= students; i++)); do
    student=$(printf 'student%02d' "$i")
    skipped=''
    ((i % 3 == 0)) && skipped=${exercises[$(((i / 3) % ${#exercises[@]}))]}
    for exercise in "${exercises[@]}"; do
        mkdir -p "$work/class/$student/$exercise"
        if [ "$exercise" = "$skipped" ]; then
            for file in "$repo/solutions/$exercise"/*.cpp; do
                cp "$repo/exercises/$exercise/$(basename "$file")" "$work/class/$student/$exercise/"
            done
        else
            cp "$repo/solutions/$exercise"/*.cpp "$work/class/$student/$exercise/"
        fi
    done
done

# Build the course first: the benchmark is about grading, not about a first build.
build=${RDMA_LAB_GRADE_BUILD:-$repo/build/default}
echo "grade-class: building the checks and the quiz program (not timed)" >&2
cmake --build "$build" --target grade_kit lab_quiz -j 2 >/dev/null

# Every student takes every graded quiz, as ./lab quiz NN --graded records it
# (its answers file in the student's repository), typing the same few answers
# over and over: a question takes the first that parses for it ("a" a
# choice, 1 a number, a status or state name a name). Right or wrong does
# not matter here; what costs time is that grading re-runs each run question
# for the student's own variant.
echo "grade-class: every student answers every graded quiz (not timed)" >&2
typing=$(for ((k = 0; k < 300; k++)); do
    printf '%s\n' a 1 IBV_WC_SUCCESS EINVAL IBV_QPS_RTS IBV_MTU_1024 IBV_EVENT_SQ_DRAINED
done)
for ((i = 1; i <= students; i++)); do
    student=$(printf 'student%02d' "$i")
    for paper in "$repo"/quizzes/graded/*.paper; do
        "$build/tools/quiz/lab-quiz" --banks "$repo/quizzes/graded" \
            --answers "$work/class/$student/quizzes/answers/graded" \
            --course "$repo/grading/course.conf" --student "$student" \
            graded "$(basename "$paper" .paper)" <<<"$typing" >/dev/null ||
            { echo "grade-class: $student could not take quiz $(basename "$paper" .paper)" >&2; exit 1; }
    done
done

echo "grade-class: grading $students students x ${#exercises[@]} exercises" >&2
log=$work/grade.log
started=$(date +%s)
status=0
RDMA_LAB_GRADE_OUT=$work/out "$repo/grading/grade.sh" --class "$work/class" >"$log" 2>&1 || status=$?
seconds=$(($(date +%s) - started))
[ "$status" -le 1 ] || {
    tail -n 30 "$log" >&2
    echo "grade-class: grading failed (status $status)" >&2
    exit 1
}
compiled=$(sed -n 's/^grade: compiled in \([0-9]*\) s$/\1/p' "$log")
checked=$(sed -n 's/^grade: checks ran in \([0-9]*\) s$/\1/p' "$log")
quiz_commands=$(sed -n 's/^grade: quiz runs: \([0-9]*\) command(s) run on rxe.*$/\1/p' "$log")
quiz_runs=$(sed -n 's/^grade: quiz runs: .* in \([0-9]*\) s$/\1/p' "$log")
precompiled=$(sed -n 's/^grade: precompiled the course.s headers for [0-9]* exercise(s) in \([0-9]*\) s$/\1/p' "$log")
echo "grade-class: $students students x ${#exercises[@]} exercises in $seconds s" \
    "($(awk -v s="$seconds" -v n="$students" 'BEGIN {printf "%.1f", s / n}') s per student;" \
    "precompiled headers ${precompiled:-0} s, compile ${compiled:-?} s, checks in the micro-VM ${checked:-?} s," \
    "of which the quizzes' ${quiz_commands:-0} run question command(s) ${quiz_runs:-0} s)"
# Where the time goes: seconds per exercise, summed over the class, of its
# compile (in the sandbox) and of its check program (in the micro-VM; two ran
# at a time, so these add up to about twice the checks' wall time).
echo "grade-class: seconds per exercise, summed over the class (compile, checks):"
for exercise in "${exercises[@]}"; do
    compile=$(cat "$work/out/class/work"/*/build/"$exercise"/seconds 2>/dev/null | awk '{s += $1} END {printf "%.0f", s}')
    checks=$(cat "$work/out/class/work"/*/results/"$exercise".seconds 2>/dev/null | awk '{s += $1} END {printf "%.0f", s}')
    printf '  %-24s %6s %6s\n' "$exercise" "$compile" "$checks"
done
head -n 4 "$work/out/class/gradebook.csv"
grep -m 1 '^grade: similarity:' "$log" || true

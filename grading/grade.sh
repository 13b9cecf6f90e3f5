#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ./lab grade: run the exercise checks on your work, on a whole class, or
# package them for Gradescope.
#
#   ./lab grade [--junit FILE] [--exercises LIST] [DIR]
#         grade DIR, a copy of exercises/ (default: exercises/): every check
#         with pass or FAIL and why, a score per exercise, a JUnit report
#         (default build/grade/grade-report.xml)
#   ./lab grade --class DIR [--exercises LIST] [--report-scores FILE] [--only STUDENT]
#         grade a class: DIR holds one entry per student, a folder shaped like
#         exercises/ or a .zip or .tar.gz of one (a git repository or not);
#         prints a score table, writes build/grade/class/gradebook.csv and, per
#         student, a text and a JUnit report in build/grade/class/reports/;
#         compares the submissions with sim_c++ (grading/similarity.sh) into
#         build/grade/class/similarity.txt. The gradebook follows
#         grading/course.conf: the syllabus's weights, late days from each
#         exercise's last commit against its deadline, exercise 01's report
#         (--report-scores: a CSV of student,score), the quizzes (quizzes.tsv
#         in build/grade/class/work/STUDENT/), the weighted total.
#         --only STUDENT grades that one submission of DIR again, keeps the
#         others' results from the last class run, and rewrites the gradebook
#   ./lab grade --gradescope [--visible-only] [--per-exercise]
#         write build/grade/gradescope/autograder.zip (setup.sh, run_autograder);
#         --visible-only leaves the instructor's own checks out of it (for
#         GitHub Classroom, whose students can fetch the package);
#         --per-exercise also writes one package per exercise, for one
#         Gradescope assignment each: build/grade/gradescope/NN_name/autograder.zip
#   ./lab grade --submission DIR [--gradescope-results FILE] [--github-output FILE]
#         grade one submission for a platform (run_autograder, the GitHub
#         Classroom workflow): results.json, or lines for $GITHUB_OUTPUT
#
# LIST: exercise numbers, e.g. 01,05 (default: all). Only the files each
# exercise names as edited by the student are taken from a submission; they
# are compiled in a sandbox against the course's objects, built once, and
# the check programs run in one micro-VM boot, each starting the student's
# program in a sandbox of its own. Points: grading/points.conf.
# RDMA_LAB_CHECK_TIMEOUT: seconds a check may take (default 20);
# RDMA_LAB_POINTS: another points file; RDMA_LAB_COURSE_CONF: another course
# file; RDMA_LAB_GRADE_OUT: another output folder (inside the checkout)
# instead of build/grade.
# Exit status: 0 when every check passed, 1 when some failed, 2 on bad usage.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
grading=$repo/grading

die() {
    echo "grade: $*" >&2
    exit 2
}
say() { echo "grade: $*" >&2; }

usage_line="usage: ./lab grade [--junit FILE] [--exercises LIST] [DIR] | --class DIR [--only STUDENT] | --gradescope [--visible-only] [--per-exercise]"
mode=single dir='' junit='' exercises_wanted='' submission='' gradescope_results='' github_output='' package_args=()
only='' report_scores=''
while [ $# -gt 0 ]; do
    case "$1" in
    --junit | --exercises | --class | --submission | --gradescope-results | --github-output | --only | --report-scores)
        [ $# -ge 2 ] || die "$1 needs a value ($usage_line)"
        case "$1" in
        --junit) junit=$2 ;;
        --exercises) exercises_wanted=$2 ;;
        --class) mode=class dir=$2 ;;
        --submission) mode=submission submission=$2 ;;
        --gradescope-results) gradescope_results=$2 ;;
        --github-output) github_output=$2 ;;
        --only) only=$2 ;;
        --report-scores) report_scores=$(realpath -m -- "$2") ;;
        esac
        shift 2
        ;;
    --gradescope)
        mode=package
        shift
        ;;
    --visible-only | --per-exercise)
        package_args+=("$1")
        shift
        ;;
    -h | --help)
        awk 'NR > 1 && !/^#/ {exit} NR > 1 && !/SPDX-License-Identifier:/ {sub(/^# ?/, ""); print}' "$0"
        exit 0
        ;;
    -*) die "unknown option '$1' ($usage_line)" ;;
    *)
        [ -z "$dir" ] || die "one folder only ($usage_line)"
        dir=$1
        shift
        ;;
    esac
done
case "$mode" in
single)
    dir=${dir:-$repo/exercises}
    [ -d "$dir" ] || die "'$dir' is not a folder (give a copy of exercises/)"
    ;;
class)
    [ -d "$dir" ] || die "'$dir' is not a folder (give a folder with one entry per student)"
    [ -z "$report_scores" ] || [ -f "$report_scores" ] || die "--report-scores: no file $report_scores"
    ;;
submission) [ -d "$submission" ] || die "'$submission' is not a folder" ;;
esac
[[ $exercises_wanted =~ ^([0-9][0-9](,[0-9][0-9])*)?$ ]] ||
    die "--exercises takes exercise numbers, e.g. 01,05 (not '$exercises_wanted')"

[ -z "$only" ] || [ "$mode" = class ] || die "--only STUDENT goes with --class DIR"
[ -z "$only" ] || [[ $only =~ ^[A-Za-z0-9_-][A-Za-z0-9._-]*$ ]] ||
    die "--only takes a student's name as the gradebook writes it, not '$only'"
[ -z "$report_scores" ] || [ "$mode" = class ] || die "--report-scores goes with --class DIR"
if [ "$mode" = package ]; then
    exec "$grading/gradescope/package.sh" "${package_args[@]}"
fi

# Where RDMA runs for grading: always the micro-VM, whatever the host has.
run_in_vm() { "$repo/vm/microvm.sh" --timeout "${RDMA_LAB_GRADE_VM_TIMEOUT:-7200}" -- "$@"; }

started=$SECONDS
build=${RDMA_LAB_GRADE_BUILD:-$repo/build/default}
out=${RDMA_LAB_GRADE_OUT:-$repo/build/grade} # inside the checkout: the micro-VM sees it
mkdir -p "$out"
out=$(cd "$out" && pwd) # absolute: the sandboxes and the micro-VM work in other folders
course=$out/course
plan=${RDMA_LAB_COURSE_CONF:-$grading/course.conf}

# --- 1. the course's objects and check programs, built once ------------------
say "building the checks and the course's objects (${build#"$repo"/})"
if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$out/configure.log" 2>&1 ||
        die "cmake configure failed (see $out/configure.log)"
fi
cmake --build "$build" --target grade_kit -j 2 >"$out/build.log" 2>&1 || {
    grep -E 'error' "$out/build.log" | head -n 10 >&2
    die "building the checks failed (full log: ${out#"$repo"/}/build.log)"
}
if [ "$mode" = class ]; then
    # The course file, checked before anything is graded.
    problem=$("$build/grading/lab_grade_report" --check-plan "$plan" \
        --course-folders "$repo/exercises,$repo/lessons" 2>&1) || {
        problem=${problem#lab_grade_report: }
        die "${problem//"$repo"\//}"
    }
fi
# --only: the exercises of the last class run, whose results are kept.
if [ -n "$only" ]; then
    if [ ! -f "$out/class/exercises.txt" ] || [ ! -d "$out/class/work" ]; then
        die "--only: no class run to start from in ${out#"$repo"/}/class: grade the class first"
    fi
    last=$(cut -c1-2 "$out/class/exercises.txt" | paste -sd,)
    [ -z "$exercises_wanted" ] || [ "$exercises_wanted" = "$last" ] ||
        die "--only: the last class run graded exercises $last, not $exercises_wanted"
    exercises_wanted=$last
fi

# --- 2. stage the course: headers, objects and recipes, for the sandboxes ----
rm -rf "$course"
mkdir -p "$course/include" "$course/lib"
exercises=()
for manifest in "$build"/grading/[0-9][0-9]_*.manifest; do
    [ -e "$manifest" ] || continue
    exercise=$(basename "$manifest" .manifest)
    if [ -n "$exercises_wanted" ] && [[ ",$exercises_wanted," != *",${exercise%%_*},"* ]]; then
        continue
    fi
    exercises+=("$exercise")
    mkdir -p "$course/include/$exercise" "$course/lib/$exercise"
    edited=() objects=() libraries=() link=() flags=() compiler='' check=''
    index=0
    while IFS=$'\t' read -r key value; do
        case "$key" in
        edited) edited+=("$value") ;;
        header) cp "$value" "$course/include/$exercise/" ;;
        include)
            (cd "$value" && find . -name '*.hpp' -exec cp --parents {} "$course/include/" \;)
            ;;
        object)
            cp "$value" "$course/lib/$exercise/$index.o"
            objects+=("lib/$exercise/$index.o")
            index=$((index + 1))
            ;;
        library)
            cp "$value" "$course/lib/"
            libraries+=("lib/$(basename "$value")")
            ;;
        link) link+=("$value") ;;
        flag) flags+=("$value") ;;
        compiler) compiler=$(realpath "$value") ;;
        check) check=$value ;;
        esac
    done <"$manifest"
    {
        printf 'COMPILER=%q\n' "$compiler"
        printf 'FLAGS=(%s)\n' "$(printf '%q ' "${flags[@]}")"
        printf 'EDITED=(%s)\n' "$(printf '%q ' "${edited[@]}")"
        printf 'OBJECTS=(%s)\n' "$(printf '%q ' "${objects[@]}")"
        printf 'LIBRARIES=(%s)\n' "$(printf '%q ' "${libraries[@]}")"
        printf 'LINK=(%s)\n' "$(printf '%q ' "${link[@]}")"
    } >"$course/$exercise.build"
    cp "$build/grading/$exercise.checks" "$course/$exercise.checks"
    printf '%s\n' "$check" >"$course/$exercise.check"
done
[ ${#exercises[@]} -gt 0 ] || die "no exercise to grade${exercises_wanted:+ among $exercises_wanted}"
printf '%s\n' "${exercises[@]}" >"$course/exercises.txt"
cp "$grading/compile-exercise.sh" "$grading/intake.sh" "$course/"

# The compiler and the unpacking run in a sandbox that sees none of this
# checkout. Where this host allows no namespaces (Gradescope's container),
# that is acceptable only for a course tree without solutions.
if ! "$grading/host-sandbox.sh" --check; then
    if [ -d "$repo/solutions" ]; then
        die "this host allows no mount namespaces, so a submission could #include the solutions in $repo/solutions; grade where unshare works (root, or user namespaces)"
    fi
    export RDMA_LAB_HOST_SANDBOX=none
fi

# --- 3. the submissions: only the edited files of each ------------------------
case "$mode" in
single) work=$out/work ;;
class) work=$out/class/work ;;
submission) work=$out/submission/work ;;
esac
[ -n "$only" ] || rm -rf "$work" # --only: the others' results stay
mkdir -p "$work"
students=()

# intake STUDENT KIND PATH: copy the edited files of one submission.
intake() {
    local student=$1 kind=$2 path=$3 folder archive=''
    mkdir -p "$work/$student"
    if [ "$kind" = folder ]; then
        folder=$(cd "$path" && pwd)
    else
        folder=$(cd "$(dirname "$path")" && pwd)
        archive=$(basename "$path")
    fi
    # shellcheck disable=SC2016 # the sandbox's shell expands it
    "$grading/host-sandbox.sh" --timeout 120 --ro "$folder:/in" --ro "$course:/course" \
        --rw "$work/$student:/out" -- \
        bash -c 'exec bash "${LAB_PATH_COURSE:-/course}/intake.sh" "$@"' intake "$kind" "$archive" ||
        say "$student: the submission could not be read completely"
    students+=("$student")
}

case "$mode" in
single) intake "$(basename "$(cd "$dir" && pwd)" | tr -c 'A-Za-z0-9._\n-' '_')" folder "$dir" ;;
submission) intake submission folder "$submission" ;;
class)
    declare -A taken=()
    shopt -s nullglob
    for entry in "$dir"/*; do
        base=$(basename "$entry")
        case "$base" in
        *.zip) kind=zip name=${base%.zip} ;;
        *.tar.gz) kind=tar name=${base%.tar.gz} ;;
        *.tgz) kind=tar name=${base%.tgz} ;;
        *)
            if [ -d "$entry" ] && [ ! -L "$entry" ]; then
                kind=folder name=$base
            else
                say "skipping $base: not a folder, .zip or .tar.gz"
                continue
            fi
            ;;
        esac
        name=$(printf '%s' "$name" | tr -c 'A-Za-z0-9._-' '_')
        if [ -n "${taken[$name]:-}" ]; then
            say "skipping $base: a submission named $name was already taken"
            continue
        fi
        taken[$name]=1
        if [ -n "$only" ]; then
            [ "$name" = "$only" ] || continue
            rm -rf "${work:?}/$only"
        fi
        intake "$name" "$kind" "$entry"
    done
    [ -z "$only" ] || [ ${#students[@]} -gt 0 ] || die "--only: $dir holds no submission named $only"
    [ ${#students[@]} -gt 0 ] || die "$dir holds no submissions (folders, .zip or .tar.gz files)"
    cp "$course/exercises.txt" "$out/class/exercises.txt"
    ;;
esac
say "${#students[@]} submission(s), ${#exercises[@]} exercise(s)"

# --- 4. compile each student's files in the sandbox, two at a time -------------
compile_student() {
    local student=$1
    mkdir -p "$work/$student/build"
    # shellcheck disable=SC2016 # the inner shell expands it
    "$grading/host-sandbox.sh" --timeout $((90 * ${#exercises[@]})) --ro "$course:/course" \
        --ro "$work/$student/src:/src" --rw "$work/$student/build:/out" -- \
        bash -c 'for exercise; do bash "${LAB_PATH_COURSE:-/course}/compile-exercise.sh" "$exercise"; done' \
        compile "${exercises[@]}" >"$work/$student/build/sandbox.log" 2>&1 ||
        say "$student: the compile sandbox ended with status $?"
}
compile_started=$SECONDS
running=0
for student in "${students[@]}"; do
    mkdir -p "$work/$student/src"
    compile_student "$student" &
    running=$((running + 1))
    if [ "$running" -ge "${RDMA_LAB_GRADE_COMPILE_JOBS:-2}" ]; then
        wait -n || true
        running=$((running - 1))
    fi
done
wait || true
say "compiled in $((SECONDS - compile_started)) s"

# --- 5. run the checks: one micro-VM boot for everyone -------------------------
check_started=$SECONDS
built=0
for student in "${students[@]}"; do
    for program in "$work/$student"/build/*/program; do
        [ ! -x "$program" ] || built=1
    done
done
if [ "$built" = 0 ]; then
    say "no program was built: no check to run"
else
    say "running the checks in the micro-VM"
    run_in_vm "$grading/in-vm.sh" "$course" "$work" "${students[@]}" ||
        say "the micro-VM run ended with status $? (the results so far are used)"
    say "checks ran in $((SECONDS - check_started)) s"
fi

# --- 6. scores and reports ----------------------------------------------------
report=("$build/grading/lab_grade_report" --course "$course" --work "$work"
    --points "${RDMA_LAB_POINTS:-$grading/points.conf}")
status=0
case "$mode" in
single)
    junit=${junit:-$out/grade-report.xml}
    case "$junit" in /*) ;; *) junit=$PWD/$junit ;; esac
    echo
    "${report[@]}" --print checks --junit "$junit" --reports "$out/reports" || status=$?
    echo
    say "JUnit report: $junit"
    ;;
class)
    plan_args=(--plan "$plan")
    [ -z "$report_scores" ] || plan_args+=(--report-scores "$report_scores")
    "${report[@]}" --print table --reports "$out/class/reports" \
        --gradebook "$out/class/gradebook.csv" "${plan_args[@]}" || status=$?
    echo
    say "gradebook: ${out#"$repo"/}/class/gradebook.csv; reports: ${out#"$repo"/}/class/reports/"
    # Similar submissions, beside the gradebook: a lead for the instructor, no score.
    (cd "$repo" && "$grading/similarity.sh" --skeleton exercises --sources src \
        --report "${out#"$repo"/}/class/similarity.txt" "$work") 2>&1 | sed 's/^/grade: /' >&2 || true
    ;;
submission)
    args=(--print checks --reports "$out/submission/reports")
    [ -z "$gradescope_results" ] || args+=(--gradescope "$gradescope_results")
    [ -z "$github_output" ] || args+=(--github "$github_output")
    "${report[@]}" "${args[@]}" || status=$?
    ;;
esac
say "graded ${#students[@]} submission(s) in $((SECONDS - started)) s"
[ "$status" -le 1 ] || die "the reports could not be written"
exit "$status"

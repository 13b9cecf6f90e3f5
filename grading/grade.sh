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
#         in build/grade/class/work/STUDENT/results/), the weighted total.
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
# Graded quizzes: where the instructor's banks are (grading/quizzes/), the
# first mode also scores the student's quiz answers
# (DIR/../quizzes/answers/graded/, or RDMA_LAB_QUIZ_ANSWERS), re-running
# their "run it" questions on rxe in the same micro-VM boot, once per
# distinct command (cached in build/grade/quiz-runs/), and writes
# quizzes.tsv (QUIZ, score, max) and quiz-feedback/ beside the student's
# results (build/grade/work/STUDENT/results/). The student id that seeds the
# variants is RDMA_LAB_STUDENT, else the one the answers files name.
# RDMA_LAB_CHECK_TIMEOUT: seconds a check may take (default 20);
# RDMA_LAB_GRADE_COMPILE_JOBS: students compiled at a time (default 2);
# RDMA_LAB_GRADE_PCH_MIN: how many students' files must open with the same
# #include lines for them to be precompiled (default 3);
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
# First the precompiled headers, once for the class: per exercise, the
# #include lines that open the most students' files, when at least
# RDMA_LAB_GRADE_PCH_MIN (default 3) students' files start with them
# (compile-exercise.sh says when a file uses them, and why that changes
# nothing a student sees). Built in a sandbox that sees the course alone.
pch_exercises=()
rm -rf "$course/pch"
mkdir -p "$course/pch"
for exercise in "${exercises[@]}"; do
    edited_file=$(sed -n 's/^EDITED=(\(.*\) )$/\1/p' "$course/$exercise.build")
    [[ $edited_file =~ ^[A-Za-z0-9_.-]+$ ]] || continue # one edited file, plainly named
    openings=$work/pch-$exercise.txt
    : >"$openings"
    for student in "${students[@]}"; do
        file=$work/$student/src/$exercise/$edited_file
        if [ -f "$file" ] && [ ! -L "$file" ]; then
            bash "$grading/compile-exercise.sh" --opening "$file" | tr '\n' '\1' >>"$openings" || true
        fi
        printf '\n' >>"$openings"
    done
    # The commonest opening, and how many openings start with it.
    best=$(grep -v '^$' "$openings" | sort | uniq -c | sort -k1,1nr -k2 | head -n 1 | sed 's/^ *[0-9]* //') || true
    [ -n "$best" ] || continue
    count=$(awk -v b="$best" 'index($0, b) == 1' "$openings" | wc -l)
    [ "$count" -ge "${RDMA_LAB_GRADE_PCH_MIN:-3}" ] || continue
    mkdir -p "$course/pch/$exercise"
    printf '%s' "$best" | tr '\1' '\n' >"$course/pch/$exercise/prefix.hpp"
    pch_exercises+=("$exercise")
done
if [ ${#pch_exercises[@]} -gt 0 ]; then
    pch_started=$SECONDS
    # shellcheck disable=SC2016 # the inner shell expands it
    "$grading/host-sandbox.sh" --timeout 600 --ro "$course:/course" --rw "$course/pch:/course/pch" -- \
        bash -c 'for exercise; do bash "${LAB_PATH_COURSE:-/course}/compile-exercise.sh" --pch "$exercise" &
            [ "$(jobs -r | wc -l)" -lt 2 ] || wait -n; done; wait' \
        pch "${pch_exercises[@]}" >"$course/pch/sandbox.log" 2>&1 ||
        say "the precompiled headers' sandbox ended with status $? (compiling without them)"
    say "precompiled the course's headers for ${#pch_exercises[@]} exercise(s) in $((SECONDS - pch_started)) s"
fi
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
rm -rf "$course/pch" # about 65 MB an exercise, of no use to the checks

# --- 4b. graded quizzes: the run questions to re-run in the same boot -------
# quiz_of STUDENT: the lab-quiz command line for one student's answers. In a
# class, the answers come with the submission (intake.sh took them); alone,
# they are beside the graded folder. The variants are drawn for the student id
# of RDMA_LAB_ROSTER (a CSV file of SUBMISSION,ID lines: the id each student
# was told to take the quizzes with) or RDMA_LAB_STUDENT; without one, for the
# id the answers file gives, which the student wrote, and the grade says so.
quiz=() quizzes_graded=0
declare -A quiz_answers_of=() roster=()
if [ -n "${RDMA_LAB_ROSTER:-}" ]; then
    [ -f "$RDMA_LAB_ROSTER" ] || die "RDMA_LAB_ROSTER: no file $RDMA_LAB_ROSTER"
    while IFS=, read -r name id _; do
        [ -z "$name" ] || [ -z "$id" ] || roster[$name]=$id
    done < <(tr -d '\r' <"$RDMA_LAB_ROSTER")
fi
quiz_of() {
    quiz=("$build/tools/quiz/lab-quiz" --banks "$grading/quizzes" --answers "${quiz_answers_of[$1]}"
        --course "$grading/course.conf")
    if [ -n "${roster[$1]:-}" ]; then
        quiz+=(--student "${roster[$1]}")
    elif [ "$mode" = single ] && [ -n "${RDMA_LAB_STUDENT:-}" ]; then
        quiz+=(--student "$RDMA_LAB_STUDENT")
    fi
}
if [ "$mode" != submission ] && [ -d "$grading/quizzes" ]; then
    quizzes_graded=1
    mkdir -p "$out/no-answers"
    for student in "${students[@]}"; do
        quiz_answers_of[$student]=$out/no-answers
        if [ "$mode" = class ]; then
            [ ! -d "$work/$student/quizzes" ] || quiz_answers_of[$student]=$work/$student/quizzes
            continue
        fi
        for candidate in "${RDMA_LAB_QUIZ_ANSWERS:-}" "$dir/quizzes/answers/graded" "$dir/../quizzes/answers/graded"; do
            if [ -n "$candidate" ] && [ -d "$candidate" ]; then
                quiz_answers_of[$student]=$candidate
                break
            fi
        done
        [ "${quiz_answers_of[$student]}" != "$out/no-answers" ] ||
            say "no graded quiz answers (quizzes/answers/graded/) beside $dir: the quizzes score 0"
    done
    cmake --build "$build" --target lab_quiz -j 2 >>"$out/build.log" 2>&1 || die "building lab-quiz failed (see ${out#"$repo"/}/build.log)"
    # Every distinct command the class's variants ask for, once.
    for student in "${students[@]}"; do
        quiz_of "$student"
        "${quiz[@]}" runs 2> >(sed "s/^lab-quiz: /grade: $student: /" >&2) ||
            die "the graded quiz banks could not be read"
    done | sort -u >"$course/quiz-runs.tsv"
    if [ -s "$course/quiz-runs.tsv" ]; then
        mapfile -t quiz_lessons < <(cut -f2 "$course/quiz-runs.tsv" | awk '$1 == "./lab" && $2 == "run" { t = $3; if (split(t, p, "/") == 2) t = substr(p[1], 1, 2) "_" p[2]; print t }' | sort -u)
        [ ${#quiz_lessons[@]} -eq 0 ] || cmake --build "$build" --target "${quiz_lessons[@]}" -j 2 >>"$out/build.log" 2>&1 ||
            die "building the lessons the quizzes re-run failed (see ${out#"$repo"/}/build.log)"
        printf '%s\n' "$build" >"$course/quiz-runs.build"
        printf '%s\n' "$out/quiz-runs" >"$course/quiz-runs.out"
        cp "$grading/quiz-runs.sh" "$repo/vm/run-pair.sh" "$course/"
        say "quizzes: $(grep -c . "$course/quiz-runs.tsv") run question command(s) to check on rxe"
    fi
fi

# --- 5. run the checks: one micro-VM boot for everyone -------------------------
check_started=$SECONDS
built=0
for student in "${students[@]}"; do
    for program in "$work/$student"/build/*/program; do
        [ ! -x "$program" ] || built=1
    done
done
# (the graded quizzes' re-runs need the boot too)
[ ! -s "$course/quiz-runs.tsv" ] || built=1
if [ "$built" = 0 ]; then
    say "no program was built: no check to run"
else
    say "running the checks in the micro-VM"
    run_in_vm "$grading/in-vm.sh" "$course" "$work" "${students[@]}" ||
        say "the micro-VM run ended with status $? (the results so far are used)"
    say "checks ran in $((SECONDS - check_started)) s"
fi

# The quizzes' scores, beside the exercises' results: quizzes.tsv and the
# feedback the banks' release policy allows.
if [ "$quizzes_graded" = 1 ]; then
    for student in "${students[@]}"; do
        results=$work/$student/results
        mkdir -p "$results"
        quiz_of "$student"
        "${quiz[@]}" --runs "$out/quiz-runs" --feedback "$results/quiz-feedback" grade \
            >"$results/quizzes.tsv" 2> >(sed "s/^lab-quiz: /grade: $student: /" >&2) ||
            say "$student: the quizzes could not be graded"
        if [ "$mode" = class ]; then
            if [ -z "${roster[$student]:-}" ] && [ "${quiz_answers_of[$student]}" != "$out/no-answers" ]; then
                say "$student: quizzes graded for the id their answers files give ($(sed -n 's/.*student=\([^ ]*\).*/\1/p;q' "${quiz_answers_of[$student]}"/*.txt | head -n 1)); RDMA_LAB_ROSTER fixes it"
            fi
            continue
        fi
        while IFS=$'\t' read -r name score max; do
            say "quiz $name: $score of $max"
        done <"$results/quizzes.tsv"
    done
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

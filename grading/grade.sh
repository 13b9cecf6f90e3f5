#!/usr/bin/env bash
# Grade a copy of the exercises: build each exercise's checks against it, run
# them check by check on an RDMA device (the host's, or the micro-VM's rxe0),
# print every check with pass or FAIL, a score per exercise and in total, and
# write a JUnit XML report.
#
#   ./lab grade [--junit FILE] [DIR]      DIR: a copy of exercises/ (default: exercises/)
#
# An exercise that does not build scores 0 and shows the compiler's first
# error; an exercise missing from DIR scores 0. Nothing waits forever: the
# build of each exercise, each check and the whole run have deadlines
# (RDMA_LAB_BUILD_TIMEOUT, RDMA_LAB_CHECK_TIMEOUT seconds; 600 and 120).
# Exit status: 0 when every check passed, 1 when some failed, 2 on bad usage.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_timeout=${RDMA_LAB_BUILD_TIMEOUT:-600}
junit=$repo/build/grade/grade-report.xml

die() {
    echo "grade: $*" >&2
    exit 2
}

dir=''
while [ $# -gt 0 ]; do
    case "$1" in
    --junit)
        [ $# -ge 2 ] || die "--junit needs a file name"
        junit=$2
        shift 2
        ;;
    -h | --help)
        sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    -*) die "unknown option '$1' (usage: ./lab grade [--junit FILE] [DIR])" ;;
    *)
        [ -z "$dir" ] || die "one folder only (usage: ./lab grade [--junit FILE] [DIR])"
        dir=$1
        shift
        ;;
    esac
done
dir=${dir:-$repo/exercises}
[ -d "$dir" ] || die "'$dir' is not a folder (give a copy of exercises/)"
dir=$(cd "$dir" && pwd)
case "$junit" in /*) ;; *) junit=$PWD/$junit ;; esac

# The build and the reports live in the repository: the micro-VM can write there.
build=$repo/build/grade
reports=$build/reports
mkdir -p "$build" "$reports" "$(dirname "$junit")"
rm -rf "${reports:?}"/*

# The exercises that can be graded: those whose checks the course ships.
exercises=()
for source in "$repo"/tests/exercises/test_[0-9][0-9]_*.cpp; do
    [ -e "$source" ] || continue
    name=$(basename "$source" .cpp)
    exercises+=("${name#test_}")
done
[ ${#exercises[@]} -gt 0 ] || die "this checkout has no exercise checks (tests/exercises/)"

echo "grade: grading $dir"
echo "grade: configuring (build/grade)"
if ! timeout "$build_timeout" cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DLAB_EXERCISES_DIR="$dir" >"$build/configure.log" 2>&1; then
    first=$(grep -m 1 -A 3 'CMake Error' "$build/configure.log" | tr '\n' ' ' || true)
    configure_error="cmake configure failed: ${first:-see build/grade/configure.log}"
    echo "grade: $configure_error" >&2
fi

# Build each exercise's checks on its own, so that one that does not compile
# costs only its own points.
to_run=()
for exercise in "${exercises[@]}"; do
    number=${exercise%%_*}
    target=check_ex${number}_${exercise#*_}
    mkdir -p "$reports/$exercise"
    if [ ! -d "$dir/$exercise" ]; then
        printf 'missing\t%s\n' "there is no folder $exercise in $dir" >"$reports/$exercise/build.tsv"
        continue
    fi
    if [ -n "${configure_error:-}" ]; then
        printf 'error\t%s\n' "$configure_error" >"$reports/$exercise/build.tsv"
        continue
    fi
    echo "grade: building the checks of $exercise"
    log=$reports/$exercise/build.log
    if timeout "$build_timeout" cmake --build "$build" --target "$target" -j2 >"$log" 2>&1; then
        to_run+=("$exercise=$build/tests/$target")
    else
        status=$?
        if [ "$status" = 124 ]; then
            reason="the build took longer than $build_timeout s"
        else
            reason=$(grep -m 1 -E 'error:|Error [0-9]|No rule to make target' "$log" || true)
            reason=${reason#"$repo/"}
            reason=${reason#"$dir/"}
        fi
        printf 'error\t%s\n' "does not build: ${reason:-see build/grade/reports/$exercise/build.log}" \
            >"$reports/$exercise/build.tsv"
    fi
done

if [ ${#to_run[@]} -gt 0 ]; then
    echo "grade: running the checks on an RDMA device"
    "$repo/vm/on-target.sh" "$repo/grading/run-checks.sh" "$reports" "${to_run[@]}" ||
        echo "grade: the run on the device ended with status $? (results so far are used)" >&2
fi

# --- scores and the JUnit report ----------------------------------------------

xml_escape() {
    local text=$1
    text=${text//&/&amp;}
    text=${text//</&lt;}
    text=${text//>/&gt;}
    text=${text//\"/&quot;}
    printf '%s' "$text"
}

# A <testcase> that failed without a Catch2 report of its own (a build error, a timeout).
failed_case() { # EXERCISE NAME REASON TYPE
    printf '    <testcase classname="%s" name="%s" time="0">\n' "$1" "$(xml_escape "$2")"
    printf '      <failure message="%s" type="%s"/>\n' "$(xml_escape "$3")" "$4"
    printf '    </testcase>\n'
}

# The <testcase> elements of one Catch2 JUnit report, re-labelled with the exercise.
testcases_of() { # REPORT EXERCISE
    awk -v exercise="$2" '
        /<testcase / { inside = 1 }
        inside { sub(/classname="[^"]*"/, "classname=\"" exercise "\""); print }
        inside && (/<testcase [^>]*\/>/ || /<\/testcase>/) { inside = 0 }
    ' "$1"
}

echo
echo "Scores"
total_points=0
all_passed=1
suites=''
for exercise in "${exercises[@]}"; do
    results=$reports/$exercise/results.tsv
    cases=''
    if [ -f "$reports/$exercise/build.tsv" ] || [ ! -s "$results" ]; then
        reason=$(cut -f 2 "$reports/$exercise/build.tsv" 2>/dev/null || echo "the checks did not run")
        printf '  %-26s   0 points   %s\n' "$exercise" "$reason"
        all_passed=0
        suites+="  <testsuite name=\"$exercise\" tests=\"1\" failures=\"1\" errors=\"0\">"$'\n'
        suites+="$(failed_case "$exercise" build "$reason" build)"$'\n'
        suites+="  </testsuite>"$'\n'
        continue
    fi
    passed=0 count=0 index=0
    while IFS=$'\t' read -r result check reason; do
        index=$((index + 1))
        count=$((count + 1))
        report=$reports/$exercise/check-$index.xml
        if [ "$result" = pass ]; then
            passed=$((passed + 1))
        else
            all_passed=0
        fi
        if [ "$result" != timeout ] && [ -s "$report" ] && grep -q '<testcase ' "$report"; then
            cases+="$(testcases_of "$report" "$exercise")"$'\n'
        else
            cases+="$(failed_case "$exercise" "$check" "$reason" "$result")"$'\n'
        fi
    done <"$results"
    points=$((100 * passed / count))
    total_points=$((total_points + points))
    printf '  %-26s %3d points   %d of %d checks passed\n' "$exercise" "$points" "$passed" "$count"
    suites+="  <testsuite name=\"$exercise\" tests=\"$count\" failures=\"$((count - passed))\" errors=\"0\">"$'\n'
    suites+="$cases  </testsuite>"$'\n'
done
total=$((total_points / ${#exercises[@]}))
printf '  %-26s %3d points   (the mean of %d exercises, each out of 100)\n' total "$total" \
    "${#exercises[@]}"

{
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo "<testsuites name=\"rdma-verbs-lab exercises\">"
    printf '%s' "$suites"
    echo '</testsuites>'
} >"$junit"
echo
echo "grade: JUnit report: ${junit#"$repo/"}"
[ "$all_passed" = 1 ]

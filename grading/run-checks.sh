#!/usr/bin/env bash
# Run the checks of built exercises one by one, on an RDMA device, and record
# each result. Called by grading/grade.sh through vm/on-target.sh (so on
# the host's device or inside the micro-VM); it builds nothing.
#
#   grading/run-checks.sh OUT_DIR NN_name=CHECK_PROGRAM...
#
# For each exercise it writes OUT_DIR/NN_name/results.tsv (one line per check:
# pass|fail|timeout, the check's name, a one-line reason) and
# OUT_DIR/NN_name/check-K.xml (Catch2's JUnit report of check K), and prints
# one line per check. Every check runs in its own process with a deadline,
# so a check that hangs costs RDMA_LAB_CHECK_TIMEOUT seconds (default 120)
# and is marked as failed.
set -uo pipefail

check_timeout=${RDMA_LAB_CHECK_TIMEOUT:-120}
[ $# -ge 1 ] || {
    echo "usage: grading/run-checks.sh OUT_DIR NN_name=CHECK_PROGRAM..." >&2
    exit 2
}
out_dir=$1
shift

# The names of the checks (Catch2 test cases) of PROGRAM, one a line.
list_checks() {
    local listing
    # Catch2 v2 exits with the number of tests it listed; v3 has other flags.
    listing=$(timeout 30 "$1" --list-test-names-only 2>/dev/null || true)
    if [ -n "$listing" ] && ! grep -q -i '^error' <<<"$listing"; then
        printf '%s\n' "$listing"
        return 0
    fi
    listing=$(timeout 30 "$1" --list-tests --verbosity quiet 2>/dev/null) || return 1
    [ -n "$listing" ] && printf '%s\n' "$listing"
}

# A test name as a Catch2 test spec: commas and brackets are syntax there.
spec_of() {
    local spec=$1
    spec=${spec//\\/\\\\}
    spec=${spec//,/\\,}
    spec=${spec//[/\\[}
    spec=${spec//]/\\]}
    printf '%s' "$spec"
}

# One line saying why a check failed, from its JUnit report.
reason_of() {
    local report=$1 todo message
    [ -s "$report" ] || {
        echo "the check program wrote no report (did it crash?)"
        return
    }
    todo=$(grep -o 'TODO: [^<&]*' "$report" | head -n 1)
    if [ -n "$todo" ]; then
        echo "$todo"
        return
    fi
    message=$(sed -n 's/.*<failure message="\([^"]*\)".*/\1/p; s/.*<error message="\([^"]*\)".*/\1/p' "$report" | head -n 1)
    message=${message//&quot;/\"}
    message=${message//&lt;/<}
    message=${message//&gt;/>}
    message=${message//&amp;/&}
    echo "${message:-see the JUnit report}"
}

for pair in "$@"; do
    echo "${pair%%=*}"
    exercise=${pair%%=*}
    program=${pair#*=}
    dir=$out_dir/$exercise
    mkdir -p "$dir"
    rm -f "$dir"/check-*.xml
    : >"$dir/results.tsv"
    if ! checks=$(list_checks "$program"); then
        printf 'fail\t(the check program)\tit cannot list its checks: it crashes on start\n' >>"$dir/results.tsv"
        echo "  FAIL  $exercise: the check program crashes on start"
        continue
    fi
    index=0
    while IFS= read -r check; do
        check=${check#"${check%%[![:space:]]*}"}
        [ -n "$check" ] || continue
        index=$((index + 1))
        report=$dir/check-$index.xml
        timeout --kill-after=5 "$check_timeout" "$program" "$(spec_of "$check")" \
            -r junit -o "$report" >"$dir/check-$index.log" 2>&1
        status=$?
        if [ "$status" = 0 ]; then
            result=pass reason=''
            echo "  pass  $check"
        elif [ "$status" = 124 ] || [ "$status" = 137 ]; then
            result=timeout reason="no result within $check_timeout s: something waits forever"
            echo "  FAIL  $check"
            echo "          $reason"
        else
            result=fail reason=$(reason_of "$report")
            echo "  FAIL  $check"
            echo "          $reason"
        fi
        printf '%s\t%s\t%s\n' "$result" "$check" "$reason" >>"$dir/results.tsv"
    done <<<"$checks"
done
exit 0

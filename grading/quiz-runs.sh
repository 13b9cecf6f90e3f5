#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The graded quizzes' "run it" questions, re-run on rxe inside the grading
# micro-VM (grading/in-vm.sh calls it): a question answered by running
# something is scored against what the run prints for the student's
# variant, never against the number the student typed.
#
#   grading/quiz-runs.sh BUILD OUT LIST
#
# LIST holds HASH<TAB>COMMAND lines (lab-quiz runs); each COMMAND, a
# `./lab run NN_lesson ARGS` of the bank, runs as the lesson's program of
# BUILD with its arguments, and what it prints goes to OUT/HASH.out, which
# lab-quiz grade --runs OUT reads. OUT is a cache: a command already there is
# not run again, so each distinct variant runs once per class (and per term).
# A two-process lesson (the build's programs.tsv says server-client) runs as
# ./lab run runs it, server and client on this machine (run-pair.sh, staged
# beside this script), its lines tagged [server] and [client]; NN_name/VARIANT
# names a lesson's second program, e.g. 10_events/async_events. A command of
# another form is reported and left unscored by a re-run.
set -uo pipefail
build=$1 out=$2 list=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Two at a time, one per virtual CPU, as the checks run (RDMA_LAB_GRADE_JOBS):
# a class of 30 (201 commands) took 324 s so, against 530 s one at a time
# and 335 s four at a time, and every student's quiz scores came out the
# same. A pair takes its own port (run-pair.sh), so pairs do not meet.
jobs=${RDMA_LAB_GRADE_JOBS:-2}
mkdir -p "$out"

run_one() { # HASH COMMAND
    local hash=$1 command=$2 words lesson target program role
    read -ra words <<<"$command"
    if [ "${#words[@]}" -lt 3 ] || [ "${words[0]}" != ./lab ] || [ "${words[1]}" != run ] ||
        [[ ! ${words[2]} =~ ^[0-9][0-9]_[a-z0-9_]+(/[a-z0-9_]+)?$ ]]; then
        echo "grade: quiz run '$command': not a './lab run NN_lesson ...' command; not re-run"
        return
    fi
    lesson=${words[2]%%/*} target=${words[2]%%/*}
    [ "${words[2]}" = "$lesson" ] || target=${lesson%%_*}_${words[2]#*/}
    program=$build/lessons/$lesson/$target
    if [ ! -x "$program" ]; then
        echo "grade: quiz run '$command': no program $program; not re-run"
        return
    fi
    role=$(awk -F '\t' -v t="$target" '$1 == t {print $2}' "$build/programs.tsv" 2>/dev/null)
    # What the lesson prints, whatever its exit status: a refusal is an answer too.
    if [ "$role" = server-client ]; then
        RDMA_LAB_PAIR_TIMEOUT=60 timeout -k 5 90 bash "$here/run-pair.sh" "$program" "${words[@]:3}" \
            >"$out/$hash.out.part" 2>&1
    else
        timeout -k 5 60 "$program" "${words[@]:3}" >"$out/$hash.out.part" 2>&1
    fi
    mv "$out/$hash.out.part" "$out/$hash.out"
}

started=$SECONDS ran=0 running=0
while IFS=$'\t' read -r hash command; do
    [ -n "$hash" ] || continue
    [ -s "$out/$hash.out" ] && continue
    run_one "$hash" "$command" &
    ran=$((ran + 1)) running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait -n
        running=$((running - 1))
    fi
done <"$list"
wait
echo "grade: quiz runs: $ran command(s) run on rxe, $jobs at a time, in $((SECONDS - started)) s"

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The similarity step of ./lab grade --class: compare the class's submissions
# with sim_c++ (Debian's similarity-tester) and write a report of the pairs
# that share much code, with the matching line ranges of both sides.
#
#   grading/similarity.sh --skeleton DIR --report FILE [--sources SUB]
#                         [--threshold PERCENT] [--min-run TOKENS] CLASS
#
# CLASS holds one folder per student; a student's files are
# CLASS/STUDENT[/SUB]/NN_name/FILE (./lab grade --class passes its work folder
# and --sources src). Each file is compared with the same file of every other
# student (sim_c++ -a -e -s -p: every pair on its own, both directions).
# sim_c++ sees C++ tokens, not text: layout, comments, the names of
# identifiers and the values of numbers and strings make no difference, so
# renaming variables hides nothing.
#
# Lines of the skeleton (DIR/NN_name/FILE, the exercise as shipped) are left
# out before comparing: diff -w finds the lines a student kept from it, in
# their place (whitespace aside), and they become blank lines, so that line
# numbers still point into the student's own file. What everyone was given
# does not count; what a student wrote does.
#
# A pair is listed when one side consists for at least PERCENT % (default 50)
# of material found in the other, counting runs of at least TOKENS tokens
# (default 24, sim's own). Honest solutions of one exercise call the same
# verbs in the same order, and share runs of that length: the honest pairs of
# exercise 03 in tests/grading/similarity/, the reference solution among
# them, share 6 to 38 %; a copy, or a copy with renamed variables, 100 %.
# 50 % lies between, with room on both sides: a copy half rewritten still
# reaches it.
#
# Prints one line: where the report is and how many pairs reach the
# threshold, or why there is nothing to compare. Exit status 0 when the
# report was written (whatever it found), 1 when sim_c++ is missing, 2 on bad
# usage.
set -euo pipefail

say() { echo "similarity: $*"; }
die() {
    echo "similarity: $*" >&2
    exit 2
}

skeleton='' report='' sub='' threshold=50 min_run=24 class=''
while [ $# -gt 0 ]; do
    case "$1" in
    --skeleton | --report | --sources | --threshold | --min-run)
        [ $# -ge 2 ] || die "$1 needs a value"
        case "$1" in
        --skeleton) skeleton=$2 ;;
        --report) report=$2 ;;
        --sources) sub=$2 ;;
        --threshold) threshold=$2 ;;
        --min-run) min_run=$2 ;;
        esac
        shift 2
        ;;
    -*) die "unknown option '$1'" ;;
    *)
        [ -z "$class" ] || die "one class folder only"
        class=$1
        shift
        ;;
    esac
done
[ -n "$class" ] || die "usage: grading/similarity.sh --skeleton DIR --report FILE [--sources SUB] [--threshold PERCENT] [--min-run TOKENS] CLASS"
[ -n "$report" ] || die "--report FILE is needed"
[ -n "$skeleton" ] || die "--skeleton DIR is needed (the exercises as shipped)"
[ -d "$class" ] || die "'$class' is not a folder"
[ -d "$skeleton" ] || die "the skeleton '$skeleton' is not a folder"
[[ $threshold =~ ^([1-9][0-9]?|100)$ ]] ||
    die "--threshold is a percentage from 1 to 100, not '$threshold'"
[[ $min_run =~ ^[1-9][0-9]*$ ]] || die "--min-run is a number of tokens, not '$min_run'"
if ! command -v sim_c++ >/dev/null; then
    say "not run: sim_c++ is missing (package similarity-tester; ./lab setup installs it where the release has it)"
    exit 1
fi

shown=$report
mkdir -p "$(dirname "$report")"
report=$(cd "$(dirname "$report")" && pwd)/$(basename "$report")
skeleton=$(cd "$skeleton" && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/similarity.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# --- the students' files, skeleton lines blanked -------------------------------
shopt -s nullglob
students=() notes=()
declare -A files_of=() # NN_name/FILE -> how many students have it
for folder in "$class"/*/; do
    student=$(basename "$folder")
    sources=$folder${sub:+$sub/}
    found=0
    for file in "$sources"[0-9][0-9]_*/*.cpp "$sources"[0-9][0-9]_*/*.hpp; do
        if [ ! -f "$file" ] || [ -L "$file" ]; then
            continue
        fi
        exercise=$(basename "$(dirname "$file")") name=$(basename "$file")
        mkdir -p "$scratch/$student/$exercise"
        given=$skeleton/$exercise/$name
        if [ -f "$given" ]; then
            # Kept skeleton lines print as empty lines, the student's own as they are.
            diff -w --old-line-format='' --new-line-format='%L' --unchanged-line-format=$'\n' \
                "$given" "$file" >"$scratch/$student/$exercise/$name" || [ $? -eq 1 ] ||
                die "diff failed on $file"
        else
            cp -- "$file" "$scratch/$student/$exercise/$name"
        fi
        files_of[$exercise/$name]=$((${files_of[$exercise/$name]:-0} + 1))
        found=$((found + 1))
    done
    if [ "$found" = 0 ]; then
        notes+=("$student: no source files (NN_name/*.cpp), left out")
    else
        students+=("$student")
    fi
done

# --- compare, file by file ----------------------------------------------------
sim=(sim_c++ -r "$min_run" -w 1000 -T)
declare -A percent=() # "FILE<TAB>A<TAB>B" -> % of A's material found in B
pairs=()
mapfile -t keys < <(printf '%s\n' "${!files_of[@]}" | grep . | sort)
for key in "${keys[@]+"${keys[@]}"}"; do
    [ "${files_of[$key]}" -ge 2 ] || continue
    inputs=()
    for student in "${students[@]}"; do
        [ -f "$scratch/$student/$key" ] && inputs+=("$student/$key")
    done
    while read -r a _ _ value _ _ b _; do
        percent["$key"$'\t'"${a%%/*}"$'\t'"${b%%/*}"]=$value
    done < <(cd "$scratch" && "${sim[@]}" -a -e -s -p -t 1 "${inputs[@]}" | grep ' consists for ')
done
for entry in "${!percent[@]}"; do
    IFS=$'\t' read -r key a b <<<"$entry"
    [[ $a < $b ]] || continue
    ab=${percent[$entry]} ba=${percent["$key"$'\t'"$b"$'\t'"$a"]:-0}
    high=$((ab > ba ? ab : ba))
    [ "$high" -ge "$threshold" ] && pairs+=("$high"$'\t'"$key"$'\t'"$a"$'\t'"$b"$'\t'"$ab"$'\t'"$ba")
done
mapfile -t pairs < <(printf '%s\n' "${pairs[@]+"${pairs[@]}"}" | grep . | sort -t $'\t' -k1,1nr -k2,2 -k3,3)

# --- the report ---------------------------------------------------------------
where=$class/STUDENT${sub:+/$sub}
{
    echo "Similarity report: ${#students[@]} submissions compared with sim_c++ (similarity-tester $(dpkg-query -W -f='${Version}' similarity-tester 2>/dev/null || echo ''))"
    echo
    echo "A lead, not a verdict: a pair listed here shares more code than honest work"
    echo "of the same exercise usually does. Read both sides before deciding anything."
    echo
    echo "Compared: each file with the same file of every other student (sim_c++ -a -e -s -p)."
    echo "Left out: the lines of the skeleton (${skeleton}), kept blank so line numbers hold."
    echo "Threshold: ${threshold} % (one side consists for at least that much of the other's"
    echo "material, in runs of at least ${min_run} tokens; layout, comments and names do not count)."
    echo "Files: ${where}/NN_name/FILE"
    for note in "${notes[@]+"${notes[@]}"}"; do
        echo "Note: $note"
    done
    echo
    if [ "${#students[@]}" -lt 2 ]; then
        echo "Nothing compared: fewer than two submissions have source files."
    elif [ "${#pairs[@]}" = 0 ]; then
        echo "No pair at or above ${threshold} %."
    else
        echo "${#pairs[@]} pair(s) at or above ${threshold} %:"
    fi
    for line in "${pairs[@]+"${pairs[@]}"}"; do
        IFS=$'\t' read -r _ key a b ab ba <<<"$line"
        echo
        echo "pair: $a $b $key ($ab % of $a's file is found in $b's, $ba % of $b's in $a's)"
        # The matching runs of the pair: sim's summary lines, "A: line X-Y |B: line U-V [N]".
        (cd "$scratch" && "${sim[@]}" -e -s -n "$a/$key" "$b/$key") |
            sed -nE 's/^([^:]+): line ([0-9]+-[0-9]+) *\|([^:]+): line ([0-9]+-[0-9]+) *\[([0-9]+)\]$/  \1 lines \2  =  \3 lines \4  (\5 tokens)/p'
    done
} >"$report"

for note in "${notes[@]+"${notes[@]}"}"; do
    say "$note"
done
if [ "${#students[@]}" -lt 2 ]; then
    say "nothing to compare: ${#students[@]} submission(s) with source files; report: $shown"
else
    say "${#pairs[@]} pair(s) at or above ${threshold} % among ${#students[@]} submissions; report: $shown"
fi

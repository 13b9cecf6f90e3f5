#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ./lab export: the repositories a class hands to its students, made from this
# one (the instructor's, which keeps the solutions).
#
#   ./lab export --student DIR     the student edition: a git repository of its
#                                  own in DIR (new or empty), one commit
#   ./lab export --classroom DIR   the same, plus .github/workflows/classroom.yml:
#                                  the template repository of a GitHub Classroom
#                                  assignment (grading/github-classroom/classroom.yml)
#
# The edition holds the lessons, common/, the exercises' skeletons, the checks
# students may see, the slides and docs, ./lab and CI, and stands on its own:
# ./lab run, ./lab test and ./lab grade work on a fresh clone of it. It leaves
# out what reveals a solution or belongs to the instructor (the list below,
# "left_out"), and its README.md is README.student.md. It is made from the
# files of this checkout that git tracks or would track (new, not ignored),
# as they are on disk: commit or stash what should not go out.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() {
    echo "export: $*" >&2
    exit 2
}
usage="usage: ./lab export --student DIR | --classroom DIR"

mode='' dir=''
while [ $# -gt 0 ]; do
    case "$1" in
    --student | --classroom)
        [ $# -ge 2 ] || die "$1 needs a folder ($usage)"
        [ -z "$mode" ] || die "one edition at a time ($usage)"
        mode=${1#--} dir=$2
        shift 2
        ;;
    -h | --help)
        awk 'NR > 1 && !/^#/ {exit} NR > 1 && !/SPDX-License-Identifier:/ {sub(/^# ?/, ""); print}' "$0"
        exit 0
        ;;
    *) die "unknown argument '$1' ($usage)" ;;
    esac
done
[ -n "$mode" ] || die "$usage"
if [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
    die "$dir is not empty: give a new or empty folder"
fi
mkdir -p "$dir"
out=$(cd "$dir" && pwd)
# Inside this checkout only under build/ (ignored, and never exported): the
# edition would otherwise become part of the next one.
case "$out/" in
"$repo"/build/*) ;;
"$repo"/*) die "$dir is inside this repository: give a folder outside it (or under build/)" ;;
esac

# What the student edition leaves out, and why (extended regular expressions
# on paths relative to the repository's top).
left_out=(
    '^solutions/'                                     # the reference solutions
    '^tests/exercises/hidden/'                        # the instructor's own checks
    '^docs/instructor(\.zh-CN)?\.md$'                 # the instructor's guide, and its Chinese twin
    '^docs/instructor/'                               # its material: the report rubric, publishing, the exercises' answers
    '^bench/grade-class\.sh$'                         # grades a made-up class made of the solutions
    '^tests/grading/test_grade_class\.cpp$'           # its good submissions are the solutions
    '^tests/grading/gradescope-test\.sh$'             # its submission is made of the solutions
    '^tests/grading/similarity/'                      # its made-up class: working answers of exercise 03
    '^tests/exercises/test_exercise_skeletons\.cpp$'  # the skeletons are the students' work here
    '^quizzes/answers/'                               # someone's quiz attempts (the banks go, with their answers)
    '^grading/quizzes/'                               # the graded quizzes' banks: their keys (students get quizzes/graded/*.paper)
    '^README(\.student)?(\.zh-CN)?\.md$'              # README.student(.zh-CN).md becomes README(.zh-CN).md
    '^build/' '(^|/)node_modules/' '^\.git/'          # build trees and installed packages
)
pattern=$(
    IFS='|'
    echo "${left_out[*]}"
)

cd "$repo"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    list_files() { git ls-files -co --exclude-standard; }
else
    list_files() { find . -type f -printf '%P\n'; }
fi
count=0
while IFS= read -r file; do
    [ -f "$file" ] || continue # deleted in the work tree
    cp --parents -p -- "$file" "$out/"
    count=$((count + 1))
done < <(list_files | grep -vE "$pattern")
# The students' README and its Chinese twin take the places of the top README
# and its twin. Their twin links follow, and so does the row of docs/twins.md
# that says what the Chinese README is in step with: the edition's README.md
# row takes the status and fingerprint of the README.student.md row, which
# goes (a fingerprint leaves the twin link line out).
sed 's/(README\.student\.zh-CN\.md)/(README.zh-CN.md)/' README.student.md >"$out/README.md"
count=$((count + 1))
if [ -f README.student.zh-CN.md ]; then
    sed 's/(README\.student\.md)/(README.md)/' README.student.zh-CN.md >"$out/README.zh-CN.md"
    count=$((count + 1))
fi
if [ -f "$out/docs/twins.md" ]; then
    awk -F' [|] ' '
        FNR == NR { if ($1 == "| `README.student.md`") { status = $3; in_step = $4 } next }
        $1 == "| `README.student.md`" { next }
        $1 == "| `README.md`" && status != "" { print "| `README.md` | `README.zh-CN.md` | " status " | " in_step; next }
        { print }
    ' "$out/docs/twins.md" "$out/docs/twins.md" >"$out/docs/twins.md.new"
    mv "$out/docs/twins.md.new" "$out/docs/twins.md"
fi
if [ ! -d "$out/lessons" ] || [ ! -x "$out/lab" ]; then
    die "the course could not be copied into $out"
fi
[ ! -e "$out/solutions" ] || die "the solutions were copied: this is a bug of grading/export.sh"

if [ "$mode" = classroom ]; then
    mkdir -p "$out/.github/workflows"
    cp grading/github-classroom/classroom.yml "$out/.github/workflows/classroom.yml"
fi

git -C "$out" init -q
git -C "$out" add -A
git -C "$out" -c user.name="rdma-verbs-lab" -c user.email="rdma-verbs-lab@localhost" \
    commit -q -m "rdma-verbs-lab, $mode edition"
echo "export: the $mode edition is in $out: $count files, one commit"
if [ "$mode" = classroom ]; then
    echo "export: push it as the template repository of the assignment; set RDMA_LAB_GRADER_URL (README.md, \"GitHub Classroom\")"
fi

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Take from one submission the files a student edits, and nothing else. Runs
# inside grading/host-sandbox.sh: /in holds the submission (read-only; a
# folder, or one .zip or .tar.gz file), /course the staged course, /out the
# student's folder (writable):
#
#   intake.sh folder|zip|tar [ARCHIVE_NAME]
#
# An archive is unpacked into the sandbox's own /tmp, never onto the host.
# The submission may be shaped like exercises/ (NN_name/file.cpp), hold it
# one folder down (exercises/NN_name/file.cpp, or any single top folder), or
# hold the edited files bare (file.cpp) when their names are unique. Only
# regular files are taken, never symbolic links (or files reached through
# one), each at most 1 MiB. Writes /out/src/NN_name/FILE and /out/intake.tsv
# (NN_name, file, where it was found or "missing").
set -uo pipefail
# Where host-sandbox.sh put the folders (its LAB_PATH_* where it could not mount them).
in=${LAB_PATH_IN:-/in} course=${LAB_PATH_COURSE:-/course} out=${LAB_PATH_OUT:-/out}
scratch=${TMPDIR:-/tmp}
kind=$1
case "$kind" in
folder) root=$in ;;
zip | tar)
    root=$(mktemp -d "$scratch/unpacked.XXXXXX")
    if [ "$kind" = zip ]; then
        unpack=(unzip -qq -o "$in/$2" -d "$root")
    else
        unpack=(tar -xzf "$in/$2" -C "$root" --no-same-owner --no-same-permissions)
    fi
    "${unpack[@]}" >"$scratch/unpack.log" 2>&1 ||
        echo "could not unpack $2 completely: $(head -c 300 "$scratch/unpack.log")" >"$out/unpack-problem"
    ;;
*) exit 2 ;;
esac
mkdir -p "$out/src"
: >"$out/intake.tsv"

# Every edited file of the course, as NN_name/file, and how many exercises use each name.
declare -A uses=()
pairs=()
for recipe in "$course"/*.build; do
    exercise=$(basename "$recipe" .build)
    EDITED=()
    # shellcheck disable=SC1090 # staged by the grader
    . "$recipe"
    for file in "${EDITED[@]}"; do
        pairs+=("$exercise/$file")
        uses[$file]=$((${uses[$file]:-0} + 1))
    done
done

# True when PATH is a regular file inside ROOT reached through no symbolic link.
plain_file() {
    [ -f "$1" ] && [ ! -L "$1" ] && [ "$(realpath -e -- "$1" 2>/dev/null)" = "$1" ] &&
        [ "$(stat -c %s -- "$1")" -le 1048576 ]
}

shopt -s nullglob
for pair in "${pairs[@]}"; do
    exercise=${pair%%/*} file=${pair#*/}
    candidates=("$root/$exercise/$file" "$root/exercises/$exercise/$file" "$root"/*/"$exercise/$file"
        "$root"/*/exercises/"$exercise/$file")
    if [ "${uses[$file]}" = 1 ]; then
        candidates+=("$root/$file" "$root"/*/"$file")
    fi
    found=''
    for candidate in "${candidates[@]}"; do
        if plain_file "$candidate"; then
            found=$candidate
            break
        fi
    done
    if [ -n "$found" ]; then
        mkdir -p "$out/src/$exercise"
        cp -- "$found" "$out/src/$exercise/$file"
        printf '%s\t%s\t%s\n' "$exercise" "$file" "${found#"$root"/}" >>"$out/intake.tsv"
    else
        printf '%s\t%s\tmissing\n' "$exercise" "$file" >>"$out/intake.tsv"
    fi
done

# The graded quizzes' answers files (./lab quiz NN --graded writes them in the
# student's repository: quizzes/answers/graded/NN_name.txt), plain text the
# grader parses; the first folder that holds any is taken.
for folder in "$root/quizzes/answers/graded" "$root"/*/quizzes/answers/graded; do
    answers=("$folder"/[0-9][0-9]_*.txt)
    [ ${#answers[@]} -gt 0 ] || continue
    mkdir -p "$out/quizzes"
    for file in "${answers[@]}"; do
        [[ $(basename "$file") =~ ^[0-9][0-9]_[a-z0-9_]+\.txt$ ]] && plain_file "$file" &&
            cp -- "$file" "$out/quizzes/"
    done
    break
done

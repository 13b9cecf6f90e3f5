#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Compile one student's edited files of one exercise and link them with the
# course's objects. Runs inside grading/host-sandbox.sh, where /course holds
# the staged course (read-only), /src the student's files (read-only) and
# /out their build folder (writable):
#
#   compile-exercise.sh NN_name
#
# Writes /out/NN_name/status, one line: "ok", "missing<TAB>reason" or
# "error<TAB>reason"; /out/NN_name/compile.log (the compiler's output, with
# paths as the student knows them: NN_name/file.cpp, file.hpp); and, when it
# builds, /out/NN_name/program.
set -uo pipefail
# Where host-sandbox.sh put the folders (its LAB_PATH_* where it could not mount them).
course=${LAB_PATH_COURSE:-/course} src=${LAB_PATH_SRC:-/src} out_root=${LAB_PATH_OUT:-/out}

# opening_includes FILE: the #include lines before the first other line
# (blank lines and // comments skipped); nothing when a line is not plain.
opening_includes() {
    awk '/^[ \t]*$/ {next}
        /^\/\// {if (/\\[ \t]*$/) {bad = 1; exit} next}
        /^#include [<"][A-Za-z0-9_.\/+-]+[>"]$/ {print; next}
        {exit}
        END {if (bad) exit 1}' "$1"
}
case "${1:-}" in
--opening) # grade.sh picks the lines of the precompiled headers with it
    opening_includes "$2"
    exit
    ;;
--pch) # compile-exercise.sh --pch NN_name: build the staged pch/NN_name/prefix.hpp (grade.sh)
    exercise=$2
    prefix=$course/pch/$exercise/prefix.hpp
    # shellcheck disable=SC1090
    . "$course/$exercise.build"
    if ! timeout -k 5 120 "$COMPILER" "${FLAGS[@]}" -I "$course/include/$exercise" -I "$course/include" \
        -x c++-header "$prefix" -o "$prefix.gch" >"$prefix.log" 2>&1 || [ -s "$prefix.log" ]; then
        rm -f "$prefix.gch" # not silent: compile without it
    fi
    exit 0
    ;;
esac
exercise=$1
out=$out_root/$exercise
mkdir -p "$out"
rm -f "$out/status" "$out/program" "$out"/*.o
COMPILER='' FLAGS=() EDITED=() OBJECTS=() LIBRARIES=() LINK=()
# shellcheck disable=SC1090 # the recipe the grader staged sets the variables above
. "$course/$exercise.build"

status() { printf '%s\n' "$1" >"$out/status"; }

# Paths as the student knows them, and at most 400 lines.
clean() {
    sed -e "s#$course/include/##g" -e "s#$course/lib/[^ :]*/##g" -e "s#$out_root/[^ :]*/##g" \
        -e 's#{standard input}#'"$exercise"'/(assembler)#g' -e 's#/tmp/cc[A-Za-z0-9]*\.s#'"$exercise"'/(assembler)#g' \
        -e 's#^/usr/bin/ld: ##' -e 's#collect2: error: ld returned 1 exit status#(the linker failed)#' |
        head -n 400
}

for file in "${EDITED[@]}"; do
    if [ ! -f "$src/$exercise/$file" ]; then
        status "missing	$exercise/$file is missing from the submission: keep each file you edit, with its name, in its exercise folder"
        exit 0
    fi
done

# The course's precompiled headers (grade.sh, pch_build): /course/pch/NN_name/
# prefix.hpp holds the #include lines that open many of the class's files of
# the exercise, and prefix.hpp.gch the compiler's state after them. A file
# whose own opening #include lines start with exactly those lines is compiled
# with the state loaded instead of parsed (about 1.2 s of CPU less a file);
# what it means is the same, and the object is the same. Its messages would
# name the headers' include chain differently, so a compile that says
# anything at all, or fails, is done again without it: the student reads
# the compiler's words as always.
# use_pch FILE: whether the exercise's precompiled header fits FILE.
use_pch() {
    local prefix=$course/pch/$exercise/prefix.hpp opening name
    [ -f "$prefix.gch" ] && [ -s "$prefix" ] || return 1
    opening=$(opening_includes "$src/$exercise/$1") || return 1
    [ "$(printf '%s\n' "$opening" | head -n "$(wc -l <"$prefix")")" = "$(cat "$prefix")" ] || return 1
    # A quoted name the student's folder also holds would be theirs, not the course's.
    while IFS= read -r name; do
        case "$name" in '#include "'*) name=${name#'#include "'} name=${name%'"'}
            [ ! -e "$src/$exercise/$name" ] || return 1 ;;
        esac
    done <"$prefix"
}

cd "$src" || exit 1
started=$EPOCHREALTIME
# (where the time goes: bench/grade-class.sh adds these up per exercise)
record_time() { awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.2f\n", b - a}' >"$out/seconds"; }
trap record_time EXIT
objects=()
for file in "${EDITED[@]}"; do
    object=$out/${file%.*}.o
    if use_pch "$file" && timeout -k 5 60 "$COMPILER" "${FLAGS[@]}" -I "$course/include/$exercise" \
        -I "$course/include" -include "$course/pch/$exercise/prefix.hpp" \
        -c "$exercise/$file" -o "$object" >"$out/compile.raw" 2>&1 && [ ! -s "$out/compile.raw" ]; then
        objects+=("$object")
        continue
    fi
    if ! timeout -k 5 60 "$COMPILER" "${FLAGS[@]}" -I "$course/include/$exercise" -I "$course/include" \
        -c "$exercise/$file" -o "$object" >"$out/compile.raw" 2>&1; then
        code=$?
        clean <"$out/compile.raw" >"$out/compile.log"
        if [ "$code" = 124 ] || [ "$code" = 137 ]; then
            status "error	$exercise/$file did not compile within 60 s"
        else
            first=$(grep -m 1 -iE ': (fatal )?error: |: Error: ' "$out/compile.log" ||
                head -n 1 "$out/compile.log")
            status "error	does not compile: ${first:-the compiler failed without a message}"
        fi
        rm -f "$out/compile.raw"
        exit 0
    fi
    objects+=("$object")
done
clean <"$out/compile.raw" >"$out/compile.log" # warnings, if any
cd "$course" || exit 1
if ! timeout -k 5 60 "$COMPILER" -o "$out/program" "${OBJECTS[@]}" "${objects[@]}" "${LIBRARIES[@]}" \
    "${LINK[@]}" >"$out/compile.raw" 2>&1; then
    clean <"$out/compile.raw" >"$out/compile.log"
    first=$(grep -m 1 -E 'undefined reference|multiple definition|error' "$out/compile.log" || true)
    status "error	does not link: ${first:-the linker failed}"
    rm -f "$out/compile.raw" "$out/program"
    exit 0
fi
rm -f "$out/compile.raw"
chmod 755 "$out/program"
status ok

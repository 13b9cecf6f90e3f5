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

cd "$src" || exit 1
started=$EPOCHREALTIME
# (where the time goes: bench/grade-class.sh adds these up per exercise)
record_time() { awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.2f\n", b - a}' >"$out/seconds"; }
trap record_time EXIT
objects=()
for file in "${EDITED[@]}"; do
    object=$out/${file%.*}.o
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

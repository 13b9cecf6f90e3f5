# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Progress of a long step, for scripts that source this file.
#
#   some-command 2>&1 | progress LABEL LOG KIND
#
# Reads the step's output on standard input, keeps all of it in LOG (appended)
# and says on standard error what the step is doing and how far along it is:
# whenever that changes (at most every 3 s) and at least every 10 s, so that no
# step stays silent for longer. KIND says how to read the output:
#   make         CMake's "[ 45%] Building CXX object ..." lines: the percentage done
#   apt          apt-get install: packages downloaded, then set up, out of all
#   debootstrap  debootstrap: packages retrieved, then unpacked and configured
#   lines        anything else: the last line
# The pipeline's status is the step's when the caller uses set -o pipefail.

progress() { # LABEL LOG KIND
    local label=$1 log=$2 kind=$3
    local line='' partial='' status='' shown='' started=$SECONDS last=$SECONDS
    local total=0 fetched=0 configured=0 retrieved=0 unpacked=0 log_fd
    exec {log_fd}>>"$log"
    while :; do
        if IFS= read -r -t 2 line; then
            line=$partial$line
            partial=''
        elif [ $? -gt 128 ]; then # nothing new for 2 s: keep what came of the line
            partial+=$line
            line=''
        elif [ -n "$line$partial" ]; then # the last line, without a newline
            line=$partial$line
            partial=''
        else
            break
        fi
        if [ -n "$line" ]; then
            printf '%s\n' "$line" >&"$log_fd"
            case "$kind" in
            make)
                if [[ $line =~ ^\[\ *([0-9]+)%\]\ (.*)$ ]]; then
                    status="${BASH_REMATCH[1]}% done: ${BASH_REMATCH[2]}"
                    status=${status/ object / }
                    status=${status/CMakeFiles\//}
                fi
                ;;
            apt)
                if [[ $line =~ ([0-9]+)\ upgraded,\ ([0-9]+)\ newly\ installed ]]; then
                    total=$((BASH_REMATCH[1] + BASH_REMATCH[2]))
                    status="$total packages to fetch and install"
                elif [[ $line == Get:* ]]; then
                    fetched=$((fetched + 1))
                    status="downloaded $fetched of $total packages"
                elif [[ $line =~ ^Setting\ up\ ([^ ]+) ]]; then
                    configured=$((configured + 1))
                    status="set up $configured of $total packages (now ${BASH_REMATCH[1]})"
                fi
                ;;
            debootstrap)
                case "$line" in
                "I: Retrieving "*) retrieved=$((retrieved + 1)) && status="downloaded $retrieved packages" ;;
                "I: Extracting "*) unpacked=$((unpacked + 1)) && status="extracted $unpacked of $retrieved packages" ;;
                "I: Unpacking "*) status="installing the base system: ${line#I: }" ;;
                "I: Configuring "*) configured=$((configured + 1)) && status="configured $configured packages (now ${line#I: Configuring })" ;;
                "I: Validating "*) ;;
                "I: "*) status=${line#I: } ;;
                esac
                ;;
            *) status=$line ;;
            esac
        fi
        if [ -n "$status" ] && { { [ "$status" != "$shown" ] && [ $((SECONDS - last)) -ge 3 ]; } ||
            [ $((SECONDS - last)) -ge 10 ]; }; then
            printf '%s: %s (%d s)\n' "$label" "${status:0:150}" $((SECONDS - started)) >&2
            shown=$status
            last=$SECONDS
        elif [ -z "$status" ] && [ $((SECONDS - last)) -ge 10 ]; then
            printf '%s: still working (%d s)\n' "$label" $((SECONDS - started)) >&2
            last=$SECONDS
        fi
    done
    exec {log_fd}>&-
}

# The first errors of a failed step's LOG, for the terminal (the log keeps the rest).
first_errors() { # LOG [COUNT]
    grep -m "${2:-20}" -E 'error:|Error [0-9]+|CMake Error|^E: |fatal' "$1" ||
        tail -n "${2:-20}" "$1"
}

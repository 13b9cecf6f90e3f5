#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One session in the lab machine (vm/machine.sh starts it over SSH): the
# command runs in the folder the user was in on the host, with the variables
# the host passed.
#
#   machine-session.sh --tty CWD [NAME=VALUE...] -- COMMAND...     on a terminal
#   machine-session.sh --token TOKEN CWD [NAME=VALUE...] -- COMMAND...
#   machine-session.sh --signal TOKEN SIGNAL
#
# On a terminal, the terminal carries Ctrl-C and hangs up when the connection
# goes. Without one, the command runs in a session of its own, known by
# TOKEN, and the host's ./lab passes a Ctrl-C or a kill on with --signal:
# every process of that session gets SIGNAL, and whatever is left two
# seconds later is killed.
set -u
sessions=/run/lab-sessions

session_members() { # SID: the processes of that session
    local sid=$1 stat rest
    for stat in /proc/[0-9]*/stat; do
        read -r rest <"$stat" 2>/dev/null || continue
        rest=${rest##*) }
        # shellcheck disable=SC2086 # state ppid pgrp session ...
        set -- $rest
        [ "$4" = "$sid" ] || continue
        stat=${stat#/proc/}
        echo "${stat%/stat}"
    done
}

case "${1:-}" in
--signal)
    sid=$(cat "$sessions/$2" 2>/dev/null) || exit 0
    for signal in "$3" KILL; do
        for pid in $(session_members "$sid"); do
            [ "$pid" = "$sid" ] || kill -s "$signal" "$pid" 2>/dev/null
        done
        [ "$signal" = KILL ] || sleep 2
    done
    exit 0
    ;;
--tty) tty=1 ;;
--token) tty=0 token=$2 && shift ;;
*)
    echo "usage: machine-session.sh --tty|--token TOKEN CWD [NAME=VALUE...] -- COMMAND..." >&2
    exit 2
    ;;
esac
cwd=$2
shift 2
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    export "${1?}"
    shift
done
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || set -- bash -i
cd "$cwd" 2>/dev/null || cd "$(cat /run/lab/repo)" || exit 3

if [ "$tty" = 1 ]; then
    if [ "$*" = "bash -i" ]; then
        echo "lab machine: Linux $(uname -r), rxe0 at ${RDMA_LAB_SERVER_ADDR:-?}; exit or Ctrl-D leaves, the machine stays up" >&2
        exec "$@"
    fi
    # A Ctrl-C reaches the command (the terminal's foreground group); this
    # script outlives it and reports 130, as a shell would (an SSH session
    # that ends by a signal would make ssh say 255 instead).
    trap ':' INT QUIT
    "$@"
    exit $?
fi

# Without a terminal: a session of our own, so that --signal finds every
# process the command starts (timeout(1) and others move to groups of their own).
if [ "${LAB_SESSION_LEADER:-}" != "$token" ]; then
    LAB_SESSION_LEADER=$token exec setsid -w "$0" --token "$token" "$cwd" -- "$@"
fi
unset LAB_SESSION_LEADER
mkdir -p "$sessions"
echo $$ >"$sessions/$token"
trap ':' INT TERM HUP # the command takes the signal; this script waits for its status
"$@"
status=$?
rm -f "$sessions/$token"
exit "$status"

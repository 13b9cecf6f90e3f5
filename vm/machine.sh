#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The lab machine: one micro-VM with rxe0 that stays up in the background, so
# that lessons run at once and any number of terminals share it (./lab up,
# down, status, shell; ./lab run uses it when it is up).
#
#   vm/machine.sh [--userland DIR] up
#   vm/machine.sh [--userland DIR] down
#   vm/machine.sh [--userland DIR] status
#   vm/machine.sh [--userland DIR] shell [COMMAND...]   a shell there, or COMMAND (its exit status)
#   vm/machine.sh [--userland DIR] running              exit 0 when it is up (says nothing)
#
# Each user and each checkout (and each --userland) has a machine of its own:
# its state lives in ~/.cache/rdma-verbs-lab/machines/KEY (mode 700), with
# the SSH keys that only this user can read and the loopback port qemu
# forwards to the guest's SSH server. The guest reaches nothing beyond this
# host (vm/microvm.sh --machine). It powers itself off after RDMA_LAB_IDLE
# minutes without a session (default 30; 90s: seconds; 0: never). A machine killed from
# outside or left over from a reboot is noticed and cleaned up by the next
# command. RDMA_LAB_MACHINE_BOOT is the boot deadline in seconds (default 120);
# a machine that misses it is stopped and started once more.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cache=${RDMA_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rdma-verbs-lab}
boot_deadline=${RDMA_LAB_MACHINE_BOOT:-120}
idle=${RDMA_LAB_IDLE:-30}

say() { echo "lab: $*" >&2; }
die() {
    echo "lab: $*" >&2
    exit 2
}

userland=()
if [ "${1:-}" = --userland ]; then
    [ $# -ge 2 ] || die "--userland needs a folder"
    userland=(--userland "$2")
    shift 2
fi
[ $# -ge 1 ] || die "usage: vm/machine.sh [--userland DIR] up|down|status|shell [COMMAND...]|running"
action=$1
shift
# RDMA_LAB_IDLE: minutes, or seconds with an s (RDMA_LAB_IDLE=90s); 0: never.
case "$idle" in
*s) idle_value=${idle%s} unit=1 word=seconds ;;
*) idle_value=$idle unit=60 word=minutes ;;
esac
[[ $idle_value =~ ^[0-9]+$ ]] ||
    die "RDMA_LAB_IDLE must be a whole number of minutes (30) or seconds (90s), not '$idle'"
idle_seconds=$((idle_value * unit)) idle_text="$idle_value $word"
[[ $boot_deadline =~ ^[0-9]+$ ]] || die "RDMA_LAB_MACHINE_BOOT must be a whole number of seconds, not '$boot_deadline'"

# RDMA_LAB_MACHINE_NAME gives a checkout a second machine (the tests use their own).
key=$(printf '%s\n%s\n%s\n' "$repo" "${userland[*]:-}" "${RDMA_LAB_MACHINE_NAME:-}" | sha1sum | cut -c1-12)
state=$cache/machines/$key
name="the lab machine"
[ ${#userland[@]} -eq 0 ] || name="the lab machine (Debian $(basename "${userland[1]}" | sed 's/^userland-//'))"

# --- what is running ---------------------------------------------------------

# The qemu process of this machine: alive, not a zombie, and started for this
# state folder (after a reboot the pid may belong to anything else).
qemu_pid() {
    local pid
    pid=$(cat "$state/pid" 2>/dev/null) || return 1
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ] || return 1
    tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF "$state/run" || return 1
    echo "$pid"
}

# Clean up after a machine that is gone without ./lab down; one line says so.
forget_stale() {
    [ -f "$state/pid" ] || return 0
    qemu_pid >/dev/null && return 0
    local reason="stopped from outside, or the host restarted"
    [ ! -f "$state/run/stopped" ] || reason="it had no session for $(cat "$state/run/stopped") and stopped itself"
    stop_master
    rm -rf "$state/run" "$state/pid" "$state/port" "$state/console.log"
    say "$name was no longer running ($reason); cleaned up what it left"
}

ssh_options() { # [CONTROL_MASTER]: the options of every ssh to this machine (ssh takes an option's first value)
    local port
    port=$(cat "$state/port")
    printf '%s\0' -F /dev/null -p "$port" -i "$state/id_ed25519" -o IdentitiesOnly=yes -o BatchMode=yes \
        -o UserKnownHostsFile="$state/known_hosts" -o StrictHostKeyChecking=yes -o HostKeyAlias=rdma-lab-machine \
        -o LogLevel=ERROR -o ConnectTimeout=20 -o ServerAliveInterval=10 -o ServerAliveCountMax=6 \
        -o ControlPath="$state/control" -o ControlMaster="${1:-no}"
}

# One SSH connection stays open and carries every session (OpenSSH's
# multiplexing): a new session then costs no key exchange in the emulated CPU.
start_master() {
    local -a options
    mapfile -d '' options < <(ssh_options yes)
    ssh "${options[@]}" -o ControlPersist=yes -f -N root@127.0.0.1 \
        </dev/null >/dev/null 2>"$state/master.log" 9>&- || return 1
}
stop_master() {
    [ -S "$state/control" ] || return 0
    ssh -F /dev/null -o ControlPath="$state/control" -O exit rdma-lab-machine >/dev/null 2>&1 || true
    rm -f "$state/control"
}

# --- up and down -------------------------------------------------------------

# Where lessons run on the host itself (its own RDMA device, or
# RDMA_LAB_TARGET=host), no lab machine is needed: say so and start nothing.
runs_on_host() {
    [ "$("$here/on-target.sh" --which 2>/dev/null)" = host ] || return 1
    local device
    device=$({ ibv_devinfo 2>/dev/null || true; } | awk '/hca_id:/ {dev=$2} /state:.*PORT_ACTIVE/ && dev {print dev; exit}')
    if [ -n "$device" ]; then
        say "this host has its own RDMA device ($device): lessons run on this host directly, no lab machine is needed"
    else
        say "RDMA_LAB_TARGET=host: lessons run on this host directly, no lab machine is needed"
    fi
}

make_keys() { # once per state folder: this user's key, the guest's host key
    [ -f "$state/id_ed25519" ] && [ -f "$state/host_key" ] && [ -f "$state/known_hosts" ] && return 0
    if ! command -v ssh >/dev/null || ! command -v ssh-keygen >/dev/null; then
        die "ssh is missing: ./lab setup installs it (openssh-client)"
    fi
    command -v dropbearkey >/dev/null || die "dropbear is missing: ./lab setup installs it (dropbear-bin)"
    rm -f "$state/id_ed25519" "$state/id_ed25519.pub" "$state/host_key"
    ssh-keygen -q -t ed25519 -N '' -C rdma-lab-machine -f "$state/id_ed25519" >/dev/null
    dropbearkey -t ed25519 -f "$state/host_key" >/dev/null 2>&1 || die "dropbearkey could not make a host key"
    echo "rdma-lab-machine $(dropbearkey -y -f "$state/host_key" | grep '^ssh-' | cut -d' ' -f1,2)" >"$state/known_hosts"
}

free_port() { # a loopback port nobody listens on (qemu fails on a taken one, and we try again)
    local port
    for _ in $(seq 50); do
        port=$((20000 + RANDOM % 40000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return 0
        fi
    done
    return 1
}

start_qemu() {
    rm -rf "$state/run" "$state/qemu.pid" "$state/pid"
    mkdir -p "$state/run"
    cp "$state/host_key" "$state/run/host_key"
    cp "$state/id_ed25519.pub" "$state/run/authorized_keys"
    echo "$idle_seconds" >"$state/run/idle"
    echo "$idle_text" >"$state/run/idle_text"
    date +%s >"$state/run/started"
    local port
    for _ in 1 2 3; do
        port=$(free_port) || die "no free loopback port for the lab machine's SSH server"
        echo "$port" >"$state/port"
        # (9>&-: qemu and the SSH master outlive this script and must not hold its lock)
        if (cd "$repo" && "$here/microvm.sh" --machine "$state" --ssh-port "$port" "${userland[@]}" 9>&-); then
            break
        fi
        rm -f "$state/qemu.pid"
    done
    # qemu deletes its own pid file when it ends: keep a copy that outlives it,
    # so that a machine killed from outside is noticed.
    cp "$state/qemu.pid" "$state/pid" 2>/dev/null
}

# Wait for the guest's ready line (within the boot deadline, counted from the
# start of the boot), then open the SSH master; 0 when the machine answers.
wait_ready() {
    local started
    started=$(cat "$state/run/started" 2>/dev/null || date +%s)
    while [ ! -f "$state/run/ready" ]; do
        if [ -f "$state/run/failed" ]; then
            say "$name failed: $(cat "$state/run/failed")"
            return 1
        fi
        qemu_pid >/dev/null || return 1
        [ $(($(date +%s) - started)) -lt "$boot_deadline" ] || return 1
        sleep 0.2
    done
    [ -S "$state/control" ] || start_master || return 1
    shell_command true
}

stop_machine() {
    local pid
    stop_master
    if pid=$(qemu_pid); then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do
            qemu_pid >/dev/null || break
            sleep 0.1
        done
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -rf "$state/run" "$state/qemu.pid" "$state/pid" "$state/port" "$state/control"
}

describe() { # kernel, device, address of a running machine
    local kernel device netdev address
    # (a Debian kernel release may hold a "+": 6.12.118+deb13-amd64)
    # shellcheck disable=SC1090 # kernel=... device=... netdev=... address=...
    eval "$(tr ' ' '\n' <"$state/run/ready" | grep -E '^(kernel|device|netdev|address)=[A-Za-z0-9._:+-]*$')"
    echo "Linux ${kernel:-?}, ${device:-?} on ${netdev:-?} (${address:-?})"
}

machine_up() {
    mkdir -p "$state"
    chmod 700 "$state" "$cache/machines"
    exec 9>"$state/lock"
    flock 9
    forget_stale
    if qemu_pid >/dev/null; then
        # Up, or booting for a command that was interrupted before it finished waiting.
        wait_ready && return 0
        stop_machine
    fi
    make_keys
    local when="after $idle_text without a session"
    [ "$idle_seconds" != 0 ] || when="only with ./lab down"
    say "starting $name (it stops $when; ./lab down stops it now)"
    # Interrupted while it boots: stop it rather than leave half a machine.
    trap 'stop_machine; say "interrupted; $name is stopped"; exit 130' INT TERM HUP
    local attempt
    for attempt in 1 2; do
        start_qemu && wait_ready && break
        stop_machine
        if [ "$attempt" = 1 ]; then
            say "$name did not come up within ${boot_deadline}s; stopping it and trying once more"
        else
            tail -n 15 "$state/console.log" >&2 2>/dev/null || true
            die "$name did not come up twice; its console is above"
        fi
    done
    trap - INT TERM HUP
    say "$name is up: $(describe)"
}

# --- sessions ------------------------------------------------------------------

# Run COMMAND (or, without one, an interactive shell) in the machine, in the
# current folder (the checkout is at the same path there), with the variables
# a run depends on. On a terminal the session gets one (line editing, window
# size, job control, Ctrl-C reaching the program); otherwise it is a plain
# pipe, and a Ctrl-C or kill of this command is passed on to the session.
shell_command() {
    local -a options env_args=()
    mapfile -d '' options < <(ssh_options)
    local name value
    while IFS='=' read -r name value; do
        env_args+=("$name=$value")
    done < <(env | grep -E '^(CI|RDMA_LAB_[A-Z_]*|CTEST_[A-Z_]*|BENCH_[A-Z0-9_]*)=' | grep -v '^RDMA_LAB_SERVER_ADDR=')
    local cwd=${RDMA_LAB_CWD:-$PWD}
    if [ $# -eq 0 ]; then
        # shellcheck disable=SC2029 # expanded in the machine, on purpose
        ssh "${options[@]}" -t root@127.0.0.1 \
            "$(printf '%q ' "$repo/vm/machine-session.sh" --tty "$cwd" "${env_args[@]}" -- bash -i)"
        return
    fi
    if [ -t 0 ] && [ -t 1 ]; then
        # shellcheck disable=SC2029
        ssh "${options[@]}" -t root@127.0.0.1 \
            "$(printf '%q ' "$repo/vm/machine-session.sh" --tty "$cwd" "${env_args[@]}" -- "$@")"
        return
    fi
    local token status=0
    token=$$.$RANDOM
    # shellcheck disable=SC2317 # called by the trap
    forward() { # SIGNAL: to every process of the session in the machine
        # shellcheck disable=SC2029 # expanded in the machine, on purpose
        ssh "${options[@]}" root@127.0.0.1 "$(printf '%q ' "$repo/vm/machine-session.sh" --signal "$token" "$1")" \
            </dev/null >/dev/null 2>&1 || true
    }
    local session=''
    # shellcheck disable=SC2317 # called by the traps
    stop() { # SIGNAL STATUS: pass SIGNAL on, end the session's ssh, exit with STATUS
        forward "$1"
        [ -z "$session" ] || kill "$session" 2>/dev/null || true
        exit "$2"
    }
    trap 'stop INT 130' INT
    trap 'stop TERM 143' TERM
    trap 'stop HUP 129' HUP
    # In the background, so that a signal runs its trap at once (bash runs a
    # trap only after a foreground command ends); stdin stays the caller's.
    # shellcheck disable=SC2029
    ssh "${options[@]}" -T root@127.0.0.1 \
        "$(printf '%q ' "$repo/vm/machine-session.sh" --token "$token" "$cwd" "${env_args[@]}" -- "$@")" <&0 &
    session=$!
    wait "$session" || status=$?
    trap - INT TERM HUP
    return "$status"
}

# --- the commands --------------------------------------------------------------

case "$action" in
running)
    qemu_pid >/dev/null && [ -f "$state/run/ready" ]
    ;;
up)
    runs_on_host && exit 0
    machine_up
    ;;
down)
    if [ -d "$state" ]; then
        exec 9>"$state/lock"
        flock 9
    fi
    forget_stale
    if qemu_pid >/dev/null; then
        stop_machine
        say "$name is down"
    else
        stop_master
        say "$name is not running"
    fi
    ;;
status)
    runs_on_host && exit 0
    forget_stale
    if qemu_pid >/dev/null && [ -f "$state/run/ready" ]; then
        echo "$name is up: $(describe)"
        echo "  qemu pid $(qemu_pid), SSH on 127.0.0.1:$(cat "$state/port"), state in $state"
        if [ "$(cat "$state/run/idle")" = 0 ]; then
            echo "  it runs until ./lab down"
        else
            echo "  it stops after $(cat "$state/run/idle_text") without a session, or with ./lab down"
        fi
    elif qemu_pid >/dev/null; then
        echo "$name is starting (qemu pid $(qemu_pid))"
    else
        echo "$name is down (./lab up starts it)"
        exit 3
    fi
    ;;
shell)
    if runs_on_host; then
        [ $# -gt 0 ] || exec "${SHELL:-bash}" -i
        exec "$@"
    fi
    if ! qemu_pid >/dev/null || [ ! -f "$state/run/ready" ]; then machine_up; fi
    exec 9>&-
    [ -S "$state/control" ] || start_master || true
    shell_command "$@"
    ;;
*) die "unknown action '$action' (up, down, status, shell, running)" ;;
esac

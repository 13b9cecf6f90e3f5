#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run a command on this host where it sees almost nothing: ./lab grade uses it
# to unpack submissions and to compile students' files, so that neither an
# archive nor a source file can reach what is not theirs (an #include of the
# reference solution, an .incbin of a private file, an archive that writes
# outside its folder).
#
#   grading/host-sandbox.sh [--ro HOST:INSIDE]... [--rw HOST:INSIDE]...
#                           [--cwd DIR] [--timeout SECONDS] -- COMMAND [ARGS...]
#
# The command runs in new mount, PID, network, IPC and UTS namespaces (and a
# user namespace when this is not root), chrooted into a root that holds
# /usr (read-only), the loader's cache, /dev/null and friends, its own /proc
# and /tmp, and the folders given: --ro read-only, --rw writable. As root it
# runs as the user nobody. Limits: CPU time, address space, file size,
# processes, and a wall-clock --timeout (default 120 s; exit status 124).
#
# Where namespaces are not allowed (a container without CAP_SYS_ADMIN, such
# as Gradescope's), it runs the command as nobody without them, with the same
# limits, but only with RDMA_LAB_HOST_SANDBOX=none (grading/grade.sh sets it
# for a course tree that holds no solutions); the command then finds each
# folder /NAME in the variable LAB_PATH_NAME. --check only says whether
# namespaces work here (exit status 0) or not (1).
set -euo pipefail

die() {
    echo "host-sandbox: $*" >&2
    exit 2
}

binds=()
cwd=/
timeout_seconds=120
while [ $# -gt 0 ]; do
    case "$1" in
    --ro | --rw)
        if [ $# -lt 2 ] || [[ $2 != *:/* ]]; then die "$1 needs HOST:/INSIDE"; fi
        binds+=("$1" "$2")
        shift 2
        ;;
    --cwd)
        [ $# -ge 2 ] || die "--cwd needs a folder"
        cwd=$2
        shift 2
        ;;
    --timeout)
        [[ ${2:-} =~ ^[0-9]+$ ]] || die "--timeout needs a number of seconds"
        timeout_seconds=$2
        shift 2
        ;;
    --check)
        unshare_args=(--mount --pid --fork --net --ipc --uts)
        [ "$(id -u)" = 0 ] || unshare_args=(--user --map-root-user "${unshare_args[@]}")
        if unshare "${unshare_args[@]}" -- sh -c 'mount -t tmpfs none /mnt 2>/dev/null || mount -t tmpfs none /tmp' \
            >/dev/null 2>&1; then
            exit 0
        fi
        exit 1
        ;;
    --) shift; break ;;
    *) die "unknown option '$1'" ;;
    esac
done
[ $# -ge 1 ] || die "no command given"

# The limits the command runs under (prlimit: soft=hard).
limits=(--cpu=120 --as=4294967296 --fsize=268435456 --nofile=256 --core=0)
# The process count is per user: only nobody's is ours to limit.
[ "$(id -u)" = 0 ] && limits+=(--nproc=256)

if [ "${RDMA_LAB_HOST_SANDBOX:-}" = none ]; then
    # No namespaces here: as nobody when root, with the limits, in the given folders.
    # Only the --rw folders must be writable by that user.
    as_user=()
    if [ "$(id -u)" = 0 ]; then
        as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs)
        for ((i = 0; i < ${#binds[@]}; i += 2)); do
            [ "${binds[i]}" = --rw ] && chown -R 65534:65534 "${binds[i + 1]%%:/*}"
        done
    fi
    # No folder is mounted where the command expects it: the command finds
    # each one in LAB_PATH_<NAME> (/course: LAB_PATH_COURSE), and --cwd is mapped back.
    for ((i = 0; i < ${#binds[@]}; i += 2)); do
        host=${binds[i + 1]%%:/*}
        inside=/${binds[i + 1]#*:/}
        name=$(printf '%s' "${inside#/}" | tr 'a-z/-' 'A-Z__')
        export "LAB_PATH_$name=$host"
        case "$cwd" in "$inside" | "$inside"/*) cwd=$host${cwd#"$inside"} ;; esac
    done
    cd "$cwd"
    exec "${as_user[@]}" prlimit "${limits[@]}" -- timeout -k 5 "$timeout_seconds" "$@"
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/rdma-lab-host-sandbox.XXXXXX")
trap 'rmdir "$root" 2>/dev/null || true' EXIT

unshare_args=(--mount --pid --fork --net --ipc --uts --kill-child)
as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs)
if [ "$(id -u)" != 0 ]; then
    unshare_args=(--user --map-root-user "${unshare_args[@]}")
    as_user=(setpriv --no-new-privs) # only root is mapped in the user namespace
fi

# The set-up inside the namespaces: $1 the root, $2 the cwd, $3 the timeout,
# then the binds as pairs, then "--", then the command.
# shellcheck disable=SC2016 # expanded by the inner shell
setup='
set -e
root=$1 cwd=$2 timeout_seconds=$3
shift 3
mount -t tmpfs -o size=4m,mode=0755 none "$root"
for top in bin sbin lib lib64 lib32 libx32; do
    if [ -L "/$top" ]; then
        ln -s "$(readlink "/$top")" "$root/$top"
    elif [ -d "/$top" ]; then
        mkdir "$root/$top" && mount --rbind "/$top" "$root/$top" && mount -o remount,bind,ro "$root/$top"
    fi
done
mkdir -p "$root/usr" "$root/etc" "$root/dev" "$root/tmp" "$root/proc"
mount --rbind /usr "$root/usr" && mount -o remount,bind,ro "$root/usr"
for file in /etc/ld.so.cache /etc/passwd /etc/group; do
    [ -e "$file" ] && touch "$root$file" && mount --bind "$file" "$root$file"
done
if [ -d /etc/alternatives ]; then # /usr/bin/c++ and friends point there
    mkdir "$root/etc/alternatives" && mount --rbind /etc/alternatives "$root/etc/alternatives" &&
        mount -o remount,bind,ro "$root/etc/alternatives"
fi
for node in null zero full random urandom; do
    touch "$root/dev/$node" && mount --bind "/dev/$node" "$root/dev/$node"
done
mount -t tmpfs -o size=512m,mode=1777 none "$root/tmp"
mount -t proc proc "$root/proc"
while [ "$1" != -- ]; do
    kind=$1 host=${2%%:/*} inside=/${2#*:/}
    shift 2
    mkdir -p "$root$inside"
    mount --rbind "$host" "$root$inside"
    [ "$kind" = --ro ] && mount -o remount,bind,ro "$root$inside"
done
shift
cd "$root$cwd"
exec chroot "$root" /bin/sh -c "cd \"\$0\" && exec \"\$@\"" "$cwd" "$@"
'
# Writable folders must be writable by nobody inside.
if [ "$(id -u)" = 0 ]; then
    for ((i = 0; i < ${#binds[@]}; i += 2)); do
        [ "${binds[i]}" = --rw ] && chown -R 65534:65534 "${binds[i + 1]%%:/*}"
    done
fi
unshare "${unshare_args[@]}" -- bash -c "$setup" sandbox "$root" "$cwd" "$timeout_seconds" \
    "${binds[@]}" -- "${as_user[@]}" prlimit "${limits[@]}" -- timeout -k 5 "$timeout_seconds" "$@"

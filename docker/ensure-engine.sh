#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Make sure a Docker engine answers, for the image test and for class set-up.
#
#   docker/ensure-engine.sh [--install]
#
# When `docker info` works: nothing to do. When dockerd is installed but not
# running and this runs as root (a CI runner, a fresh VM): start it in the
# background and wait for it. --install (implied by CI=true) first installs
# Debian's docker.io and debootstrap (docker/make-base-image.sh needs it).
# Exit status: 0 with a working engine, 3 without one (the last line says why).
set -euo pipefail

install=0
[ "${CI:-}" = true ] && install=1
[ "${1:-}" = --install ] && install=1
log=${RDMA_LAB_DOCKERD_LOG:-/var/log/rdma-lab-dockerd.log}

none() {
    echo "ensure-engine: no Docker engine: $*" >&2
    exit 3
}

engine_answers() { docker info >/dev/null 2>&1; }

if command -v docker >/dev/null && engine_answers; then
    exit 0
fi

if [ "$install" = 1 ]; then
    missing=()
    command -v dockerd >/dev/null || missing+=(docker.io)
    command -v debootstrap >/dev/null || missing+=(debootstrap)
    if [ ${#missing[@]} -gt 0 ]; then
        [ "$(id -u)" = 0 ] || none "installing ${missing[*]} needs root"
        command -v apt-get >/dev/null || none "no apt-get to install ${missing[*]}"
        echo "ensure-engine: installing ${missing[*]}" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q >/dev/null
        apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null ||
            none "apt-get install ${missing[*]} failed"
    fi
fi

command -v docker >/dev/null || none "the docker command is missing (install docker.io, or Docker Desktop)"
if ! command -v dockerd >/dev/null; then
    none "'docker info' fails and there is no dockerd here to start (is Docker Desktop running?)"
fi
[ "$(id -u)" = 0 ] || none "dockerd is not running and only root can start it (sudo dockerd &, or systemctl start docker)"

if ! pgrep -x dockerd >/dev/null; then
    echo "ensure-engine: starting dockerd (log: $log)" >&2
    # containerd comes with docker.io; dockerd starts its own when none runs.
    setsid dockerd >"$log" 2>&1 </dev/null &
fi
for _ in $(seq 60); do
    engine_answers && exit 0
    sleep 0.5
done
tail -n 5 "$log" >&2 2>/dev/null || true
none "dockerd did not answer within 30 s (see $log)"

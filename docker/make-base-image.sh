#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Provide the image the Dockerfile starts FROM (debian:bookworm) without a
# registry: when the engine does not have it yet, build it from Debian's
# package mirror with debootstrap and import it.
#
#   docker/make-base-image.sh [--force]
#
# Where a registry is reachable, `docker pull debian:bookworm` does the same.
# Needs root (debootstrap) and debootstrap itself. DEBIAN_MIRROR overrides the
# mirror (default: the one apt uses on this machine, else deb.debian.org).
set -euo pipefail

image=debian:bookworm

die() {
    echo "make-base-image: $*" >&2
    exit 2
}

if [ "${1:-}" != --force ] && docker image inspect "$image" >/dev/null 2>&1; then
    echo "make-base-image: $image is already there"
    exit 0
fi
command -v debootstrap >/dev/null || die "debootstrap is missing: apt-get install debootstrap (or docker pull $image)"
[ "$(id -u)" = 0 ] || die "debootstrap needs root: sudo $0"

mirror=${DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
    mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
        grep -oE 'https?://[^ ]+/debian/?( |$)' | head -n 1 | tr -d ' ' || true)
    mirror=${mirror:-http://deb.debian.org/debian}
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/rdma-lab-base.XXXXXX")
trap 'rm -rf "$root"' EXIT
echo "make-base-image: debootstrap bookworm from $mirror (about half a minute)"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.log" 2>&1 || {
    tail -n 15 "$root.log" >&2
    rm -f "$root.log"
    die "debootstrap failed"
}
rm -f "$root.log"
# The registry's image points apt at the public mirror and keeps no apt lists: so does this one.
cat >"$root/etc/apt/sources.list" <<'EOF'
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb
tar -C "$root" -c . | docker import - "$image" >/dev/null
echo "make-base-image: imported $image"

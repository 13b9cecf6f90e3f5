#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what rendering and checking the slides needs, where it is missing:
# Node.js with npm, Chromium, the fonts the theme names (DejaVu, and Noto
# Sans CJK SC for the Chinese decks; Debian packages, with apt as root or
# through sudo), then Marp and playwright-core from npm ('npm ci': exactly the
# versions in package-lock.json, into slides/node_modules, again only when the
# lockfile changed).
#
#   slides/setup.sh [--check]    --check: only say what is missing (exit 1 if anything)
set -euo pipefail
slides=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$slides"

missing=()
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
browser=${CHROME_PATH:-}
if [ -z "$browser" ]; then
    for candidate in chromium chromium-browser google-chrome; do
        if command -v "$candidate" >/dev/null; then
            browser=$candidate
            break
        fi
    done
fi
[ -n "$browser" ] || missing+=(chromium)
# The theme (theme/lab.css) names DejaVu Sans and DejaVu Sans Mono
# (fonts-dejavu-core) and, for Chinese, Noto Sans CJK SC and Noto Sans Mono
# CJK SC (fonts-noto-cjk), so that every machine measures the same glyphs.
if command -v dpkg-query >/dev/null; then
    for font_package in fonts-dejavu-core fonts-noto-cjk; do
        dpkg-query -W -f='${Status}' "$font_package" 2>/dev/null | grep -q 'install ok installed' ||
            missing+=("$font_package")
    done
fi
stamp=node_modules/.lab-installed
npm_needed=0
if [ ! -x node_modules/.bin/marp ] || [ ! -d node_modules/playwright-core ] || [ ! -f "$stamp" ] ||
    [ package-lock.json -nt "$stamp" ]; then
    npm_needed=1
fi

if [ "${1:-}" = --check ]; then
    [ ${#missing[@]} -eq 0 ] || echo "slides: missing packages: ${missing[*]}"
    [ $npm_needed = 0 ] || echo "slides: the npm packages are not installed (slides/setup.sh installs them)"
    [ ${#missing[@]} -eq 0 ] && [ $npm_needed = 0 ]
    exit
fi

if [ ${#missing[@]} -gt 0 ]; then
    command -v apt-get >/dev/null || {
        echo "slides: install ${missing[*]} (this is not a Debian or Ubuntu system)" >&2
        exit 2
    }
    sudo=()
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null || {
            echo "slides: run as root, or install: ${missing[*]}" >&2
            exit 2
        }
        sudo=(sudo)
    fi
    echo "slides: installing ${missing[*]} (apt)"
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -q >/dev/null
    "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ $npm_needed = 1 ]; then
    echo "slides: npm ci (Marp and playwright-core, pinned by package-lock.json)"
    # playwright-core drives the system's Chromium: it never downloads a browser.
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >/dev/null
    touch "$stamp"
fi

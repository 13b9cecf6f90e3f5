#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Gradescope runs this once, as root, when it builds the autograder's image
# (Ubuntu; /autograder/source holds this package). It installs what grading
# needs and builds the course's check programs and objects once, so that a
# submission costs only the compilation of the student's own files.
# GitHub Classroom's workflow runs it too (with sudo), from where the package
# was unpacked.
set -euo pipefail
source=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$source"
export DEBIAN_FRONTEND=noninteractive

apt-get update -q >/dev/null
setup/install-deps.sh --grader

# The course needs CMake 3.25; Ubuntu 22.04 has 3.22: take a newer one from PyPI then.
cmake_version=$(cmake --version | awk 'NR == 1 {print $3}')
if [ "$(printf '%s\n3.25\n' "$cmake_version" | sort -V | head -n 1)" != 3.25 ]; then
    echo "setup: CMake $cmake_version is older than 3.25: installing a newer one with pip"
    apt-get install -y -q --no-install-recommends python3-pip >/dev/null
    python3 -m pip install -q 'cmake>=3.25'
    hash -r
fi

mkdir -p build
cmake -S . -B build/default -DCMAKE_BUILD_TYPE=RelWithDebInfo >build/configure.log 2>&1 ||
    { tail -n 30 build/configure.log; exit 1; }
cmake --build build/default --target grade_kit -j "$(nproc)"
echo "setup: the grader is ready"

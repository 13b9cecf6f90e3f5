# SPDX-License-Identifier: MIT
# The course built for arm64 on another machine (./lab test --arch arm64):
# Debian's cross compiler (g++-aarch64-linux-gnu) against the arm64 userland of
# vm/userland.sh as the sysroot, where the headers and libraries of rdma-core,
# Catch2 and CLI11 come from. ./lab sets LAB_SYSROOT; it also points
# pkg-config into the sysroot and sets QEMU_LD_PREFIX, so that the test
# programs the build lists (tests/support/discover.cmake) run through
# qemu-user with the sysroot's libraries.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
if(NOT DEFINED ENV{LAB_SYSROOT})
  message(FATAL_ERROR "LAB_SYSROOT is not set: build for arm64 with ./lab test --arch arm64")
endif()
set(CMAKE_SYSROOT "$ENV{LAB_SYSROOT}")
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH "$ENV{LAB_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

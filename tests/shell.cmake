# SPDX-License-Identifier: MIT
# Static checks of the sources. They need no RDMA device, so they carry the
# label `host`: ./lab test runs them on the build host, not in the micro-VM.

# Every shell script of the course passes shellcheck (label `shell`).
add_test(NAME shellcheck COMMAND "${PROJECT_SOURCE_DIR}/tests/style/shellcheck.sh")
set_tests_properties(shellcheck PROPERTIES LABELS "shell;host" TIMEOUT 300 SKIP_RETURN_CODE 77)

# Every C++ file follows the repository's .clang-format (label `style`).
add_test(NAME clang_format COMMAND "${PROJECT_SOURCE_DIR}/tests/style/format-check.sh")
set_tests_properties(clang_format PROPERTIES LABELS "style;host" TIMEOUT 120 SKIP_RETURN_CODE 77)

# ./lab COMMAND --help prints the usage, and starts no build and no micro-VM (label `shell`).
add_test(NAME lab_help COMMAND "${PROJECT_SOURCE_DIR}/tests/style/lab-help.sh")
set_tests_properties(lab_help PROPERTIES LABELS "shell;host" TIMEOUT 120)

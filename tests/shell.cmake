# Every shell script of the course passes shellcheck (label `shell`).
add_test(NAME shellcheck COMMAND "${PROJECT_SOURCE_DIR}/tests/docker/shellcheck.sh")
set_tests_properties(shellcheck PROPERTIES LABELS "shell" TIMEOUT 120 SKIP_RETURN_CODE 77)

# The course as a class adopts it: licences, points, the student edition.

# Every source, script, build file and page names its licence in an
# SPDX-License-Identifier line near its top (README.md, "Licence").
add_test(NAME spdx_identifiers COMMAND "${PROJECT_SOURCE_DIR}/tests/style/spdx-check.sh")
set_tests_properties(spdx_identifiers PROPERTIES LABELS "style;host" TIMEOUT 120)

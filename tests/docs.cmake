# Tests of the slides and the reference documentation (label docs). Neither
# needs npm, Chromium or a network.

# Code quoted on the slides still appears in the lessons it quotes (the drift
# check), and every image a deck shows exists.
lab_add_test(test_slide_code docs/test_slide_code.cpp
  LABELS docs unit TIMEOUT 30)

# Every public declaration in common/ has a Doxygen comment (warnings are
# errors); skipped where doxygen is not installed.
add_test(NAME docs_doxygen_common
  COMMAND "${CMAKE_CURRENT_SOURCE_DIR}/docs/check_doxygen.sh"
          "${PROJECT_SOURCE_DIR}" "${CMAKE_CURRENT_BINARY_DIR}/doxygen-check")
set_tests_properties(docs_doxygen_common PROPERTIES
  LABELS docs TIMEOUT 300 SKIP_RETURN_CODE 77)

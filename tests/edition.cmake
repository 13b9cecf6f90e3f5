# SPDX-License-Identifier: MIT
# The course as a class adopts it: licences, points, the student edition.

# Every source, script, build file and page names its licence in an
# SPDX-License-Identifier line near its top (README.md, "Licence").
add_test(NAME spdx_identifiers COMMAND "${PROJECT_SOURCE_DIR}/tests/style/spdx-check.sh")
set_tests_properties(spdx_identifiers PROPERTIES LABELS "style;host" TIMEOUT 120)

# Every exercise is out of 100, and its README, its deck, the exercises'
# README, the gradebook and Gradescope agree with grading/points.conf.
lab_add_test(test_points edition/test_points.cpp LABELS unit grading TIMEOUT 60
  DEPENDS grade_kit)
target_link_libraries(test_points PRIVATE lab_grade_reports)

# ./lab export (grading/export.sh). Both tests need the instructor's
# repository (solutions/ and the instructor's checks), and export, clone and
# boot micro-VMs themselves: label edition, which ./lab test runs on the
# build host.
if(EXISTS "${PROJECT_SOURCE_DIR}/solutions")
  # What the student and Classroom editions hold and leave out; no line of a
  # solution in them, no graded quiz's key.
  lab_add_test(test_export edition/test_export.cpp LABELS edition TIMEOUT 600)
  target_link_libraries(test_export PRIVATE lab_quiz_engine)  # reads the graded quizzes' banks
  # A fresh clone of each: ./lab test (a part), ./lab run 01_devices and
  # ./lab grade in the student edition; the Classroom workflow's steps on the
  # other. Most of its time is building in the clone: the whole edition for
  # its ./lab test, which the other two then reuse. Measured once with
  # LAB_EDITION_TESTS=none (no ./lab test in the clone, so ./lab run and
  # ./lab grade built what they need), under a load of 20 to 25 on 2 cores:
  # 2452 s (./lab run 01_devices 666 s, ./lab grade 1554 s, the Classroom
  # steps 230 s). With lesson 01's tests in the clone, on an idle 2-core
  # machine: 215 s.
  add_test(NAME edition_fresh_clone COMMAND "${CMAKE_CURRENT_SOURCE_DIR}/edition/fresh-clone-test.sh")
  set_tests_properties(edition_fresh_clone PROPERTIES LABELS "edition" TIMEOUT 5400
                       SKIP_RETURN_CODE 77 ENVIRONMENT "LAB_BUILD_DIR=${PROJECT_BINARY_DIR}"
                       COST 300)
endif()

# SPDX-License-Identifier: MIT
# Lesson 04 on rxe: QP caps, the state walk, the message it sent itself, and bad input.
# The same source builds twice: LAB_BAD_INPUT_ONLY keeps only the bad-input
# cases, so that they carry the bad-input label and the others do not.
lab_add_test(test_04_queue_pair lessons/test_04_queue_pair.cpp
  LABELS lesson rxe TIMEOUT 90 DEPENDS 04_queue_pair)
lab_add_test(test_04_queue_pair_bad_input lessons/test_04_queue_pair.cpp
  LABELS lesson rxe bad-input TIMEOUT 90 DEPENDS 04_queue_pair)
target_compile_definitions(test_04_queue_pair_bad_input PRIVATE LAB_BAD_INPUT_ONLY)

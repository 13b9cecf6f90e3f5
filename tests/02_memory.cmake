# SPDX-License-Identifier: MIT
# Lesson 02 on rxe: what it printed (keys, error codes), and bad input.
# The same source builds twice: LAB_BAD_INPUT_ONLY keeps only the bad-input
# cases, so that they carry the bad-input label and the others do not.
lab_add_test(test_02_memory lessons/test_02_memory.cpp
  LABELS lesson rxe TIMEOUT 90 DEPENDS 02_memory)
lab_add_test(test_02_memory_bad_input lessons/test_02_memory.cpp
  LABELS lesson rxe bad-input TIMEOUT 90 DEPENDS 02_memory)
target_compile_definitions(test_02_memory_bad_input PRIVATE LAB_BAD_INPUT_ONLY)

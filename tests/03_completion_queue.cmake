# SPDX-License-Identifier: MIT
# Lesson 03 on rxe: CQ size, empty poll, destroy order, and bad input.
# The same source builds twice: LAB_BAD_INPUT_ONLY keeps only the bad-input
# cases, so that they carry the bad-input label and the others do not.
lab_add_test(test_03_completion_queue lessons/test_03_completion_queue.cpp
  LABELS lesson rxe TIMEOUT 90 DEPENDS 03_completion_queue)
lab_add_test(test_03_completion_queue_bad_input lessons/test_03_completion_queue.cpp
  LABELS lesson rxe bad-input TIMEOUT 90 DEPENDS 03_completion_queue)
target_compile_definitions(test_03_completion_queue_bad_input PRIVATE LAB_BAD_INPUT_ONLY)
lab_add_test(test_wait unit/test_wait.cpp
  LABELS unit TIMEOUT 30)
# The rdma_cm watch of lab::PeerWatch (lesson 11's), on a connection over rxe.
lab_add_test(test_wait_cm unit/test_wait_cm.cpp
  LABELS rxe TIMEOUT 60)
target_link_libraries(test_wait_cm PRIVATE lab_cm)

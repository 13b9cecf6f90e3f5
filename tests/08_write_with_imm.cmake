# SPDX-License-Identifier: MIT
# Lesson 08: RDMA write with immediate, with server and client started for real on rxe.
lab_add_test(test_08_write_with_imm lessons/test_08_write_with_imm.cpp
  LABELS lesson rxe two-process TIMEOUT 120 DEPENDS 08_write_with_imm)

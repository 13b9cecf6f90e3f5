# SPDX-License-Identifier: MIT
# The two-process lessons 05 to 12 (and bench_09_rdma_read) given bad input: one
# table-driven program; its test cases are named after the lesson they run.
lab_add_test(test_bad_input lessons/test_bad_input.cpp
  LABELS lesson rxe two-process bad-input TIMEOUT 240
  DEPENDS 05_exchange 06_send_recv 07_rdma_write 08_write_with_imm 09_rdma_read
          bench_09_rdma_read 10_events 11_rdma_cm 12_atomics)

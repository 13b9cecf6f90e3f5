# SPDX-License-Identifier: MIT
# Lesson 07: RDMA write, with server and client started for real on rxe.
lab_add_test(test_07_rdma_write lessons/test_07_rdma_write.cpp
  LABELS lesson rxe two-process TIMEOUT 180 DEPENDS 07_rdma_write)
lab_add_test(test_report unit/test_report.cpp
  LABELS unit TIMEOUT 30)
# bench_07_rdma_write: lesson 07's measuring modes (bench/07_rdma_write.cpp).
lab_add_test(test_bench_07_rdma_write bench/test_bench_07_rdma_write.cpp
  LABELS bench rxe two-process TIMEOUT 180 DEPENDS bench_07_rdma_write)
# The variant hello_verbs: the hello world in raw verbs, one file, no common/.
lab_add_test(test_07_hello_verbs lessons/test_07_hello_verbs.cpp
  LABELS lesson rxe two-process TIMEOUT 180 DEPENDS 07_hello_verbs)

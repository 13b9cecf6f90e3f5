# SPDX-License-Identifier: MIT
# Lesson 09: RDMA read, with server and client started for real on rxe.
lab_add_test(test_09_rdma_read lessons/test_09_rdma_read.cpp
  LABELS lesson rxe two-process TIMEOUT 180 DEPENDS 09_rdma_read bench_09_rdma_read)

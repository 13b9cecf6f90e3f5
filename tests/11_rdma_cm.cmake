# SPDX-License-Identifier: MIT
# Lesson 11: the hello world connected by rdma_cm, two processes on rxe.
lab_add_test(test_11_rdma_cm lessons/test_11_rdma_cm.cpp
  LABELS lesson rxe two-process TIMEOUT 120 DEPENDS 11_rdma_cm 01_devices)
# The README's first check that RDMA works: rdma-core's rping, udaddy,
# rdma_server/rdma_client and perftest's ib_send_bw, run on the rxe device.
lab_add_test(test_11_rdma_cm_tools lessons/test_11_rdma_cm_tools.cpp
  LABELS lesson rxe two-process TIMEOUT 240)
# The variant with rdma_cm's own data path (rdma_verbs.h).
lab_add_test(test_11_rdma_verbs lessons/test_11_rdma_verbs.cpp
  LABELS lesson rxe two-process TIMEOUT 120 DEPENDS 11_rdma_verbs)

# Lesson 11: the hello world connected by rdma_cm, two processes on rxe.
lab_add_test(test_11_rdma_cm lessons/test_11_rdma_cm.cpp
  LABELS lesson rxe two-process TIMEOUT 90 DEPENDS 11_rdma_cm)
lab_add_test(test_11_rdma_cm_bad_input lessons/test_11_rdma_cm_bad_input.cpp
  LABELS lesson rxe two-process bad-input TIMEOUT 120 DEPENDS 11_rdma_cm)

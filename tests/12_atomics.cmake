# SPDX-License-Identifier: MIT
# Lesson 12: atomics from several clients on one server's words, on rxe.
lab_add_test(test_12_atomics lessons/test_12_atomics.cpp
  LABELS lesson rxe two-process TIMEOUT 120 DEPENDS 12_atomics)
# bench_12_atomics: lesson 12's measuring modes (bench/12_atomics.cpp).
lab_add_test(test_bench_12_atomics bench/test_bench_12_atomics.cpp
  LABELS bench rxe two-process TIMEOUT 180 DEPENDS bench_12_atomics)

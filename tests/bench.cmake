# SPDX-License-Identifier: MIT
# The benchmark scripts themselves (bench/*.sh), on the rxe device; the
# measuring programs of lessons 07, 09 and 12 are tested with their lessons.
lab_add_test(test_bench_scripts bench/test_bench_scripts.cpp
  LABELS bench rxe TIMEOUT 300 DEPENDS 01_devices)

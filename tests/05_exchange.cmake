# SPDX-License-Identifier: MIT
# Lesson 05 and the socket exchange it teaches (common/lab/exchange.cpp).
lab_add_test(test_exchange unit/test_exchange.cpp
  LABELS unit TIMEOUT 60)
lab_add_test(test_05_exchange lessons/test_05_exchange.cpp
  LABELS lesson rxe two-process TIMEOUT 90 DEPENDS 05_exchange)
include("${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz.cmake")

# SPDX-License-Identifier: MIT
lab_add_test(test_01_devices lessons/test_01_devices.cpp
  LABELS lesson rxe TIMEOUT 60 DEPENDS 01_devices)
lab_add_test(test_gid_choice unit/test_gid_choice.cpp
  LABELS unit TIMEOUT 30)

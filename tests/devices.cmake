# SPDX-License-Identifier: MIT
# The device page (docs/devices.md) on rxe: one case per row it names, each
# asserting what that row says rxe does on the kernel the test runs on.
lab_add_test(test_device_limits devices/test_device_limits.cpp
  LABELS devices rxe TIMEOUT 60)

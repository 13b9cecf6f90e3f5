# SPDX-License-Identifier: MIT
# The device page (docs/devices.md) on rxe: one case per row it names, each
# asserting what that row says rxe does on the kernel the test runs on.
lab_add_test(test_device_limits devices/test_device_limits.cpp
  LABELS devices rxe TIMEOUT 60)
# Timers and retries: retry_cnt 7, RNR back-off, the fence, rdma_cm's ACK timeout.
# SERIAL: resend counts and back-off times are read from the clock.
lab_add_test(test_device_timers devices/test_device_timers.cpp
  LABELS devices rxe TIMEOUT 60 SERIAL)
target_link_libraries(test_device_timers PRIVATE lab_cm)

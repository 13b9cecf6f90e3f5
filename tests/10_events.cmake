# SPDX-License-Identifier: MIT
# Lesson 10: completion events against busy polling, two processes on rxe.
lab_add_test(test_10_events lessons/test_10_events.cpp
  LABELS lesson rxe two-process TIMEOUT 300 DEPENDS 10_events)
# The variant on the device's asynchronous events (one process; sets the netdev down and up).
# SERIAL: its second rxe device would be seen by any lesson listing the devices.
lab_add_test(test_10_async_events lessons/test_10_async_events.cpp
  LABELS lesson rxe TIMEOUT 180 SERIAL DEPENDS 10_async_events)

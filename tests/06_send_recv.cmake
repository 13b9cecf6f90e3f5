# SPDX-License-Identifier: MIT
# Lesson 06: send/receive between two processes, the ping-pong, the RNR demo.
lab_add_test(test_06_send_recv lessons/test_06_send_recv.cpp
  LABELS lesson rxe two-process TIMEOUT 240 DEPENDS 06_send_recv)

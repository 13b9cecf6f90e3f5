# SPDX-License-Identifier: MIT
# The course's tools that are not lessons (tools/).

# roce-decode, the decoder behind ./lab capture, on a recorded capture and on bad input.
lab_add_test(test_roce_decode tools/test_roce_decode.cpp
  LABELS unit capture bad-input TIMEOUT 60 DEPENDS roce_decode)

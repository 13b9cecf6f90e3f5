lab_add_test(test_exchange unit/test_exchange.cpp
  LABELS unit TIMEOUT 60)

# The machine's set-up (setup/): ./lab doctor.
lab_add_test(test_doctor setup/test_doctor.cpp LABELS unit TIMEOUT 60)

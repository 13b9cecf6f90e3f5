# SPDX-License-Identifier: MIT
# The machine's set-up (setup/): ./lab doctor. It looks at the machine, not at
# an RDMA device, so it carries the label `host`: ./lab test runs it on the
# build host (or in the release's userland with --distro), not in the micro-VM.
lab_add_test(test_doctor setup/test_doctor.cpp LABELS unit host TIMEOUT 60)

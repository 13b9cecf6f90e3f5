# SPDX-License-Identifier: MIT
# The class containers (docker/README.md).
#
# The class image: build it, then run a lesson and its tests in a container
# through the micro-VM. Needs a Docker engine (docker/ensure-engine.sh starts
# one, installing it when CI=true); without one it is reported as skipped. It
# starts containers itself, so it runs on the build host: ctest -L docker
add_test(NAME docker_image COMMAND "${PROJECT_SOURCE_DIR}/tests/docker/image-test.sh")
# (RESOURCE_LOCK docker: one test at a time starts the engine and builds
# images. COST: ./lab test runs the host's tests two at a time, the longest
# first, so that the two image tests, one after the other, start early.)
set_tests_properties(docker_image PROPERTIES LABELS "docker" TIMEOUT 2400 SKIP_RETURN_CODE 77
                     ENVIRONMENT "LAB_BUILD_DIR=${PROJECT_BINARY_DIR}" RESOURCE_LOCK docker
                     COST 900)

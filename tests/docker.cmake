# Class containers, two hosts on a wire, the wire view (docker/README.md).
#
# Labels: `capture` and `unit` run anywhere; `two-hosts` and `docker` boot
# micro-VMs or containers themselves, so they run on the build host, not inside
# the micro-VM (there they report that they were skipped):
#   ctest -L two-hosts        ctest -L docker

# The decoder behind ./lab capture (docker/capture.sh builds the same file
# itself when this tree is not there).
add_executable(roce_decode "${PROJECT_SOURCE_DIR}/docker/roce-decode.cpp")
set_target_properties(roce_decode PROPERTIES OUTPUT_NAME roce-decode
                      RUNTIME_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/docker")

lab_add_test(test_roce_decode docker/test_roce_decode.cpp
  LABELS unit capture bad-input TIMEOUT 60 DEPENDS roce_decode)

# Lessons 06 and 07 join the two-host tests once their folders exist.
set(two_host_lessons 01_devices)
set(two_host_definitions "")
foreach(two_host_lesson 06_send_recv 07_rdma_write)
  if(EXISTS "${PROJECT_SOURCE_DIR}/lessons/${two_host_lesson}/CMakeLists.txt")
    list(APPEND two_host_lessons ${two_host_lesson})
    string(TOUPPER "LAB_HAVE_${two_host_lesson}" definition)
    list(APPEND two_host_definitions ${definition})
  else()
    message(STATUS "two-host tests: lessons/${two_host_lesson} does not exist yet; its two-host test is left out")
  endif()
endforeach()
lab_add_test(test_two_hosts docker/test_two_hosts.cpp
  LABELS two-hosts TIMEOUT 600 DEPENDS roce_decode ${two_host_lessons})
target_compile_definitions(test_two_hosts PRIVATE ${two_host_definitions})

# The class image: build it, then run a lesson and its tests in a container
# through the micro-VM. Needs a Docker engine (docker/ensure-engine.sh starts
# one, installing it when CI=true); without one it is reported as skipped.
add_test(NAME docker_image COMMAND "${PROJECT_SOURCE_DIR}/tests/docker/image-test.sh")
set_tests_properties(docker_image PROPERTIES LABELS "docker" TIMEOUT 2400 SKIP_RETURN_CODE 77
                     ENVIRONMENT "LAB_BUILD_DIR=${PROJECT_BINARY_DIR}")

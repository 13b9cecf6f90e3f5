# SPDX-License-Identifier: MIT
# Two hosts on a wire and the wire view (vm/README.md).
#
# The label `two-hosts` marks tests that boot micro-VMs themselves, so they
# run on the build host, not inside the micro-VM (there they report that they
# were skipped): ctest -L two-hosts

# Lessons 06 and 07 join the two-host tests once their folders exist.
set(two_host_lessons 01_devices 05_exchange)
set(two_host_definitions "")
foreach(two_host_lesson 06_send_recv 07_rdma_write)
  if(EXISTS "${PROJECT_SOURCE_DIR}/lessons/${two_host_lesson}/CMakeLists.txt")
    list(APPEND two_host_lessons ${two_host_lesson})
    if(two_host_lesson STREQUAL "06_send_recv")
      list(APPEND two_host_lessons 06_uc_vs_rc)  # its UC-against-RC variant, on a lossy wire
    endif()
    string(TOUPPER "LAB_HAVE_${two_host_lesson}" definition)
    list(APPEND two_host_definitions ${definition})
  else()
    message(STATUS "two-host tests: lessons/${two_host_lesson} does not exist yet; its two-host test is left out")
  endif()
endforeach()
# (LOCK: ./lab test runs the host's tests two at a time; the two-host tests,
# two micro-VMs each, run one after the other.)
lab_add_test(test_two_hosts vm/test_two_hosts.cpp
  LABELS two-hosts TIMEOUT 600 LOCK two-hosts DEPENDS roce_decode ${two_host_lessons})
target_compile_definitions(test_two_hosts PRIVATE ${two_host_definitions})

# The build's list of server-and-client programs (programs.tsv) agrees with the
# lessons' command lines; it runs every lesson's --help, so it depends on them.
file(GLOB lesson_folders LIST_DIRECTORIES true "${PROJECT_SOURCE_DIR}/lessons/[0-9][0-9]_*")
set(lesson_targets "")
# Every program of a lesson folder, not only the one named after it (lesson 06
# also builds 06_uc_vs_rc, lesson 10 10_async_events, lesson 11 11_rdma_verbs):
# the sanitizer leg builds only what the unit tests depend on.
foreach(folder IN LISTS lesson_folders)
  if(NOT EXISTS "${folder}/CMakeLists.txt")
    continue()
  endif()
  get_property(folder_targets DIRECTORY "${folder}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS folder_targets)
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE")
      list(APPEND lesson_targets ${target})
    endif()
  endforeach()
endforeach()
lab_add_test(test_program_roles vm/test_program_roles.cpp
  LABELS unit TIMEOUT 60 DEPENDS ${lesson_targets})

# The lab machine (./lab up, shell, status, down; ./lab run through it). The
# tests boot it themselves, so they run on the build host (label lab-machine):
# ./lab test keeps them outside the micro-VM, like the two-host tests.
# (LOCK: one of these at a time, as a student runs them; their deadlines are
# tight ones, and a second lab machine beside them would be no student's case.)
lab_add_test(test_lab_machine vm/test_lab_machine.cpp
  LABELS lab-machine TIMEOUT 900 LOCK lab-machine
  DEPENDS 01_devices 06_send_recv 07_rdma_write 10_async_events)
# The throwaway micro-VM's deadlines: boot, power-off (label lab-machine: it boots VMs itself).
lab_add_test(test_microvm vm/test_microvm.cpp LABELS lab-machine TIMEOUT 600 LOCK lab-machine)

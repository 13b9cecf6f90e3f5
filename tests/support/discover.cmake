# SPDX-License-Identifier: MIT
# Runs after a Catch2 test program is linked: lists its test cases and writes a
# CTest file with one test per case, each with the program's labels and
# timeout. (Catch2's own catch_discover_tests cannot give a test two labels.)
#
# Inputs (-D): PROGRAM, OUTPUT, PREFIX, LABELS (comma-separated), TIMEOUT, CATCH_VERSION,
# LOCK (a RESOURCE_LOCK name, or empty: tests that hold one never run at once),
# SERIAL (1: the test runs alone, RUN_SERIAL, e.g. it changes the devices every test sees).
# Catch2 v2 and v3 differ here: v3 lists with --list-tests --verbosity quiet
# and fails a run whose test spec matches no test by itself; v2 lists with
# --list-test-names-only and needs --warn NoTests for that (v3 removed the flag).
if(CATCH_VERSION EQUAL 3)
  set(list_args --list-tests --verbosity quiet)
  set(run_args "")
else()
  set(list_args --list-test-names-only)
  set(run_args " --warn NoTests")
endif()
execute_process(COMMAND "${PROGRAM}" ${list_args}
                OUTPUT_VARIABLE listing RESULT_VARIABLE status TIMEOUT 30)
if(NOT status EQUAL 0 AND NOT status GREATER 0)
  message(FATAL_ERROR "cannot list the tests of ${PROGRAM}: ${status}")
endif()
string(REPLACE ";" "\\;" listing "${listing}")
string(REPLACE "\n" ";" names "${listing}")
string(REPLACE "," ";" labels "${LABELS}")
set(lock "")
if(NOT LOCK STREQUAL "")
  set(lock " RESOURCE_LOCK [==[${LOCK}]==]")
endif()
if(SERIAL)
  string(APPEND lock " RUN_SERIAL TRUE")
endif()
get_filename_component(directory "${PROGRAM}" DIRECTORY)
set(script "")
foreach(name IN LISTS names)
  string(STRIP "${name}" name)
  if(name STREQUAL "")
    continue()
  endif()
  # In a Catch2 test spec, commas and brackets are syntax: escape them.
  string(REGEX REPLACE "([],[\\\\])" "\\\\\\1" spec "${name}")
  string(APPEND script
    "add_test([==[${PREFIX}${name}]==] [==[${PROGRAM}]==] [==[${spec}]==]${run_args})\n"
    "set_tests_properties([==[${PREFIX}${name}]==] PROPERTIES"
    " LABELS [==[${labels}]==] TIMEOUT ${TIMEOUT} WORKING_DIRECTORY [==[${directory}]==]"
    "${lock})\n")
endforeach()
file(WRITE "${OUTPUT}" "${script}")

# SPDX-License-Identifier: MIT
# After a check program is linked: write the names of its checks (Catch2 test
# cases), one a line, to OUTPUT, for ./lab grade's reports (a check that never
# ran, say because the student's file does not compile, is still listed).
#
# Inputs (-D): PROGRAM, OUTPUT, CATCH_VERSION.
if(CATCH_VERSION EQUAL 3)
  set(list_args --list-tests --verbosity quiet)
else()
  set(list_args --list-test-names-only)
endif()
execute_process(COMMAND "${PROGRAM}" ${list_args}
                OUTPUT_VARIABLE listing RESULT_VARIABLE status TIMEOUT 30)
if(NOT status EQUAL 0 AND NOT status GREATER 0)
  message(FATAL_ERROR "cannot list the checks of ${PROGRAM}: ${status}")
endif()
string(REPLACE "\r" "" listing "${listing}")
string(REGEX REPLACE "\n[ \t]+" "\n" listing "\n${listing}")
string(REGEX REPLACE "^\n+" "" listing "${listing}")
string(REGEX REPLACE "\n\n+" "\n" listing "${listing}")
file(WRITE "${OUTPUT}" "${listing}")

# SPDX-License-Identifier: MIT
# The fuzz target of the exchange parser (tests/fuzz/fuzz_exchange.cpp), built
# with clang's libFuzzer, AddressSanitizer and UBSan, whatever compiler builds
# the rest, and registered as a short bounded CTest run (label fuzz).
# Without clang++ and libFuzzer (Debian: clang and libclang-rt-N-dev for
# clang's major version N) it is skipped with a message naming the package.
# A cross build (./lab test --arch arm64 on x86-64) skips it: the clang found
# would build for the build machine, not for the one the tests run on.
if(CMAKE_CROSSCOMPILING)
  message(STATUS "fuzz: a cross build for ${CMAKE_SYSTEM_PROCESSOR}; fuzz_exchange is skipped")
  return()
endif()
find_program(LAB_FUZZ_CXX NAMES clang++ clang++-16 clang++-15 clang++-14)
set(lab_fuzz_ok FALSE)
if(LAB_FUZZ_CXX)
  set(probe_dir "${CMAKE_CURRENT_BINARY_DIR}/fuzz_probe")
  file(MAKE_DIRECTORY "${probe_dir}")
  file(WRITE "${probe_dir}/probe.cpp"
    "#include <cstddef>\n#include <cstdint>\n"
    "extern \"C\" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }\n")
  execute_process(
    COMMAND "${LAB_FUZZ_CXX}" -fsanitize=fuzzer,address probe.cpp -o probe
    WORKING_DIRECTORY "${probe_dir}" RESULT_VARIABLE probe_status OUTPUT_QUIET ERROR_QUIET)
  if(probe_status EQUAL 0)
    set(lab_fuzz_ok TRUE)
  endif()
endif()

if(NOT lab_fuzz_ok)
  # libFuzzer ships in a package named after clang's major version (Debian 12:
  # libclang-rt-14-dev, Debian 13: libclang-rt-19-dev).
  set(runtime_package "libclang-rt-N-dev, N = clang's major version")
  if(LAB_FUZZ_CXX)
    execute_process(COMMAND "${LAB_FUZZ_CXX}" -dumpversion OUTPUT_VARIABLE clang_version
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    string(REGEX MATCH "^[0-9]+" clang_major "${clang_version}")
    if(clang_major)
      set(runtime_package "libclang-rt-${clang_major}-dev")
    endif()
  endif()
  message(STATUS "fuzz: clang++ with libFuzzer not found; fuzz_exchange is skipped "
                 "(install clang and ${runtime_package}; ./lab setup does)")
  return()
endif()

set(fuzz_sources
  "${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_exchange.cpp"
  "${PROJECT_SOURCE_DIR}/common/lab/exchange.cpp"
  "${PROJECT_SOURCE_DIR}/common/lab/check.cpp"
  "${PROJECT_SOURCE_DIR}/common/lab/device.cpp"
  "${PROJECT_SOURCE_DIR}/common/lab/resources.cpp"
  "${PROJECT_SOURCE_DIR}/common/lab/wait.cpp")
set(fuzz_program "${CMAKE_CURRENT_BINARY_DIR}/fuzz_exchange")
add_custom_command(
  OUTPUT "${fuzz_program}"
  COMMAND "${LAB_FUZZ_CXX}" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined
          -fno-sanitize-recover=undefined -I "${PROJECT_SOURCE_DIR}/common"
          ${IBVERBS_CFLAGS} ${fuzz_sources} ${IBVERBS_LDFLAGS} -o "${fuzz_program}"
  DEPENDS ${fuzz_sources} "${PROJECT_SOURCE_DIR}/common/lab/exchange.hpp"
          "${PROJECT_SOURCE_DIR}/common/lab/wait.hpp"
  COMMENT "Building the libFuzzer target fuzz_exchange with ${LAB_FUZZ_CXX}"
  VERBATIM)
add_custom_target(fuzz_exchange ALL DEPENDS "${fuzz_program}")

# A valid message as the seed, so that the fuzzer starts from the accepted
# path and mutates its fields, rather than only finding wrong sizes.
set(fuzz_corpus "${CMAKE_CURRENT_BINARY_DIR}/fuzz_exchange_corpus")
add_test(NAME fuzz_exchange
  COMMAND sh -c "mkdir -p '${fuzz_corpus}' && printf 'RVLX\\000\\002\\000\\000\\000\\000\\000\\021\\000\\074\\135\\036\\000\\000\\000\\000\\000\\000\\000\\000\\000\\000\\377\\377\\012\\115\\000\\001\\000\\000\\177\\000\\022\\064\\126\\170\\336\\255\\276\\357\\000\\000\\020\\000\\000\\000\\000\\003' > '${fuzz_corpus}/valid' && exec '${fuzz_program}' -runs=200000 -max_total_time=20 '${fuzz_corpus}'")
# (label host: it needs no device, and runs natively, where its 200000 inputs
# take seconds, not the 20 s that cut it short in the emulated micro-VM)
set_tests_properties(fuzz_exchange PROPERTIES LABELS "fuzz;host" TIMEOUT 120)

# SPDX-License-Identifier: MIT
# The exercises' checks and the grading machinery (grading/, exercises/README.md).
#
# An exercise is graded by two programs: check_NN_name (course code only)
# and the student's program, built from the student's edited files and the
# course's objects (given files, lab_common, subject_NN_name.cpp's scenarios).
# The check program starts the student's program in a sandbox for each check
# and judges from outside. Here:
#   check_NN_name      registered with CTest, one test per check (labels
#                      exercise, rxe), run against the solution: all pass
#                      (the instructor's checks in tests/exercises/hidden/
#                      too, where the checkout has them);
#   test_exercise_skeletons  runs each check program against the skeleton:
#                      every check fails, naming every TODO;
#   test_sandbox       a misbehaving program: every way it fails is caught;
#   test_grade_report  the scores and reports, from files;
#   test_grade_retry   which exercises the class grader runs again, alone;
#   test_grade_class   ./lab grade --class on a class of good, bad and cheating
#                      submissions (boots its own micro-VM: label grade-class);
#   grading_gradescope the Gradescope package in a container laid out like
#                      Gradescope's (label docker).

# --- grading: checks that run the student's program as a separate process ---
set(lab_grade_dir "${PROJECT_SOURCE_DIR}/grading/grade")
add_library(lab_grade_subject STATIC "${lab_grade_dir}/channel.cpp" "${lab_grade_dir}/subject_main.cpp")
target_include_directories(lab_grade_subject PUBLIC "${PROJECT_SOURCE_DIR}/grading")
target_link_libraries(lab_grade_subject PUBLIC lab_common)

add_library(lab_grade_checker STATIC "${lab_grade_dir}/sandbox.cpp" "${lab_grade_dir}/student.cpp"
  "${lab_grade_dir}/trace.cpp" "${lab_grade_dir}/peer.cpp")
target_link_libraries(lab_grade_checker PUBLIC lab_grade_subject lab_common ${CMAKE_DL_LIBS})
add_library(lab_grade_listener OBJECT "${lab_grade_dir}/results_listener.cpp")
target_link_libraries(lab_grade_listener PRIVATE lab_test_support)

# Scores and reports (grading/grade.sh runs it on the host after the checks).
add_library(lab_grade_reports STATIC "${lab_grade_dir}/report.cpp" "${lab_grade_dir}/course.cpp")
target_include_directories(lab_grade_reports PUBLIC "${PROJECT_SOURCE_DIR}/grading")
target_link_libraries(lab_grade_reports PUBLIC lab_common)
add_executable(lab_grade_report "${PROJECT_SOURCE_DIR}/grading/report_main.cpp")
target_link_libraries(lab_grade_report PRIVATE lab_grade_reports)
set_target_properties(lab_grade_report PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/grading")

# lab_add_graded_exercise(NN NAME LIBRARY lib): exercise NN_NAME, graded by
# exercises/check_NN_NAME.cpp (the check program: course code only) running
# exercises/subject_NN_NAME.cpp (the main() of the student's program). The
# exercise's CMakeLists.txt names the files a student edits
# (lab_exercise_files); its library exNN_lib / solNN_lib holds them and the
# given files. This builds:
#   subject_solNN_NAME, subject_exNN_NAME  the student's program from the
#       solution and from the skeleton; check_NN_NAME runs the first by default
#       (its checks are CTest tests), test_exercise_skeletons the second;
#   grade_courseNN  the course's objects of a student's program, built once;
#   build/grading/NN_NAME.manifest  what ./lab grade needs to compile and link
#       one student's edited files against them, and to run the checks;
#   build/grading/NN_NAME.checks  the names of the checks, one a line.
# The student's program and the check program start once per check and per
# exercise: in the micro-VM's emulated CPU, loading libstdc++ costs more than
# many checks do, so both carry their C++ runtime.
set(lab_grade_static_runtime -static-libstdc++ -static-libgcc)
add_custom_target(grade_kit)
add_dependencies(grade_kit lab_grade_report)
set(lab_grade_out "${PROJECT_BINARY_DIR}/grading")
function(lab_add_graded_exercise number name)
  cmake_parse_arguments(ARG "" "LIBRARY" "" ${ARGN})
  set(exercise ${number}_${name})
  set(folder "${PROJECT_SOURCE_DIR}/exercises/${exercise}")
  set(check check_${exercise})
  get_property(edited GLOBAL PROPERTY lab_edited_files_${exercise})
  if(NOT edited)
    message(FATAL_ERROR "exercises/${exercise}/CMakeLists.txt names no edited file (lab_exercise_files)")
  endif()
  foreach(kind sol ex)
    if(TARGET ${kind}${number}_${ARG_LIBRARY})
      add_executable(subject_${kind}${exercise} exercises/subject_${exercise}.cpp)
      target_link_libraries(subject_${kind}${exercise} PRIVATE lab_grade_subject
                            ${kind}${number}_${ARG_LIBRARY})
      target_link_options(subject_${kind}${exercise} PRIVATE ${lab_grade_static_runtime})
    endif()
  endforeach()
  if(TARGET subject_sol${exercise})
    lab_add_test(${check} exercises/${check}.cpp LABELS exercise rxe TIMEOUT 300
      DEPENDS subject_sol${exercise})
  else()
    # No solution in this checkout (the student edition): the check program is
    # built for ./lab grade, and is no test of its own.
    add_executable(${check} exercises/${check}.cpp)
    target_link_libraries(${check} PRIVATE lab_test_support)
  endif()
  target_link_libraries(${check} PRIVATE lab_grade_checker lab_grade_listener)
  # The instructor's own checks of the exercise, where the checkout has them
  # (tests/exercises/hidden/NN_NAME.cpp): the end of the check program includes
  # them, so they run wherever its other checks run, and share their helpers.
  file(GLOB hidden CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/exercises/hidden/${exercise}.cpp")
  if(hidden)
    target_compile_definitions(${check} PRIVATE LAB_HIDDEN_CHECKS="${hidden}")
  endif()
  target_link_options(${check} PRIVATE ${lab_grade_static_runtime})
  add_custom_command(TARGET ${check} POST_BUILD
    COMMAND "${CMAKE_COMMAND}" -D "PROGRAM=$<TARGET_FILE:${check}>"
            -D "OUTPUT=${lab_grade_out}/${exercise}.checks" -D "CATCH_VERSION=${LAB_CATCH_VERSION}"
            -P "${PROJECT_SOURCE_DIR}/grading/list-checks.cmake"
    VERBATIM)

  # The course's part of a student's program: the given files (the library's
  # sources but the edited ones) and the scenarios.
  get_target_property(sources ex${number}_${ARG_LIBRARY} SOURCES)
  set(given "")
  foreach(source IN LISTS sources)
    get_filename_component(file "${source}" NAME)
    if(NOT file IN_LIST edited)
      if(NOT IS_ABSOLUTE "${source}")
        set(source "${folder}/${source}")
      endif()
      list(APPEND given "${source}")
    endif()
  endforeach()
  add_library(grade_course${number} OBJECT exercises/subject_${exercise}.cpp ${given})
  target_include_directories(grade_course${number} PRIVATE "${folder}")
  target_link_libraries(grade_course${number} PRIVATE lab_grade_subject)
  add_dependencies(grade_kit grade_course${number} ${check} lab_grade_subject lab_common)
  if(TARGET subject_ex${exercise})
    set_property(GLOBAL APPEND PROPERTY lab_graded_programs ${check} subject_ex${exercise})
  endif()

  file(GLOB headers "${folder}/*.hpp")
  list(JOIN edited "\nedited\t" edited_lines)
  list(JOIN headers "\nheader\t" header_lines)
  # A kit built with the sanitizers (the asan preset) compiles and links the
  # students' files with them too: the course's objects call their runtime.
  set(sanitize_lines "")
  if(LAB_SANITIZE)
    set(sanitize_lines "flag\t-fsanitize=address,undefined\nflag\t-fno-omit-frame-pointer\nlink\t-fsanitize=address,undefined\n")
  endif()
  file(GENERATE OUTPUT "${lab_grade_out}/${exercise}.manifest" CONTENT
"exercise\t${exercise}
check\t$<TARGET_FILE:${check}>
edited\t${edited_lines}
header\t${header_lines}
include\t${PROJECT_SOURCE_DIR}/common
object\t$<JOIN:$<TARGET_OBJECTS:grade_course${number}>,\nobject\t>
library\t$<TARGET_FILE:lab_grade_subject>
library\t$<TARGET_FILE:lab_common>
link\t$<JOIN:${IBVERBS_LINK_LIBRARIES},\nlink\t>
link\t-pthread
link\t-static-libstdc++
link\t-static-libgcc
compiler\t${CMAKE_CXX_COMPILER}
flag\t-std=c++20
flag\t-O1
${sanitize_lines}")
endfunction()

# The graded exercises: one line each (see solutions/README.md, "Adding an exercise to grading").
lab_add_graded_exercise(01 noncontiguous_sge LIBRARY sge)
lab_add_graded_exercise(02 ud_ping LIBRARY ud)
lab_add_graded_exercise(03 srq_server LIBRARY srq)
lab_add_graded_exercise(04 throughput LIBRARY throughput_lib)
lab_add_graded_exercise(05 fix_the_connection LIBRARY connection)
lab_add_graded_exercise(06 recover_qp LIBRARY recover)
lab_add_graded_exercise(07 memory_window LIBRARY window)

# The tests below need the reference solutions (solutions/), which the
# student edition leaves out (./lab export --student): there the exercises'
# folders are the students' work, no longer the untouched skeletons.
set(lab_have_solutions FALSE)
if(EXISTS "${PROJECT_SOURCE_DIR}/solutions")
  set(lab_have_solutions TRUE)
endif()

# The untouched skeletons fail every check, naming each TODO.
if(lab_have_solutions)
  get_property(skeleton_programs GLOBAL PROPERTY lab_graded_programs)
  lab_add_test(test_exercise_skeletons exercises/test_exercise_skeletons.cpp
    LABELS exercise rxe TIMEOUT 900 DEPENDS ${skeleton_programs})
endif()

# The sandbox, with a program that misbehaves on purpose.
add_executable(misbehave grading/misbehave.cpp)
target_link_libraries(misbehave PRIVATE lab_grade_subject)
lab_add_test(test_sandbox grading/test_sandbox.cpp LABELS exercise grading bad-input TIMEOUT 300
  DEPENDS misbehave)
target_link_libraries(test_sandbox PRIVATE lab_grade_checker)

# Scores and reports, from files.
lab_add_test(test_grade_report grading/test_grade_report.cpp LABELS unit grading TIMEOUT 60)
target_link_libraries(test_grade_report PRIVATE lab_grade_reports)

# The similarity report of ./lab grade --class (grading/similarity.sh), alone,
# on a made-up class of exercise 03: a few seconds, no compiling, no device.
# Its honest submissions are working answers, so the folder is not in the
# student edition (grading/export.sh), and the test is there only with it.
if(EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/grading/similarity/test_similarity.cpp")
  lab_add_test(test_similarity grading/similarity/test_similarity.cpp LABELS unit grading
    TIMEOUT 60)
endif()

# grading/in-vm.sh grades an exercise again, alone, when it ran out of time
# beside another (stand-in check programs: this is about the order only). It
# needs no device, and spends its time starting shell programs, which the
# emulated micro-VM does slowly: label host.
lab_add_test(test_grade_retry grading/test_grade_retry.cpp LABELS grading host TIMEOUT 300)

# ./lab grade --class on good, broken and cheating submissions. It boots its
# own micro-VM, so it runs on the build host (./lab test: label grade-class).
# (Its good submissions are the solutions.)
if(lab_have_solutions)
  lab_add_test(test_grade_class grading/test_grade_class.cpp LABELS grading grade-class
    TIMEOUT 1800 DEPENDS grade_kit)
endif()

# The Gradescope package in a container laid out like Gradescope's (label
# docker); the submission it grades is made of the solutions.
if(lab_have_solutions)
  add_test(NAME grading_gradescope COMMAND "${PROJECT_SOURCE_DIR}/tests/grading/gradescope-test.sh")
  set_tests_properties(grading_gradescope PROPERTIES LABELS "docker;grading" TIMEOUT 3600
                       SKIP_RETURN_CODE 77 RESOURCE_LOCK docker COST 600)
endif()

# The GitHub Classroom workflow template: its command, and what it hands the reporter.
lab_add_test(test_github_workflow grading/test_github_workflow.cpp LABELS unit grading TIMEOUT 60
  DEPENDS grade_kit)
target_link_libraries(test_github_workflow PRIVATE lab_grade_reports)

# The course plan of the class grader (grading/course.conf): the file and its
# errors, late days from commit times (small git repositories), the gradebook.
lab_add_test(test_course grading/test_course.cpp LABELS unit grading TIMEOUT 60)
target_link_libraries(test_course PRIVATE lab_grade_reports)

# ./lab grade --class --only: one student graded again beside the saved
# results of the others (no micro-VM: the one regraded builds nothing). Label
# grade-class: grading needs mount namespaces for its sandbox, which the build
# host has and another release's userland (./lab test --distro) has not.
lab_add_test(test_grade_only grading/test_grade_only.cpp LABELS grading grade-class TIMEOUT 300
  DEPENDS grade_kit)

# The exercises' checks. Each tests/exercises/test_NN_name.cpp is compiled
# twice (see exercises/ and solutions/ and the top-level CMakeLists.txt):
#
#   check_solNN_name  linked with the solution (this repository's exercise
#                     with the files of solutions/NN_name): registered with
#                     CTest, one test per check (labels exercise, rxe); all of
#                     them must pass.
#   check_exNN_name   linked with the exercise (the skeleton, or a student's
#                     copy via -DLAB_EXERCISES_DIR): NOT registered one by one.
#                     test_exercise_skeletons runs it and requires that checks
#                     fail and that the failures name every TODO function.
#
# ./lab grade (grading/grade.sh) builds the check_ex* programs of a student's
# folder and runs them check by check.

set(lab_exercise_check_programs "")

# lab_add_exercise_checks(NN NAME LIBRARY lib): exercise NN_NAME, whose folder
# builds the library exNN_lib / solNN_lib that the checks link with.
function(lab_add_exercise_checks number name)
  cmake_parse_arguments(ARG "" "LIBRARY" "" ${ARGN})
  set(source exercises/test_${number}_${name}.cpp)
  if(TARGET sol${number}_${ARG_LIBRARY})
    lab_add_test(check_sol${number}_${name} ${source} LABELS exercise rxe TIMEOUT 300)
    target_link_libraries(check_sol${number}_${name} PRIVATE sol${number}_${ARG_LIBRARY})
  endif()
  if(TARGET ex${number}_${ARG_LIBRARY})
    add_executable(check_ex${number}_${name} ${source})
    target_link_libraries(check_ex${number}_${name} PRIVATE lab_test_support
                          ex${number}_${ARG_LIBRARY})
    set(lab_exercise_check_programs ${lab_exercise_check_programs} check_ex${number}_${name}
        PARENT_SCOPE)
  endif()
endfunction()

lab_add_exercise_checks(01 noncontiguous_sge LIBRARY sge)
lab_add_exercise_checks(02 ud_ping LIBRARY ud)
lab_add_exercise_checks(03 srq_server LIBRARY srq)
lab_add_exercise_checks(04 throughput LIBRARY throughput_lib)

# The untouched skeletons must fail their checks, each TODO by name.
if(lab_exercise_check_programs)
  lab_add_test(test_exercise_skeletons exercises/test_exercise_skeletons.cpp
    LABELS exercise rxe TIMEOUT 600 DEPENDS ${lab_exercise_check_programs})
  target_compile_definitions(test_exercise_skeletons PRIVATE
    LAB_EXERCISES_DIR="${LAB_EXERCISES_DIR}")
endif()

# The grading scripts themselves.
if(TARGET check_ex01_noncontiguous_sge)
  lab_add_test(test_grading exercises/test_grading.cpp
    LABELS exercise rxe TIMEOUT 600 DEPENDS check_ex01_noncontiguous_sge)
endif()

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

function(lab_add_graded_exercise number name)
  cmake_parse_arguments(ARG "" "LIBRARY" "" ${ARGN})
  set(check check_${number}_${name})
  foreach(kind sol ex)
    if(TARGET ${kind}${number}_${ARG_LIBRARY})
      add_executable(subject_${kind}${number}_${name} exercises/subject_${number}_${name}.cpp)
      target_link_libraries(subject_${kind}${number}_${name} PRIVATE lab_grade_subject
                            ${kind}${number}_${ARG_LIBRARY})
    endif()
  endforeach()
  set(depends "")
  if(TARGET subject_sol${number}_${name})
    set(depends DEPENDS subject_sol${number}_${name})
  endif()
  lab_add_test(${check} exercises/${check}.cpp LABELS exercise rxe TIMEOUT 300 ${depends})
  target_link_libraries(${check} PRIVATE lab_grade_checker lab_grade_listener)
endfunction()

lab_add_graded_exercise(05 fix_the_connection LIBRARY connection)

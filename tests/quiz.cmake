# SPDX-License-Identifier: MIT
# The quizzes (tools/quiz, quizzes/, ./lab quiz): the engine and the shipped
# banks, and a whole practice quiz taken through ./lab with answers on stdin.
lab_add_test(test_quiz tools/test_quiz.cpp LABELS unit TIMEOUT 120 DEPENDS lab_quiz)
target_link_libraries(test_quiz PRIVATE lab_quiz_engine)

# The graded mode (tools/quiz/graded.hpp): the instructor's banks
# (grading/quizzes) and their keyless papers (quizzes/graded), a graded
# session through ./lab, grading and feedback.
lab_add_test(test_quiz_graded tools/test_quiz_graded.cpp LABELS unit TIMEOUT 120 DEPENDS lab_quiz)
target_link_libraries(test_quiz_graded PRIVATE lab_quiz_engine)

# SPDX-License-Identifier: MIT
# The quizzes (tools/quiz, quizzes/, ./lab quiz): the engine and the shipped
# banks, and a whole practice quiz taken through ./lab with answers on stdin.
lab_add_test(test_quiz tools/test_quiz.cpp LABELS unit TIMEOUT 120 DEPENDS lab_quiz)
target_link_libraries(test_quiz PRIVATE lab_quiz_engine)

// SPDX-License-Identifier: MIT
// The instructor's own check of exercise 05, kept out of the student edition
// (./lab export --student). It is part of check_05_fix_the_connection.cpp
// (included at its end): ./lab test runs it against the solution, ./lab grade
// --class and the Gradescope package against every submission. Worth what
// grading/points.conf gives "hidden:*".

// Three runs in a row: a fix that works once by chance (a fixed PSN that
// happens to match, a receive posted late that happens to be in time) fails.
TEST_CASE("hidden: the whole program, three times in a row, connects, writes and sends",
          "[ex05][hidden]") {
    for (int run = 1; run <= 3; ++run) {
        StudentProgram program("whole_program");
        program.watch();
        std::string output, error;
        try {
            output = program.receive("output").text(1);
        } catch (const lab::grade::ProgramFailed& failure) {
            error = failure.what();
        }
        const bool worked =
            error.empty() && output.find("B received \"hello through SEND\"") != std::string::npos;
        expect(worked, {"run " + std::to_string(run) + " of 3: the program's steps 1 to 5 work",
                        !error.empty() ? error : "it printed: " + output,
                        "every run must work, not only the first"});
        if (!worked) {
            return;
        }
        program.send({"checked"});
        program.finish();
    }
}

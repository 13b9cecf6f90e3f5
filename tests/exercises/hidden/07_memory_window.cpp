// SPDX-License-Identifier: MIT
// The instructor's own check of exercise 07, kept out of the student edition
// (./lab export --student). It is part of check_07_memory_window.cpp
// (included at its end, so it uses that file's helpers): ./lab test runs it
// against the solution, ./lab grade --class and the Gradescope package
// against every submission. Worth what grading/points.conf gives "hidden:*".

// A long write in the middle of the window, where none of the visible checks writes.
TEST_CASE("hidden: bind_window: 200 bytes written in the middle of the window land whole",
          "[ex07][hidden]") {
    StudentProgram program("bind_window");
    Writer writer(program);
    program.watch(lab::grade::kSends);
    const Lent lent = lent_from(receive_or_fail(
        program, "bound", "the window bound, and its new rkey returned",
        "post one IBV_WR_BIND_MW on the QP and wait for its completion (IBV_WC_BIND_MW)"));
    std::string text;
    for (int i = 0; i < 200; ++i) {
        text += static_cast<char>('A' + i % 26);
    }
    const std::uint64_t middle = lent.window_address + kWindowLength / 2 - 100;
    const ibv_wc_status status = writer.write(middle, lent.window_rkey, text);
    expect(status == IBV_WC_SUCCESS && landed(program, middle, text),
           {"the check's 200-byte write at the window's middle completes and lands whole",
            "it completed with " + status_text(status),
            "the window covers every byte between its first and its last"});
    program.send({"checked"});
    program.finish();
}

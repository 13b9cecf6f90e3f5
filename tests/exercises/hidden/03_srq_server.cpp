// SPDX-License-Identifier: MIT
// The instructor's own check of exercise 03, kept out of the student edition
// (./lab export --student). It is part of check_03_srq_server.cpp (included
// at its end, so it uses that file's helpers): ./lab test runs it against the
// solution, ./lab grade --class and the Gradescope package against every
// submission. Worth what grading/points.conf gives "hidden:*".

// Messages that fill a slot to its last byte, the clients taking turns backwards.
TEST_CASE("hidden: post_srq_receives: full-slot messages, the clients in reverse order",
          "[ex03][hidden]") {
    StudentProgram program("post_srq_receives");
    program.watch(lab::grade::kSharedReceives);
    Clients clients(program);
    program.send({"post"});
    program.receive("posted");
    std::set<std::string> sent;
    std::size_t accepted = 0;
    for (int round = 0; round < 4; ++round) {
        for (std::size_t client = 3; client-- > 0;) {
            const std::string text(kSlotSize, static_cast<char>('a' + round * 3 + client));
            accepted += clients.send(client, text) == IBV_WC_SUCCESS ? 1 : 0;
            sent.insert(text);
        }
    }
    std::set<std::string> landed;
    if (accepted == 12) {
        program.receive("received");
        for (std::size_t i = 0; i < 12; ++i) {
            landed.insert(clients.slot(program, i, kSlotSize));
        }
    }
    expect(accepted == 12 && landed == sent,
           {"12 messages of 64 bytes from 3 clients, each whole in a slot of its own",
            std::to_string(accepted) + " found a receive; " + std::to_string(landed.size()) +
                " different messages in the slots",
            "each receive's one SGE covers its whole 64-byte slot"});
    if (accepted == 12) {
        program.send({"refuse"});
        program.receive("refused");
        program.send({"checked"});
        program.finish();
    }
}

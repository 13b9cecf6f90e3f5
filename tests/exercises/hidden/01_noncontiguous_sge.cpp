// SPDX-License-Identifier: MIT
// The instructor's own check of exercise 01, kept out of the student edition
// (./lab export --student). It is part of check_01_noncontiguous_sge.cpp
// (included at its end, so it uses that file's helpers): ./lab test runs it
// against the solution, ./lab grade --class and the Gradescope package
// against every submission. Worth what grading/points.conf gives "hidden:*".

// Layouts none of the visible checks uses: code fitted to those layouts fails here.
TEST_CASE("hidden: gather_write and scatter_read on layouts the visible checks do not use",
          "[ex01][rxe][hidden]") {
    const std::vector<Layout> layouts = {
        {2, 31, 3},       // two-byte blocks, one byte apart
        {1000, 5, 1001},  // a gap of one byte
        {128, 32, 128},   // exactly max_sge on rxe, contiguous
        {9, 65, 17},      // max_sge × 2 + 1 on rxe: three requests
    };
    Session session(lab::grade::kSends);
    session.endpoint(kQueues[0]);
    std::uint64_t seed = 500;
    for (const Layout& layout : layouts) {
        for (const bool reading : {false, true}) {
            ++seed;
            const std::string op = reading ? "scatter_read" : "gather_write";
            INFO(op << " of " << layout.text() << ", SGEs per request "
                    << session.max_sge(reading));
            const Target target(session.peer(), layout.payload(),
                                reading ? std::optional<Layout>(layout) : std::nullopt, seed);
            const Message done =
                session.run(op, layout, seed, &target, layout.extent(), layout.payload());
            const auto requests =
                on_queue(session.posted(), session.program_qp(), PostedRequest::Queue::send);
            const std::string problem =
                zero_copy_problem(requests, layout, done.number(1), session.max_sge(reading));
            const std::string bytes =
                reading ? session.read(done.number(1), layout.extent() + kGuard) : target.text();
            const std::size_t wrong = reading ? first_wrong_strided(layout, seed, bytes)
                                              : first_wrong_packed(layout, seed, bytes);
            expect(problem.empty() && wrong == std::string::npos,
                   {op + ": " + zero_copy_expected(layout, session.max_sge(reading)) +
                        ", every byte in its place",
                    problem.empty() ? wrong_text(wrong, bytes) : problem,
                    "nothing in the code may depend on the layouts of the visible checks"});
        }
    }
    session.end();
}

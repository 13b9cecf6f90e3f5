// SPDX-License-Identifier: MIT
// The instructor's own checks of exercise 01, kept out of the student edition
// (./lab export --student). They are part of check_01_noncontiguous_sge.cpp
// (included at its end, so they use that file's helpers): ./lab test runs
// them against the solution, ./lab grade --class and the Gradescope package
// against every submission. Each is worth what grading/points.conf gives
// "hidden:*".

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

// The same layouts through SEND and RECEIVE, split on both sides.
TEST_CASE("hidden: gather_send_scatter_recv on layouts the visible checks do not use",
          "[ex01][rxe][hidden]") {
    two_sided("gather_send_scatter_recv", true,
              {{2, 31, 3}, {1000, 5, 1001}, {128, 32, 128}, {9, 65, 17}});
}

// Buffers filled to their last byte are accepted; one byte more is refused.
// Code that checks a layout by hand with an off-by-one (>= for >, the extent
// counted as block_num * stride), or against the wrong buffer, fails here.
TEST_CASE("hidden: layouts that fill a buffer exactly work, one byte more is refused",
          "[ex01][rxe][hidden][bad-input]") {
    constexpr std::size_t kStrided = 4096, kPacked = 1024;
    Session session(lab::grade::kSends);
    session.endpoint(kQueues[0]);
    const Layout fills_strided{64, 2, kStrided - 64};  // extent exactly 4096
    const Layout fills_packed{64, 16, 268};            // payload exactly 1024, extent 4084
    std::uint64_t seed = 700;
    for (const Layout& layout : {fills_strided, fills_packed}) {
        for (const std::string op : {"gather_write", "copy_write"}) {
            ++seed;
            const Target target(session.peer(), layout.payload(), std::nullopt, seed);
            const Message done = session.run(op, layout, seed, &target, kStrided, kPacked);
            const std::size_t wrong = first_wrong_packed(layout, seed, target.text());
            expect(done.name() == "done" && wrong == std::string::npos,
                   {op + " of " + layout.text() +
                        " into a 4096-byte strided and a 1024-byte "
                        "packed buffer: accepted, every byte in place",
                    wrong_text(wrong, target.text()),
                    "a layout that fits exactly is valid: the extent is (block_num - 1) * stride "
                    "+ block_size"});
        }
    }
    session.posted();
    struct Case {
        Layout layout;
        std::string expected;
    };
    const Target remote(session.peer(), kPacked, std::nullopt, 0);
    for (const Case& bad : {Case{{64, 2, kStrided - 63}, "the strided buffer has 4096"},
                            Case{{64, 16, 269}, "the strided buffer has 4096"},
                            Case{{65, 16, 268}, "the packed buffer has 1024"}}) {
        for (const std::string op : {"gather_write", "copy_write"}) {
            const Message refused =
                session.run(op, bad.layout, 1, &remote, kStrided, kPacked, true);
            const auto posted = session.posted();
            expect(refused.text(1).find(bad.expected) != std::string::npos && posted.empty(),
                   {op + " refuses " + bad.layout.text() + " (\"" + bad.expected +
                        "\"), before posting anything",
                    "\"" + refused.text(1) + "\"" +
                        (posted.empty() ? "" : ", " + std::to_string(posted.size()) + " posted"),
                    "one byte past the end is past the end"});
        }
    }
    session.end();
}

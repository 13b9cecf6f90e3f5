// SPDX-License-Identifier: MIT
// The instructor's own check of exercise 04, kept out of the student edition
// (./lab export --student). It is part of check_04_throughput.cpp (included
// at its end, so it uses that file's helpers): ./lab test runs it against the
// solution, ./lab grade --class and the Gradescope package against every
// submission. Worth what grading/points.conf gives "hidden:*".

// A stream whose count, signal interval and batch none of the visible checks uses.
TEST_CASE("hidden: stream_sends: 777 inline messages, one signaled in 10, lists of 3",
          "[ex04][hidden]") {
    Stream stream;
    stream.message_size = 100;
    stream.count = 777;
    stream.signal_every = 10;
    stream.batch = 3;
    const Seen seen = run_stream(stream);
    if (!streamed_whole(stream, seen)) {
        return;
    }
    expect(count_flag(seen.sends, IBV_SEND_INLINE) == 777 &&
               count_flag(seen.sends, IBV_SEND_SIGNALED) == 777 / 10 + 1 &&
               longest_list(seen.sends) == 3,
           {"777 inline sends, 78 of them signaled (every 10th and the last), lists of up to 3",
            std::to_string(count_flag(seen.sends, IBV_SEND_INLINE)) + " inline, " +
                std::to_string(count_flag(seen.sends, IBV_SEND_SIGNALED)) +
                " signaled, the longest list " + std::to_string(longest_list(seen.sends)),
            "signal_every and batch are the options', never fixed numbers"});
}

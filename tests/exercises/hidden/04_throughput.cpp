// SPDX-License-Identifier: MIT
// The instructor's own checks of exercise 04, kept out of the student edition
// (./lab export --student). They are part of check_04_throughput.cpp
// (included at its end, so they use that file's helpers): ./lab test runs
// them against the solution, ./lab grade --class and the Gradescope package
// against every submission. Each is worth what grading/points.conf gives
// "hidden:*".
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

// Fewer messages than one signal interval and than one list: the only
// signaled send is the last, and the one list is short. Code that signals
// only every signal_every-th send never sees a completion here; code that
// posts only full lists posts nothing.
TEST_CASE("hidden: stream_sends: 5 messages, fewer than one interval and one list",
          "[ex04][hidden]") {
    Stream stream;
    stream.message_size = 8;
    stream.count = 5;
    stream.signal_every = 16;
    stream.batch = 16;
    const Seen seen = run_stream(stream);
    if (!streamed_whole(stream, seen)) {
        return;
    }
    expect(count_flag(seen.sends, IBV_SEND_SIGNALED) == 1 &&
               (seen.sends.back().send_flags & IBV_SEND_SIGNALED) != 0 && lists_of(seen.sends) == 1,
           {"5 sends in one list, the last of them signaled and no other",
            std::to_string(count_flag(seen.sends, IBV_SEND_SIGNALED)) + " signaled, in " +
                std::to_string(lists_of(seen.sends)) + " list(s)",
            "the last send is always signaled: it is the completion stream_sends waits for"});
}

// The options' limits: every limit itself is accepted, one past it refused.
TEST_CASE("hidden: stream_sends at the limits of its options: each limit works, one past fails",
          "[ex04][hidden][bad-input]") {
    Stream largest;
    largest.inline_bytes = 0;
    largest.message_size = kMaxMessage;
    largest.count = 4;
    largest.signal_every = kSendDepth;
    largest.batch = kSendDepth;
    const Seen seen_largest = run_stream(largest);
    if (!streamed_whole(largest, seen_largest)) {
        return;
    }
    Stream smallest;
    smallest.message_size = 8;
    smallest.count = 40;
    smallest.signal_every = 1;
    smallest.batch = 1;
    const Seen seen_smallest = run_stream(smallest);
    if (!streamed_whole(smallest, seen_smallest)) {
        return;
    }
    expect(count_flag(seen_smallest.sends, IBV_SEND_SIGNALED) == 40 &&
               lists_of(seen_smallest.sends) == 40,
           {"signal_every 1 and batch 1: 40 signaled sends, each posted alone",
            std::to_string(count_flag(seen_smallest.sends, IBV_SEND_SIGNALED)) + " signaled, " +
                std::to_string(lists_of(seen_smallest.sends)) + " lists",
            "1 is a valid signal interval and batch"});

    expect_refused(
        {{7, 16, 16}, {64, kSendDepth + 1, 16}},
        "size 8 .. kMaxMessage, signal_every and batch 1 .. kSendDepth, limits included");
}

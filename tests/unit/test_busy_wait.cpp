// Unit tests of lab::BusyWaitDeadline: when a bounded busy wait gives up, and
// when it runs its watch. No device needed.
#include <chrono>
#include <stdexcept>
#include <thread>

#include "lab/completion.hpp"
#include "support/catch.hpp"

using namespace std::chrono_literals;

TEST_CASE("the deadline starts at the first check and passes after the timeout", "[busy-wait]") {
    lab::BusyWaitDeadline deadline(100ms);
    std::this_thread::sleep_for(150ms);  // before the first check: not counted
    CHECK(deadline.still_waiting());
    CHECK(deadline.still_waiting());
    std::this_thread::sleep_for(150ms);
    CHECK_FALSE(deadline.still_waiting());
}

TEST_CASE("reset starts a new deadline after something arrived", "[busy-wait]") {
    lab::BusyWaitDeadline deadline(100ms);
    CHECK(deadline.still_waiting());
    std::this_thread::sleep_for(150ms);
    deadline.reset();
    CHECK(deadline.still_waiting());
    CHECK(deadline.still_waiting());
}

TEST_CASE("the watch runs about every 50 ms, never at the first check, and can end the wait",
          "[busy-wait]") {
    int calls = 0;
    const lab::WaitWatch count_calls = [&] { ++calls; };
    lab::BusyWaitDeadline deadline(10s, count_calls);
    CHECK(deadline.still_waiting());
    CHECK(deadline.still_waiting());
    CHECK(calls == 0);  // not due yet
    std::this_thread::sleep_for(80ms);
    CHECK(deadline.still_waiting());
    CHECK(calls == 1);
    CHECK(deadline.still_waiting());
    CHECK(calls == 1);  // the next one is 50 ms away

    const lab::WaitWatch peer_gone = [] { throw std::runtime_error("the peer is gone"); };
    lab::BusyWaitDeadline watched(10s, peer_gone);
    CHECK(watched.still_waiting());
    std::this_thread::sleep_for(80ms);
    CHECK_THROWS_WITH(watched.still_waiting(), "the peer is gone");
}

// SPDX-License-Identifier: MIT
#include "lab/wait.hpp"

#include <algorithm>
#include <cerrno>
#include <ctime>

#include "lab/check.hpp"

namespace lab {

namespace {

using Clock = std::chrono::steady_clock;

// How often a busy loop looks at the peer: rarely enough to cost nothing next
// to the polling, often enough that a lost peer is noticed at once by a person.
constexpr std::chrono::milliseconds kPeerInterval{50};

// ppoll(2) the entries until @p until; the number ready, 0 at the deadline.
// ppoll, not poll: its timeout has nanoseconds, so a paced sender (lesson 10)
// wakes on time, not at the next whole millisecond.
int poll_until(pollfd* entries, nfds_t count, Clock::time_point until) {
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::max(Clock::duration::zero(), until - Clock::now()));
        const timespec timeout{static_cast<std::time_t>(left.count() / 1'000'000'000),
                               static_cast<long>(left.count() % 1'000'000'000)};
        const int ready = ::ppoll(entries, count, &timeout, nullptr);
        if (ready >= 0) {
            return ready;
        }
        if (errno != EINTR) {
            fail("poll", errno);
        }
    }
}

}  // namespace

void PeerWatch::throw_if_gone(const pollfd& polled) const {
    if (fd_ < 0) {
        return;
    }
    bool gone = (polled.revents & (gone_events_ | POLLHUP | POLLERR)) != 0;
    if (gone && connection_ended_ != nullptr && (polled.revents & (POLLHUP | POLLERR)) == 0) {
        gone = connection_ended_(*this);  // an event is waiting: is it the end?
    }
    if (gone) {
        throw Error(
            "the peer closed the connection (hint: did the other side exit or crash? its "
            "output says why)");
    }
}

void PeerWatch::throw_if_gone() const {
    if (fd_ < 0) {
        return;
    }
    pollfd entry = poll_entry();
    if (::poll(&entry, 1, 0) < 0 && errno != EINTR) {
        fail("poll", errno);
    }
    throw_if_gone(entry);
}

void PeerWatch::sleep_until(std::chrono::steady_clock::time_point wake_up) const {
    pollfd entry = poll_entry();
    while (Clock::now() < wake_up) {
        entry.revents = 0;
        if (poll_until(&entry, 1, wake_up) > 0) {
            throw_if_gone(entry);
        }
    }
}

void Deadline::start_if_needed(Clock::time_point now) noexcept {
    if (!started_) {
        started_ = true;
        deadline_ = now + timeout_;
        next_look_at_peer_ = now + kPeerInterval;
    }
}

bool Deadline::still_waiting() {
    const auto now = Clock::now();
    if (!started_) {
        start_if_needed(now);
        return true;
    }
    if (now > deadline_) {
        return false;
    }
    if (now > next_look_at_peer_) {
        peer_.throw_if_gone();
        next_look_at_peer_ = now + kPeerInterval;
    }
    return true;
}

bool Deadline::wait_until_ready(int fd, short events) {
    start_if_needed(Clock::now());
    for (;;) {
        pollfd entries[2] = {{fd, events, 0}, peer_.poll_entry()};
        const int ready = poll_until(entries, 2, deadline_);
        // What arrived comes first: a peer that failed often sends its last
        // message (or its NAK made our completion) just before it exits.
        if ((entries[0].revents & (events | POLLHUP | POLLERR)) != 0) {
            return true;
        }
        peer_.throw_if_gone(entries[1]);
        if (ready == 0 && Clock::now() >= deadline_) {
            return false;
        }
    }
}

}  // namespace lab

// SPDX-License-Identifier: MIT
// Unit tests of the course's one bounded wait (lab::Deadline) and its one
// dead-peer watch (lab::PeerWatch), over socket pairs. No device needed.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "lab/check.hpp"
#include "lab/wait.hpp"
#include "support/catch.hpp"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// Two connected stream sockets; either end may be closed early.
class SocketPair {
  public:
    SocketPair() { REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds_) == 0); }
    ~SocketPair() {
        close(0);
        close(1);
    }
    SocketPair(const SocketPair&) = delete;
    SocketPair& operator=(const SocketPair&) = delete;
    [[nodiscard]] int fd(int end) const { return fds_[end]; }
    void close(int end) {
        if (fds_[end] >= 0) {
            ::close(std::exchange(fds_[end], -1));
        }
    }
    // What Connection::watch() gives for a TCP socket.
    [[nodiscard]] lab::PeerWatch watch_from(int end) const { return {fds_[end], POLLRDHUP}; }

  private:
    int fds_[2] = {-1, -1};
};

// The message of a lab::Error thrown by @p function, or "" when none was.
template <typename Function>
std::string error_of(Function&& function) {
    try {
        function();
    } catch (const lab::Error& error) {
        return error.what();
    }
    return "";
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("the deadline starts at the first check and passes after the timeout", "[wait]") {
    lab::Deadline deadline(100ms);
    std::this_thread::sleep_for(150ms);  // before the first check: not counted
    CHECK(deadline.still_waiting());
    CHECK(deadline.still_waiting());
    std::this_thread::sleep_for(150ms);
    CHECK_FALSE(deadline.still_waiting());
}

TEST_CASE("reset starts a new deadline after something arrived", "[wait]") {
    lab::Deadline deadline(100ms);
    CHECK(deadline.still_waiting());
    std::this_thread::sleep_for(150ms);
    deadline.reset();
    CHECK(deadline.still_waiting());
    CHECK(deadline.still_waiting());
}

TEST_CASE("a busy wait looks at the peer about every 50 ms, not at the first check", "[wait]") {
    SocketPair sockets;
    // The watch is a temporary: the deadline keeps its own copy.
    lab::Deadline deadline(10s, sockets.watch_from(0));
    CHECK(deadline.still_waiting());
    std::this_thread::sleep_for(80ms);
    CHECK(deadline.still_waiting());  // the peer is still there
    sockets.close(1);
    CHECK(deadline.still_waiting());  // the next look is 50 ms away
    std::this_thread::sleep_for(80ms);
    CHECK(contains(error_of([&] { (void)deadline.still_waiting(); }),
                   "the peer closed the connection"));
}

TEST_CASE("unread bytes are not a closed connection; a closed one is, bytes or not", "[wait]") {
    SocketPair sockets;
    const char byte = 'R';
    REQUIRE(::write(sockets.fd(1), &byte, 1) == 1);
    const lab::PeerWatch watch = sockets.watch_from(0);
    CHECK(error_of([&] { watch.throw_if_gone(); }).empty());
    sockets.close(1);  // as a peer that reached a barrier, then died
    CHECK(contains(error_of([&] { watch.throw_if_gone(); }), "the peer closed the connection"));
    char received = 0;
    CHECK(::read(sockets.fd(0), &received, 1) == 1);  // its byte is still there
    CHECK(received == 'R');
}

TEST_CASE(
    "a sleeping wait ends when its descriptor is ready, at the timeout, or at once when "
    "the peer goes",
    "[wait]") {
    SocketPair peer;
    SocketPair channel;  // stands in for a completion channel's descriptor
    SECTION("ready") {
        const char byte = 'E';
        REQUIRE(::write(channel.fd(1), &byte, 1) == 1);
        lab::Deadline deadline(10s, peer.watch_from(0));
        CHECK(deadline.wait_until_ready(channel.fd(0), POLLIN));
    }
    SECTION("timeout") {
        lab::Deadline deadline(200ms, peer.watch_from(0));
        const auto start = Clock::now();
        CHECK_FALSE(deadline.wait_until_ready(channel.fd(0), POLLIN));
        CHECK(Clock::now() - start >= 200ms);
        CHECK(Clock::now() - start < 2s);
    }
    SECTION("the peer goes while the wait sleeps") {
        std::thread killer([&] {
            std::this_thread::sleep_for(100ms);
            peer.close(1);
        });
        lab::Deadline deadline(10s, peer.watch_from(0));
        const auto start = Clock::now();
        const auto error =
            error_of([&] { (void)deadline.wait_until_ready(channel.fd(0), POLLIN); });
        killer.join();
        CHECK(contains(error, "the peer closed the connection"));
        CHECK(Clock::now() - start < 2s);  // not the 10 s timeout
    }
    SECTION("ready as the peer goes: what arrived comes first") {
        // A failing peer's last act (the NAK that made our completion) comes
        // just before its exit: the event must not be lost to the closed socket.
        const char byte = 'E';
        REQUIRE(::write(channel.fd(1), &byte, 1) == 1);
        peer.close(1);
        lab::Deadline deadline(10s, peer.watch_from(0));
        CHECK(deadline.wait_until_ready(channel.fd(0), POLLIN));
        // The next wait, with nothing more to read, reports the peer gone.
        char received = 0;
        REQUIRE(::read(channel.fd(0), &received, 1) == 1);
        CHECK(contains(error_of([&] { (void)deadline.wait_until_ready(channel.fd(0), POLLIN); }),
                       "the peer closed the connection"));
    }
    SECTION("no peer to watch: only the timeout ends it") {
        lab::Deadline deadline(100ms);
        CHECK_FALSE(deadline.wait_until_ready(channel.fd(0), POLLIN));
    }
}

TEST_CASE("a pause watching the peer sleeps its time, or ends at once when the peer goes",
          "[wait]") {
    SocketPair sockets;
    SECTION("the peer stays") {
        const auto start = Clock::now();
        sockets.watch_from(0).sleep_until(start + 150ms);
        CHECK(Clock::now() - start >= 150ms);
    }
    SECTION("the peer goes") {
        std::thread killer([&] {
            std::this_thread::sleep_for(100ms);
            sockets.close(1);
        });
        const auto start = Clock::now();
        const auto error = error_of([&] { sockets.watch_from(0).sleep_until(Clock::now() + 10s); });
        killer.join();
        CHECK(contains(error, "the peer closed the connection"));
        CHECK(Clock::now() - start < 2s);
    }
    SECTION("an empty watch just sleeps") {
        const auto start = Clock::now();
        lab::PeerWatch().sleep_until(start + 100ms);
        CHECK(Clock::now() - start >= 100ms);
        CHECK_FALSE(lab::PeerWatch().watches());
    }
}

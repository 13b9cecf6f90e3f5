// SPDX-License-Identifier: MIT
/**
 * @file wait.hpp
 * @brief Every wait ends: at its timeout (lesson 03), or as soon as the peer is gone (lesson 05).
 *
 * A program must never hang. A completion that never comes (a receive that
 * was never posted, a peer that died) would leave ibv_poll_cq returning 0
 * forever, and a completion channel, a socket or an rdma_cm event channel
 * would stay silent just as long. So every wait of the course is bounded the
 * same way:
 *
 * - a Deadline: the wait's timeout (the --timeout of a two-process lesson);
 * - a PeerWatch: the peer's TCP socket, which the peer's kernel closes the
 *   moment the peer exits or crashes (or, with rdma_cm, the connection's
 *   events). Its QP vanishes at the same moment, but the device reports that
 *   only once its retries run out, if at all: a survivor that only waits for
 *   a receive has nothing outstanding to fail (the device page,
 *   docs/devices.md, row dead-peer).
 *
 * A busy loop (polling a CQ, watching memory, a measuring loop) asks
 * Deadline::still_waiting() every few thousand empty polls; a sleeping wait
 * (a completion channel, lesson 10) calls Deadline::wait_until_ready(), which
 * hands the watched socket to poll(2) along with its own descriptor; a pause
 * calls PeerWatch::sleep_until(). A TCP barrier needs nothing more: the
 * closed socket ends its recv().
 */
#pragma once

#include <poll.h>

#include <chrono>

struct rdma_cm_id;
struct rdma_event_channel;

namespace lab {

/// How long a program waits for its peer at each step unless --timeout says otherwise.
inline constexpr std::chrono::milliseconds kDefaultTimeout{20'000};

/**
 * @brief Notices that the peer has gone away (lesson 05): a file descriptor
 *        that poll(2) reports in a given way once it has.
 *
 * For a TCP connection (Connection::watch()) that is POLLRDHUP: the peer's
 * side is shut, even when bytes it sent before are still unread (a peer that
 * died at a barrier had already sent its byte). For an rdma_cm connection
 * (lesson 11) it is an event on its channel that ends the connection (see
 * PeerWatch(rdma_event_channel*, rdma_cm_id*)). POLLHUP and POLLERR always count.
 *
 * A watch holds the descriptor's number (for rdma_cm also the channel and the
 * id), nothing more: whatever owns the
 * descriptor must outlive the waits that use the watch. A default-constructed
 * watch watches nothing, and only timeouts end its waits.
 */
class PeerWatch {
  public:
    /// Watches nothing.
    PeerWatch() noexcept = default;

    /**
     * @brief Watches @p fd for @p gone_events.
     * @param fd the peer's socket or event channel.
     * @param gone_events what poll(2) reports on @p fd once the peer is gone.
     */
    PeerWatch(int fd, short gone_events) noexcept : fd_(fd), gone_events_(gone_events) {}

    /**
     * @brief Watches the rdma_cm connection @p id, whose events arrive on @p channel
     *        (lesson 11).
     *
     * The peer is gone when an event for @p id says the connection ended:
     * DISCONNECTED, REJECTED, UNREACHABLE, CONNECT_ERROR or DEVICE_REMOVAL.
     * While a wait lasts, the watch reads and acknowledges every event that
     * arrives on the channel. An event for another id, or another event for
     * @p id (ADDR_CHANGE, TIMEWAIT_EXIT), ends nothing and is dropped; a
     * CONNECT_REQUEST that reaches a listening id on the same channel is
     * refused with rdma_reject, since nobody would accept it. The channel and
     * the id must outlive the waits that use the watch.
     */
    PeerWatch(rdma_event_channel* channel, rdma_cm_id* id) noexcept;

    /// True unless default-constructed.
    [[nodiscard]] bool watches() const noexcept { return fd_ >= 0; }

    /**
     * @brief The entry to hand poll(2) beside a wait's own descriptors; then
     *        pass it, with its revents, to throw_if_gone(const pollfd&).
     *
     * An empty watch gives fd -1, which poll(2) ignores.
     */
    [[nodiscard]] pollfd poll_entry() const noexcept { return {fd_, gone_events_, 0}; }

    /// Throw a lab::Error ("the peer closed the connection ...") if @p polled reports the peer
    /// gone.
    void throw_if_gone(const pollfd& polled) const;

    /// Ask poll(2) now, without waiting, and throw like throw_if_gone(const pollfd&).
    void throw_if_gone() const;

    /// Sleep until @p wake_up, but throw at once when the peer goes in the meantime.
    void sleep_until(std::chrono::steady_clock::time_point wake_up) const;

  private:
    // For an rdma_cm watch (wait_cm.cpp, so that only a program that makes one
    // needs librdmacm): reads one event of the channel; true if it ends the connection.
    static bool cm_connection_ended(const PeerWatch& watch);

    int fd_ = -1;
    short gone_events_ = 0;
    bool (*connection_ended_)(const PeerWatch&) = nullptr;  // set for an rdma_cm watch
    rdma_event_channel* cm_channel_ = nullptr;
    rdma_cm_id* cm_id_ = nullptr;
};

/**
 * @brief One bounded wait (lesson 03): a timeout, and a PeerWatch that ends the wait sooner.
 *
 * The clock starts at the first call, not at construction: a busy loop calls
 * still_waiting() only after a few thousand empty polls, so a result that is
 * already there costs no clock read at all. A loop that waits for several
 * things calls reset() after each arrival: the next wait gets the whole
 * timeout again. The watch is held by value, so a temporary is fine.
 */
class Deadline {
  public:
    /**
     * @brief A wait of @p timeout that also ends when @p peer is gone.
     * @param peer watched while the wait lasts; empty by default.
     */
    explicit Deadline(std::chrono::milliseconds timeout, PeerWatch peer = {}) noexcept
        : timeout_(timeout), peer_(peer) {}

    /**
     * @brief For busy loops: false once the timeout has passed, true while it has not.
     *
     * The peer is looked at about every 50 ms (a poll(2) that does not wait).
     * @throws lab::Error when the peer is gone.
     */
    [[nodiscard]] bool still_waiting();

    /**
     * @brief For sleeping waits: poll(2) @p fd for @p events, and the peer at the same time.
     * @return true when @p fd is ready, false when the timeout passed first.
     * @throws lab::Error the moment the peer is gone.
     */
    [[nodiscard]] bool wait_until_ready(int fd, short events);

    /// Something arrived: the next call starts a new timeout.
    void reset() noexcept { started_ = false; }

    /// The timeout this deadline was made with.
    [[nodiscard]] std::chrono::milliseconds timeout() const noexcept { return timeout_; }

  private:
    void start_if_needed(std::chrono::steady_clock::time_point now) noexcept;

    std::chrono::milliseconds timeout_;
    PeerWatch peer_;
    bool started_ = false;
    std::chrono::steady_clock::time_point deadline_{};
    std::chrono::steady_clock::time_point next_look_at_peer_{};
};

}  // namespace lab

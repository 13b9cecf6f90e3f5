/**
 * @file completion.hpp
 * @brief Waiting for work completions with a deadline, and explaining failed ones (lessons 03, 06).
 *
 * A program must never hang: a peer that died or a receive that was never
 * posted would otherwise leave ibv_poll_cq returning 0 forever. Every wait
 * here takes a timeout and throws a lab::Error when it passes. A completion
 * whose status is not IBV_WC_SUCCESS becomes an error naming
 * ibv_wc_status_str() and a hint from the course's table.
 */
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <functional>
#include <string_view>

namespace lab {

/// The default deadline for one completion.
inline constexpr std::chrono::milliseconds kCompletionTimeout{10'000};

/// The likely cause of a completion status, e.g. for IBV_WC_RNR_RETRY_EXC_ERR "no receive was
/// posted ...".
std::string_view wc_status_hint(ibv_wc_status status);

/**
 * @brief A check run now and then (about every 50 ms) while a wait lasts; it
 *        ends the wait by throwing a lab::Error.
 *
 * Used to notice a peer that went away (Connection::closed_watch(), lesson 05):
 * when the peer's QP vanishes, a device may report nothing for a long time
 * (with rxe on Linux 6.1, a client streaming writes, reads or atomics to a
 * killed server saw no error completion within 20 s), but the peer's TCP
 * socket closes at once.
 */
using WaitWatch = std::function<void()>;

/**
 * @brief The clock side of a bounded busy wait (lesson 03): its deadline and its watch.
 *
 * A busy loop calls still_waiting() every few thousand empty polls, not on
 * every one: reading the clock is not free. The first call starts the
 * deadline, so a result that is already there costs no clock read at all;
 * later calls run the watch about every 50 ms and return false once the
 * timeout has passed. A loop that waits more than once calls reset() after
 * each arrival.
 */
class BusyWaitDeadline {
  public:
    /// @param watch may be empty; it must outlive this object.
    explicit BusyWaitDeadline(std::chrono::milliseconds timeout, const WaitWatch& watch = {})
        : timeout_(timeout), watch_(&watch) {}

    /// false once the timeout has passed; true otherwise, after running the watch if it is due.
    /// @throws whatever the watch throws.
    [[nodiscard]] bool still_waiting();

    /// Something arrived: the next still_waiting() starts a new deadline.
    void reset() noexcept { started_ = false; }

  private:
    std::chrono::milliseconds timeout_;
    const WaitWatch* watch_;
    bool started_ = false;
    std::chrono::steady_clock::time_point deadline_;
    std::chrono::steady_clock::time_point next_watch_;
};

/**
 * @brief Busy-poll @p cq with ibv_poll_cq until one completion arrives (lesson 03).
 * @param watch if set, called about every 50 ms while no completion has come.
 * @throws lab::Error when @p timeout passes first, when @p watch throws, or
 *         when ibv_poll_cq fails.
 * @return the completion, whatever its status (see check_completion()).
 */
ibv_wc poll_completion(ibv_cq* cq, std::chrono::milliseconds timeout = kCompletionTimeout,
                       const WaitWatch& watch = {});

/**
 * @brief Throw a lab::Error unless @p wc succeeded: "<what>: work completion failed: <status>
 * (hint: ...)".
 * @param what what the work request was, e.g. "RDMA write".
 */
void check_completion(const ibv_wc& wc, std::string_view what);

/// poll_completion() followed by check_completion(): the usual "wait for this one to finish".
ibv_wc wait_for_completion(ibv_cq* cq, std::string_view what,
                           std::chrono::milliseconds timeout = kCompletionTimeout,
                           const WaitWatch& watch = {});

}  // namespace lab

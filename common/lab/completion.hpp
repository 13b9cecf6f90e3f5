// SPDX-License-Identifier: MIT
/**
 * @file completion.hpp
 * @brief Waiting for work completions (lessons 03 and 10), and explaining failed ones (lesson 04).
 *
 * A program must never hang: a peer that died or a receive that was never
 * posted would otherwise leave ibv_poll_cq returning 0 forever. Every wait
 * here is bounded as wait.hpp describes: a timeout, and a PeerWatch that ends
 * it as soon as the peer is gone. A completion whose status is not
 * IBV_WC_SUCCESS becomes an error naming ibv_wc_status_str() and a hint from
 * the course's table.
 */
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <string_view>
#include <utility>
#include <vector>

#include "lab/wait.hpp"

namespace lab {

/// The deadline for one completion in a program without --timeout (lessons 03-04, exercises).
inline constexpr std::chrono::milliseconds kCompletionTimeout{10'000};

/// The likely cause of a completion status (lesson 04's table), e.g. for
/// IBV_WC_RNR_RETRY_EXC_ERR "no receive was posted ...".
std::string_view wc_status_hint(ibv_wc_status status);

/**
 * @brief Busy-poll @p cq with ibv_poll_cq until one completion arrives (lesson 03).
 *
 * The clock is read only every 1024 empty polls (Deadline::still_waiting()):
 * a completion that is already there, the common case in a latency loop,
 * costs no clock read at all.
 * @param peer watched while no completion has come; see PeerWatch.
 * @throws lab::Error when @p timeout passes first, when the peer is gone, or
 *         when ibv_poll_cq fails.
 * @return the completion, whatever its status (see check_completion()).
 */
ibv_wc poll_completion(ibv_cq* cq, std::chrono::milliseconds timeout = kCompletionTimeout,
                       PeerWatch peer = {});

/**
 * @brief Throw a lab::Error unless @p wc succeeded (lesson 04): "<what>: work completion
 * failed: <status> (hint: ...)".
 * @param what what the work request was, e.g. "RDMA write".
 */
void check_completion(const ibv_wc& wc, std::string_view what);

/**
 * @brief poll_completion() followed by check_completion(): the usual "wait for this one to finish".
 *
 * It takes the next completion of @p cq, whichever work request that is: it
 * is "this one" only while nothing else can complete on @p cq. Where a CQ
 * serves a send queue and a receive queue, or several requests are
 * outstanding, look at the returned wc.opcode and wc.wr_id before trusting
 * it (lesson 10's async_events tells its send and receive apart that way).
 */
ibv_wc wait_for_completion(ibv_cq* cq, std::string_view what,
                           std::chrono::milliseconds timeout = kCompletionTimeout,
                           PeerWatch peer = {});

/**
 * @brief Acknowledges completion events (lesson 10): each one counted here is
 *        acknowledged with ibv_ack_cq_events at the latest when the owner goes.
 *
 * ibv_destroy_cq waits until every event of its CQ read with ibv_get_cq_event
 * has been acknowledged (ibv_get_cq_event(3)). An event left unacknowledged,
 * for instance because an exception left the loop that read it, makes the
 * cleanup hang for ever. So a program hands each event to this owner right
 * after reading it, and the destructor acknowledges whatever is left, on every
 * way out. Declare it after the CQs, so that it goes before them.
 * Acknowledging takes a lock: it is done for many events in one call.
 */
class CqEventAcks {
  public:
    CqEventAcks() = default;
    /// Acknowledges every event counted and not yet acknowledged.
    ~CqEventAcks() { acknowledge(); }
    CqEventAcks(const CqEventAcks&) = delete;
    CqEventAcks& operator=(const CqEventAcks&) = delete;

    /// Count one event, just read with ibv_get_cq_event, of @p cq (which must outlive this owner).
    void add(ibv_cq* cq);

    /// ibv_ack_cq_events now, for every event counted so far.
    void acknowledge() noexcept;

    /// Events counted and not yet acknowledged.
    [[nodiscard]] unsigned unacknowledged() const noexcept;

  private:
    std::vector<std::pair<ibv_cq*, unsigned>> counts_;  // a channel may serve several CQs
};

}  // namespace lab

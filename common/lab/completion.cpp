// SPDX-License-Identifier: MIT
#include "lab/completion.hpp"

#include <string>

#include "lab/check.hpp"

namespace lab {

std::string_view wc_status_hint(ibv_wc_status status) {
    switch (status) {
        case IBV_WC_SUCCESS:
            return "";
        case IBV_WC_LOC_LEN_ERR:
            return "the message is longer than the receive buffer posted for it";
        case IBV_WC_LOC_PROT_ERR:
            return "an SGE's lkey does not cover its address and length, or lacks the access "
                   "needed";
        case IBV_WC_WR_FLUSH_ERR:
            return "the QP went to the error state before this request ran; look at the first "
                   "failed completion, not this one";
        case IBV_WC_REM_ACCESS_ERR:
            return "the peer refused: wrong rkey, an address outside its region, or a region "
                   "registered without the remote access this operation needs";
        case IBV_WC_REM_INV_REQ_ERR:
            return "the peer saw an invalid request, e.g. a message larger than it accepts or "
                   "an operation its QP access flags forbid";
        case IBV_WC_REM_OP_ERR:
            return "the peer could not complete the operation (its receive queue or memory failed)";
        case IBV_WC_RETRY_EXC_ERR:
            return "the peer never acknowledged: is it running, is its QP in RTR with our QPN, "
                   "and is the GID index (-g) right?";
        case IBV_WC_RNR_RETRY_EXC_ERR:
            return "receiver not ready: no receive was posted when the send arrived, and "
                   "rnr_retry ran out; post receives before the peer sends";
        case IBV_WC_LOC_QP_OP_ERR:
            // rxe reports a message longer than the posted receive buffer
            // with this status on the receiving side, not IBV_WC_LOC_LEN_ERR.
            return "the work request is malformed for this QP (too many SGEs, inline too large), "
                   "or, on a receive, the message is longer than the receive buffer";
        case IBV_WC_BAD_RESP_ERR:
            return "the peer answered with an unexpected response";
        case IBV_WC_REM_ABORT_ERR:
            return "the peer aborted the operation";
        default:
            return "see ibv_poll_cq(3) for this status";
    }
}

ibv_wc poll_completion(ibv_cq* cq, std::chrono::milliseconds timeout, PeerWatch peer) {
    ibv_wc wc{};
    Deadline deadline(timeout, peer);
    try {
        for (unsigned empty_polls = 1;; ++empty_polls) {
            const int found = ibv_poll_cq(cq, 1, &wc);
            if (found < 0) {
                fail("ibv_poll_cq", EIO, "the CQ overran or the device failed");
            }
            if (found == 1) {
                return wc;
            }
            if (empty_polls % 1024 == 0 && !deadline.still_waiting()) {
                throw Error("no completion within " + std::to_string(timeout.count()) +
                            " ms (hint: did the peer post its side, and is it still running?)");
            }
        }
    } catch (const Error&) {
        // Before giving up, one more look at the CQ: a peer that failed exits
        // right after the NAK or the message that made our completion, so its
        // closed socket can be seen before that completion is polled.
        if (ibv_poll_cq(cq, 1, &wc) == 1) {
            return wc;
        }
        throw;
    }
}

void check_completion(const ibv_wc& wc, std::string_view what) {
    if (wc.status == IBV_WC_SUCCESS) {
        return;
    }
    std::string message(what);
    message += ": work completion failed: ";
    message += ibv_wc_status_str(wc.status);
    message += " (status " + std::to_string(wc.status) + ", wr_id " + std::to_string(wc.wr_id) +
               ", vendor_err " + std::to_string(wc.vendor_err) + ")";
    const auto hint = wc_status_hint(wc.status);
    if (!hint.empty()) {
        message += " (hint: ";
        message += hint;
        message += ")";
    }
    throw Error(message);
}

ibv_wc wait_for_completion(ibv_cq* cq, std::string_view what, std::chrono::milliseconds timeout,
                           PeerWatch peer) {
    const ibv_wc wc = poll_completion(cq, timeout, peer);
    check_completion(wc, what);
    return wc;
}

void CqEventAcks::add(ibv_cq* cq) {
    for (auto& [counted_cq, count] : counts_) {
        if (counted_cq == cq) {
            ++count;
            return;
        }
    }
    counts_.emplace_back(cq, 1);
}

void CqEventAcks::acknowledge() noexcept {
    for (auto& [cq, count] : counts_) {
        if (count > 0) {
            ibv_ack_cq_events(cq, count);
            count = 0;
        }
    }
}

unsigned CqEventAcks::unacknowledged() const noexcept {
    unsigned total = 0;
    for (const auto& [cq, count] : counts_) {
        total += count;
    }
    return total;
}

}  // namespace lab

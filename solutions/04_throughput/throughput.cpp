// SPDX-License-Identifier: MIT
// Exercise 04, reference solution: inline sends, one signaled every N, lists
// of work requests, the send queue kept full but never over-full.
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "throughput.hpp"

namespace tp {

std::uint32_t granted_inline(ibv_qp* qp) {
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    lab::check(ibv_query_qp(qp, &attr, IBV_QP_CAP, &init), "ibv_query_qp");
    return init.cap.max_inline_data;
}

void stream_sends(Pair& pair, const StreamOptions& options) {
    const std::size_t size = options.message_size;
    if (size < 8 || size > Pair::kMaxMessage) {
        throw lab::Error("stream_sends: message_size " + std::to_string(size) +
                         " is outside 8 .. " + std::to_string(Pair::kMaxMessage));
    }
    if (options.signal_every == 0 || options.signal_every > Pair::kSendDepth ||
        options.batch == 0 || options.batch > Pair::kSendDepth) {
        throw lab::Error("stream_sends: signal_every and batch must be between 1 and " +
                         std::to_string(Pair::kSendDepth));
    }
    pair.expect_size(size);
    const bool use_inline = size <= granted_inline(pair.sender());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);

    std::vector<ibv_sge> sges(options.batch);
    std::vector<ibv_send_wr> wrs(options.batch);
    std::size_t posted = 0, completed = 0;  // completed: sends known to be finished
    ibv_wc wcs[16];
    while (completed < options.count) {
        // Post as many as fit: never more than kSendDepth outstanding.
        const std::size_t room = Pair::kSendDepth - (posted - completed);
        const std::size_t n = std::min({room, std::size_t{options.batch}, options.count - posted});
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t k = posted + i;
            // Slot k % depth is free again: send k - depth has completed (room > 0).
            std::byte* message = pair.send_slot(k % Pair::kSendDepth);
            Pair::stamp(message, k);
            sges[i] = {reinterpret_cast<std::uint64_t>(message), static_cast<std::uint32_t>(size),
                       pair.send_lkey()};
            wrs[i] = {};
            wrs[i].wr_id = k;
            wrs[i].opcode = IBV_WR_SEND;
            wrs[i].sg_list = &sges[i];
            wrs[i].num_sge = 1;
            wrs[i].send_flags = use_inline ? IBV_SEND_INLINE : 0;
            // A signaled completion also retires every unsignaled send before it.
            if ((k + 1) % options.signal_every == 0 || k + 1 == options.count) {
                wrs[i].send_flags |= IBV_SEND_SIGNALED;
            }
            wrs[i].next = i + 1 < n ? &wrs[i + 1] : nullptr;
        }
        if (n > 0) {
            post_list(pair.sender(), wrs.data());
            posted += n;
        }
        const int found = ibv_poll_cq(pair.send_cq(), 16, wcs);
        if (found < 0) {
            throw lab::Error("ibv_poll_cq on the sender failed (CQ overrun?)");
        }
        for (int i = 0; i < found; ++i) {
            lab::check_completion(wcs[i], "SEND");
            completed = wcs[i].wr_id + 1;
        }
        pair.keep_receiving();
        if (std::chrono::steady_clock::now() > deadline) {
            throw lab::Error("stream_sends: " + std::to_string(completed) + " of " +
                             std::to_string(options.count) + " sends completed within 10 s");
        }
    }
    while (pair.received_messages() < options.count) {
        pair.keep_receiving();
        if (std::chrono::steady_clock::now() > deadline) {
            throw lab::Error("stream_sends: B received " +
                             std::to_string(pair.received_messages()) + " of " +
                             std::to_string(options.count) + " messages within 10 s");
        }
    }
}

}  // namespace tp

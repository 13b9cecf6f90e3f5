// SPDX-License-Identifier: MIT
#include "lab/pipeline.hpp"

#include <algorithm>

namespace lab {

std::size_t signal_interval(std::size_t depth) {
    return std::max<std::size_t>(1, depth / 8);
}

std::chrono::duration<double> stream_work_requests(
    ibv_cq* cq, std::size_t count, std::size_t depth, std::string_view what,
    const std::function<void(std::uint64_t wr_id, unsigned send_flags)>& post,
    std::chrono::milliseconds timeout, PeerWatch peer) {
    const std::size_t signal_every = signal_interval(depth);
    std::size_t posted = 0;
    std::size_t completed = 0;
    const auto start = std::chrono::steady_clock::now();
    while (completed < count) {
        while (posted < count && posted - completed < depth) {
            ++posted;
            const bool signaled = posted % signal_every == 0 || posted == count;
            post(posted, signaled ? IBV_SEND_SIGNALED : 0);
        }
        // Only signaled requests complete, and in order: the wr_id of this
        // one counts every request up to it, all of which are now done.
        completed = wait_for_completion(cq, what, timeout, peer).wr_id;
    }
    return std::chrono::steady_clock::now() - start;
}

}  // namespace lab

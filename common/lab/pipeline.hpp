// SPDX-License-Identifier: MIT
/**
 * @file pipeline.hpp
 * @brief Keeping many work requests in flight with selective signaling (lesson 07's
 *        measuring program).
 *
 * bench/07_rdma_write.cpp (lesson 07's write, measured like ib_write_bw)
 * writes out the loop: post until --depth requests are outstanding, ask for a
 * completion (IBV_SEND_SIGNALED) on only one in every few, and let each
 * completion retire every request posted before it, because a send queue
 * completes in order. Later programs that measure bandwidth the same way call
 * stream_work_requests() instead.
 */
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

#include <infiniband/verbs.h>

#include "lab/completion.hpp"

namespace lab {

/**
 * @brief How often to signal at a given depth: one in every depth / 8, at least every one.
 *
 * Measured on rxe at depth 64: one signaled request in every 8 was faster
 * than one in every 32 or 64, which let the send queue drain in bursts.
 */
std::size_t signal_interval(std::size_t depth);

/**
 * @brief Post @p count work requests through @p post, keeping up to @p depth
 *        of them outstanding, and wait until the last one has completed.
 * @param post posts one request: its wr_id (1 to @p count, in order) and its
 *        send flags (IBV_SEND_SIGNALED or 0). Every signal_interval()-th
 *        request is signaled, and so is the last.
 * @param what names the requests in errors, e.g. "RDMA read".
 * @param timeout for each completion (see wait_for_completion()).
 * @param peer watched while a completion is awaited (see PeerWatch): a peer
 *        that went away ends the stream at once.
 * @return the time from the first post to the last completion.
 * @throws lab::Error when a completion fails or does not come in time, or the peer is gone.
 */
std::chrono::duration<double> stream_work_requests(
    ibv_cq* cq, std::size_t count, std::size_t depth, std::string_view what,
    const std::function<void(std::uint64_t wr_id, unsigned send_flags)>& post,
    std::chrono::milliseconds timeout = kCompletionTimeout, PeerWatch peer = {});

}  // namespace lab

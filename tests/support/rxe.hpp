// SPDX-License-Identifier: MIT
/**
 * @file rxe.hpp
 * @brief Raw verbs on the device, for tests of what the READMEs say a device does.
 *
 * Some behaviours the course describes are not printed by any lesson: what rxe
 * does where it departs from the specification, or where kernel 6.1 and 6.12
 * differ. A test shows them with a few verbs of its own on two QPs connected
 * to each other on one port (lesson 04's loopback, with two QPs), and asserts
 * what the device did, on whichever kernel it runs.
 */
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lab/device.hpp"
#include "lab/resources.hpp"

namespace lab::test {

/// "6.1" or "6.12" when the running kernel is of one of the two series the
/// course is measured on, otherwise its whole release string.
std::string kernel_series();

/// Local write and every remote access: what the QPs and the region allow unless told otherwise.
inline constexpr int kAllAccess =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

/// How to build a LoopbackPair.
struct PairSetup {
    std::string device;              ///< empty: the first device
    ibv_qp_type type = IBV_QPT_RC;   ///< IBV_QPT_RC or IBV_QPT_UC
    int access_b = kAllAccess;       ///< what B's QP grants its peer (qp_access_flags at INIT)
    int region_access = kAllAccess;  ///< the access of the one memory region
    std::uint8_t rnr_retry = 7;      ///< RC: retries of a send that found no receive
    bool channel = false;            ///< tie both CQs to one completion channel
};

/**
 * @brief Two QPs, A and B, on port 1 of a device, connected to each other and
 *        in RTS, each with a CQ of its own (for its sends and its receives).
 *
 * One memory region covers 64 KiB: A's half first (at()), B's half second.
 * Owners are declared in creation order, so they are destroyed in reverse.
 */
class LoopbackPair {
  public:
    explicit LoopbackPair(const PairSetup& setup = {});

    lab::Port port;                   ///< the device, its port 1 and the GID chosen
    lab::ProtectionDomain pd;         ///< holds the region and both QPs
    std::vector<std::byte> memory;    ///< 64 KiB, registered as mr
    lab::MemoryRegion mr;             ///< over memory, with PairSetup::region_access
    lab::CompletionChannel channel;   ///< null unless PairSetup::channel
    lab::CompletionQueue cq_a, cq_b;  ///< A's and B's CQ
    lab::QueuePair a, b;              ///< connected to each other, in RTS

    /// @p length bytes of the region from @p offset.
    [[nodiscard]] std::span<std::byte> at(std::size_t offset, std::size_t length) {
        return std::span(memory).subspan(offset, length);
    }
    /// The address of byte @p offset of the region, as a peer names it.
    [[nodiscard]] std::uint64_t address(std::size_t offset) const;
};

/// Completions of @p cq, as many as arrive until @p count did or @p timeout passed.
std::vector<ibv_wc> poll_completions(ibv_cq* cq, std::size_t count,
                                     std::chrono::milliseconds timeout);

/// The attributes ibv_query_qp reports for @p qp, those of @p mask filled in.
ibv_qp_attr query_qp(ibv_qp* qp, int mask);

/// The state ibv_query_qp reports for @p qp.
ibv_qp_state state_of(ibv_qp* qp);

/// One asynchronous event, read and acknowledged.
struct AsyncEvent {
    ibv_event_type type;       ///< what happened
    std::uint32_t qp_num = 0;  ///< the QP it is about, for QP events
};

/// The next asynchronous event of @p context within @p timeout; nothing when none came.
std::optional<AsyncEvent> next_async_event(ibv_context* context, std::chrono::milliseconds timeout);

/// The CQ of the next completion event on @p channel within @p timeout (the
/// event is acknowledged); nullptr when none came.
ibv_cq* next_cq_event(ibv_comp_channel* channel, std::chrono::milliseconds timeout);

}  // namespace lab::test

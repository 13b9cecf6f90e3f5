// SPDX-License-Identifier: MIT
/**
 * @file connect.hpp
 * @brief Step 8 with a peer in one call, as lesson 05 writes it out.
 *
 * Lesson 05 connects two RC QPs by hand: RESET → INIT, the TCP exchange of
 * QP numbers, PSNs, GIDs and memory regions, INIT → RTR with the peer's
 * address, RTR → RTS. Every later two-process lesson does exactly that, with
 * its own access flags and memory region, so from lesson 06 on it is one call.
 */
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "lab/device.hpp"
#include "lab/exchange.hpp"

namespace lab {

struct Options;

/// What one lesson's step 8 sets beyond the defaults (lessons 04 and 05).
struct PeerSetup {
    int access = 0;  ///< qp_access_flags at INIT: what the peer may do to our memory
    const ibv_mr* region = nullptr;  ///< memory the peer may access (address and rkey sent); none
    std::size_t region_length = 0;   ///< how many bytes of @p region are offered; 0: all of it
    std::uint8_t rd_atomic = 16;     ///< max_dest_rd_atomic (RTR) and max_rd_atomic (RTS), each
                                     ///< capped by the device (see check_rd_atomic())
    std::uint8_t rnr_retry = 7;      ///< RTS: retries of a send that found no receive; 7 = forever
};

/**
 * @brief Refuse more reads and atomics in flight than the device allows (lesson 09).
 *
 * PeerSetup::rd_atomic becomes max_rd_atomic at RTS, capped by the device's
 * max_qp_init_rd_atom, and max_dest_rd_atomic at RTR, capped by max_qp_rd_atom.
 * connect_qp() lowers the value to those limits without a word (the default 16
 * must work on every device); a lesson that lets the user choose it calls this
 * first, so that the choice is refused rather than quietly lowered. Each side
 * caps by its own device: the exchange does not carry the value.
 * @throws lab::Error naming the flag and both limits when @p requested is above either.
 */
void check_rd_atomic(const ibv_device_attr& device, int requested);

/// The peer after step 8: what it sent, and the TCP connection to it.
struct Peer {
    ConnectionInfo info;    ///< its QP address and its memory region (address, rkey, length)
    Connection connection;  ///< open to the end: for barriers, and connection.watch() in waits
};

/**
 * @brief Step 8 with a peer (lesson 05): RESET → INIT, the exchange over TCP,
 *        INIT → RTR → RTS.
 *
 * The server (@p options without SERVER) prints "waiting for a client on TCP
 * port N" and accepts one client; the client connects to SERVER, retrying
 * until --timeout. Both print their own and the peer's address, as
 * ibv_rc_pingpong does.
 * @throws lab::Error when a transition fails, the peer does not come within
 *         --timeout, or it sends something that is not this course's message.
 */
Peer connect_qp(ibv_qp* qp, const Port& port, const Options& options, const PeerSetup& setup = {});

/**
 * @brief The same over a connection made already, e.g. one of a Listener's
 *        clients (lesson 12).
 * @param timeout for the exchange.
 */
Peer connect_qp(ibv_qp* qp, const Port& port, Connection connection, const PeerSetup& setup,
                std::chrono::milliseconds timeout);

}  // namespace lab

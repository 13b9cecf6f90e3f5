// SPDX-License-Identifier: MIT
#include "lab/connect.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "lab/check.hpp"
#include "lab/options.hpp"
#include "lab/verbs.hpp"

namespace lab {

namespace {

// Steps 8a and 8b: RESET -> INIT, and what the peer needs to reach this QP.
ConnectionInfo prepare(ibv_qp* qp, const Port& port, const PeerSetup& setup) {
    move_to_init(qp, port.number, setup.access);
    ConnectionInfo mine;
    mine.address = {qp->qp_num, random_psn(), port.attr.lid, port.gid.gid};
    mine.mtu = port.attr.active_mtu;
    if (setup.region != nullptr) {
        mine.remote_addr = reinterpret_cast<std::uintptr_t>(setup.region->addr);
        mine.rkey = setup.region->rkey;
        mine.length =
            wire_length(setup.region_length != 0 ? setup.region_length : setup.region->length);
    }
    print_address("local", mine.address);
    return mine;
}

// Steps 8c and 8d: the exchange, then INIT -> RTR -> RTS with what the peer sent.
// setup.rd_atomic is capped by what this device allows on each side:
// max_qp_rd_atom as responder (RTR), max_qp_init_rd_atom as initiator (RTS).
Peer finish(ibv_qp* qp, const Port& port, Connection connection, const ConnectionInfo& mine,
            const PeerSetup& setup, std::chrono::milliseconds timeout) {
    ibv_device_attr device{};
    check(ibv_query_device(port.context.get(), &device), "ibv_query_device");
    const auto capped = [&](int limit) {
        return static_cast<std::uint8_t>(std::clamp<int>(setup.rd_atomic, 0, limit));
    };
    Peer peer{connection.exchange(mine, timeout), std::move(connection)};
    print_address("remote", peer.info.address);
    move_to_rtr(qp, port.local(peer.info.mtu), peer.info.address, capped(device.max_qp_rd_atom));
    move_to_rts(qp, mine.address.psn, capped(device.max_qp_init_rd_atom), setup.rnr_retry);
    return peer;
}

}  // namespace

void check_rd_atomic(const ibv_device_attr& device, int requested) {
    if (requested > std::min(device.max_qp_rd_atom, device.max_qp_init_rd_atom)) {
        throw Error("--rd-atomic " + std::to_string(requested) +
                    " is above what the device allows (hint: max_qp_rd_atom is " +
                    std::to_string(device.max_qp_rd_atom) + ", max_qp_init_rd_atom " +
                    std::to_string(device.max_qp_init_rd_atom) + ")");
    }
}

Peer connect_qp(ibv_qp* qp, const Port& port, const Options& options, const PeerSetup& setup) {
    const ConnectionInfo mine = prepare(qp, port, setup);
    if (options.is_server()) {
        std::printf("server: waiting for a client on TCP port %u\n", unsigned(options.tcp_port));
    }
    Connection connection =
        options.is_server()
            ? Connection::accept_one(options.tcp_port, options.timeout)
            : Connection::connect_to(options.server, options.tcp_port, options.timeout);
    return finish(qp, port, std::move(connection), mine, setup, options.timeout);
}

Peer connect_qp(ibv_qp* qp, const Port& port, Connection connection, const PeerSetup& setup,
                std::chrono::milliseconds timeout) {
    const ConnectionInfo mine = prepare(qp, port, setup);
    return finish(qp, port, std::move(connection), mine, setup, timeout);
}

}  // namespace lab

// SPDX-License-Identifier: MIT
// Lesson 05: exchange — step 8 with a real peer.
//
// Two processes each build a QP (steps 1-7, taught in lessons 01-04). To
// connect them, each must learn the other's QP number, first PSN, LID and
// GID, and RDMA cannot carry that yet: the QPs are not connected. So the
// information travels over a plain TCP connection: the server listens, the
// client connects, both send one fixed-size message and read the other's.
// With the peer's address in hand each side walks its QP INIT → RTR → RTS,
// and a last one-byte barrier tells both that the other one got there too.
//
// Run:   ./lab run 05_exchange                 (server and client in one command)
//        by hand, in two terminals: ./lab shell PROGRAM (server), ./lab shell PROGRAM 10.77.0.1
//        options: -d DEV -i PORT -g GID_INDEX -p TCP_PORT -s SIZE --timeout SECONDS
//                 --no-grh: address the peer by LID alone, and see RoCE refuse it
//
// The ten steps: 1 device list, 2 open, 3 query, 4 PD, 5 MR, 6 CQ, 7 QP,
// 8 INIT/RTR/RTS, 9 post and poll, 10 clean up. This lesson adds the peer to 8.

#include <infiniband/verbs.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "lab/check.hpp"
#include "lab/device.hpp"
#include "lab/exchange.hpp"
#include "lab/options.hpp"
#include "lab/resources.hpp"
#include "lab/verbs.hpp"

int main(int argc, char** argv) {
    lab::CommandLine command_line(
        "Lesson 05: exchange QP information over TCP and connect two RC QPs",
        lab::kDevice | lab::kTcpPort | lab::kSize | lab::kTimeout | lab::kServerArg);
    int hold_seconds = 0;
    command_line.option("--hold", hold_seconds,
                        "stay in RTS this many seconds before the barrier (time to look at the "
                        "QPs with 'rdma resource show qp')",
                        {.min = 0, .max = 3600});
    bool lid_only = false;
    command_line.flag(
        "--no-grh", lid_only,
        "address the peer by LID alone (is_global = 0), as InfiniBand may; RoCE refuses it");
    const lab::Options options = command_line.parse(argc, argv);
    const std::chrono::milliseconds timeout = options.timeout;

    return lab::run_main([&] {
        const char* role = options.is_server() ? "server" : "client";

        // Steps 1-3 (lesson 01): open the device, query the port, choose the GID.
        lab::Context context = lab::open_device(options.device);
        const ibv_port_attr port_attr = lab::query_port(context.get(), options.ib_port);
        const lab::GidChoice gid =
            lab::choose_gid(context.get(), options.ib_port, options.gid_index);
        std::printf("%s: device %s, port %u, GID index %d (%s)\n", role,
                    ibv_get_device_name(context->device), unsigned(options.ib_port), gid.index,
                    lab::gid_to_string(gid.gid).c_str());

        // Steps 4-7 (lessons 02-04): PD, a buffer the peer will be told about, CQ, RC QP.
        // The CQ has an entry for every work request the QP may hold (lesson 03).
        lab::ProtectionDomain pd = lab::alloc_pd(context.get());
        std::vector<std::byte> buffer(options.size);
        const int access =
            IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
        lab::MemoryRegion mr = lab::register_memory(pd.get(), buffer, access);
        const lab::QueueSizes sizes;  // 64 sends, 64 receives
        lab::CompletionQueue cq = lab::create_cq(context.get(), int(sizes.send_wr + sizes.recv_wr));
        lab::QueuePair qp = lab::create_rc_qp(pd.get(), cq.get(), cq.get(), sizes);

        // Step 8a (lesson 04): RESET → INIT needs nothing from the peer.
        lab::move_to_init(qp.get(), options.ib_port, access);

        // Step 8b: what the peer needs to reach this QP. The QPN comes from
        // ibv_create_qp; the first PSN is ours to choose (random, as
        // ibv_rc_pingpong does, so that packets of an old run are not taken
        // for this one's); the LID is 0 on RoCE, where the GID does the routing.
        lab::ConnectionInfo mine;
        mine.address.qp_num = qp->qp_num;
        mine.address.psn = lab::random_psn();
        mine.address.lid = port_attr.lid;
        mine.address.gid = gid.gid;
        // One-sided lessons (07 on) also hand over a memory region: where it
        // is, its rkey, and how long it is.
        mine.remote_addr = reinterpret_cast<std::uintptr_t>(buffer.data());
        mine.rkey = mr->rkey;
        mine.length = static_cast<std::uint32_t>(buffer.size());
        // And the largest payload our port carries: a packet above the far
        // port's MTU would be dropped there, so both use the smaller one.
        mine.mtu = port_attr.active_mtu;
        lab::print_address("local", mine.address);

        // Step 8c: the TCP exchange. The server listens and accepts one
        // client; the client connects, retrying while the server is not up.
        // Then both send their 52-byte message and read the other's.
        if (options.is_server()) {
            std::printf("server: waiting for a client on TCP port %u\n",
                        unsigned(options.tcp_port));
        } else {
            std::printf("client: connecting to %s:%u\n", options.server.c_str(),
                        unsigned(options.tcp_port));
        }
        lab::Connection connection =
            options.is_server()
                ? lab::Connection::accept_one(options.tcp_port, timeout)
                : lab::Connection::connect_to(options.server, options.tcp_port, timeout);
        const lab::ConnectionInfo peer = connection.exchange(mine, timeout);
        lab::print_address("remote", peer.address);
        std::printf("%s: peer buffer at 0x%llx, rkey 0x%x, %u bytes\n", role,
                    static_cast<unsigned long long>(peer.remote_addr), peer.rkey, peer.length);
        const ibv_mtu path_mtu = lab::agreed_mtu(port_attr.active_mtu, peer.mtu);
        std::printf("%s: path MTU %d, the smaller of ours (%d) and the peer's (%d)\n", role,
                    128 << path_mtu, 128 << port_attr.active_mtu, 128 << peer.mtu);

        // Step 8d (lesson 04, ibv_modify_qp): INIT → RTR with the peer's address, QPN and
        // first PSN; RTR → RTS with our own first PSN.
        if (lid_only) {
            // InfiniBand routes inside a subnet by LID: the subnet manager gives each
            // port one, and a path with is_global = 0 names the peer by dlid alone (the
            // packets carry SLID and DLID in their link header, no GRH). RoCE has no
            // LIDs (ours is 0): Ethernet and IP carry the packet, so every path needs
            // the GRH, that is the peer's GID. The kernel refuses a path without it.
            ibv_qp_attr rtr{};
            rtr.qp_state = IBV_QPS_RTR;
            rtr.path_mtu = path_mtu;
            rtr.dest_qp_num = peer.address.qp_num;
            rtr.rq_psn = peer.address.psn;
            rtr.max_dest_rd_atomic = 1;
            rtr.min_rnr_timer = 12;
            rtr.ah_attr.is_global = 0;
            rtr.ah_attr.dlid = peer.address.lid;
            rtr.ah_attr.port_num = options.ib_port;
            std::printf("%s: --no-grh: INIT -> RTR with is_global 0, dlid %u\n", role,
                        unsigned(peer.address.lid));
            lab::check(
                ibv_modify_qp(qp.get(), &rtr,
                              IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
                "ibv_modify_qp(RTR) without a GRH",
                port_attr.link_layer == IBV_LINK_LAYER_ETHERNET
                    ? "RoCE has no LIDs: set ah_attr.is_global = 1 and the peer's GID"
                    : "is the peer's LID right, and the port ACTIVE?");
        }
        const lab::LocalPort local{options.ib_port, gid.index, path_mtu};
        lab::move_to_rtr(qp.get(), local, peer.address);
        lab::move_to_rts(qp.get(), mine.address.psn);

        // Ask the QP itself: ibv_query_qp returns its state and who it is connected to.
        ibv_qp_attr attr{};
        ibv_qp_init_attr init_attr{};
        lab::check(ibv_query_qp(qp.get(), &attr, IBV_QP_STATE | IBV_QP_DEST_QPN, &init_attr),
                   "ibv_query_qp");
        std::printf("%s: QP 0x%06x is in state %s, connected to QP 0x%06x\n", role, qp->qp_num,
                    lab::qp_state_name(attr.qp_state), attr.dest_qp_num);

        // The TCP connection stays open to the end, and it tells when the
        // peer is gone: its kernel closes the socket the moment the process
        // exits or crashes, and poll(2) reports POLLRDHUP here even while
        // bytes it sent are still unread. Its QP vanishes too, but that the
        // device may not report for a long time. connection.watch() is that
        // check (lab::PeerWatch); every wait of the later lessons uses it.
        if (hold_seconds > 0) {
            std::printf("%s: holding for %d s before the barrier\n", role, hold_seconds);
            connection.watch().sleep_until(std::chrono::steady_clock::now() +
                                           std::chrono::seconds(hold_seconds));
        }

        // Step 8e: the barrier. Each side sends one byte and waits for the
        // other's, so neither tears down its QP while the peer still needs it.
        // A peer that died shows up here as a closed connection.
        std::printf("%s: waiting for the peer at the barrier\n", role);
        connection.barrier(timeout);
        std::printf("%s: both sides are in RTS\n", role);

        // Step 10: clean up. The owners above are destroyed in reverse order:
        // the TCP connection, QP, CQ, MR, PD, then the device context.
        return 0;
    });
}

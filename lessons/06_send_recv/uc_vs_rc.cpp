// SPDX-License-Identifier: MIT
// Lesson 06, variant: unreliable connected (UC) against reliable connected (RC).
//
// Both are connected transports: one QP talks to one QP, and both carry SEND
// (and RDMA WRITE). RC acknowledges every message; a lost packet is sent again
// (go back to the lost PSN, after a NAK or after the timeout), retry_cnt times
// at most, so either every message arrives, in order, or the sender gets an
// error completion. UC sends and forgets: no ACK, no retransmission. A
// receiver that misses a packet drops the whole message, and the sender's
// completion says IBV_WC_SUCCESS all the same: it means "sent", not "arrived".
//
// The client sends -n messages of -s bytes, each numbered and filled with a
// pattern; the server counts what arrived whole. On a clean wire both
// transports deliver everything. Make the wire lossy to see the difference:
//   ./lab capture --netem "loss 2%" 06_send_recv/uc_vs_rc          (RC: all arrive)
//   ./lab capture --netem "loss 2%" 06_send_recv/uc_vs_rc --uc     (UC: some lost)
// Run:   ./lab run 06_send_recv/uc_vs_rc [--uc] [-n N] [-s SIZE]  (one host, no loss)

#include <infiniband/verbs.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/device.hpp"
#include "lab/exchange.hpp"
#include "lab/options.hpp"
#include "lab/verbs.hpp"
#include "lab/wait.hpp"

namespace {

constexpr std::uint32_t kWindow = 32;  // sends in flight at most

// Message @p number: its number in the first 4 bytes, then a pattern that
// differs from message to message, so a mixed-up message shows. The number
// goes in host byte order: both sides are the same kind of machine here
// (x86-64 and arm64 are little-endian). Portable code fixes an order on the
// wire (htonl/ntohl, as lab::encode_info does), since RDMA moves bytes as they are.
void fill(std::span<std::byte> message, std::uint32_t number) {
    std::memcpy(message.data(), &number, sizeof number);
    for (std::size_t i = sizeof number; i < message.size(); ++i) {
        message[i] = static_cast<std::byte>((number * 7 + i) & 0xff);
    }
}

bool intact(std::span<const std::byte> message, std::uint32_t& number) {
    std::memcpy(&number, message.data(), sizeof number);
    std::vector<std::byte> expected(message.size());
    fill(expected, number);
    return std::memcmp(expected.data(), message.data(), message.size()) == 0;
}

// Step 8 for UC: fewer attributes than RC, because there is nothing to
// acknowledge or retry. RTR has no max_dest_rd_atomic (UC has no RDMA READ or
// atomics) and no min_rnr_timer (no RNR NAK); RTS has no timeout, retry_cnt,
// rnr_retry or max_rd_atomic. ibv_modify_qp refuses those bits on a UC QP.
void connect_uc(ibv_qp* qp, const lab::LocalPort& local, const lab::PeerAddress& peer,
                std::uint32_t my_psn) {
    ibv_qp_attr rtr{};
    rtr.qp_state = IBV_QPS_RTR;
    rtr.path_mtu = local.path_mtu;
    rtr.dest_qp_num = peer.qp_num;
    rtr.rq_psn = peer.psn;
    rtr.ah_attr.is_global = 1;  // RoCE: the path is the peer's GID (lesson 05)
    rtr.ah_attr.grh.dgid = peer.gid;
    rtr.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(local.gid_index);
    rtr.ah_attr.grh.hop_limit = 64;
    rtr.ah_attr.dlid = peer.lid;
    rtr.ah_attr.port_num = local.port;
    lab::check(
        ibv_modify_qp(qp, &rtr,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN),
        "ibv_modify_qp(UC, INIT->RTR)", "check the peer's GID and QPN and the GID index");
    ibv_qp_attr rts{};
    rts.qp_state = IBV_QPS_RTS;
    rts.sq_psn = my_psn;
    lab::check(ibv_modify_qp(qp, &rts, IBV_QP_STATE | IBV_QP_SQ_PSN),
               "ibv_modify_qp(UC, RTR->RTS)");
}

}  // namespace

int main(int argc, char** argv) {
    lab::CommandLine command_line(
        "Lesson 06 variant: UC against RC, message by message",
        lab::kDevice | lab::kTcpPort | lab::kSize | lab::kIters | lab::kTimeout | lab::kServerArg);
    command_line.defaults().size = 4096;
    command_line.defaults().iters = 200;
    bool unreliable = false;
    command_line.flag("--uc", unreliable, "use UC QPs instead of RC");
    const lab::Options options = command_line.parse(argc, argv);

    return lab::run_main([&] {
        const char* role = options.is_server() ? "server" : "client";
        const char* transport = unreliable ? "UC" : "RC";
        if (options.size < sizeof(std::uint32_t) || options.iters > 4096) {
            throw lab::Error(
                "--size must hold a 4-byte number and --iters be at most 4096 (hint: "
                "-s 4096 -n 200)");
        }
        const auto messages = static_cast<std::uint32_t>(options.iters);

        // Steps 1-6 (lessons 01-03): device, port and GID, PD, memory, CQ.
        const lab::Port port = lab::open_port(options);
        const lab::ProtectionDomain pd = lab::alloc_pd(port.context.get());
        std::vector<std::byte> buffer(options.size * messages);  // one slot per message
        const lab::MemoryRegion mr = lab::register_memory(pd.get(), buffer, IBV_ACCESS_LOCAL_WRITE);
        // The CQ holds a completion for every receive and every send in flight (lesson 03).
        const lab::CompletionQueue cq = lab::create_cq(port.context.get(), int(messages + kWindow));

        // Step 7: the QP. The transport is qp_type; everything else is as lesson 04.
        ibv_qp_init_attr init{};
        init.send_cq = cq.get();
        init.recv_cq = cq.get();
        init.qp_type = unreliable ? IBV_QPT_UC : IBV_QPT_RC;
        init.cap.max_send_wr = kWindow;
        init.cap.max_recv_wr = messages;
        init.cap.max_send_sge = 1;
        init.cap.max_recv_sge = 1;
        init.sq_sig_all = 1;  // every send completes: we count them
        const lab::QueuePair qp(lab::check_ptr(ibv_create_qp(pd.get(), &init), "ibv_create_qp",
                                               "is -n above max_qp_wr?"));
        std::printf("%s: %s QP 0x%x, %u messages of %zu bytes\n", role, transport, qp->qp_num,
                    messages, options.size);

        // Step 8: INIT, the exchange (lesson 05), then RTR and RTS for the transport.
        lab::move_to_init(qp.get(), port.number, 0);
        // The server's receives go in at INIT (not RESET), before the peer can send.
        if (options.is_server()) {
            for (std::uint32_t slot = 0; slot < messages; ++slot) {
                lab::post_receive(qp.get(),
                                  std::span(buffer).subspan(slot * options.size, options.size),
                                  mr->lkey, slot);
            }
        }

        lab::ConnectionInfo mine;
        mine.address = {qp->qp_num, lab::random_psn(), port.attr.lid, port.gid.gid};
        mine.mtu = port.attr.active_mtu;  // both sides use the smaller MTU (lesson 05)
        if (options.is_server()) {
            std::printf("server: waiting for a client on TCP port %u\n",
                        unsigned(options.tcp_port));
            std::fflush(stdout);
        }
        lab::Connection connection =
            options.is_server()
                ? lab::Connection::accept_one(options.tcp_port, options.timeout)
                : lab::Connection::connect_to(options.server, options.tcp_port, options.timeout);
        const lab::ConnectionInfo theirs = connection.exchange(mine, options.timeout);
        const lab::PeerAddress& peer = theirs.address;
        const lab::LocalPort local = port.local(theirs.mtu);  // at the smaller of the two MTUs
        if (unreliable) {
            connect_uc(qp.get(), local, peer, mine.address.psn);
            std::printf("%s: UC in RTS: RTR set path, dest QPN, rq_psn; RTS only sq_psn\n", role);
        } else {
            lab::move_to_rtr(qp.get(), local, peer);
            lab::move_to_rts(qp.get(), mine.address.psn);
            std::printf(
                "%s: RC in RTS: timeout 17 (4.096 us x 2^17 = 537 ms before a resend), "
                "retry_cnt 6, rnr_retry 7\n",
                role);
        }
        connection.barrier(options.timeout);

        // Step 9, client: number the messages and keep up to kWindow sends in flight.
        if (!options.is_server()) {
            std::uint32_t posted = 0;
            std::uint32_t completed = 0;
            while (completed < messages) {
                while (posted < messages && posted - completed < kWindow) {
                    const std::span<std::byte> slot =
                        std::span(buffer).subspan(posted * options.size, options.size);
                    fill(slot, posted);
                    lab::post_send(qp.get(), slot, mr->lkey, IBV_SEND_SIGNALED, posted);
                    ++posted;
                }
                lab::wait_for_completion(cq.get(), "send", options.timeout, connection.watch());
                ++completed;
            }
            std::printf("client: %u sends completed, every one IBV_WC_SUCCESS\n", completed);
            connection.barrier(options.timeout);  // the server has counted
            return 0;
        }

        // Step 9, server: count the messages that arrive whole, until all have
        // or none has come for 2 s (UC never says a message is missing).
        std::vector<bool> arrived(messages, false);
        std::uint32_t received = 0;
        std::uint32_t damaged = 0;
        lab::Deadline quiet(std::chrono::seconds(2), connection.watch());
        while (received < messages) {
            ibv_wc wc{};
            const int polled = ibv_poll_cq(cq.get(), 1, &wc);
            lab::check(polled < 0 ? -1 : 0, "ibv_poll_cq");
            if (polled == 0) {
                if (!quiet.still_waiting()) {
                    break;
                }
                continue;
            }
            quiet.reset();
            lab::check_completion(wc, "receive");
            std::uint32_t number = 0;
            const bool whole =
                intact(std::span(buffer).subspan(wc.wr_id * options.size, wc.byte_len), number);
            if (!whole || wc.byte_len != options.size || number >= messages) {
                ++damaged;
                continue;
            }
            arrived[number] = true;
            ++received;
        }
        std::string lost;
        for (std::uint32_t number = 0; number < messages; ++number) {
            if (!arrived[number]) {
                lost += " " + std::to_string(number);
            }
        }
        std::printf("server: received %u of %u messages whole, %u damaged; lost:%s\n", received,
                    messages, damaged, lost.empty() ? " none" : lost.c_str());
        connection.barrier(options.timeout);
        // Step 10: the owners clean up; ibv_destroy_qp discards the receives
        // still posted (UC leaves some) without a completion.
        return 0;
    });
}

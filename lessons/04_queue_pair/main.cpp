// Lesson 04: queue pair — steps 7 and 8 of the verbs flow, and a first message.
//
// Creates a reliable-connected (RC) queue pair and walks it through the
// states RESET -> INIT -> RTR -> RTS, connected to itself: the "peer" is its
// own QP number at its own GID, so one process is enough. After each step
// ibv_query_qp shows the state the QP is really in. It also shows that a
// skipped transition (RESET -> RTR) and a missing attribute are refused.
// Then the QP sends a message to itself and prints the bytes it received.
//
// Run:   ./lab run 04_queue_pair               (a 32-byte message)
//        ./lab run 04_queue_pair -d rxe0 -s 4096
//
// The ten steps: 1 device list, 2 open, 3 query, 4 PD, 5 MR, 6 CQ, 7 QP,
// 8 INIT/RTR/RTS, 9 post and poll, 10 clean up. This lesson does 7-10.

#include <infiniband/verbs.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/device.hpp"
#include "lab/options.hpp"
#include "lab/resources.hpp"
#include "lab/verbs.hpp"

namespace {

constexpr std::uint64_t kSendId = 1;     // wr_id of the send, comes back in its completion
constexpr std::uint64_t kReceiveId = 2;  // wr_id of the receive

// ibv_query_qp, then print the state and the attributes @p transition set.
ibv_qp_attr query_and_print(ibv_qp* qp, std::string_view transition) {
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    lab::check(ibv_query_qp(qp, &attr,
                            IBV_QP_STATE | IBV_QP_PORT | IBV_QP_AV | IBV_QP_PATH_MTU |
                                IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
                                IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY,
                            &init),
               "ibv_query_qp");
    std::printf("\t%-14s ibv_query_qp: state %s", std::string(transition).c_str(),
                lab::qp_state_name(attr.qp_state));
    switch (attr.qp_state) {
        case IBV_QPS_INIT:
            std::printf(" (port %u)", unsigned(attr.port_num));
            break;
        case IBV_QPS_RTR:
            std::printf(" (dest_qp_num 0x%x, path_mtu %s, rq_psn 0x%x)", attr.dest_qp_num,
                        std::string(lab::mtu_name(attr.path_mtu)).c_str(), attr.rq_psn);
            break;
        case IBV_QPS_RTS:
            std::printf(" (sq_psn 0x%x, timeout %u, retry_cnt %u, rnr_retry %u)", attr.sq_psn,
                        unsigned(attr.timeout), unsigned(attr.retry_cnt), unsigned(attr.rnr_retry));
            break;
        default:
            break;
    }
    std::printf("\n");
    return attr;
}

// The attributes of INIT -> RTR for a QP whose peer is @p peer_qpn at @p peer_gid.
ibv_qp_attr rtr_attributes(std::uint32_t peer_qpn, const ibv_gid& peer_gid, int gid_index,
                           std::uint8_t port, ibv_mtu path_mtu, std::uint32_t peer_psn) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = path_mtu;
    attr.dest_qp_num = peer_qpn;
    attr.rq_psn = peer_psn;
    attr.max_dest_rd_atomic = 1;
    attr.min_rnr_timer = 12;
    attr.ah_attr.port_num = port;
    // RoCE has no LIDs: the path is an IP route, so a global route header
    // (GRH) with the peer's GID and our source GID index is mandatory.
    attr.ah_attr.is_global = 1;
    attr.ah_attr.grh.dgid = peer_gid;
    attr.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(gid_index);
    attr.ah_attr.grh.hop_limit = 64;
    return attr;
}

constexpr int kRtrMask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                         IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;

}  // namespace

int main(int argc, char** argv) {
    lab::CommandLine command_line(
        "Lesson 04: an RC queue pair from RESET to RTS, and a send to itself",
        lab::kDevice | lab::kSize);
    command_line.defaults().size = 32;
    const lab::Options options = command_line.parse(argc, argv);

    return lab::run_main([&] {
        // Steps 1-3 (lesson 01): device, port (its active MTU, largest message), GID.
        lab::Context context = lab::open_device(options.device);
        const ibv_port_attr port_attr = lab::query_port(context.get(), options.ib_port);
        const lab::GidChoice gid =
            lab::choose_gid(context.get(), options.ib_port, options.gid_index);
        if (options.size > port_attr.max_msg_sz) {
            throw lab::Error("message size " + std::to_string(options.size) +
                             " is above the port's max_msg_sz " +
                             std::to_string(port_attr.max_msg_sz) + " (hint: a smaller -s)");
        }
        std::printf("Steps 1-3: opened %s, port %u, active MTU %s, GID index %d (%s)\n",
                    ibv_get_device_name(context->device), unsigned(options.ib_port),
                    std::string(lab::mtu_name(port_attr.active_mtu)).c_str(), gid.index,
                    lab::gid_to_string(gid.gid).c_str());

        // Steps 4-6 (lessons 02 and 03): PD, two registered buffers, one CQ
        // that both queues of the QP report to.
        lab::ProtectionDomain pd = lab::alloc_pd(context.get());
        std::vector<std::byte> send_buffer(options.size);
        std::vector<std::byte> receive_buffer(options.size);
        lab::MemoryRegion send_mr = lab::register_memory(pd.get(), send_buffer, 0);
        lab::MemoryRegion receive_mr =
            lab::register_memory(pd.get(), receive_buffer, IBV_ACCESS_LOCAL_WRITE);
        lab::CompletionQueue cq = lab::create_cq(context.get(), 16);
        std::printf("Steps 4-6: PD, send MR lkey 0x%x, receive MR lkey 0x%x, CQ of %d\n",
                    send_mr->lkey, receive_mr->lkey, cq->cqe);

        // Step 7: create the QP. Ask for queue sizes; the device writes what
        // it granted back into init.cap (never less than asked, often more).
        ibv_qp_init_attr init{};
        init.send_cq = cq.get();
        init.recv_cq = cq.get();
        init.qp_type = IBV_QPT_RC;  // reliable, connected: one peer QP, acked, in order
        init.sq_sig_all = 0;        // only sends flagged IBV_SEND_SIGNALED produce a completion
        init.cap.max_send_wr = 16;
        init.cap.max_recv_wr = 16;
        init.cap.max_send_sge = 1;
        init.cap.max_recv_sge = 1;
        init.cap.max_inline_data = 64;
        const ibv_qp_cap requested = init.cap;
        lab::QueuePair qp(
            lab::check_ptr(ibv_create_qp(pd.get(), &init), "ibv_create_qp",
                           "are the queue sizes within max_qp_wr and max_sge (lesson 01)?"));
        std::printf("Step 7: ibv_create_qp: RC QP number 0x%x\n", qp->qp_num);
        std::printf("\t%-16s %9s %8s\n", "capability", "requested", "granted");
        std::printf("\t%-16s %9u %8u\n", "max_send_wr", requested.max_send_wr,
                    init.cap.max_send_wr);
        std::printf("\t%-16s %9u %8u\n", "max_recv_wr", requested.max_recv_wr,
                    init.cap.max_recv_wr);
        std::printf("\t%-16s %9u %8u\n", "max_send_sge", requested.max_send_sge,
                    init.cap.max_send_sge);
        std::printf("\t%-16s %9u %8u\n", "max_recv_sge", requested.max_recv_sge,
                    init.cap.max_recv_sge);
        std::printf("\t%-16s %9u %8u\n", "max_inline_data", requested.max_inline_data,
                    init.cap.max_inline_data);

        // Step 8: RESET -> INIT -> RTR -> RTS. Each ibv_modify_qp names the
        // attributes it sets in attr_mask; each transition has required bits.
        std::printf("Step 8: the state walk, connected to itself (peer = QP 0x%x at %s)\n",
                    qp->qp_num, lab::gid_to_string(gid.gid).c_str());
        query_and_print(qp.get(), "created:");

        // A QP cannot skip a state: RESET -> RTR is refused even with every
        // attribute RTR needs.
        const std::uint32_t psn = lab::random_psn();
        ibv_qp_attr rtr = rtr_attributes(qp->qp_num, gid.gid, gid.index, options.ib_port,
                                         port_attr.active_mtu, psn);
        const int skipped = ibv_modify_qp(qp.get(), &rtr, kRtrMask);
        if (skipped == 0) {
            throw lab::Error("ibv_modify_qp(RESET->RTR) was accepted; it must be refused");
        }
        std::printf("\tRESET->RTR     ibv_modify_qp: refused: %s (errno %d)\n",
                    std::strerror(skipped), skipped);

        // RESET -> INIT: which port, which P_Key, what a peer may do to our memory.
        ibv_qp_attr to_init{};
        to_init.qp_state = IBV_QPS_INIT;
        to_init.pkey_index = 0;
        to_init.port_num = options.ib_port;
        to_init.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
        lab::check(
            ibv_modify_qp(qp.get(), &to_init,
                          IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
            "ibv_modify_qp(RESET->INIT)", "is the port number valid?");
        std::printf("\tRESET->INIT    mask STATE|PKEY_INDEX|PORT|ACCESS_FLAGS\n");
        query_and_print(qp.get(), "");

        // INIT -> RTR without IBV_QP_DEST_QPN: a required bit missing is refused too.
        const int incomplete = ibv_modify_qp(qp.get(), &rtr, kRtrMask & ~IBV_QP_DEST_QPN);
        if (incomplete == 0) {
            throw lab::Error("ibv_modify_qp(INIT->RTR) without IBV_QP_DEST_QPN was accepted");
        }
        std::printf(
            "\tINIT->RTR      without IBV_QP_DEST_QPN in the mask: refused: %s (errno %d)\n",
            std::strerror(incomplete), incomplete);

        // INIT -> RTR: ready to receive. The path to the peer (its GID), its
        // QP number, the PSN its first packet will carry, the path MTU.
        lab::check(ibv_modify_qp(qp.get(), &rtr, kRtrMask), "ibv_modify_qp(INIT->RTR)",
                   "check the GID index (-g) and that path_mtu <= the port's active_mtu");
        std::printf(
            "\tINIT->RTR      mask STATE|AV|PATH_MTU|DEST_QPN|RQ_PSN|"
            "MAX_DEST_RD_ATOMIC|MIN_RNR_TIMER\n");
        query_and_print(qp.get(), "");

        // RTR -> RTS: ready to send. Our first PSN (the peer expects it: we
        // are the peer, so the same psn), ack timeout and retry counts.
        ibv_qp_attr to_rts{};
        to_rts.qp_state = IBV_QPS_RTS;
        to_rts.sq_psn = psn;
        to_rts.timeout = 14;   // 4.096 us * 2^14 = 67 ms before a lost packet is resent
        to_rts.retry_cnt = 7;  // resend up to 7 times
        to_rts.rnr_retry = 7;  // 7 = retry forever when the receiver has no receive posted
        to_rts.max_rd_atomic = 1;
        lab::check(ibv_modify_qp(qp.get(), &to_rts,
                                 IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC),
                   "ibv_modify_qp(RTR->RTS)");
        std::printf(
            "\tRTR->RTS       mask STATE|SQ_PSN|TIMEOUT|RETRY_CNT|RNR_RETRY|"
            "MAX_QP_RD_ATOMIC\n");
        query_and_print(qp.get(), "");

        // Step 9: the first message. Post the receive before the send, so
        // that the message finds a buffer waiting for it.
        char text[64];
        const int length =
            std::snprintf(text, sizeof text, "Hello from QP 0x%x to itself", qp->qp_num);
        for (std::size_t i = 0; i < send_buffer.size(); ++i) {
            send_buffer[i] = i < std::size_t(length) ? std::byte(text[i]) : std::byte('.');
        }

        ibv_sge receive_sge{};
        receive_sge.addr = reinterpret_cast<std::uintptr_t>(receive_buffer.data());
        receive_sge.length = static_cast<std::uint32_t>(receive_buffer.size());
        receive_sge.lkey = receive_mr->lkey;
        ibv_recv_wr receive{};
        receive.wr_id = kReceiveId;
        receive.sg_list = &receive_sge;
        receive.num_sge = 1;
        ibv_recv_wr* bad_receive = nullptr;
        lab::check(ibv_post_recv(qp.get(), &receive, &bad_receive), "ibv_post_recv");

        ibv_sge send_sge{};
        send_sge.addr = reinterpret_cast<std::uintptr_t>(send_buffer.data());
        send_sge.length = static_cast<std::uint32_t>(send_buffer.size());
        send_sge.lkey = send_mr->lkey;
        ibv_send_wr send{};
        send.wr_id = kSendId;
        send.sg_list = &send_sge;
        send.num_sge = 1;
        send.opcode = IBV_WR_SEND;
        send.send_flags = IBV_SEND_SIGNALED;  // we want a completion for this one
        ibv_send_wr* bad_send = nullptr;
        lab::check(ibv_post_send(qp.get(), &send, &bad_send), "ibv_post_send");
        std::printf(
            "Step 9: ibv_post_recv (wr_id %llu), ibv_post_send IBV_WR_SEND %zu bytes "
            "(wr_id %llu, IBV_SEND_SIGNALED)\n",
            static_cast<unsigned long long>(kReceiveId), send_buffer.size(),
            static_cast<unsigned long long>(kSendId));

        // Both completions land on the one CQ, in either order (lesson 03's ibv_poll_cq loop).
        for (int i = 0; i < 2; ++i) {
            const ibv_wc wc = lab::wait_for_completion(cq.get(), "send to itself");
            std::printf(
                "\tcompletion: wr_id %llu, status %s, opcode %s, byte_len %u, qp_num 0x%x\n",
                static_cast<unsigned long long>(wc.wr_id), ibv_wc_status_str(wc.status),
                wc.opcode == IBV_WC_SEND   ? "IBV_WC_SEND"
                : wc.opcode == IBV_WC_RECV ? "IBV_WC_RECV"
                                           : "other",
                wc.byte_len, wc.qp_num);
        }
        const std::size_t shown = std::min(receive_buffer.size(), std::size_t{64});
        std::printf("\treceived: \"%.*s\"%s\n", int(shown),
                    reinterpret_cast<const char*>(receive_buffer.data()),
                    shown < receive_buffer.size() ? " ..." : "");
        if (send_buffer != receive_buffer) {
            throw lab::Error("the received bytes differ from the sent ones");
        }
        std::printf("\tall %zu received bytes equal the sent ones\n", receive_buffer.size());

        // Step 10: clean up. The QP goes first: it uses the CQ and the PD.
        // The MRs, CQ, PD and device follow as their owners go out of scope.
        lab::check(ibv_destroy_qp(qp.release()), "ibv_destroy_qp");
        std::printf("Step 10: ibv_destroy_qp; then the MRs, the CQ, the PD, the device\n");
        return 0;
    });
}

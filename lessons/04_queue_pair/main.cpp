// SPDX-License-Identifier: MIT
// Lesson 04: queue pair — steps 7 and 8 of the verbs flow, and a first message.
//
// Creates a reliable-connected (RC) queue pair and walks it RESET -> INIT ->
// RTR -> RTS, connected to itself (its own QP number at its own GID, so one
// process is enough); ibv_query_qp shows each state reached, and a skipped
// state or a missing attribute is refused. Then the QP sends itself a message.
//
// Run:   ./lab run 04_queue_pair               (a 32-byte message)
//        ./lab run 04_queue_pair -d rxe0 -s 4096
//
// The ten steps: 1 device list, 2 open, 3 query, 4 PD, 5 MR, 6 CQ, 7 QP,
// 8 INIT/RTR/RTS, 9 post and poll, 10 clean up. This lesson does 7-10.

#include <infiniband/verbs.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/device.hpp"
#include "lab/options.hpp"
#include "lab/report.hpp"
#include "lab/resources.hpp"
#include "lab/verbs.hpp"

namespace {

constexpr int kQueryMask = IBV_QP_STATE | IBV_QP_PORT | IBV_QP_AV | IBV_QP_PATH_MTU |
                           IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
                           IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY;

// Print what a transition set (its attr_mask bits, when @p mask is given), then ibv_query_qp
// (asked for kQueryMask: what the transitions set): the state the QP is in, what it added.
void query_and_print(ibv_qp* qp, const char* label, const char* mask = nullptr) {
    if (mask != nullptr) {
        std::printf("\t%-14s mask %s\n", label, mask);
        label = "";
    }
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    lab::check(ibv_query_qp(qp, &attr, kQueryMask, &init), "ibv_query_qp");
    std::printf("\t%-14s ibv_query_qp: state %s", label, lab::qp_state_name(attr.qp_state));
    if (attr.qp_state == IBV_QPS_INIT) {
        std::printf(" (port %u)", unsigned(attr.port_num));
    } else if (attr.qp_state == IBV_QPS_RTR) {
        std::printf(" (dest_qp_num 0x%x, path_mtu %s, rq_psn 0x%x)", attr.dest_qp_num,
                    std::string(lab::mtu_name(attr.path_mtu)).c_str(), attr.rq_psn);
    } else if (attr.qp_state == IBV_QPS_RTS) {
        std::printf(" (sq_psn 0x%x, timeout %u, retry_cnt %u, rnr_retry %u)", attr.sq_psn,
                    unsigned(attr.timeout), unsigned(attr.retry_cnt), unsigned(attr.rnr_retry));
    }
    std::printf("\n");
}

// ibv_modify_qp must refuse this transition: say why it did.
void expect_refused(ibv_qp* qp, ibv_qp_attr& attr, int mask, const char* what) {
    const int error = ibv_modify_qp(qp, &attr, mask);
    if (error == 0) {
        throw lab::Error(std::string(what) + " was accepted; it must be refused");
    }
    std::printf("\t%s: refused: %s (errno %d)\n", what, std::strerror(error), error);
}

constexpr int kRtrMask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                         IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;

}  // namespace

int main(int argc, char** argv) {
    lab::CommandLine command_line(
        "Lesson 04: an RC queue pair from RESET to RTS, and a send to itself",
        lab::kDevice | lab::kSize);
    command_line.defaults().size = 32;
    int rnr_retry = 7;
    command_line.option("--rnr-retry", rnr_retry, "RTS: retries after an RNR NAK; 7 = for ever",
                        {.min = 0, .max = 7});
    bool send_first = false;
    command_line.flag("--send-first", send_first,
                      "post the send, wait 200 ms, and only then the receive");
    const lab::Options options = command_line.parse(argc, argv);

    return lab::run_main([&] {
        // Steps 1-3 (lesson 01): device, port (its active MTU, largest message), GID.
        const lab::Port port = lab::open_port(options);
        lab::check_message_size(port, options.size);
        std::printf("Steps 1-3: opened %s, port %u, active MTU %s, GID index %d (%s)\n",
                    ibv_get_device_name(port.context->device), unsigned(port.number),
                    std::string(lab::mtu_name(port.attr.active_mtu)).c_str(), port.gid.index,
                    lab::gid_to_string(port.gid.gid).c_str());

        // Steps 4-6 (lessons 02, 03): PD, two MRs, one CQ with room for all the QP's requests.
        constexpr std::uint32_t kSendWr = 16, kReceiveWr = 16;
        lab::ProtectionDomain pd = lab::alloc_pd(port.context.get());
        std::vector<std::byte> send_buffer(options.size);
        std::vector<std::byte> receive_buffer(options.size);
        lab::MemoryRegion send_mr = lab::register_memory(pd.get(), send_buffer, 0);
        lab::MemoryRegion receive_mr =
            lab::register_memory(pd.get(), receive_buffer, IBV_ACCESS_LOCAL_WRITE);
        lab::CompletionQueue cq = lab::create_cq(port.context.get(), kSendWr + kReceiveWr);
        std::printf("Steps 4-6: PD, send MR lkey 0x%x, receive MR lkey 0x%x, CQ of %d\n",
                    send_mr->lkey, receive_mr->lkey, cq->cqe);

        // Step 7: create the QP. init.cap comes back with the sizes granted, at least those asked.
        ibv_qp_init_attr init{};
        init.send_cq = cq.get();
        init.recv_cq = cq.get();
        init.qp_type = IBV_QPT_RC;  // reliable, connected: one peer QP, acked, in order
        init.sq_sig_all = 0;        // only sends flagged IBV_SEND_SIGNALED produce a completion
        init.cap = {kSendWr, kReceiveWr, 1, 1, 64};  // the five asked for, named in the table
        const ibv_qp_cap asked = init.cap;
        lab::QueuePair qp(
            lab::check_ptr(ibv_create_qp(pd.get(), &init), "ibv_create_qp",
                           "are the queue sizes within max_qp_wr and max_sge (lesson 01)?"));
        std::printf("Step 7: ibv_create_qp: RC QP number 0x%x\n", qp->qp_num);
        std::printf("\t%-16s %9s %8s\n", "capability", "requested", "granted");
        const std::tuple<const char*, std::uint32_t, std::uint32_t> capabilities[] = {
            {"max_send_wr", asked.max_send_wr, init.cap.max_send_wr},
            {"max_recv_wr", asked.max_recv_wr, init.cap.max_recv_wr},
            {"max_send_sge", asked.max_send_sge, init.cap.max_send_sge},
            {"max_recv_sge", asked.max_recv_sge, init.cap.max_recv_sge},
            {"max_inline_data", asked.max_inline_data, init.cap.max_inline_data}};
        for (const auto& [name, requested, granted] : capabilities) {
            std::printf("\t%-16s %9u %8u\n", name, requested, granted);
        }

        // Step 8: RESET -> INIT -> RTR -> RTS; attr_mask names what each one sets.
        std::printf("Step 8: the state walk, connected to itself (peer = QP 0x%x at %s)\n",
                    qp->qp_num, lab::gid_to_string(port.gid.gid).c_str());
        query_and_print(qp.get(), "created:");

        // INIT -> RTR (ready to receive) needs the peer's QP number (QPN, 24 bits), the packet
        // sequence number (PSN, 24 bits) of its first packet, the path MTU and the path. RoCE has
        // no LIDs: the path is an IP route, so a global route header (GRH) with the peer's GID and
        // our source GID index is mandatory (is_global = 1).
        const std::uint32_t psn = lab::random_psn();
        ibv_qp_attr rtr{};
        rtr.qp_state = IBV_QPS_RTR;
        rtr.path_mtu = port.attr.active_mtu;
        rtr.dest_qp_num = qp->qp_num;  // the peer is this very QP
        rtr.rq_psn = psn;
        rtr.max_dest_rd_atomic = 1;  // RDMA READs/atomics the peer may have in flight at us
        rtr.min_rnr_timer = 12;      // a table code, not a time: 12 = 0.64 ms (RNR NAK wait)
        rtr.ah_attr.port_num = port.number;
        rtr.ah_attr.is_global = 1;
        rtr.ah_attr.grh.dgid = port.gid.gid;
        rtr.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(port.gid.index);
        rtr.ah_attr.grh.hop_limit = 64;

        // A QP cannot skip a state: RESET -> RTR is refused, even with all RTR needs.
        expect_refused(qp.get(), rtr, kRtrMask, "RESET->RTR     ibv_modify_qp");

        // RESET -> INIT: the port, the P_Key (partition key) index, what a peer may do to us.
        ibv_qp_attr to_init{};
        to_init.qp_state = IBV_QPS_INIT;
        to_init.pkey_index = 0;
        to_init.port_num = port.number;
        to_init.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
        lab::check(
            ibv_modify_qp(qp.get(), &to_init,
                          IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
            "ibv_modify_qp(RESET->INIT)", "is the port number valid?");
        query_and_print(qp.get(), "RESET->INIT", "STATE|PKEY_INDEX|PORT|ACCESS_FLAGS");

        // INIT -> RTR without IBV_QP_DEST_QPN: a required bit missing is refused too.
        expect_refused(qp.get(), rtr, kRtrMask & ~IBV_QP_DEST_QPN,
                       "INIT->RTR      without IBV_QP_DEST_QPN in the mask");

        lab::check(ibv_modify_qp(qp.get(), &rtr, kRtrMask), "ibv_modify_qp(INIT->RTR)",
                   "check the GID index (-g); some devices refuse a path_mtu above active_mtu");
        query_and_print(qp.get(), "INIT->RTR",
                        "STATE|AV|PATH_MTU|DEST_QPN|RQ_PSN|MAX_DEST_RD_ATOMIC|MIN_RNR_TIMER");

        // RTR -> RTS: ready to send. Our first PSN (we are our peer: the same psn), retries.
        ibv_qp_attr to_rts{};
        to_rts.qp_state = IBV_QPS_RTS;
        to_rts.sq_psn = psn;
        to_rts.timeout = 14;   // an exponent: 4.096 us * 2^14 = 67 ms per try; 0 = wait forever
        to_rts.retry_cnt = 6;  // resend an unacknowledged packet up to 6 times, then fail
        to_rts.rnr_retry = std::uint8_t(rnr_retry);  // after an RNR NAK (no receive): 7 = forever
        to_rts.max_rd_atomic = 1;
        lab::check(ibv_modify_qp(qp.get(), &to_rts,
                                 IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC),
                   "ibv_modify_qp(RTR->RTS)");
        query_and_print(qp.get(), "RTR->RTS",
                        "STATE|SQ_PSN|TIMEOUT|RETRY_CNT|RNR_RETRY|MAX_QP_RD_ATOMIC");

        // Step 9: the first message. Post the receive first: the message must find a buffer.
        char text[64];
        std::snprintf(text, sizeof text, "Hello from QP 0x%x to itself", qp->qp_num);
        lab::fill_message(send_buffer, text);  // the text, then '.' to the end

        // wr_id is ours to choose: the completion hands it back (2: receive, 1: send).
        ibv_sge receive_sge{.addr = reinterpret_cast<std::uintptr_t>(receive_buffer.data()),
                            .length = static_cast<std::uint32_t>(receive_buffer.size()),
                            .lkey = receive_mr->lkey};
        ibv_recv_wr receive{.wr_id = 2, .next = nullptr, .sg_list = &receive_sge, .num_sge = 1};
        ibv_recv_wr* bad_receive = nullptr;
        if (!send_first) {
            lab::check(ibv_post_recv(qp.get(), &receive, &bad_receive), "ibv_post_recv");
        }

        ibv_sge send_sge{.addr = reinterpret_cast<std::uintptr_t>(send_buffer.data()),
                         .length = static_cast<std::uint32_t>(send_buffer.size()),
                         .lkey = send_mr->lkey};
        ibv_send_wr send{};
        send.wr_id = 1;
        send.sg_list = &send_sge;
        send.num_sge = 1;
        send.opcode = IBV_WR_SEND;
        send.send_flags = IBV_SEND_SIGNALED;  // we want a completion for this one
        ibv_send_wr* bad_send = nullptr;
        lab::check(ibv_post_send(qp.get(), &send, &bad_send), "ibv_post_send");
        std::printf(
            "Step 9: %s, ibv_post_send IBV_WR_SEND %zu bytes (wr_id 1, IBV_SEND_SIGNALED)\n",
            send_first ? "--send-first: no receive yet" : "ibv_post_recv (wr_id 2)",
            send_buffer.size());
        if (send_first) {
            // No receive waits: an RNR NAK (receiver not ready) answers, and the sender retries
            // after min_rnr_timer, rnr_retry times (docs/devices.md#rnr-and-ack-timer).
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            lab::check(ibv_post_recv(qp.get(), &receive, &bad_receive), "ibv_post_recv");
            std::printf("\t200 ms later: ibv_post_recv (wr_id 2); rnr_retry is %d\n", rnr_retry);
        }

        // Both completions land on the one CQ, in either order (lesson 03's ibv_poll_cq loop).
        for (int i = 0; i < 2; ++i) {
            const ibv_wc wc = lab::wait_for_completion(cq.get(), "send to itself");
            std::printf(
                "\tcompletion: wr_id %llu, status %s, opcode %s, byte_len %u, qp_num 0x%x\n",
                static_cast<unsigned long long>(wc.wr_id), ibv_wc_status_str(wc.status),
                wc.opcode == IBV_WC_RECV ? "IBV_WC_RECV" : "IBV_WC_SEND", wc.byte_len, wc.qp_num);
        }
        lab::check_received(send_buffer, receive_buffer);  // prints its start, compares all

        // Step 10: clean up: the QP first (it uses the CQ and PD), then the rest in reverse order.
        lab::check(ibv_destroy_qp(qp.release()), "ibv_destroy_qp");
        std::printf("Step 10: ibv_destroy_qp; then the MRs, the CQ, the PD, the device\n");
        return 0;
    });
}

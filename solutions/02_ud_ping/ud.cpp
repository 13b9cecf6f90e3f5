// SPDX-License-Identifier: MIT
// Exercise 02, reference solution: UD QPs, address handles, the GRH.
#include <infiniband/verbs.h>

#include <string>

#include "lab/check.hpp"
#include "ud.hpp"

namespace ud {

lab::QueuePair create_ud_qp(ibv_pd* pd, ibv_cq* cq) {
    ibv_qp_init_attr init{};
    init.send_cq = cq;
    init.recv_cq = cq;
    init.qp_type = IBV_QPT_UD;
    init.cap.max_send_wr = 32;
    init.cap.max_recv_wr = 32;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    return lab::QueuePair(lab::check_ptr(ibv_create_qp(pd, &init), "ibv_create_qp(UD)"));
}

void bring_up(ibv_qp* qp, std::uint8_t port, std::uint32_t qkey, std::uint32_t sq_psn) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = port;
    attr.qkey = qkey;
    lab::check(
        ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY),
        "ibv_modify_qp(RESET->INIT)");
    attr = {};
    attr.qp_state = IBV_QPS_RTR;  // a UD QP has no peer to learn about
    lab::check(ibv_modify_qp(qp, &attr, IBV_QP_STATE), "ibv_modify_qp(INIT->RTR)");
    attr = {};
    attr.qp_state = IBV_QPS_RTS;
    attr.sq_psn = sq_psn;
    lab::check(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN), "ibv_modify_qp(RTR->RTS)");
}

lab::AddressHandle create_ah(ibv_pd* pd, std::uint8_t port, int sgid_index,
                             const ibv_gid& peer_gid) {
    ibv_ah_attr attr{};
    attr.port_num = port;
    attr.is_global = 1;  // RoCE routes by GID: the GRH is mandatory
    attr.grh.dgid = peer_gid;
    attr.grh.sgid_index = static_cast<std::uint8_t>(sgid_index);
    attr.grh.hop_limit = 64;
    return lab::AddressHandle(lab::check_ptr(ibv_create_ah(pd, &attr), "ibv_create_ah",
                                             "is the GID index right (lesson 01)?"));
}

void post_ud_receive(ibv_qp* qp, const LocalBuffer& slot, std::uint64_t wr_id) {
    if (slot.bytes.size() <= kGrhBytes) {
        throw lab::Error("post_ud_receive: a " + std::to_string(slot.bytes.size()) +
                         "-byte receive buffer has no room after the 40-byte GRH");
    }
    ibv_sge sge{reinterpret_cast<std::uint64_t>(slot.bytes.data()),
                static_cast<std::uint32_t>(slot.bytes.size()), slot.lkey};
    ibv_recv_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad_wr = nullptr;
    lab::check(ibv_post_recv(qp, &wr, &bad_wr), "ibv_post_recv");
}

void post_ud_send(ibv_qp* qp, ibv_ah* ah, std::uint32_t remote_qpn, std::uint32_t remote_qkey,
                  const LocalBuffer& message, std::size_t max_payload, std::uint64_t wr_id) {
    if (message.bytes.size() > max_payload) {
        throw lab::Error("post_ud_send: a " + std::to_string(message.bytes.size()) +
                         "-byte message does not fit one packet: the path MTU is " +
                         std::to_string(max_payload) + " bytes, and UD does not segment");
    }
    ibv_sge sge{reinterpret_cast<std::uint64_t>(message.bytes.data()),
                static_cast<std::uint32_t>(message.bytes.size()), message.lkey};
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.wr.ud.ah = ah;
    wr.wr.ud.remote_qpn = remote_qpn;
    wr.wr.ud.remote_qkey = remote_qkey;
    ibv_send_wr* bad_wr = nullptr;
    lab::check(ibv_post_send(qp, &wr, &bad_wr), "ibv_post_send");
}

std::span<const std::byte> payload_of(const ibv_wc& wc, std::span<const std::byte> slot) {
    if (wc.byte_len < kGrhBytes || wc.byte_len > slot.size()) {
        throw lab::Error("payload_of: byte_len " + std::to_string(wc.byte_len) +
                         " does not fit a GRH and a " + std::to_string(slot.size()) + "-byte slot");
    }
    return slot.subspan(kGrhBytes, wc.byte_len - kGrhBytes);
}

}  // namespace ud

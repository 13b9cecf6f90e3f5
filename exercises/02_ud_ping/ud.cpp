// SPDX-License-Identifier: MIT
// Exercise 02, your part: UD QPs, address handles, the GRH. README.md
// explains the task. Every function ends in todo(...), which throws
// "TODO: <function> is not written yet"; replace it with your code.
#include <infiniband/verbs.h>

#include <string>

#include "lab/check.hpp"
#include "ud.hpp"

namespace ud {

namespace {

// Marks an unwritten function; the arguments only silence "unused parameter".
template <typename... Unused>
[[noreturn]] void todo(std::string_view function, const Unused&... /*unused*/) {
    throw lab::Error("TODO: " + std::string(function) +
                     " is not written yet (exercise 02, ud.cpp)");
}

}  // namespace

lab::QueuePair create_ud_qp(ibv_pd* pd, ibv_cq* cq) {
    // TODO: ibv_qp_init_attr with qp_type IBV_QPT_UD, send_cq = recv_cq = cq,
    // 32 send and receive WRs, 1 SGE each; ibv_create_qp; lab::check_ptr.
    todo("create_ud_qp", pd, cq);
}

void bring_up(ibv_qp* qp, std::uint8_t port, std::uint32_t qkey, std::uint32_t sq_psn) {
    // TODO: three ibv_modify_qp calls.
    //   INIT: qp_state, pkey_index 0, port_num, qkey
    //         (mask IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)
    //   RTR:  qp_state only
    //   RTS:  qp_state, sq_psn (mask IBV_QP_STATE | IBV_QP_SQ_PSN)
    todo("bring_up", qp, port, qkey, sq_psn);
}

lab::AddressHandle create_ah(ibv_pd* pd, std::uint8_t port, int sgid_index,
                             const ibv_gid& peer_gid) {
    // TODO: ibv_ah_attr with port_num, is_global = 1, grh.dgid = peer_gid,
    // grh.sgid_index, grh.hop_limit (64); ibv_create_ah; lab::check_ptr.
    todo("create_ah", pd, port, sgid_index, peer_gid);
}

void post_ud_receive(ibv_qp* qp, const LocalBuffer& slot, std::uint64_t wr_id) {
    // TODO: refuse a slot of kGrhBytes or less (lab::Error); one SGE over the
    // whole slot; ibv_post_recv.
    todo("post_ud_receive", qp, slot, wr_id);
}

void post_ud_send(ibv_qp* qp, ibv_ah* ah, std::uint32_t remote_qpn, std::uint32_t remote_qkey,
                  const LocalBuffer& message, std::size_t max_payload, std::uint64_t wr_id) {
    // TODO: refuse a message above max_payload with a lab::Error that says
    // "path MTU" and both sizes; then IBV_WR_SEND, signaled, one SGE, and
    // wr.ud.ah / remote_qpn / remote_qkey; ibv_post_send.
    todo("post_ud_send", qp, ah, remote_qpn, remote_qkey, message, max_payload, wr_id);
}

std::span<const std::byte> payload_of(const ibv_wc& wc, std::span<const std::byte> slot) {
    // TODO: the first kGrhBytes of the slot are the GRH; the payload is the
    // next wc.byte_len - kGrhBytes bytes. Refuse a byte_len that does not fit.
    todo("payload_of", wc, slot);
}

}  // namespace ud

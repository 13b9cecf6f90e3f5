// SPDX-License-Identifier: MIT
// Exercise 05, reference solution: the five mistakes fixed, each with the
// error it caused.
#include <infiniband/verbs.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>

#include "connection.hpp"
#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/device.hpp"
#include "lab/verbs.hpp"

namespace fix {

int choose_gid_index(ibv_context* context, std::uint8_t port) {
    // Was: return 3. GID tables differ from machine to machine (rxe on one
    // IPv4 netdev fills two entries); index 3 held no GID, and
    // ibv_modify_qp(INIT->RTR) failed with ENODATA. Choose by type instead.
    return lab::choose_gid(context, port, std::nullopt).index;
}

ibv_mtu choose_path_mtu(ibv_context* context, std::uint8_t port) {
    // Was: IBV_MTU_4096. The path MTU must not exceed the port's active_mtu
    // (1024 on rxe over a 1500-byte netdev): larger packets are dropped on
    // the way, or refused by ibv_modify_qp on hardware.
    return lab::query_port(context, port).active_mtu;
}

int memory_access_flags() {
    // Was: IBV_ACCESS_LOCAL_WRITE only. Without IBV_ACCESS_REMOTE_WRITE the
    // rkey does not allow RDMA writes: the writer's completion says
    // "remote access error".
    return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
}

void connect(Resources& resources, int gid_index, ibv_mtu path_mtu) {
    constexpr int kQpAccess =
        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    lab::move_to_init(resources.qp_a.get(), resources.port, kQpAccess);
    lab::move_to_init(resources.qp_b.get(), resources.port, kQpAccess);

    const ibv_port_attr port = lab::query_port(resources.context.get(), resources.port);
    ibv_gid gid{};
    lab::check(ibv_query_gid(resources.context.get(), resources.port, gid_index, &gid),
               "ibv_query_gid");
    const std::uint32_t psn_a = lab::random_psn();
    const std::uint32_t psn_b = lab::random_psn();
    const lab::PeerAddress address_a{resources.qp_a->qp_num, psn_a, port.lid, gid};
    const lab::PeerAddress address_b{resources.qp_b->qp_num, psn_b, port.lid, gid};
    const lab::LocalPort local{resources.port, gid_index, path_mtu};

    lab::move_to_rtr(resources.qp_a.get(), local, address_b);
    lab::move_to_rtr(resources.qp_b.get(), local, address_a);
    // Was: A started at psn_b and B at psn_a. A QP's sq_psn must be the PSN
    // its peer was told to expect (the peer's rq_psn, set from our address):
    // otherwise the peer drops every packet as out of sequence and the
    // sender ends with "transport retry counter exceeded".
    constexpr std::uint8_t kRnrRetry = 0, kRetryCount = 2, kTimeout = 12;
    lab::move_to_rts(resources.qp_a.get(), psn_a, 16, kRnrRetry, kRetryCount, kTimeout);
    lab::move_to_rts(resources.qp_b.get(), psn_b, 16, kRnrRetry, kRetryCount, kTimeout);
}

std::string send_message(Resources& resources, std::string_view text) {
    const std::size_t length = std::min(text.size(), kBufferSize / 2);
    std::memcpy(resources.memory_a.data(), text.data(), length);
    std::byte* landing = resources.memory_b.data() + kBufferSize / 2;

    // Was: the receive was posted after the send had completed. A SEND
    // consumes a receive the peer posted BEFORE it arrives; with none there
    // (and rnr_retry 0) it ends in "RNR retry counter exceeded".
    ibv_sge receive_sge{reinterpret_cast<std::uint64_t>(landing),
                        static_cast<std::uint32_t>(kBufferSize / 2), resources.mr_b->lkey};
    ibv_recv_wr receive{};
    receive.wr_id = 3;
    receive.sg_list = &receive_sge;
    receive.num_sge = 1;
    ibv_recv_wr* bad_receive = nullptr;
    lab::check(ibv_post_recv(resources.qp_b.get(), &receive, &bad_receive), "ibv_post_recv");

    ibv_sge send_sge{reinterpret_cast<std::uint64_t>(resources.memory_a.data()),
                     static_cast<std::uint32_t>(length), resources.mr_a->lkey};
    ibv_send_wr send{};
    send.wr_id = 2;
    send.opcode = IBV_WR_SEND;
    send.send_flags = IBV_SEND_SIGNALED;
    send.sg_list = &send_sge;
    send.num_sge = 1;
    ibv_send_wr* bad_send = nullptr;
    lab::check(ibv_post_send(resources.qp_a.get(), &send, &bad_send), "ibv_post_send");
    lab::wait_for_completion(resources.cq_a.get(), "SEND A -> B", std::chrono::seconds(5));

    const ibv_wc wc =
        lab::wait_for_completion(resources.cq_b.get(), "RECV on B", std::chrono::seconds(5));
    return {reinterpret_cast<const char*>(landing), wc.byte_len};
}

}  // namespace fix

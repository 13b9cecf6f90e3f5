// SPDX-License-Identifier: MIT
// Exercise 05: the connection code. It compiles, and it is wrong: each
// function below has one classic mistake. Run the program, read the error,
// find the mistake, fix it, run again (README.md explains how to read errors).
#include <infiniband/verbs.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "connection.hpp"
#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/device.hpp"
#include "lab/verbs.hpp"

namespace fix {

int choose_gid_index(ibv_context* context, std::uint8_t port) {
    (void)context;
    (void)port;
    // The GID index that worked on the machine this was first written on.
    return 3;
}

ibv_mtu choose_path_mtu(ibv_context* context, std::uint8_t port) {
    (void)context;
    (void)port;
    // Bigger packets, fewer headers: the fastest MTU there is.
    return IBV_MTU_4096;
}

int memory_access_flags() {
    // The NIC writes received data into our buffers.
    return IBV_ACCESS_LOCAL_WRITE;
}

void connect(Resources& resources, int gid_index, ibv_mtu path_mtu) {
    // The QPs may be written into, read from and sent to by their peer.
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

    // RTR: each QP learns who its peer is and which PSN the peer starts at.
    lab::move_to_rtr(resources.qp_a.get(), local, address_b);
    lab::move_to_rtr(resources.qp_b.get(), local, address_a);
    // RTS: each QP starts sending at its own first PSN. rnr_retry 0, a short
    // timeout and 2 retries make mistakes fail fast instead of retrying for long.
    constexpr std::uint8_t kRnrRetry = 0, kRetryCount = 2, kTimeout = 12;
    lab::move_to_rts(resources.qp_a.get(), psn_b, 16, kRnrRetry, kRetryCount, kTimeout);
    lab::move_to_rts(resources.qp_b.get(), psn_a, 16, kRnrRetry, kRetryCount, kTimeout);
}

std::string send_message(Resources& resources, std::string_view text) {
    const std::size_t length = std::min(text.size(), kBufferSize / 2);
    std::memcpy(resources.memory_a.data(), text.data(), length);
    std::byte* landing = resources.memory_b.data() + kBufferSize / 2;

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

    ibv_sge receive_sge{reinterpret_cast<std::uint64_t>(landing),
                        static_cast<std::uint32_t>(kBufferSize / 2), resources.mr_b->lkey};
    ibv_recv_wr receive{};
    receive.wr_id = 3;
    receive.sg_list = &receive_sge;
    receive.num_sge = 1;
    ibv_recv_wr* bad_receive = nullptr;
    lab::check(ibv_post_recv(resources.qp_b.get(), &receive, &bad_receive), "ibv_post_recv");
    const ibv_wc wc =
        lab::wait_for_completion(resources.cq_b.get(), "RECV on B", std::chrono::seconds(5));
    return {reinterpret_cast<const char*>(landing), wc.byte_len};
}

}  // namespace fix

// SPDX-License-Identifier: MIT
// Exercise 03, the given part. Nothing to change here.
#include <optional>

#include "lab/check.hpp"
#include "srq.hpp"

namespace srq {

Device open(const std::string& device, std::uint8_t port) {
    Device d;
    d.context = lab::open_device(device);
    d.port = port;
    const ibv_port_attr port_attr = lab::query_port(d.context.get(), port);
    const lab::GidChoice gid = lab::choose_gid(d.context.get(), port, std::nullopt);
    d.local = lab::LocalPort{port, gid.index, port_attr.active_mtu};
    d.gid = gid.gid;
    d.pd = lab::alloc_pd(d.context.get());
    return d;
}

void connect_pair(const Device& device, ibv_qp* server_qp, ibv_qp* client_qp) {
    constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE;
    lab::move_to_init(server_qp, device.port, kAccess);
    lab::move_to_init(client_qp, device.port, kAccess);
    const lab::PeerAddress server{server_qp->qp_num, lab::random_psn(), 0, device.gid};
    const lab::PeerAddress client{client_qp->qp_num, lab::random_psn(), 0, device.gid};
    lab::move_to_rtr(server_qp, device.local, client);
    lab::move_to_rtr(client_qp, device.local, server);
    lab::move_to_rts(server_qp, server.psn);
    lab::move_to_rts(client_qp, client.psn);
}

}  // namespace srq

// SPDX-License-Identifier: MIT
// Exercise 05, the given part: creating the resources, the RDMA write, and
// the program's steps in order. Nothing to fix here.
#include <algorithm>
#include <cstring>
#include <span>
#include <string>

#include "connection.hpp"
#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/device.hpp"
#include "lab/verbs.hpp"

namespace fix {

Resources create_resources(const std::string& device, std::uint8_t port) {
    Resources r;
    r.context = lab::open_device(device);
    r.port = port;
    lab::query_port(r.context.get(), port);  // refuses a port the device does not have
    r.pd = lab::alloc_pd(r.context.get());
    // Each QP has a CQ of its own, with an entry for every work request the QP may
    // hold: a completion of each can be waiting at once.
    const lab::QueueSizes sizes;  // 64 sends and 64 receives, one SGE each
    const int entries = int(sizes.send_wr + sizes.recv_wr);
    r.cq_a = lab::create_cq(r.context.get(), entries);
    r.cq_b = lab::create_cq(r.context.get(), entries);
    r.qp_a = lab::create_rc_qp(r.pd.get(), r.cq_a.get(), r.cq_a.get(), sizes);
    r.qp_b = lab::create_rc_qp(r.pd.get(), r.cq_b.get(), r.cq_b.get(), sizes);
    r.memory_a.assign(kBufferSize, std::byte{0});
    r.memory_b.assign(kBufferSize, std::byte{0});
    r.mr_a = lab::register_memory(r.pd.get(), r.memory_a, memory_access_flags());
    r.mr_b = lab::register_memory(r.pd.get(), r.memory_b, memory_access_flags());
    return r;
}

std::string write_greeting(Resources& resources, std::string_view text) {
    const std::size_t length = std::min(text.size(), kBufferSize - 1);
    std::memcpy(resources.memory_a.data(), text.data(), length);
    lab::post_rdma(resources.qp_a.get(), IBV_WR_RDMA_WRITE,
                   std::span(resources.memory_a).first(length), resources.mr_a->lkey,
                   reinterpret_cast<std::uint64_t>(resources.memory_b.data()), resources.mr_b->rkey,
                   IBV_SEND_SIGNALED, 1);
    lab::wait_for_completion(resources.cq_a.get(), "RDMA write A -> B", std::chrono::seconds(5));
    return {reinterpret_cast<const char*>(resources.memory_b.data()), length};
}

void run(const std::string& device, std::uint8_t port, std::ostream& out) {
    Resources resources = create_resources(device, port);
    out << "step 1: opened " << ibv_get_device_name(resources.context->device)
        << ", created PD, CQs, QP A (0x" << std::hex << resources.qp_a->qp_num << ") and QP B (0x"
        << resources.qp_b->qp_num << std::dec << ")" << std::endl;

    const int gid_index = choose_gid_index(resources.context.get(), port);
    const ibv_mtu path_mtu = choose_path_mtu(resources.context.get(), port);
    const ibv_port_attr port_attr = lab::query_port(resources.context.get(), port);
    out << "step 2: GID index " << gid_index << ", path MTU " << lab::mtu_name(path_mtu)
        << " (port " << int{port} << ": active_mtu " << lab::mtu_name(port_attr.active_mtu) << ", "
        << port_attr.gid_tbl_len << " GID table entries)" << std::endl;

    connect(resources, gid_index, path_mtu);
    out << "step 3: both QPs in RTS" << std::endl;

    const std::string written = write_greeting(resources, "hello through RDMA write");
    out << "step 4: B's buffer now holds \"" << written << "\"" << std::endl;

    const std::string received = send_message(resources, "hello through SEND");
    out << "step 5: B received \"" << received << "\"" << std::endl;
    out << "the connection works" << std::endl;
}

}  // namespace fix

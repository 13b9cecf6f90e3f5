// SPDX-License-Identifier: MIT
// Exercise 01, reference solution: zero-copy gather/scatter with several SGEs
// per work request, and the pack-and-copy baseline.
#include <infiniband/verbs.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "lab/check.hpp"
#include "sge.hpp"

namespace sge {

namespace {

constexpr std::size_t kNoPackedBuffer = std::numeric_limits<std::size_t>::max();

// Work request i carries SGEs [i × per_request, (i + 1) × per_request) of @p sges.
std::size_t requests_needed(std::size_t sge_count, std::size_t per_request) {
    return (sge_count + per_request - 1) / per_request;
}

std::span<ibv_sge> request_sges(std::vector<ibv_sge>& sges, std::size_t request,
                                std::size_t per_request) {
    const std::size_t first = request * per_request;
    return std::span(sges).subspan(first, std::min(per_request, sges.size() - first));
}

// One-sided requests (RDMA WRITE or READ) over the blocks of @p local_buffer;
// the remote side is packed, so request i starts where request i - 1 ended.
// A READ takes at most max_sge_rd SGEs, which may be fewer than max_send_sge.
void post_one_sided(const Endpoint& local, const Layout& layout, const LocalBuffer& local_buffer,
                    const RemoteBuffer& remote, ibv_wr_opcode opcode, std::string_view what) {
    std::vector<ibv_sge> sges = block_sges(layout, local_buffer);
    std::uint32_t limit = local.limits.max_send_sge;
    if (opcode == IBV_WR_RDMA_READ) {
        limit = std::min(limit, local.max_sge_rd);
    }
    const std::size_t per_request = std::max<std::uint32_t>(1, limit);
    std::vector<ibv_send_wr> wrs(requests_needed(sges.size(), per_request));
    std::uint64_t remote_addr = remote.addr;
    for (std::size_t i = 0; i < wrs.size(); ++i) {
        const std::span<ibv_sge> part = request_sges(sges, i, per_request);
        wrs[i].wr_id = i;
        wrs[i].opcode = opcode;
        wrs[i].sg_list = part.data();
        wrs[i].num_sge = static_cast<int>(part.size());
        wrs[i].wr.rdma.remote_addr = remote_addr;
        wrs[i].wr.rdma.rkey = remote.rkey;
        remote_addr += total_length(part);
    }
    post_sends_and_wait(local, wrs, what);
}

ibv_sge whole(const LocalBuffer& buffer, std::size_t length) {
    return ibv_sge{reinterpret_cast<std::uint64_t>(buffer.bytes.data()),
                   static_cast<std::uint32_t>(length), buffer.lkey};
}

void post_one_sge(const Endpoint& local, ibv_wr_opcode opcode, ibv_sge sge,
                  const RemoteBuffer& remote, std::string_view what) {
    ibv_send_wr wr{};
    wr.opcode = opcode;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.wr.rdma.remote_addr = remote.addr;
    wr.wr.rdma.rkey = remote.rkey;
    post_sends_and_wait(local, std::span(&wr, 1), what);
}

}  // namespace

QueueLimits query_limits(ibv_qp* qp) {
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    lab::check(ibv_query_qp(qp, &attr, IBV_QP_CAP, &init), "ibv_query_qp");
    return QueueLimits{init.cap.max_send_wr, init.cap.max_recv_wr, init.cap.max_send_sge,
                       init.cap.max_recv_sge};
}

std::vector<ibv_sge> block_sges(const Layout& layout, const LocalBuffer& buffer) {
    validate_layout(layout, buffer.bytes.size(), kNoPackedBuffer, "block_sges");
    std::vector<ibv_sge> sges(layout.block_num);
    for (std::size_t i = 0; i < layout.block_num; ++i) {
        sges[i].addr = reinterpret_cast<std::uint64_t>(buffer.bytes.data() + i * layout.stride);
        sges[i].length = static_cast<std::uint32_t>(layout.block_size);
        sges[i].lkey = buffer.lkey;
    }
    return sges;
}

void pack(const Layout& layout, std::span<const std::byte> strided, std::span<std::byte> packed) {
    validate_layout(layout, strided.size(), packed.size(), "pack");
    for (std::size_t i = 0; i < layout.block_num; ++i) {
        std::memcpy(packed.data() + i * layout.block_size, strided.data() + i * layout.stride,
                    layout.block_size);
    }
}

void unpack(const Layout& layout, std::span<const std::byte> packed, std::span<std::byte> strided) {
    validate_layout(layout, strided.size(), packed.size(), "unpack");
    for (std::size_t i = 0; i < layout.block_num; ++i) {
        std::memcpy(strided.data() + i * layout.stride, packed.data() + i * layout.block_size,
                    layout.block_size);
    }
}

void gather_write(const Endpoint& local, const Layout& layout, const LocalBuffer& source,
                  const RemoteBuffer& target) {
    validate_layout(layout, source.bytes.size(), target.length, "gather_write");
    post_one_sided(local, layout, source, target, IBV_WR_RDMA_WRITE, "gather-WRITE");
}

void scatter_read(const Endpoint& local, const Layout& layout, const LocalBuffer& destination,
                  const RemoteBuffer& source) {
    validate_layout(layout, destination.bytes.size(), source.length, "scatter_read");
    post_one_sided(local, layout, destination, source, IBV_WR_RDMA_READ, "scatter-READ");
}

void gather_send_scatter_recv(const Endpoint& sender, const LocalBuffer& source,
                              const Endpoint& receiver, const LocalBuffer& destination,
                              const Layout& layout) {
    validate_layout(layout, source.bytes.size(), kNoPackedBuffer, "gather_send_scatter_recv");
    validate_layout(layout, destination.bytes.size(), kNoPackedBuffer, "gather_send_scatter_recv");
    std::vector<ibv_sge> send_sges = block_sges(layout, source);
    std::vector<ibv_sge> receive_sges = block_sges(layout, destination);
    // Send i must fit receive i exactly, so both sides split at the smaller limit.
    const std::size_t per_message = std::max<std::uint32_t>(
        1, std::min(sender.limits.max_send_sge, receiver.limits.max_recv_sge));
    const std::size_t messages = requests_needed(send_sges.size(), per_message);
    std::vector<ibv_send_wr> sends(messages);
    std::vector<ibv_recv_wr> receives(messages);
    for (std::size_t i = 0; i < messages; ++i) {
        const std::span<ibv_sge> send_part = request_sges(send_sges, i, per_message);
        const std::span<ibv_sge> receive_part = request_sges(receive_sges, i, per_message);
        sends[i].opcode = IBV_WR_SEND;
        sends[i].sg_list = send_part.data();
        sends[i].num_sge = static_cast<int>(send_part.size());
        receives[i].sg_list = receive_part.data();
        receives[i].num_sge = static_cast<int>(receive_part.size());
    }
    transfer_messages(sender, sends, receiver, receives);
}

void copy_write(const Endpoint& local, const Layout& layout, const LocalBuffer& source,
                const LocalBuffer& staging, const RemoteBuffer& target) {
    validate_layout(layout, source.bytes.size(), staging.bytes.size(), "copy_write");
    validate_layout(layout, source.bytes.size(), target.length, "copy_write");
    pack(layout, source.bytes, staging.bytes);
    post_one_sge(local, IBV_WR_RDMA_WRITE, whole(staging, layout.payload_bytes()), target,
                 "packed WRITE");
}

void read_copy(const Endpoint& local, const Layout& layout, const LocalBuffer& destination,
               const LocalBuffer& staging, const RemoteBuffer& source) {
    validate_layout(layout, destination.bytes.size(), staging.bytes.size(), "read_copy");
    validate_layout(layout, destination.bytes.size(), source.length, "read_copy");
    post_one_sge(local, IBV_WR_RDMA_READ, whole(staging, layout.payload_bytes()), source,
                 "packed READ");
    unpack(layout, staging.bytes, destination.bytes);
}

void copy_send_recv(const Endpoint& sender, const LocalBuffer& source,
                    const LocalBuffer& send_staging, const Endpoint& receiver,
                    const LocalBuffer& receive_staging, const LocalBuffer& destination,
                    const Layout& layout) {
    validate_layout(layout, source.bytes.size(), send_staging.bytes.size(), "copy_send_recv");
    validate_layout(layout, destination.bytes.size(), receive_staging.bytes.size(),
                    "copy_send_recv");
    pack(layout, source.bytes, send_staging.bytes);
    ibv_sge send_sge = whole(send_staging, layout.payload_bytes());
    ibv_sge receive_sge = whole(receive_staging, layout.payload_bytes());
    ibv_send_wr send{};
    send.opcode = IBV_WR_SEND;
    send.sg_list = &send_sge;
    send.num_sge = 1;
    ibv_recv_wr receive{};
    receive.sg_list = &receive_sge;
    receive.num_sge = 1;
    transfer_messages(sender, std::span(&send, 1), receiver, std::span(&receive, 1));
    unpack(layout, receive_staging.bytes, destination.bytes);
}

}  // namespace sge

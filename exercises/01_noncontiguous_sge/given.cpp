// SPDX-License-Identifier: MIT
// Exercise 01, the given part: layouts, posting and waiting, and a loopback
// pair of connected QPs. Nothing to change here; read it, you will call it.
#include <infiniband/verbs.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/device.hpp"
#include "lab/verbs.hpp"
#include "sge.hpp"

namespace sge {

namespace {

std::string bytes_text(std::size_t bytes) {
    if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) {
        return std::to_string(bytes >> 20) + " MiB";
    }
    if (bytes >= 1024 && bytes % 1024 == 0) {
        return std::to_string(bytes >> 10) + " KiB";
    }
    return std::to_string(bytes) + " B";
}

[[noreturn]] void refuse(std::string_view what, const Layout& layout, const std::string& problem) {
    throw lab::Error(std::string(what) + ": bad layout (" + describe(layout) + "): " + problem);
}

// Wait for @p count successful completions on @p cq.
void wait_for(ibv_cq* cq, std::size_t count, std::string_view what) {
    for (std::size_t done = 0; done < count; ++done) {
        lab::wait_for_completion(cq, what);
    }
}

void tally(const ibv_send_wr& wr) {
    PostCounters& counters = post_counters();
    counters.send_requests += 1;
    counters.send_sges += static_cast<std::size_t>(wr.num_sge);
    counters.largest_num_sge =
        std::max(counters.largest_num_sge, static_cast<std::size_t>(wr.num_sge));
}

void tally(const ibv_recv_wr& wr) {
    PostCounters& counters = post_counters();
    counters.receive_requests += 1;
    counters.receive_sges += static_cast<std::size_t>(wr.num_sge);
    counters.largest_num_sge =
        std::max(counters.largest_num_sge, static_cast<std::size_t>(wr.num_sge));
}

}  // namespace

PostCounters& post_counters() {
    static PostCounters counters;
    return counters;
}

std::string describe(const Layout& layout) {
    return std::to_string(layout.block_num) +
           (layout.block_num == 1 ? " block of " : " blocks of ") + bytes_text(layout.block_size) +
           " every " + bytes_text(layout.stride);
}

void validate_layout(const Layout& layout, std::size_t strided_bytes, std::size_t packed_bytes,
                     std::string_view what) {
    constexpr auto kMax = std::numeric_limits<std::size_t>::max();
    if (layout.block_size == 0) {
        refuse(what, layout, "block_size is 0; every block needs at least one byte");
    }
    if (layout.block_num == 0) {
        refuse(what, layout, "block_num is 0; there is nothing to transfer");
    }
    if (layout.stride < layout.block_size) {
        refuse(what, layout,
               "stride " + std::to_string(layout.stride) + " is smaller than block_size " +
                   std::to_string(layout.block_size) + ", so the blocks would overlap");
    }
    if (layout.block_size > std::numeric_limits<std::uint32_t>::max()) {
        refuse(what, layout,
               "a block is larger than one SGE can describe (ibv_sge::length is 32 bits)");
    }
    if (layout.block_num > kMax / layout.stride || layout.block_num > kMax / layout.block_size) {
        refuse(what, layout, "the sizes overflow");
    }
    if (layout.extent_bytes() > strided_bytes) {
        refuse(what, layout,
               "the blocks span " + std::to_string(layout.extent_bytes()) +
                   " bytes but the strided buffer has " + std::to_string(strided_bytes));
    }
    if (layout.payload_bytes() > packed_bytes) {
        refuse(what, layout,
               "the payload is " + std::to_string(layout.payload_bytes()) +
                   " bytes but the packed buffer has " + std::to_string(packed_bytes));
    }
}

std::size_t total_length(std::span<const ibv_sge> sges) {
    std::size_t total = 0;
    for (const ibv_sge& sge : sges) {
        total += sge.length;
    }
    return total;
}

void post_sends_and_wait(const Endpoint& endpoint, std::span<ibv_send_wr> wrs,
                         std::string_view what) {
    const std::size_t window = std::max<std::size_t>(1, endpoint.limits.max_send_wr);
    for (std::size_t first = 0; first < wrs.size(); first += window) {
        const std::size_t count = std::min(window, wrs.size() - first);
        for (std::size_t i = first; i < first + count; ++i) {
            wrs[i].send_flags |= IBV_SEND_SIGNALED;
            wrs[i].next = i + 1 < first + count ? &wrs[i + 1] : nullptr;
            tally(wrs[i]);
        }
        ibv_send_wr* bad_wr = nullptr;
        lab::check(ibv_post_send(endpoint.qp, &wrs[first], &bad_wr), "ibv_post_send",
                   "is num_sge above max_send_sge, or the send queue full?");
        wait_for(endpoint.cq, count, what);
    }
}

void transfer_messages(const Endpoint& sender, std::span<ibv_send_wr> sends,
                       const Endpoint& receiver, std::span<ibv_recv_wr> receives) {
    if (sends.size() != receives.size()) {
        throw lab::Error("transfer_messages: " + std::to_string(sends.size()) + " sends but " +
                         std::to_string(receives.size()) + " receives");
    }
    const std::size_t window =
        std::max<std::size_t>(1, std::min(sender.limits.max_send_wr, receiver.limits.max_recv_wr));
    for (std::size_t first = 0; first < sends.size(); first += window) {
        const std::size_t count = std::min(window, sends.size() - first);
        for (std::size_t i = first; i < first + count; ++i) {
            receives[i].wr_id = i;
            receives[i].next = i + 1 < first + count ? &receives[i + 1] : nullptr;
            sends[i].wr_id = i;
            sends[i].opcode = IBV_WR_SEND;
            sends[i].send_flags |= IBV_SEND_SIGNALED;
            sends[i].next = i + 1 < first + count ? &sends[i + 1] : nullptr;
            tally(sends[i]);
            tally(receives[i]);
        }
        ibv_recv_wr* bad_receive = nullptr;
        lab::check(ibv_post_recv(receiver.qp, &receives[first], &bad_receive), "ibv_post_recv",
                   "is num_sge above max_recv_sge, or the receive queue full?");
        ibv_send_wr* bad_send = nullptr;
        lab::check(ibv_post_send(sender.qp, &sends[first], &bad_send), "ibv_post_send",
                   "is num_sge above max_send_sge, or the send queue full?");
        if (sender.cq == receiver.cq) {
            wait_for(sender.cq, 2 * count, "gather-SEND/scatter-RECV");
            continue;
        }
        wait_for(sender.cq, count, "SEND");
        for (std::size_t done = 0; done < count; ++done) {
            const ibv_wc wc = lab::wait_for_completion(receiver.cq, "RECV");
            const ibv_send_wr& send = sends[wc.wr_id];
            const std::size_t sent =
                total_length({send.sg_list, static_cast<std::size_t>(send.num_sge)});
            if (wc.byte_len != sent) {
                throw lab::Error("receive " + std::to_string(wc.wr_id) + " got " +
                                 std::to_string(wc.byte_len) + " bytes, its send carried " +
                                 std::to_string(sent));
            }
        }
    }
}

Loopback::Loopback(const LoopbackOptions& options) : context_(lab::open_device(options.device)) {
    lab::check(ibv_query_device(context_.get(), &device_attr_), "ibv_query_device");
    const ibv_port_attr port = lab::query_port(context_.get(), options.port);
    const lab::GidChoice gid = lab::choose_gid(context_.get(), options.port, options.gid_index);

    pd_ = lab::alloc_pd(context_.get());
    const int cq_entries = static_cast<int>(2 * options.queue_depth + 16);
    cq_a_ = lab::create_cq(context_.get(), cq_entries);
    cq_b_ = lab::create_cq(context_.get(), cq_entries);

    lab::QueueSizes sizes;
    sizes.send_wr = options.queue_depth;
    sizes.recv_wr = options.queue_depth;
    const auto sge_count = options.sge_count != 0
                               ? options.sge_count
                               : static_cast<std::uint32_t>(device_attr_.max_sge);
    sizes.send_sge = sge_count;
    sizes.recv_sge = sge_count;
    qp_a_ = lab::create_rc_qp(pd_.get(), cq_a_.get(), cq_a_.get(), sizes);
    qp_b_ = lab::create_rc_qp(pd_.get(), cq_b_.get(), cq_b_.get(), sizes);

    constexpr int kAccess =
        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    lab::move_to_init(qp_a_.get(), options.port, kAccess);
    lab::move_to_init(qp_b_.get(), options.port, kAccess);

    const lab::LocalPort local{options.port, gid.index, port.active_mtu};
    const lab::PeerAddress address_a{qp_a_->qp_num, lab::random_psn(), port.lid, gid.gid};
    const lab::PeerAddress address_b{qp_b_->qp_num, lab::random_psn(), port.lid, gid.gid};
    lab::move_to_rtr(qp_a_.get(), local, address_b);
    lab::move_to_rtr(qp_b_.get(), local, address_a);
    lab::move_to_rts(qp_a_.get(), address_a.psn);
    lab::move_to_rts(qp_b_.get(), address_b.psn);

    const QueueLimits limits{sizes.send_wr, sizes.recv_wr, sizes.send_sge, sizes.recv_sge};
    const auto read_sge = static_cast<std::uint32_t>(device_attr_.max_sge_rd);
    a_ = Endpoint{qp_a_.get(), cq_a_.get(), limits, read_sge};
    b_ = Endpoint{qp_b_.get(), cq_b_.get(), limits, read_sge};
}

lab::MemoryRegion Loopback::register_buffer(std::span<std::byte> bytes) {
    return lab::register_memory(
        pd_.get(), bytes,
        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
}

RemoteBuffer as_remote(const ibv_mr* mr) {
    return RemoteBuffer{reinterpret_cast<std::uint64_t>(mr->addr), mr->rkey, mr->length};
}

LocalBuffer as_local(const ibv_mr* mr) {
    return LocalBuffer{{static_cast<std::byte*>(mr->addr), mr->length}, mr->lkey};
}

}  // namespace sge

// SPDX-License-Identifier: MIT
// Exercise 04, the given part: the loopback connection, the receiver that
// checks every message, and the counted ibv_post_send. Nothing to change here.
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "lab/check.hpp"
#include "lab/device.hpp"
#include "lab/verbs.hpp"
#include "throughput.hpp"

namespace tp {

Counters& counters() {
    static Counters counters;
    return counters;
}

void post_list(ibv_qp* qp, ibv_send_wr* first) {
    Counters& c = counters();
    std::size_t length = 0;
    for (const ibv_send_wr* wr = first; wr != nullptr; wr = wr->next) {
        ++length;
        c.inline_requests += (wr->send_flags & IBV_SEND_INLINE) != 0 ? 1 : 0;
        c.signaled_requests += (wr->send_flags & IBV_SEND_SIGNALED) != 0 ? 1 : 0;
    }
    c.lists += 1;
    c.requests += length;
    c.longest_list = std::max(c.longest_list, length);
    ibv_send_wr* bad_wr = nullptr;
    lab::check(ibv_post_send(qp, first, &bad_wr), "ibv_post_send",
               "is the send queue full (more than max_send_wr outstanding) or the inline data "
               "above max_inline_data?");
}

Pair::Pair(const std::string& device, std::uint32_t inline_bytes)
    : context_(lab::open_device(device)),
      send_memory_(kSendDepth * kMaxMessage),
      receive_memory_(kReceiveDepth * kMaxMessage) {
    const ibv_port_attr port = lab::query_port(context_.get(), 1);
    const lab::GidChoice gid = lab::choose_gid(context_.get(), 1, std::nullopt);
    pd_ = lab::alloc_pd(context_.get());
    // Each CQ has an entry for every slot of its QP (lesson 03): A sends, B receives.
    cq_a_ = lab::create_cq(context_.get(), kSendDepth + 1);
    cq_b_ = lab::create_cq(context_.get(), kReceiveDepth + 1);
    lab::QueueSizes send_sizes;
    send_sizes.send_wr = kSendDepth;
    send_sizes.recv_wr = 1;
    send_sizes.inline_data = inline_bytes;
    lab::QueueSizes receive_sizes;
    receive_sizes.send_wr = 1;
    receive_sizes.recv_wr = kReceiveDepth;
    qp_a_ = lab::create_rc_qp(pd_.get(), cq_a_.get(), cq_a_.get(), send_sizes);
    qp_b_ = lab::create_rc_qp(pd_.get(), cq_b_.get(), cq_b_.get(), receive_sizes);
    send_mr_ = lab::register_memory(pd_.get(), send_memory_, IBV_ACCESS_LOCAL_WRITE);
    receive_mr_ = lab::register_memory(pd_.get(), receive_memory_, IBV_ACCESS_LOCAL_WRITE);
    lab::move_to_init(qp_a_.get(), 1, 0);
    lab::move_to_init(qp_b_.get(), 1, 0);
    const lab::LocalPort local{1, gid.index, port.active_mtu};
    const lab::PeerAddress a{qp_a_->qp_num, lab::random_psn(), port.lid, gid.gid};
    const lab::PeerAddress b{qp_b_->qp_num, lab::random_psn(), port.lid, gid.gid};
    lab::move_to_rtr(qp_a_.get(), local, b);
    lab::move_to_rtr(qp_b_.get(), local, a);
    lab::move_to_rts(qp_a_.get(), a.psn);
    lab::move_to_rts(qp_b_.get(), b.psn);
    for (std::size_t slot = 0; slot < kReceiveDepth; ++slot) {
        post_receive(slot);
    }
}

void Pair::post_receive(std::size_t slot) {
    ibv_sge sge{reinterpret_cast<std::uint64_t>(receive_memory_.data() + slot * kMaxMessage),
                static_cast<std::uint32_t>(kMaxMessage), receive_mr_->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = slot;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad_wr = nullptr;
    lab::check(ibv_post_recv(qp_b_.get(), &wr, &bad_wr), "ibv_post_recv");
}

void Pair::stamp(std::byte* message, std::uint64_t sequence) {
    std::memcpy(message, &sequence, sizeof sequence);
}

void Pair::keep_receiving() {
    ibv_wc wcs[32];
    const int found = ibv_poll_cq(cq_b_.get(), 32, wcs);
    if (found < 0) {
        throw lab::Error("ibv_poll_cq on the receiver failed (CQ overrun?)");
    }
    for (int i = 0; i < found; ++i) {
        const ibv_wc& wc = wcs[i];
        std::uint64_t sequence = 0;
        std::memcpy(&sequence, receive_memory_.data() + wc.wr_id * kMaxMessage, sizeof sequence);
        if (receive_error_.empty()) {
            if (wc.status != IBV_WC_SUCCESS) {
                receive_error_ = std::string("receive failed: ") + ibv_wc_status_str(wc.status);
            } else if (sequence != received_) {
                receive_error_ = "message " + std::to_string(received_) + " carried the number " +
                                 std::to_string(sequence);
            } else if (wc.byte_len != expected_size_) {
                receive_error_ = "message " + std::to_string(received_) + " had " +
                                 std::to_string(wc.byte_len) + " bytes, not " +
                                 std::to_string(expected_size_);
            }
        }
        ++received_;
        received_bytes_ += wc.byte_len;
        if (wc.status == IBV_WC_SUCCESS) {
            post_receive(wc.wr_id);
        }
    }
}

}  // namespace tp

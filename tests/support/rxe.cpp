// SPDX-License-Identifier: MIT
#include "support/rxe.hpp"

#include <poll.h>
#include <sys/utsname.h>

#include "lab/check.hpp"
#include "lab/options.hpp"
#include "lab/verbs.hpp"
#include "support/catch.hpp"

namespace lab::test {

namespace {

constexpr std::uint32_t kPsnA = 0x1000;
constexpr std::uint32_t kPsnB = 0x2000;

lab::QueuePair create_qp(ibv_pd* pd, ibv_cq* cq, ibv_qp_type type) {
    if (type == IBV_QPT_RC) {
        return lab::create_rc_qp(pd, cq, cq, {});
    }
    ibv_qp_init_attr init{};
    init.send_cq = cq;
    init.recv_cq = cq;
    init.qp_type = type;
    init.cap.max_send_wr = 64;
    init.cap.max_recv_wr = 64;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    return lab::QueuePair(lab::check_ptr(ibv_create_qp(pd, &init), "ibv_create_qp"));
}

// INIT -> RTR -> RTS of @p qp towards @p peer. RC through the course's own
// calls (lesson 04); UC takes fewer attributes: no RNR, retries or reads.
void connect(ibv_qp* qp, const lab::Port& port, ibv_qp* peer, std::uint32_t my_psn,
             std::uint32_t peer_psn, std::uint8_t rnr_retry) {
    const lab::PeerAddress address{peer->qp_num, peer_psn, port.attr.lid, port.gid.gid};
    if (qp->qp_type == IBV_QPT_RC) {
        lab::move_to_rtr(qp, port.local(), address);
        lab::move_to_rts(qp, my_psn, 16, rnr_retry);
        return;
    }
    ibv_qp_attr rtr{};
    rtr.qp_state = IBV_QPS_RTR;
    rtr.path_mtu = port.attr.active_mtu;
    rtr.dest_qp_num = address.qp_num;
    rtr.rq_psn = address.psn;
    rtr.ah_attr.is_global = 1;
    rtr.ah_attr.grh.dgid = address.gid;
    rtr.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(port.gid.index);
    rtr.ah_attr.grh.hop_limit = 64;
    rtr.ah_attr.port_num = port.number;
    lab::check(
        ibv_modify_qp(qp, &rtr,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN),
        "ibv_modify_qp(UC INIT->RTR)");
    ibv_qp_attr rts{};
    rts.qp_state = IBV_QPS_RTS;
    rts.sq_psn = my_psn;
    lab::check(ibv_modify_qp(qp, &rts, IBV_QP_STATE | IBV_QP_SQ_PSN), "ibv_modify_qp(UC RTR->RTS)");
}

lab::Port open_first_port(const std::string& device) {
    lab::Options options;
    options.device = device;
    return lab::open_port(options);
}

}  // namespace

std::string kernel_series() {
    utsname system{};
    REQUIRE(uname(&system) == 0);
    const std::string release = system.release;
    for (const char* series : {"6.1", "6.12"}) {
        if (release.rfind(std::string(series) + ".", 0) == 0) {
            return series;
        }
    }
    return release;
}

LoopbackPair::LoopbackPair(const PairSetup& setup)
    : port(open_first_port(setup.device)),
      pd(lab::alloc_pd(port.context.get())),
      memory(64 * 1024),
      mr(lab::register_memory(pd.get(), memory, setup.region_access)),
      channel(setup.channel
                  ? lab::CompletionChannel(lab::check_ptr(
                        ibv_create_comp_channel(port.context.get()), "ibv_create_comp_channel"))
                  : lab::CompletionChannel()),
      cq_a(lab::create_cq(port.context.get(), 256, channel.get())),
      cq_b(lab::create_cq(port.context.get(), 256, channel.get())),
      a(create_qp(pd.get(), cq_a.get(), setup.type)),
      b(create_qp(pd.get(), cq_b.get(), setup.type)) {
    // UC knows no remote read (and no atomics): grant only what the type has.
    const int allowed = setup.type == IBV_QPT_RC ? kAllAccess : IBV_ACCESS_REMOTE_WRITE;
    lab::move_to_init(a.get(), port.number, kAllAccess & allowed);
    lab::move_to_init(b.get(), port.number, setup.access_b & allowed);
    connect(a.get(), port, b.get(), kPsnA, kPsnB, setup.rnr_retry);
    connect(b.get(), port, a.get(), kPsnB, kPsnA, setup.rnr_retry);
}

std::uint64_t LoopbackPair::address(std::size_t offset) const {
    return reinterpret_cast<std::uintptr_t>(memory.data() + offset);
}

std::vector<ibv_wc> poll_completions(ibv_cq* cq, std::size_t count,
                                     std::chrono::milliseconds timeout) {
    std::vector<ibv_wc> found;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (found.size() < count && std::chrono::steady_clock::now() < deadline) {
        ibv_wc wc{};
        const int polled = ibv_poll_cq(cq, 1, &wc);
        REQUIRE(polled >= 0);
        if (polled == 1) {
            found.push_back(wc);
        }
    }
    return found;
}

ibv_qp_attr query_qp(ibv_qp* qp, int mask) {
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    REQUIRE(ibv_query_qp(qp, &attr, mask, &init) == 0);
    return attr;
}

ibv_qp_state state_of(ibv_qp* qp) {
    return query_qp(qp, IBV_QP_STATE).qp_state;
}

std::optional<AsyncEvent> next_async_event(ibv_context* context,
                                           std::chrono::milliseconds timeout) {
    pollfd descriptor{context->async_fd, POLLIN, 0};
    const int ready = poll(&descriptor, 1, static_cast<int>(timeout.count()));
    REQUIRE(ready >= 0);
    if (ready == 0) {
        return std::nullopt;
    }
    ibv_async_event event{};
    REQUIRE(ibv_get_async_event(context, &event) == 0);
    AsyncEvent seen{event.event_type};
    switch (event.event_type) {
        case IBV_EVENT_SQ_DRAINED:
        case IBV_EVENT_QP_LAST_WQE_REACHED:
        case IBV_EVENT_QP_FATAL:
        case IBV_EVENT_QP_REQ_ERR:
        case IBV_EVENT_QP_ACCESS_ERR:
        case IBV_EVENT_COMM_EST:
        case IBV_EVENT_PATH_MIG:
        case IBV_EVENT_PATH_MIG_ERR:
            seen.qp_num = event.element.qp->qp_num;
            break;
        default:
            break;
    }
    ibv_ack_async_event(&event);
    return seen;
}

ibv_cq* next_cq_event(ibv_comp_channel* channel, std::chrono::milliseconds timeout) {
    pollfd descriptor{channel->fd, POLLIN, 0};
    const int ready = poll(&descriptor, 1, static_cast<int>(timeout.count()));
    REQUIRE(ready >= 0);
    if (ready == 0) {
        return nullptr;
    }
    ibv_cq* cq = nullptr;
    void* cq_context = nullptr;
    REQUIRE(ibv_get_cq_event(channel, &cq, &cq_context) == 0);
    ibv_ack_cq_events(cq, 1);
    return cq;
}

}  // namespace lab::test

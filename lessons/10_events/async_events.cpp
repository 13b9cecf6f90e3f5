// SPDX-License-Identifier: MIT
// Lesson 10, variant: the device's asynchronous events.
//
// Completions are not the only thing a device reports. Events that belong to
// no work request (a port going down or up, a send queue drained, an SRQ
// running low, a QP broken beyond its own completions) arrive on a second file
// descriptor per device context: context->async_fd. We read them the way
// lesson 10 reads completion events: poll() on the descriptor with a timeout,
// then ibv_get_async_event (which would block without the poll()), then
// ibv_ack_async_event for every event read, or destroying the QP, SRQ or CQ
// it names waits for ever.
//
// The program makes each event happen with two RC QPs of its own, connected to
// each other on one port (lesson 04's loopback): the receiver takes its
// receives from an SRQ.
//   1. SRQ limit: arm the SRQ at 2 receives left; three sends use three of the
//      four posted -> IBV_EVENT_SRQ_LIMIT_REACHED (the SRQ is disarmed).
//   2. SQ drained: move the sender RTS -> SQD asking for a notice ->
//      IBV_EVENT_SQ_DRAINED; then SQD -> RTS, and it sends again.
//   3. A fault: an RDMA write with a wrong rkey. The requester's completion is
//      IBV_WC_REM_ACCESS_ERR, both QPs end in ERR; the program prints which
//      asynchronous events, if any, the device raised for it.
//   4. With --port-events SECONDS: wait that long for IBV_EVENT_PORT_ERR and
//      IBV_EVENT_PORT_ACTIVE while you set the netdev under rxe down and up
//      (ip link set lab0 down; ip link set lab0 up, as root, in another shell).
//
// Run:   ./lab run 10_events/async_events [--port-events 30] [-d DEV] [-i PORT] [-g GID]

#include <infiniband/verbs.h>
#include <poll.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/device.hpp"
#include "lab/options.hpp"
#include "lab/verbs.hpp"
#include "lab/wait.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// The object an event is about, as ibv_get_async_event(3) lists them.
std::string about(const ibv_async_event& event) {
    switch (event.event_type) {
        case IBV_EVENT_PORT_ACTIVE:
        case IBV_EVENT_PORT_ERR:
        case IBV_EVENT_LID_CHANGE:
        case IBV_EVENT_PKEY_CHANGE:
        case IBV_EVENT_GID_CHANGE:
        case IBV_EVENT_SM_CHANGE:
        case IBV_EVENT_CLIENT_REREGISTER:
            return "port " + std::to_string(event.element.port_num);
        case IBV_EVENT_SRQ_ERR:
        case IBV_EVENT_SRQ_LIMIT_REACHED:
            return "the SRQ";
        case IBV_EVENT_CQ_ERR:
            return "a CQ";
        case IBV_EVENT_DEVICE_FATAL:
            return "the device";
        case IBV_EVENT_WQ_FATAL:  // element.wq: a work queue, not a QP
            return "a WQ";
        case IBV_EVENT_COMM_EST:
        case IBV_EVENT_SQ_DRAINED:
        case IBV_EVENT_PATH_MIG:
        case IBV_EVENT_PATH_MIG_ERR:
        case IBV_EVENT_QP_FATAL:
        case IBV_EVENT_QP_REQ_ERR:
        case IBV_EVENT_QP_ACCESS_ERR:
        case IBV_EVENT_QP_LAST_WQE_REACHED: {
            char qp[24];
            std::snprintf(qp, sizeof qp, "QP 0x%x", event.element.qp->qp_num);
            return qp;
        }
    }
    return "an object this libibverbs does not list";  // a newer event type: no element we know
}

// Read one asynchronous event within @p timeout; nothing when none came.
// The event is acknowledged before we return: we copy what we print.
// (lab::Deadline polls again when a signal interrupts poll(2) with EINTR.)
std::optional<ibv_event_type> next_event(ibv_context* context, std::chrono::milliseconds timeout) {
    if (!lab::Deadline(timeout).wait_until_ready(context->async_fd, POLLIN)) {
        return std::nullopt;
    }
    ibv_async_event event{};
    lab::check(ibv_get_async_event(context, &event), "ibv_get_async_event");
    std::printf("  async event: %s on %s\n", ibv_event_type_str(event.event_type),
                about(event).c_str());
    const ibv_event_type type = event.event_type;
    ibv_ack_async_event(&event);
    return type;
}

// Wait for @p wanted, printing whatever else comes first; fail at the deadline.
void expect_event(ibv_context* context, ibv_event_type wanted, std::chrono::milliseconds timeout,
                  const char* hint) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (next_event(context, left) == wanted) {
            return;
        }
    }
    throw lab::Error(std::string("no ") + ibv_event_type_str(wanted) + " within " +
                     std::to_string(timeout.count() / 1000) + " s (hint: " + hint + ")");
}

// A send and the receive it consumed share the one CQ, and may complete in
// either order: each completion is told apart by its opcode, not by its place.
void wait_for_send_and_receive(ibv_cq* cq, const std::string& what,
                               std::chrono::milliseconds timeout) {
    int sends = 0;
    int receives = 0;
    for (int i = 0; i < 2; ++i) {
        const ibv_wc wc = lab::wait_for_completion(cq, what, timeout);
        if (wc.opcode == IBV_WC_SEND) {
            ++sends;
        } else if (wc.opcode == IBV_WC_RECV) {
            ++receives;
        }
    }
    if (sends != 1 || receives != 1) {
        throw lab::Error(what + ": expected one send and one receive completion, got " +
                         std::to_string(sends) + " and " + std::to_string(receives) +
                         " (hint: does another work request share this CQ?)");
    }
}

void modify_state(ibv_qp* qp, ibv_qp_state state, bool notify_when_drained) {
    ibv_qp_attr attr{};
    attr.qp_state = state;
    attr.en_sqd_async_notify = notify_when_drained ? 1 : 0;
    const int mask = IBV_QP_STATE | (notify_when_drained ? IBV_QP_EN_SQD_ASYNC_NOTIFY : 0);
    lab::check(ibv_modify_qp(qp, &attr, mask),
               std::string("ibv_modify_qp(") + lab::qp_state_name(state) + ")",
               "SQD is entered from RTS only, and left for RTS once drained");
}

ibv_qp_state state_of(ibv_qp* qp) {
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    lab::check(ibv_query_qp(qp, &attr, IBV_QP_STATE, &init), "ibv_query_qp");
    return attr.qp_state;
}

}  // namespace

int main(int argc, char** argv) {
    lab::CommandLine command_line("Lesson 10 variant: the device's asynchronous events",
                                  lab::kDevice | lab::kTimeout);
    int port_event_seconds = 0;
    command_line.option("--port-events", port_event_seconds,
                        "also wait this long for the port to go down and up",
                        {.min = 0, .max = 3600});
    const lab::Options options = command_line.parse(argc, argv);

    return lab::run_main([&] {
        // Steps 1-3 (lesson 01): the device context owns async_fd.
        const lab::Port port = lab::open_port(options);
        ibv_context* context = port.context.get();
        std::printf("Step 1-3: %s port %u, async_fd %d\n", ibv_get_device_name(context->device),
                    port.number, context->async_fd);

        // Steps 4-7 (lessons 02-04): PD, memory, CQ, an SRQ and two RC QPs. The one
        // CQ has an entry for every work request the QPs and the SRQ may hold (lesson 03).
        const lab::ProtectionDomain pd = lab::alloc_pd(context);
        std::vector<std::byte> buffer(5 * 64);  // four receive slots, then the message
        const lab::MemoryRegion mr = lab::register_memory(
            pd.get(), buffer, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
        const lab::QueueSizes sizes{.send_wr = 4, .recv_wr = 1};  // we post one send at a time
        constexpr std::uint32_t kSrqSlots = 4;
        const lab::CompletionQueue cq =
            lab::create_cq(context, int(2 * (sizes.send_wr + sizes.recv_wr) + kSrqSlots));
        ibv_srq_init_attr srq_init{};
        srq_init.attr.max_wr = kSrqSlots;
        srq_init.attr.max_sge = 1;
        const lab::SharedReceiveQueue srq(
            lab::check_ptr(ibv_create_srq(pd.get(), &srq_init), "ibv_create_srq"));
        const lab::QueuePair sender = lab::create_rc_qp(pd.get(), cq.get(), cq.get(), sizes);
        const lab::QueuePair receiver =
            lab::create_rc_qp(pd.get(), cq.get(), cq.get(), sizes, srq.get());

        // Step 8 (lesson 04): each QP's peer is the other one, on the same port and GID.
        const std::uint32_t sender_psn = lab::random_psn();
        const std::uint32_t receiver_psn = lab::random_psn();
        for (ibv_qp* qp : {sender.get(), receiver.get()}) {
            lab::move_to_init(qp, port.number, IBV_ACCESS_REMOTE_WRITE);
        }
        lab::move_to_rtr(sender.get(), port.local(),
                         {receiver->qp_num, receiver_psn, port.attr.lid, port.gid.gid});
        lab::move_to_rtr(receiver.get(), port.local(),
                         {sender->qp_num, sender_psn, port.attr.lid, port.gid.gid});
        lab::move_to_rts(sender.get(), sender_psn);
        lab::move_to_rts(receiver.get(), receiver_psn);
        std::printf("Step 8: QPs 0x%x and 0x%x connected to each other, both in RTS\n",
                    sender->qp_num, receiver->qp_num);

        // Event 1: the SRQ limit. Four receives posted, armed at 2: the third
        // send leaves one, below the limit.
        const std::span<std::byte> message = std::span(buffer).last(64);
        for (std::uint64_t slot = 0; slot < kSrqSlots; ++slot) {
            ibv_sge sge{reinterpret_cast<std::uintptr_t>(buffer.data() + 64 * slot), 64, mr->lkey};
            ibv_recv_wr wr{};
            wr.wr_id = slot;
            wr.sg_list = &sge;
            wr.num_sge = 1;
            ibv_recv_wr* bad = nullptr;
            lab::check(ibv_post_srq_recv(srq.get(), &wr, &bad), "ibv_post_srq_recv");
        }
        ibv_srq_attr limit{};
        limit.srq_limit = 2;
        lab::check(ibv_modify_srq(srq.get(), &limit, IBV_SRQ_LIMIT),
                   "ibv_modify_srq(IBV_SRQ_LIMIT)");
        std::printf("Event 1: 4 receives on the SRQ, limit armed at 2; sending 3 messages\n");
        for (int sent = 0; sent < 3; ++sent) {
            lab::post_send(sender.get(), message, mr->lkey);
            wait_for_send_and_receive(cq.get(), "a send to the SRQ", options.timeout);
        }
        expect_event(context, IBV_EVENT_SRQ_LIMIT_REACHED, options.timeout,
                     "fewer receives than srq_limit must be left on an armed SRQ");

        // Event 2: drain the send queue. RTS -> SQD with en_sqd_async_notify:
        // the device finishes the messages in progress and starts no new one
        // (requests still queued, or posted now, wait), then reports
        // IBV_EVENT_SQ_DRAINED. Only then may the QP go back to RTS. The
        // specification sends the notice only when asked; rxe sends it anyway.
        modify_state(sender.get(), IBV_QPS_SQD, true);
        std::printf("Event 2: ibv_modify_qp(SQD) asked for a notice; QP state %s\n",
                    lab::qp_state_name(state_of(sender.get())));
        expect_event(context, IBV_EVENT_SQ_DRAINED, options.timeout,
                     "ask with IBV_QP_EN_SQD_ASYNC_NOTIFY; the notice comes once no message "
                     "is in progress");
        modify_state(sender.get(), IBV_QPS_RTS, false);
        lab::post_send(sender.get(), message, mr->lkey);
        wait_for_send_and_receive(cq.get(), "a send after SQD", options.timeout);
        std::printf("Event 2: back in %s, and a send went through\n",
                    lab::qp_state_name(state_of(sender.get())));

        // Event 3: a fault. The receiver refuses a write with a wrong rkey: the
        // sender's completion says so, and both QPs are in ERR. Does the
        // device also raise an asynchronous event for either QP?
        lab::post_rdma(sender.get(), IBV_WR_RDMA_WRITE, message, mr->lkey,
                       reinterpret_cast<std::uintptr_t>(buffer.data()), mr->rkey ^ 0x1000);
        const ibv_wc failed = lab::poll_completion(cq.get(), options.timeout);
        std::printf("Event 3: RDMA write with a wrong rkey: %s; sender %s, receiver %s\n",
                    ibv_wc_status_str(failed.status), lab::qp_state_name(state_of(sender.get())),
                    lab::qp_state_name(state_of(receiver.get())));
        int fault_events = 0;
        while (next_event(context, std::chrono::seconds(1))) {
            ++fault_events;
        }
        std::printf("Event 3: %d asynchronous event(s) for the fault in 1 s\n", fault_events);

        // Event 4: the port. rxe follows its netdev: link down is PORT_ERR,
        // link up PORT_ACTIVE.
        if (port_event_seconds > 0) {
            std::printf("Event 4: waiting %d s: set the netdev down and up now\n",
                        port_event_seconds);
            std::fflush(stdout);
            const std::chrono::seconds wait(port_event_seconds);
            expect_event(context, IBV_EVENT_PORT_ERR, wait, "ip link set <netdev> down, as root");
            expect_event(context, IBV_EVENT_PORT_ACTIVE, wait, "ip link set <netdev> up, as root");
        }

        // Step 10: the owners destroy QPs, SRQ, CQ, MR, PD and the context;
        // every event was acknowledged, so none of them waits.
        std::printf("Step 10: cleaning up\n");
        return 0;
    });
}

// SPDX-License-Identifier: MIT
// Lesson 03: completion queue — step 6 of the verbs flow.
//
// Creates a completion channel and a completion queue (CQ) tied to it, and
// shows what a program can do with an empty CQ: poll it (ibv_poll_cq returns
// 0), or ask for an event and wait on the channel's file descriptor with a
// timeout. It explains what a work completion (struct ibv_wc) holds, and ends
// with the destroy order: a channel still used by a CQ cannot go (EBUSY).
//
// Run:   ./lab run 03_completion_queue               (a CQ of 100 entries)
//        ./lab run 03_completion_queue -d rxe0 --cqe 1000
//
// The ten steps: 1 device list, 2 open, 3 query, 4 PD, 5 MR, 6 CQ, 7 QP,
// 8 INIT/RTR/RTS, 9 post and poll, 10 clean up. This lesson does 6 and 10.

#include <infiniband/verbs.h>
#include <poll.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>

#include "lab/check.hpp"
#include "lab/device.hpp"
#include "lab/options.hpp"
#include "lab/resources.hpp"
#include "lab/wait.hpp"

int main(int argc, char** argv) {
    lab::CommandLine command_line("Lesson 03: completion channels and completion queues",
                                  lab::kDevice);
    int requested_cqe = 100;
    command_line.option("-c,--cqe", requested_cqe, "number of CQ entries to ask for",
                        {.min = 1, .max = INT_MAX});
    int comp_vector = 0;
    command_line.option("--comp-vector", comp_vector, "the completion vector of the CQ",
                        {.min = 0, .max = INT_MAX});
    bool no_channel = false;
    command_line.flag("--no-channel", no_channel,
                      "create the CQ without a completion channel: poll only");
    const lab::Options options = command_line.parse(argc, argv);

    return lab::run_main([&] {
        // Steps 1-3 (lesson 01): open the device, check the port and the GID,
        // and read max_cqe, the largest CQ the device offers.
        lab::Context context = lab::open_device(options.device);
        const lab::GidChoice gid =
            lab::choose_gid(context.get(), options.ib_port, options.gid_index);
        ibv_device_attr device_attr{};
        lab::check(ibv_query_device(context.get(), &device_attr), "ibv_query_device");
        std::printf("Steps 1-3: opened %s, port %u, GID index %d, max_cqe %d\n",
                    ibv_get_device_name(context->device), unsigned(options.ib_port), gid.index,
                    device_attr.max_cqe);

        // Step 6a: a completion channel. It is a file descriptor on which the
        // device signals "a completion arrived" for the CQs tied to it, so a
        // program can sleep (poll/epoll/read) instead of spinning. It is
        // optional: with --no-channel the CQ gets none and can only be polled.
        lab::CompletionChannel channel;
        if (no_channel) {
            std::printf("Step 6: --no-channel: no completion channel, the CQ can only be polled\n");
        } else {
            channel.reset(
                lab::check_ptr(ibv_create_comp_channel(context.get()), "ibv_create_comp_channel"));
            std::printf("Step 6: ibv_create_comp_channel: fd %d\n", channel->fd);
        }

        // Step 6b: the CQ. The device may grant more entries than asked for
        // (never fewer); cq->cqe says how many it really has. cq_context is any
        // pointer of ours: ibv_get_cq_event hands it back with the event (lesson
        // 10), so a program waiting on many CQs knows whose event it got.
        // comp_vector picks which of the device's num_comp_vectors interrupt
        // vectors signals the channel (on hardware, one per CPU core or so).
        std::string cq_name = "the lesson's CQ";
        const int vectors = context->num_comp_vectors;
        if (comp_vector >= vectors) {
            throw lab::Error("--comp-vector " + std::to_string(comp_vector) +
                             " is out of range: " + ibv_get_device_name(context->device) + " has " +
                             std::to_string(vectors) + " completion vector(s), 0 to " +
                             std::to_string(vectors - 1));
        }
        lab::CompletionQueue cq(
            lab::check_ptr(ibv_create_cq(context.get(), requested_cqe, /*cq_context=*/&cq_name,
                                         channel.get(), comp_vector),
                           "ibv_create_cq",
                           "the number of entries must be between 1 and the device's max_cqe (" +
                               std::to_string(device_attr.max_cqe) + ")"));
        std::printf("\tibv_create_cq: requested %d entries, granted %d (cq->cqe)\n", requested_cqe,
                    cq->cqe);
        std::printf("\tcq_context: \"%s\"; comp_vector %d of num_comp_vectors %d\n",
                    static_cast<const std::string*>(cq->cq_context)->c_str(), comp_vector, vectors);

        // Step 6c: poll the empty CQ. ibv_poll_cq never blocks: it returns how
        // many completions it copied out (up to the array size), 0 when none
        // is there, and a negative number on error. A program that waits for
        // a completion polls in a loop, and the loop needs a deadline, or a
        // completion that never comes spins it for ever. Reading the clock
        // costs more than a poll, so it is read every 1024 empty polls only.
        // Later lessons wait this way through lab::poll_completion (and
        // lab::Deadline, which also gives up when the peer is gone).
        ibv_wc completions[4]{};
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
        int found = 0;
        long polls = 0;
        do {
            found = ibv_poll_cq(cq.get(), 4, completions);
            ++polls;
        } while (found == 0 && (polls % 1024 != 0 || std::chrono::steady_clock::now() < deadline));
        if (found < 0) {  // a negative value, not an errno (ibv_poll_cq(3))
            lab::fail("ibv_poll_cq", EIO, "the CQ overran or the device failed");
        }
        std::printf("\tibv_poll_cq(empty CQ, up to 4): returned %d, %ld times in 200 ms\n", found,
                    polls);

        // Step 6d: the event path. ibv_req_notify_cq arms the CQ: the next
        // completion puts one event on the channel. Nothing will complete
        // here, so the wait ends by its timeout (every wait has one). A CQ
        // without a channel takes the call too, but has no fd to wait on.
        lab::check(ibv_req_notify_cq(cq.get(), /*solicited_only=*/0), "ibv_req_notify_cq");
        if (!channel) {
            std::printf("\tibv_req_notify_cq: accepted, but there is no channel fd to wait on\n");
        } else {
            pollfd waiting{channel->fd, POLLIN, 0};
            const int ready = poll(&waiting, 1, /*timeout ms=*/200);
            lab::check(ready < 0 ? -1 : 0, "poll(completion channel fd)");
            std::printf(
                "\tibv_req_notify_cq, then poll(channel fd, 200 ms): %s\n",
                ready == 0 ? "timed out, no event (nothing completed)" : "an event arrived");
        }
        // (With an event, ibv_get_cq_event would read it, ibv_ack_cq_events
        // acknowledge it; lesson 10 does that.)

        // What one completion holds: ibv_poll_cq fills one struct ibv_wc per
        // finished work request (lesson 04 prints real ones).
        std::printf("\tstruct ibv_wc (%zu bytes), the fields a program reads:\n", sizeof(ibv_wc));
        std::printf("\t\twr_id       the 64-bit tag the work request was posted with\n");
        std::printf("\t\tstatus      IBV_WC_SUCCESS (%d, \"%s\") or why it failed\n",
                    IBV_WC_SUCCESS, ibv_wc_status_str(IBV_WC_SUCCESS));
        std::printf(
            "\t\topcode      what completed: IBV_WC_SEND %d, IBV_WC_RDMA_WRITE %d, "
            "IBV_WC_RECV %d, ...\n",
            IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RECV);
        std::printf("\t\tbyte_len    bytes received (receive completions)\n");
        std::printf("\t\tqp_num      the local QP the request belonged to\n");
        std::printf("\t\tsrc_qp      the sending QP (UD receives)\n");
        std::printf("\t\twc_flags    IBV_WC_WITH_IMM: imm_data holds immediate data\n");
        std::printf("\t\tvendor_err  the device's own error code when status is not success\n");
        std::printf(
            "\t\ta failed completion has only wr_id, status, qp_num and vendor_err valid;\n"
            "\t\te.g. status %d is \"%s\"\n",
            IBV_WC_RNR_RETRY_EXC_ERR, ibv_wc_status_str(IBV_WC_RNR_RETRY_EXC_ERR));

        // Step 10: clean up. The CQ must go before its channel: the channel
        // counts the CQs that use it and refuses while any exists.
        if (!channel) {
            lab::check(ibv_destroy_cq(cq.release()), "ibv_destroy_cq");
            std::printf("Step 10: ibv_destroy_cq: done (no channel to destroy)\n");
            return 0;
        }
        const int busy = ibv_destroy_comp_channel(channel.get());
        if (busy == 0) {
            channel.release();  // destroyed after all; do not destroy it twice
            throw lab::Error("ibv_destroy_comp_channel succeeded while a CQ still used it");
        }
        std::printf("Step 10: ibv_destroy_comp_channel before the CQ: %s (%s)\n",
                    std::strerror(busy), busy == EBUSY ? "EBUSY" : std::to_string(busy).c_str());
        lab::check(ibv_destroy_cq(cq.release()), "ibv_destroy_cq");
        std::printf("\tibv_destroy_cq: done\n");
        lab::check(ibv_destroy_comp_channel(channel.release()), "ibv_destroy_comp_channel");
        std::printf("\tibv_destroy_comp_channel: done (no CQ uses it any more)\n");
        return 0;
    });
}

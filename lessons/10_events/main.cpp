// SPDX-License-Identifier: MIT
// Lesson 10: completion events — sleep until the CQ has something, instead of polling.
//
// Busy polling (ibv_poll_cq in a loop, lessons 03-09) answers fastest and keeps one CPU core at
// 100 %. A completion channel lets the thread sleep: ibv_create_comp_channel gives a file
// descriptor, ibv_create_cq(.., channel) ties a CQ to it, ibv_req_notify_cq arms the CQ for ONE
// event (0: any completion, 1: solicited ones only, sent with IBV_SEND_SOLICITED),
// ibv_get_cq_event reads the event, ibv_ack_cq_events acknowledges it (ibv_destroy_cq waits for
// every acknowledgement). Then re-arm, THEN drain the CQ. The client sends at a fixed rate in
// three rounds; the server receives by busy polling, by events and by solicited events, and
// prints its CPU time per message in each.
//
// Run: ./lab run 10_events    By hand, in two terminals: ./lab shell PROGRAM [-n N] (server),
//      ./lab shell PROGRAM [-n N] [--rate PER_SECOND] [--solicit-every K] 10.77.0.1 (client)

#include <infiniband/verbs.h>
#include <poll.h>
#include <sys/resource.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/connect.hpp"
#include "lab/device.hpp"
#include "lab/exchange.hpp"
#include "lab/options.hpp"
#include "lab/resources.hpp"
#include "lab/verbs.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint32_t kReceiveDepth = 64;  // receives kept posted on the server

// The three rounds: how the server waits in each.
enum class Waiting { kBusyPolling, kEvents, kSolicitedEvents };
constexpr const char* kWaitingNames[] = {"busy polling", "events", "solicited events"};

// CPU time this process used so far, user + system, in microseconds.
double cpu_microseconds() {
    rusage usage{};
    lab::check(getrusage(RUSAGE_SELF, &usage), "getrusage");
    return 1e6 * static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

// The server's resources: receive slot i (wr_id i) is the i-th slot_size bytes of `buffer`.
struct Server {
    ibv_qp* qp;
    ibv_cq* cq;
    ibv_comp_channel* channel;
    std::span<std::byte> buffer;
    std::uint32_t lkey;
    std::size_t slot_size;
    lab::PeerWatch client;  // the client's TCP connection (lesson 05)

    void post_receive(std::uint64_t slot) const {  // ibv_post_recv, lesson 04
        lab::post_receive(qp, buffer.subspan(slot * slot_size, slot_size), lkey, slot);
    }
};

// The server's side of one round: wait for `messages` receives, then print their CPU cost.
void receive_round(const Server& server, Waiting waiting, std::size_t messages,
                   std::chrono::milliseconds timeout) {
    std::size_t received = 0, in_order = 0, wake_ups = 0;
    // Take every completion the CQ holds, check it, and post its receive again.
    const auto drain = [&] {
        ibv_wc wcs[16];
        int found = 0;
        while ((found = ibv_poll_cq(server.cq, 16, wcs)) > 0) {
            for (const ibv_wc& wc : std::span(wcs, static_cast<std::size_t>(found))) {
                lab::check_completion(wc, "receive");
                std::uint64_t sequence = 0;  // in host byte order, as the client wrote it
                std::memcpy(&sequence, server.buffer.data() + wc.wr_id * server.slot_size,
                            sizeof sequence);
                in_order += sequence == received ? 1 : 0;
                ++received;
                server.post_receive(wc.wr_id);
            }
        }
        if (found < 0) {
            lab::fail("ibv_poll_cq", EIO);
        }
    };
    const auto give_up = [&] {
        throw lab::Error("only " + std::to_string(received) + " of " + std::to_string(messages) +
                         " messages arrived in time (hint: raise " +
                         "--timeout, or lower -n or --rate)");
    };
    // One deadline for the whole round; it ends at once if the client dies.
    lab::Deadline deadline(timeout, server.client);
    const double cpu_start = cpu_microseconds();
    const auto wall_start = Clock::now();
    if (waiting == Waiting::kBusyPolling) {
        // The way of lessons 03-09: ask the CQ again and again.
        for (unsigned spins = 1; received < messages; ++spins) {
            drain();
            if (spins % 4096 == 0 && !deadline.still_waiting()) {
                give_up();
            }
        }
    } else {
        // The way of this lesson: sleep until the channel reports an event. `acks` acknowledges
        // every event read on every way out (an exception too), or ibv_destroy_cq waits for ever.
        lab::CqEventAcks acks;
        const int solicited_only = waiting == Waiting::kSolicitedEvents ? 1 : 0;
        // Step 9a: arm the CQ. Only the next completion (or, with 1, the next
        // solicited one) raises an event; then the CQ is disarmed again.
        lab::check(ibv_req_notify_cq(server.cq, solicited_only), "ibv_req_notify_cq");
        // Messages that arrived before the arming raise no event: take them now.
        drain();
        while (received < messages) {
            // Step 9b: sleep on the channel's fd, until the deadline or the client's exit.
            if (!deadline.wait_until_ready(server.channel->fd, POLLIN)) {
                give_up();
            }
            // Step 9c: read the event: it names the CQ (a channel may serve several).
            ibv_cq* event_cq = nullptr;
            void* context = nullptr;
            lab::check(ibv_get_cq_event(server.channel, &event_cq, &context), "ibv_get_cq_event");
            acks.add(event_cq);
            ++wake_ups;
            // Step 9d: re-arm BEFORE draining: a completion that lands after the drain then
            // raises a new event; re-arming after the drain could miss it and sleep on.
            lab::check(ibv_req_notify_cq(event_cq, solicited_only), "ibv_req_notify_cq");
            // Step 9e: drain: one event may stand for many completions.
            drain();
        }
        // Step 9f: ibv_ack_cq_events takes a lock: acknowledge many at once.
        acks.acknowledge();
    }
    const double cpu_us = cpu_microseconds() - cpu_start;
    const std::chrono::duration<double, std::micro> wall = Clock::now() - wall_start;
    const std::string slept = std::to_string(wake_ups) + " wake-ups";
    std::printf(
        "server: %-16s %zu of %zu messages arrived, %zu in order, %s, "
        "CPU %.1f us per message (%.0f%% of one core)\n",
        kWaitingNames[static_cast<int>(waiting)], received, messages, in_order,
        waiting == Waiting::kBusyPolling ? "never slept" : slept.c_str(),
        cpu_us / static_cast<double>(received), 100.0 * cpu_us / wall.count());
}

}  // namespace

int main(int argc, char** argv) {
    lab::CommandLine command_line(
        "Lesson 10: completion events versus busy polling, measured in CPU time",
        lab::kDevice | lab::kTcpPort | lab::kSize | lab::kIters | lab::kTimeout | lab::kServerArg);
    command_line.defaults().size = 64;
    command_line.defaults().iters = 1000;
    double rate = 1000;
    std::size_t solicit_every = 10;
    command_line.option("--rate", rate, "messages per second the client sends",
                        {.min = 1.0, .max = 1e6});
    command_line.option("--solicit-every", solicit_every,
                        "round 3: the client sets IBV_SEND_SOLICITED on every K-th message",
                        {.min = 1, .max = 1'000'000});
    const lab::Options options = command_line.parse(argc, argv);

    return lab::run_main([&] {
        const char* role = options.is_server() ? "server" : "client";
        if (options.size < sizeof(std::uint64_t)) {
            throw lab::Error("--size " + std::to_string(options.size) + " is too small (hint: " +
                             "each message carries an 8-byte sequence number; use -s 8 or more)");
        }
        // Round 3's server reposts receives only when a solicited message wakes it: after
        // kReceiveDepth unsolicited ones the client's sends would meet an empty receive queue.
        if (solicit_every > kReceiveDepth && options.iters > kReceiveDepth) {
            throw lab::Error("--solicit-every " + std::to_string(solicit_every) + " is above the " +
                             std::to_string(kReceiveDepth) + " receives the server keeps posted " +
                             "(hint: the server would sleep while the client's sends find no " +
                             "receive; use at most " + std::to_string(kReceiveDepth) + ")");
        }

        // Steps 1-5 (lessons 01-02): device, port, GID; PD and kReceiveDepth slots of memory.
        const lab::Port port = lab::open_port(options);
        lab::ProtectionDomain pd = lab::alloc_pd(port.context.get());
        std::vector<std::byte> buffer(options.size * kReceiveDepth);
        lab::MemoryRegion mr = lab::register_memory(pd.get(), buffer, IBV_ACCESS_LOCAL_WRITE);

        // Step 6, this lesson's part: the completion channel, then a CQ that reports to it.
        // Declared first, the channel is destroyed last: after every CQ that uses it.
        lab::CompletionChannel channel(
            lab::check_ptr(ibv_create_comp_channel(port.context.get()), "ibv_create_comp_channel"));
        lab::CompletionQueue cq =
            lab::create_cq(port.context.get(), 2 * kReceiveDepth, channel.get());

        // Steps 7-8 (lessons 04-05): the QP; the exchange, INIT → RTR → RTS.
        lab::QueuePair qp =
            lab::create_rc_qp(pd.get(), cq.get(), cq.get(), {.recv_wr = kReceiveDepth});
        auto [peer, connection] =
            lab::connect_qp(qp.get(), port, options, {.access = IBV_ACCESS_LOCAL_WRITE});

        const Server server{qp.get(), cq.get(),     channel.get(),     buffer,
                            mr->lkey, options.size, connection.watch()};
        for (std::uint32_t slot = 0; options.is_server() && slot < kReceiveDepth; ++slot) {
            server.post_receive(slot);
        }
        std::printf("%s: %zu messages of %zu bytes per round, %.0f per second\n", role,
                    options.iters, options.size, rate);
        const auto period =
            std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate));

        // Step 9: three rounds, each started together at a barrier.
        for (const Waiting waiting :
             {Waiting::kBusyPolling, Waiting::kEvents, Waiting::kSolicitedEvents}) {
            connection.barrier(options.timeout);
            if (options.is_server()) {
                receive_round(server, waiting, options.iters, options.timeout);
                continue;
            }
            // The client: -n sends at --rate per second; a wait ends at once if the server exits.
            const auto message = std::span(buffer).first(options.size);
            const auto start = Clock::now();
            for (std::uint64_t sequence = 0; sequence < options.iters; ++sequence) {
                connection.watch().sleep_until(start + sequence * period);
                // In host byte order, as the server reads it: fine between same-endian hosts.
                std::memcpy(message.data(), &sequence, sizeof sequence);
                // IBV_SEND_SOLICITED sets the SE bit in the packet: a receiver armed with
                // ibv_req_notify_cq(cq, 1) wakes for it. The last one is always solicited.
                const bool solicited =
                    waiting == Waiting::kSolicitedEvents &&
                    ((sequence + 1) % solicit_every == 0 || sequence + 1 == options.iters);
                const unsigned send_flags =
                    IBV_SEND_SIGNALED | (solicited ? IBV_SEND_SOLICITED : 0);
                lab::post_send(qp.get(), message, mr->lkey, send_flags, sequence);
                lab::wait_for_completion(cq.get(), "send", options.timeout, connection.watch());
            }
            std::printf("client: sent %zu messages (server waits by %s)\n", options.iters,
                        kWaitingNames[static_cast<int>(waiting)]);
        }
        connection.barrier(options.timeout);

        // Step 10: clean up in reverse order: QP (receives still posted are discarded; only ERR
        // flushes them as completions), CQ (its events all acknowledged), channel, MR, PD, context.
        qp.reset();
        cq.reset();
        channel.reset();  // ibv_destroy_comp_channel: only after every CQ that uses it
        std::printf("%s: destroyed the QP, the CQ, then the completion channel\n", role);
        return 0;
    });
}

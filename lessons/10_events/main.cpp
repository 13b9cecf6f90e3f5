// Lesson 10: completion events — sleep until the CQ has something, instead of polling.
//
// Every lesson so far waited for a completion by calling ibv_poll_cq in a
// loop: the fastest answer, and one CPU core at 100 % while waiting. A
// completion channel lets the thread sleep in the kernel instead:
//
//   ibv_create_comp_channel   a file descriptor that becomes readable on an event
//   ibv_create_cq(.., channel) the CQ reports to that channel
//   ibv_req_notify_cq(cq, 0)  arm: raise ONE event at the next completion
//   ibv_get_cq_event          read the event (which CQ it was)
//   ibv_ack_cq_events         acknowledge it; ibv_destroy_cq waits for all acks
//   ibv_req_notify_cq again   re-arm (one event per arming), THEN drain the CQ
//                             with ibv_poll_cq: completions that arrived between
//                             the event and the re-arming raise no new event
//
// ibv_req_notify_cq(cq, 1) arms for SOLICITED completions only: a receive
// whose sender set IBV_SEND_SOLICITED (or a failed one). The sender decides
// which messages are worth waking the receiver for.
//
// The client sends messages at a fixed rate, in three rounds; the server
// receives them by busy polling, by events, and by solicited events, and
// measures its CPU time (user + system, from getrusage) per message in each.
//
// Run:   ./lab run 10_events                        (server and client in one go)
//        10_events [-n MESSAGES] [--rate PER_SECOND]           server
//        10_events [-n MESSAGES] [--rate PER_SECOND] SERVER    client
//        options: -d DEV -i PORT -g GID_INDEX -p TCP_PORT -s SIZE --timeout SECONDS
//                 --solicit-every K (round 3: every K-th message is solicited)

#include <infiniband/verbs.h>
#include <poll.h>
#include <sys/resource.h>

#include <algorithm>
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

// Receives kept posted on the server; each completed one is posted again.
constexpr std::uint32_t kReceiveDepth = 64;

enum class Waiting { kBusyPolling, kEvents, kSolicitedEvents };

const char* waiting_name(Waiting waiting) {
    switch (waiting) {
        case Waiting::kBusyPolling:
            return "busy polling";
        case Waiting::kEvents:
            return "events";
        case Waiting::kSolicitedEvents:
            return "solicited events";
    }
    return "?";
}

// CPU time this process used so far, user + system, in microseconds.
double cpu_microseconds() {
    rusage usage{};
    lab::check(getrusage(RUSAGE_SELF, &usage), "getrusage");
    const auto micros = [](const timeval& time) { return time.tv_sec * 1e6 + time.tv_usec; };
    return micros(usage.ru_utime) + micros(usage.ru_stime);
}

// The options only this lesson has, with the counts it takes from lab::Options.
struct LessonOptions {
    std::size_t messages;
    std::size_t size;
    double rate;
    std::size_t solicit_every;
};

// The server side of one round: receives, the checks on them, and counters.
class Receiver {
  public:
    Receiver(ibv_qp* qp, ibv_cq* cq, ibv_comp_channel* channel, std::span<std::byte> buffer,
             std::uint32_t lkey, std::size_t slot_size, lab::PeerWatch peer)
        : qp_(qp),
          cq_(cq),
          channel_(channel),
          buffer_(buffer),
          lkey_(lkey),
          slot_size_(slot_size),
          peer_(peer) {}

    void post_receive(std::uint64_t slot) {
        lab::post_receive(qp_, buffer_.subspan(slot * slot_size_, slot_size_), lkey_, slot);
    }

    struct Round {
        std::size_t received = 0;
        std::size_t in_order = 0;
        std::size_t wake_ups = 0;
        double cpu_us = 0;
        double wall_us = 0;
    };

    Round receive(Waiting waiting, std::size_t messages, std::chrono::milliseconds timeout) {
        round_ = Round{};
        expected_ = messages;
        // One deadline for the whole round (lesson 03); it watches the client too (lesson 05).
        lab::Deadline deadline(timeout, peer_);
        const double cpu_start = cpu_microseconds();
        const auto wall_start = Clock::now();
        if (waiting == Waiting::kBusyPolling) {
            receive_by_polling(deadline);
        } else {
            receive_by_events(waiting == Waiting::kSolicitedEvents, deadline);
        }
        round_.cpu_us = cpu_microseconds() - cpu_start;
        round_.wall_us =
            std::chrono::duration<double, std::micro>(Clock::now() - wall_start).count();
        return round_;
    }

  private:
    // The way of lessons 03-09: ask the CQ again and again.
    void receive_by_polling(lab::Deadline& deadline) {
        for (unsigned spins = 1; round_.received < expected_; ++spins) {
            drain();
            if (spins % 4096 == 0 && !deadline.still_waiting()) {
                throw_timeout();
            }
        }
    }

    // The way of this lesson: sleep until the channel reports an event.
    void receive_by_events(bool solicited_only, lab::Deadline& deadline) {
        // Every event read below must be acknowledged (ibv_ack_cq_events)
        // before the CQ is destroyed, or ibv_destroy_cq waits for ever. The
        // owner `acks` acknowledges them when it goes out of scope, on every
        // way out of this function: an exception (a peer that died, a failed
        // completion) included.
        lab::CqEventAcks acks;
        // Step 9a: arm the CQ. Only the next completion (or, with 1, the next
        // solicited one) raises an event; then the CQ is disarmed again.
        lab::check(ibv_req_notify_cq(cq_, solicited_only ? 1 : 0), "ibv_req_notify_cq");
        // Messages that arrived before the arming raise no event: take them now.
        drain();
        while (round_.received < expected_) {
            // Step 9b: sleep on the channel's file descriptor, with a deadline,
            // and wake up too if the peer's TCP connection closes (it died).
            if (!deadline.wait_until_ready(channel_->fd, POLLIN)) {
                throw_timeout();
            }
            // Step 9c: read the event. It names the CQ (a channel may serve
            // several), and it is counted for acknowledgement at once.
            ibv_cq* event_cq = nullptr;
            void* event_context = nullptr;
            lab::check(ibv_get_cq_event(channel_, &event_cq, &event_context), "ibv_get_cq_event");
            acks.add(event_cq);
            ++round_.wake_ups;
            // Step 9d: re-arm BEFORE draining. A completion that lands after
            // the drain then raises a new event; re-arming after the drain
            // could miss it and sleep until the deadline.
            lab::check(ibv_req_notify_cq(event_cq, solicited_only ? 1 : 0), "ibv_req_notify_cq");
            // Step 9e: drain: one event may stand for many completions.
            drain();
        }
        // Step 9f: acknowledge the events. Acknowledging takes a lock, so it
        // is done for many at once, here at the end of the round.
        acks.acknowledge();
    }

    // Take every completion the CQ holds, check it, and post its receive again.
    void drain() {
        ibv_wc wcs[16];
        int found = 0;
        while ((found = ibv_poll_cq(cq_, 16, wcs)) > 0) {
            for (const ibv_wc& wc : std::span(wcs, static_cast<std::size_t>(found))) {
                lab::check_completion(wc, "receive");
                const std::byte* data = buffer_.data() + wc.wr_id * slot_size_;
                std::uint64_t sequence = 0;
                std::memcpy(&sequence, data, sizeof sequence);
                if (sequence == round_.received) {
                    ++round_.in_order;
                }
                ++round_.received;
                post_receive(wc.wr_id);
            }
        }
        if (found < 0) {
            lab::fail("ibv_poll_cq", EIO);
        }
    }

    [[noreturn]] void throw_timeout() const {
        throw lab::Error("only " + std::to_string(round_.received) + " of " +
                         std::to_string(expected_) +
                         " messages arrived within the timeout (hint: raise --timeout, or "
                         "lower -n or --rate)");
    }

    ibv_qp* qp_;
    ibv_cq* cq_;
    ibv_comp_channel* channel_;
    std::span<std::byte> buffer_;
    std::uint32_t lkey_;
    std::size_t slot_size_;
    lab::PeerWatch peer_;
    Round round_{};
    std::size_t expected_ = 0;
};

// The client side of one round: -n sends at --rate per second. @p peer_gone
// (the TCP connection's watch) ends a wait, and a pause, as soon as the server exits.
void send_round(ibv_qp* qp, ibv_cq* cq, std::span<std::byte> message, std::uint32_t lkey,
                const LessonOptions& settings, std::chrono::milliseconds timeout, bool solicit_some,
                lab::PeerWatch peer_gone) {
    const auto period = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(1.0 / settings.rate));
    const auto start = Clock::now();
    for (std::uint64_t sequence = 0; sequence < settings.messages; ++sequence) {
        peer_gone.sleep_until(start + sequence * period);
        std::memcpy(message.data(), &sequence, sizeof sequence);
        unsigned send_flags = IBV_SEND_SIGNALED;
        // IBV_SEND_SOLICITED sets the SE bit in the packet: a receiver armed
        // with ibv_req_notify_cq(cq, 1) is woken for this message. The last
        // one is always solicited, so that the receiver sees the end.
        const bool last = sequence + 1 == settings.messages;
        if (solicit_some && ((sequence + 1) % settings.solicit_every == 0 || last)) {
            send_flags |= IBV_SEND_SOLICITED;
        }
        lab::post_send(qp, message, lkey, send_flags, sequence);  // ibv_post_send, lesson 04
        lab::wait_for_completion(cq, "send", timeout, peer_gone);
    }
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
    command_line.app()
        .add_option("--rate", rate, "messages per second the client sends")
        ->check(CLI::Range(1.0, 1e6))
        ->capture_default_str();
    command_line.app()
        .add_option("--solicit-every", solicit_every,
                    "round 3: the client sets IBV_SEND_SOLICITED on every K-th message")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}))
        ->capture_default_str();
    const lab::Options options = command_line.parse(argc, argv);
    const LessonOptions settings{options.iters, options.size, rate, solicit_every};

    return lab::run_main([&] {
        const char* role = options.is_server() ? "server" : "client";
        if (settings.size < sizeof(std::uint64_t)) {
            throw lab::Error("--size " + std::to_string(settings.size) +
                             " is too small (hint: each message carries an 8-byte sequence "
                             "number; use -s 8 or more)");
        }

        // Steps 1-3 (lesson 01): device, port, GID.
        const lab::Port port = lab::open_port(options);

        // Steps 4-5 (lesson 02): PD and memory: kReceiveDepth slots on the server.
        lab::ProtectionDomain pd = lab::alloc_pd(port.context.get());
        std::vector<std::byte> buffer(settings.size * kReceiveDepth);
        lab::MemoryRegion mr = lab::register_memory(pd.get(), buffer, IBV_ACCESS_LOCAL_WRITE);

        // Step 6, this lesson's part: the completion channel, then a CQ that
        // reports to it. The channel is created first and destroyed last: a
        // CQ must be destroyed before its channel (the owners below are
        // destroyed in reverse order of declaration).
        lab::CompletionChannel channel(
            lab::check_ptr(ibv_create_comp_channel(port.context.get()), "ibv_create_comp_channel"));
        lab::CompletionQueue cq =
            lab::create_cq(port.context.get(), 2 * kReceiveDepth, channel.get());

        // Steps 7-8 (lessons 04-05): the QP; the exchange, INIT → RTR → RTS.
        lab::QueueSizes sizes;
        sizes.recv_wr = kReceiveDepth;
        lab::QueuePair qp = lab::create_rc_qp(pd.get(), cq.get(), cq.get(), sizes);
        auto [peer, connection] =
            lab::connect_qp(qp.get(), port, options, {.access = IBV_ACCESS_LOCAL_WRITE});

        Receiver receiver(qp.get(), cq.get(), channel.get(), buffer, mr->lkey, settings.size,
                          connection.watch());
        if (options.is_server()) {
            for (std::uint32_t slot = 0; slot < kReceiveDepth; ++slot) {
                receiver.post_receive(slot);
            }
        }
        std::printf("%s: %zu messages of %zu bytes per round, %.0f per second\n", role,
                    settings.messages, settings.size, settings.rate);

        // Step 9: three rounds, each started together at a barrier.
        for (const Waiting waiting :
             {Waiting::kBusyPolling, Waiting::kEvents, Waiting::kSolicitedEvents}) {
            connection.barrier(options.timeout);
            if (!options.is_server()) {
                send_round(qp.get(), cq.get(), std::span(buffer).first(settings.size), mr->lkey,
                           settings, options.timeout, waiting == Waiting::kSolicitedEvents,
                           connection.watch());
                std::printf("client: sent %zu messages (server waits by %s)\n", settings.messages,
                            waiting_name(waiting));
            } else {
                const auto round = receiver.receive(waiting, settings.messages, options.timeout);
                const std::string wake_ups = waiting == Waiting::kBusyPolling
                                                 ? std::string("never slept")
                                                 : std::to_string(round.wake_ups) + " wake-ups";
                std::printf(
                    "server: %-16s %zu of %zu messages arrived, %zu in order, %s, "
                    "CPU %.1f us per message (%.0f%% of one core)\n",
                    waiting_name(waiting), round.received, settings.messages, round.in_order,
                    wake_ups.c_str(), round.cpu_us / static_cast<double>(round.received),
                    100.0 * round.cpu_us / round.wall_us);
            }
        }
        connection.barrier(options.timeout);

        // Step 10: clean up in reverse order: QP, CQ (all its events are
        // acknowledged, or ibv_destroy_cq would wait for ever), channel, MR, PD,
        // context. The receives still posted are flushed with the QP.
        qp.reset();
        cq.reset();
        channel.reset();  // ibv_destroy_comp_channel: only after every CQ that uses it
        std::printf("%s: destroyed the QP, the CQ, then the completion channel\n", role);
        return 0;
    });
}

// SPDX-License-Identifier: MIT
// bench_12_atomics: lesson 12's fetch-and-add, measured the way perftest's
// ib_atomic_bw (--depth D: D atomics in flight) and ib_atomic_lat (--depth 1:
// one at a time) measure it. bench/12_atomics.sh runs it side by side with
// them (`./lab bench`); the lesson itself posts one atomic at a time.
//
//   bench_12_atomics [-n ITERS] [--depth D]           (server: owns the counter)
//   bench_12_atomics [-n ITERS] [--depth D] SERVER    (client: adds 1 to it -n times)
//
// The set-up is lesson 12's, through common/.

#include <infiniband/verbs.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
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
#include "lab/wait.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// Up to @p depth FETCH_AND_ADDs in flight, operation n using result slot
// n % depth. Two things keep the loop fast:
//  - selective signaling: only every signal_every-th request asks for a
//    completion (IBV_SEND_SIGNALED). An RC QP completes in order, so one
//    completion for operation n means every operation up to n is done and
//    its old value is in its slot;
//  - whenever slots are freed, their new requests are chained (wr.next) and
//    posted with ONE ibv_post_send: one doorbell for many requests.
// The QP executes them in order, so the old values must increase.
void measure(ibv_qp* qp, ibv_cq* cq, const lab::ConnectionInfo& peer, const lab::Options& options,
             std::size_t requested_depth, lab::PeerWatch server_gone) {
    const std::size_t depth = std::min(requested_depth, options.iters);
    const std::size_t signal_every = std::max<std::size_t>(1, depth / 4);
    ibv_pd* pd = qp->pd;
    std::vector<std::uint64_t> slots(depth, 0);
    const lab::MemoryRegion mr =
        lab::register_memory(pd, std::as_writable_bytes(std::span(slots)), IBV_ACCESS_LOCAL_WRITE);
    std::vector<ibv_sge> sges(depth);
    std::vector<ibv_send_wr> wrs(depth);
    for (std::size_t slot = 0; slot < depth; ++slot) {
        sges[slot] = {reinterpret_cast<std::uintptr_t>(&slots[slot]), sizeof(std::uint64_t),
                      mr->lkey};
        ibv_send_wr& wr = wrs[slot];
        wr.sg_list = &sges[slot];
        wr.num_sge = 1;
        wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
        wr.wr.atomic.remote_addr = peer.remote_addr;
        wr.wr.atomic.rkey = peer.rkey;
        wr.wr.atomic.compare_add = 1;
    }
    const auto start = Clock::now();
    std::size_t posted = 0;
    std::size_t completed = 0;
    std::uint64_t last_fetched = 0;
    bool increasing = true;
    unsigned empty_polls = 0;
    // While the loop polls in vain, the deadline also looks at the socket.
    lab::Deadline idle_deadline(options.timeout, server_gone);
    // With one atomic in flight, the round trips are timed in batches of
    // kBatch: reading the clock is not free (under emulation it can cost a
    // microsecond or more), and the median of the batch averages is robust
    // against the occasional stall.
    constexpr std::size_t kBatch = 16;
    std::vector<double> round_trips;
    Clock::time_point batch_start = start;
    std::vector<ibv_wc> wcs(depth);
    while (completed < options.iters) {
        // Refill: chain every free slot's next operation, post them at once.
        const std::size_t first = posted;
        const std::size_t last = std::min(completed + depth, options.iters);
        for (std::size_t n = first; n < last; ++n) {
            ibv_send_wr& wr = wrs[n % depth];
            wr.wr_id = n;
            const bool signaled = (n + 1) % signal_every == 0 || n + 1 == options.iters;
            wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
            wr.next = n + 1 < last ? &wrs[(n + 1) % depth] : nullptr;
        }
        if (last > first) {
            ibv_send_wr* bad = nullptr;
            lab::check(ibv_post_send(qp, &wrs[first % depth], &bad),
                       "ibv_post_send(FETCH_AND_ADD list)");
            posted = last;
        }
        const int found = ibv_poll_cq(cq, static_cast<int>(wcs.size()), wcs.data());
        lab::check(found < 0 ? -1 : 0, "ibv_poll_cq");
        if (found == 0) {
            // Reading the clock on every empty poll would slow the loop down.
            if (++empty_polls % 1024 == 0 && !idle_deadline.still_waiting()) {
                throw lab::Error(
                    "fetch-and-add: no completion within the timeout (hint: is "
                    "the server still running?)");
            }
            continue;
        }
        idle_deadline.reset();
        empty_polls = 0;
        for (const ibv_wc& wc : std::span(wcs).first(static_cast<std::size_t>(found))) {
            lab::check_completion(wc, "fetch-and-add");
            // Operations completed..wr_id are done: read their old values
            // before the slots are reused.
            for (; completed <= wc.wr_id; ++completed) {
                const std::uint64_t fetched = slots[completed % depth];
                increasing = increasing && (completed == 0 || fetched > last_fetched);
                last_fetched = fetched;
            }
        }
        if (depth == 1 && completed % kBatch == 0) {
            const auto now = Clock::now();
            round_trips.push_back(
                std::chrono::duration<double, std::micro>(now - batch_start).count() / kBatch);
            batch_start = now;
        }
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf(
        "client: fetch-and-add: %zu operations in %.3f s, %.0f per second, %.2f us each "
        "(depth %zu, every %zu. signaled)\n",
        options.iters, seconds, static_cast<double>(options.iters) / seconds,
        seconds * 1e6 / static_cast<double>(options.iters), depth, signal_every);
    if (!round_trips.empty()) {
        std::ranges::nth_element(round_trips, round_trips.begin() + round_trips.size() / 2);
        std::printf("client: one at a time: median round trip %.2f us (over batches of %zu)\n",
                    round_trips[round_trips.size() / 2], kBatch);
    }
    std::printf("client: old values came back %s; the last one was %" PRIu64 "\n",
                increasing ? "increasing" : "OUT OF ORDER", last_fetched);
}

}  // namespace

int main(int argc, char** argv) {
    lab::CommandLine command_line(
        "Lesson 12's fetch-and-add, measured like ib_atomic_bw (--depth D) and ib_atomic_lat "
        "(--depth 1)",
        lab::kDevice | lab::kTcpPort | lab::kIters | lab::kTimeout | lab::kServerArg);
    std::size_t depth = 16;
    command_line.option("--depth", depth, "client: fetch-and-adds in flight at once",
                        {.min = 1, .max = 1024});
    command_line.defaults().iters = 1000;
    const lab::Options options = command_line.parse(argc, argv);

    return lab::run_main([&] {
        const bool is_server = options.is_server();
        const lab::Port port = lab::open_port(options);
        const lab::ProtectionDomain pd = lab::alloc_pd(port.context.get());
        // The server's counter: one 8-byte word the client's atomics target.
        std::uint64_t counter = 0;
        const lab::MemoryRegion mr =
            lab::register_memory(pd.get(), std::as_writable_bytes(std::span(&counter, 1)),
                                 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
        const lab::CompletionQueue cq =
            lab::create_cq(port.context.get(), static_cast<int>(depth) + 16);
        lab::QueueSizes sizes;
        sizes.send_wr = static_cast<std::uint32_t>(depth) + 4;
        const lab::QueuePair qp = lab::create_rc_qp(pd.get(), cq.get(), cq.get(), sizes);
        auto [peer, connection] = lab::connect_qp(
            qp.get(), port, options,
            {.access = IBV_ACCESS_REMOTE_ATOMIC, .region = is_server ? mr.get() : nullptr});
        std::printf("QP is in RTS\n");
        connection.barrier(options.timeout);
        if (!is_server) {
            // A server that exited closes its socket at once; its vanished QP
            // may bring no error completion for a long time (none in 20 s on rxe).
            measure(qp.get(), cq.get(), peer, options, depth, connection.watch());
        }
        // The server waits here while the client works (longer for more
        // work); a client that dies closes its socket and ends the wait at once.
        connection.barrier(options.timeout + std::chrono::milliseconds(options.iters));
        if (is_server) {
            std::printf("server: counter %" PRIu64 " (expected %zu): %s\n", counter, options.iters,
                        counter == options.iters ? "correct" : "WRONG");
            return counter == options.iters ? 0 : 1;
        }
        return 0;
    });
}

// SPDX-License-Identifier: MIT
// bench_07_rdma_write: lesson 07's RDMA write, measured the way perftest's
// ib_write_bw (--bw) and ib_write_lat (--lat) measure it. bench/07_rdma_write.sh
// runs it side by side with them (`./lab bench`); the lesson itself only
// writes "hello verbs" once.
//
//   bench_07_rdma_write --bw [-s SIZE] [-n ITERS] [--depth D]     (server)
//   bench_07_rdma_write --bw [-s SIZE] [-n ITERS] [--depth D] SERVER
//   bench_07_rdma_write --lat [-s SIZE] [-n ITERS] [--inline] [SERVER]
//
// Both sides get the same flags. The set-up is lesson 07's, through common/.

#include <infiniband/verbs.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/connect.hpp"
#include "lab/device.hpp"
#include "lab/exchange.hpp"
#include "lab/options.hpp"
#include "lab/pipeline.hpp"
#include "lab/report.hpp"
#include "lab/resources.hpp"
#include "lab/verbs.hpp"
#include "lab/wait.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct BenchOptions {
    bool bandwidth = false;
    bool latency = false;
    bool use_inline = false;
    bool no_watch = false;
    std::size_t depth = 64;
};

// Busy-wait until the peer's write changes the last byte of @p area to @p marker.
// This is ib_write_lat's trick. It relies on the last byte being placed last:
// true on rxe, which copies a message's packets in order, but not promised by
// the InfiniBand specification, which leaves the order of placement within a
// message open. Portable code is told by a completion: a write with immediate
// data (lesson 08), or a SEND after the write.
void wait_for_marker(std::span<std::byte> area, std::uint8_t marker,
                     std::chrono::milliseconds timeout, lab::PeerWatch peer_gone) {
    // The device writes this memory behind the compiler's back: read it through
    // an atomic so that every iteration really loads it.
    std::atomic_ref<std::byte> last(area.back());
    // Reading the clock is not free (a system call on a machine without a
    // usable TSC), so it is read only every few thousand spins; the same
    // deadline also looks at the peer now and then.
    lab::Deadline deadline(timeout, peer_gone);
    for (unsigned spins = 1; last.load(std::memory_order_acquire) != std::byte{marker}; ++spins) {
        if (spins % 4096 == 0 && !deadline.still_waiting()) {
            throw lab::Error("no write from the peer within " + std::to_string(timeout.count()) +
                             " ms (hint: is the peer still running, with the same -s and -n?)");
        }
    }
}

// --bw (client): keep up to --depth writes outstanding, as ib_write_bw does.
// Only every signal_interval()-th write asks for a completion: one completion
// also retires every unsignaled write posted before it, because a send queue
// completes in order.
void measure_bandwidth(ibv_qp* qp, ibv_cq* cq, std::span<const std::byte> local, std::uint32_t lkey,
                       const lab::ConnectionInfo& remote, const lab::Options& options,
                       std::size_t depth, lab::PeerWatch peer_gone) {
    const std::size_t iters = options.iters;
    // Every 8th of 64: measured on rxe, fewer completions (every 32nd or 64th)
    // made the send queue drain in bursts, and every one cost polling.
    const std::size_t signal_every = lab::signal_interval(depth);
    std::size_t posted = 0;
    std::size_t completed = 0;
    const auto start = Clock::now();
    while (completed < iters) {
        while (posted < iters && posted - completed < depth) {
            ++posted;
            const bool signaled = posted % signal_every == 0 || posted == iters;
            lab::post_rdma(qp, IBV_WR_RDMA_WRITE, local, lkey, remote.remote_addr, remote.rkey,
                           signaled ? IBV_SEND_SIGNALED : 0, posted);
        }
        // wr_id counts the writes up to this one, all of which are now done.
        completed = lab::wait_for_completion(cq, "RDMA write", options.timeout, peer_gone).wr_id;
    }
    lab::print_bandwidth(options.size, iters, Clock::now() - start);
}

// --lat (both sides): ping-pong, as ib_write_lat does. Each side writes a
// message into the peer's receive area; the peer sees it arrive by watching
// the last byte change, then writes back. Half a round trip is the one-way latency.
void measure_latency(ibv_qp* qp, ibv_cq* cq, std::span<std::byte> buffer, std::uint32_t lkey,
                     std::uint32_t max_inline, const lab::ConnectionInfo& remote,
                     const lab::Options& options, bool use_inline, lab::PeerWatch peer_gone) {
    const std::size_t size = options.size;
    const auto receive_area = buffer.first(size);       // the peer writes here
    const auto send_area = buffer.subspan(size, size);  // we write from here
    // On a hardware NIC, IBV_SEND_INLINE saves the DMA read of a small
    // payload. Soft-RoCE copies every payload in software anyway, and on it
    // inline writes measure slower (perftest turns inline off on rxe too):
    // so it is opt-in (--inline), to be measured rather than assumed.
    unsigned send_flags = IBV_SEND_SIGNALED;
    if (use_inline && size <= max_inline) {
        send_flags |= IBV_SEND_INLINE;
    }
    const bool is_client = !options.is_server();
    std::vector<double> microseconds;
    microseconds.reserve(options.iters);

    // One clock reading per iteration: each round trip ends where the next begins.
    auto previous = Clock::now();
    for (std::size_t i = 1; i <= options.iters; ++i) {
        const auto marker = static_cast<std::uint8_t>(i);  // wraps; only a change matters
        if (!is_client) {
            wait_for_marker(receive_area, marker, options.timeout, peer_gone);  // answer
        }
        send_area.back() = std::byte{marker};
        lab::post_rdma(qp, IBV_WR_RDMA_WRITE, send_area, lkey, remote.remote_addr, remote.rkey,
                       send_flags, i);
        lab::wait_for_completion(cq, "RDMA write", options.timeout, peer_gone);
        if (is_client) {
            wait_for_marker(receive_area, marker, options.timeout, peer_gone);
        }
        const auto now = Clock::now();
        const std::chrono::duration<double, std::micro> round_trip = now - previous;
        microseconds.push_back(round_trip.count() / 2);
        previous = now;
    }
    if (is_client) {
        lab::print_latency(size, std::move(microseconds));
    }
}

}  // namespace

int main(int argc, char** argv) {
    lab::CommandLine command_line(
        "Lesson 07's RDMA write, measured like ib_write_bw (--bw) and ib_write_lat (--lat)",
        lab::kDevice | lab::kTcpPort | lab::kSize | lab::kIters | lab::kTimeout | lab::kServerArg);
    BenchOptions bench;
    const lab::Argument bw_flag =
        command_line.flag("--bw", bench.bandwidth, "measure bandwidth (like ib_write_bw)");
    const lab::Argument lat_flag =
        command_line.flag("--lat", bench.latency, "measure latency (like ib_write_lat)")
            .excludes(bw_flag);
    command_line
        .flag("--inline", bench.use_inline, "--lat: send messages up to max_inline_data inline")
        .needs(lat_flag);
    command_line.option("--depth", bench.depth, "writes outstanding at once in --bw",
                        {.min = 1, .max = 4096});
    command_line
        .flag("--no-watch", bench.no_watch,
              "--bw: keep waiting on the CQ when the server's connection closes, to see how "
              "long the device takes to report a vanished peer (docs/devices.md#dead-peer)")
        .needs(bw_flag);
    const lab::Options options = command_line.parse(argc, argv);

    return lab::run_main([&] {
        if (!bench.bandwidth && !bench.latency) {
            throw lab::Error("nothing to measure (hint: give --bw or --lat)");
        }
        const bool is_server = options.is_server();
        const lab::Port port = lab::open_port(options);
        const lab::ProtectionDomain pd = lab::alloc_pd(port.context.get());
        // --lat: a receive area the peer writes, then a send area; --bw: one buffer.
        std::vector<std::byte> buffer(bench.latency ? 2 * options.size : options.size);
        const int access =
            (is_server || bench.latency) ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE : 0;
        const lab::MemoryRegion mr = lab::register_memory(pd.get(), buffer, access);
        const lab::CompletionQueue cq =
            lab::create_cq(port.context.get(), static_cast<int>(bench.depth) + 16);
        lab::QueueSizes sizes;
        sizes.send_wr = static_cast<std::uint32_t>(bench.depth) + 1;
        sizes.recv_wr = 1;
        sizes.inline_data = 64;
        const lab::QueuePair qp = lab::create_rc_qp(pd.get(), cq.get(), cq.get(), sizes);
        ibv_qp_attr qp_attr{};
        ibv_qp_init_attr qp_init{};
        lab::check(ibv_query_qp(qp.get(), &qp_attr, IBV_QP_CAP, &qp_init), "ibv_query_qp");

        auto [remote, connection] = lab::connect_qp(qp.get(), port, options,
                                                    {.access = IBV_ACCESS_REMOTE_WRITE,
                                                     .region = access != 0 ? mr.get() : nullptr,
                                                     .region_length = options.size});
        std::printf("QP is in RTS\n");
        connection.barrier(options.timeout);
        if ((bench.latency || !is_server) && remote.length < options.size) {
            throw lab::Error("the peer's region has " + std::to_string(remote.length) +
                             " bytes, fewer than --size (hint: give both sides the same -s)");
        }
        // The TCP connection watches the peer: if it exits, its socket closes
        // at once, long before the device gives up on its vanished QP: after
        // retry_cnt retransmissions, each after a timeout without an ACK
        // (docs/devices.md#dead-peer).
        if (bench.latency) {
            measure_latency(qp.get(), cq.get(), buffer, mr->lkey, qp_init.cap.max_inline_data,
                            remote, options, bench.use_inline, connection.watch());
        } else if (!is_server) {
            measure_bandwidth(qp.get(), cq.get(), buffer, mr->lkey, remote, options, bench.depth,
                              bench.no_watch ? lab::PeerWatch{} : connection.watch());
        }
        // The server of --bw waits here while the client writes; it is given
        // longer the more writes are asked for. A client that dies closes its
        // socket and ends the wait at once.
        connection.barrier(options.timeout + std::chrono::milliseconds(options.iters));
        if (is_server && bench.bandwidth) {
            ibv_wc wc{};
            const int found = ibv_poll_cq(cq.get(), 1, &wc);
            lab::check(found < 0 ? -1 : 0, "ibv_poll_cq");
            std::printf("completions on the server's CQ: %d (the writes needed no work here)\n",
                        found);
        }
        return 0;
    });
}

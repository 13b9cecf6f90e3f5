// SPDX-License-Identifier: MIT
// The measuring side of lesson 09: RDMA read bandwidth and latency, printed
// like perftest's ib_read_bw and ib_read_lat, so that bench/09_rdma_read.sh
// can set the two side by side. The set-up is lesson 09's (REMOTE_READ on the
// server's region, --rd-atomic reads in flight); only step 9 differs.
//
//   bench_09_rdma_read --bw [-s SIZE] [-n ITERS] [--depth N] [--rd-atomic N]          (server)
//   bench_09_rdma_read --bw [the same flags] SERVER                                    (client)
//   bench_09_rdma_read --lat [-s SIZE] [-n ITERS], likewise
//
// --depth is how many reads the client keeps posted (perftest's -t),
// --rd-atomic how many the device keeps in flight (perftest's -o).

#include <infiniband/verbs.h>

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

namespace {

using Clock = std::chrono::steady_clock;

// One RDMA read of local.size() bytes from the peer's region: the work request
// lesson 09 writes out in post_read, here from common/ (lab::post_rdma).
void post_read(ibv_qp* qp, std::span<std::byte> local, std::uint32_t lkey,
               const lab::ConnectionInfo& remote, unsigned send_flags, std::uint64_t wr_id) {
    lab::post_rdma(qp, IBV_WR_RDMA_READ, local, lkey, remote.remote_addr, remote.rkey, send_flags,
                   wr_id);
}

// --bw: keep up to `depth` reads posted, as ib_read_bw does, with lesson 07's
// loop (lab::stream_work_requests). The device starts at most max_rd_atomic
// of them at once; the rest wait in the send queue.
void measure_bandwidth(ibv_qp* qp, ibv_cq* cq, std::span<std::byte> local, std::uint32_t lkey,
                       const lab::ConnectionInfo& remote, const lab::Options& options,
                       std::size_t depth, lab::PeerWatch peer_gone) {
    const auto elapsed = lab::stream_work_requests(
        cq, options.iters, depth, "RDMA read",
        [&](std::uint64_t wr_id, unsigned send_flags) {
            post_read(qp, local, lkey, remote, send_flags, wr_id);
        },
        options.timeout, peer_gone);
    lab::print_bandwidth(options.size, options.iters, elapsed);
}

// --lat: one read at a time, as ib_read_lat does. A read is a whole round trip
// (request out, data back), so its time is not halved.
void measure_latency(ibv_qp* qp, ibv_cq* cq, std::span<std::byte> local, std::uint32_t lkey,
                     const lab::ConnectionInfo& remote, const lab::Options& options,
                     lab::PeerWatch peer_gone) {
    std::vector<double> microseconds;
    microseconds.reserve(options.iters);
    // One clock reading per iteration: each read ends where the next begins.
    auto previous = Clock::now();
    for (std::size_t i = 1; i <= options.iters; ++i) {
        post_read(qp, local, lkey, remote, IBV_SEND_SIGNALED, i);
        lab::wait_for_completion(cq, "RDMA read", options.timeout, peer_gone);
        const auto now = Clock::now();
        microseconds.push_back(std::chrono::duration<double, std::micro>(now - previous).count());
        previous = now;
    }
    lab::print_latency(options.size, std::move(microseconds));
}

}  // namespace

int main(int argc, char** argv) {
    lab::CommandLine command_line(
        "RDMA read bandwidth and latency with lesson 09's code, like ib_read_bw and ib_read_lat",
        lab::kDevice | lab::kTcpPort | lab::kSize | lab::kIters | lab::kTimeout | lab::kServerArg);
    bool bandwidth = false;
    bool latency = false;
    std::size_t depth = 64;
    int rd_atomic = 16;
    const lab::Argument bw_flag =
        command_line.flag("--bw", bandwidth, "measure bandwidth (like ib_read_bw)");
    command_line.flag("--lat", latency, "measure latency (like ib_read_lat)").excludes(bw_flag);
    command_line.option("--depth", depth, "reads posted at once in --bw", {.min = 1, .max = 4096});
    command_line.option("--rd-atomic", rd_atomic,
                        "reads in flight: max_rd_atomic (client) and max_dest_rd_atomic (server)",
                        {.min = 1, .max = 255});
    const lab::Options options = command_line.parse(argc, argv);

    return lab::run_main([&] {
        if (!bandwidth && !latency) {
            throw lab::Error("nothing to measure (hint: give --bw or --lat)");
        }
        const bool is_server = options.is_server();
        const lab::Port port = lab::open_port(options);
        ibv_device_attr device_attr{};
        lab::check(ibv_query_device(port.context.get(), &device_attr), "ibv_query_device");
        lab::check_rd_atomic(device_attr, rd_atomic);
        const lab::ProtectionDomain pd = lab::alloc_pd(port.context.get());
        std::vector<std::byte> buffer(options.size);
        const int access = is_server ? IBV_ACCESS_REMOTE_READ : IBV_ACCESS_LOCAL_WRITE;
        const lab::MemoryRegion mr = lab::register_memory(pd.get(), buffer, access);
        const lab::CompletionQueue cq =
            lab::create_cq(port.context.get(), static_cast<int>(depth) + 16);
        const lab::QueuePair qp =
            lab::create_rc_qp(pd.get(), cq.get(), cq.get(),
                              {.send_wr = static_cast<std::uint32_t>(depth) + 1, .recv_wr = 1});
        auto [remote, connection] =
            lab::connect_qp(qp.get(), port, options,
                            {.access = IBV_ACCESS_REMOTE_READ,
                             .region = is_server ? mr.get() : nullptr,
                             .rd_atomic = static_cast<std::uint8_t>(rd_atomic)});
        connection.barrier(options.timeout);  // both QPs are ready: the client may read

        if (is_server) {
            // Nothing to do while the client reads. A client that dies closes its
            // socket and ends this wait at once; the bound is only for a client
            // that stops answering, so it grows with the work asked for.
            connection.barrier(options.timeout + std::chrono::milliseconds(options.iters));
            return 0;
        }
        if (remote.length < options.size) {
            throw lab::Error("the server's region has " + std::to_string(remote.length) +
                             " bytes, fewer than --size (hint: give both sides the same -s)");
        }
        if (bandwidth) {
            std::printf("%zu reads posted at a time, at most %d in flight (max_rd_atomic)\n", depth,
                        rd_atomic);
            measure_bandwidth(qp.get(), cq.get(), buffer, mr->lkey, remote, options, depth,
                              connection.watch());
        } else {
            measure_latency(qp.get(), cq.get(), buffer, mr->lkey, remote, options,
                            connection.watch());
        }
        connection.barrier(options.timeout);
        return 0;
    });
}

// Lesson 07: RDMA write — a one-sided operation.
//
// The server registers a buffer that peers may write (IBV_ACCESS_REMOTE_WRITE)
// and sends its address and rkey to the client. The client then writes
// "hello verbs" straight into that memory with IBV_WR_RDMA_WRITE. The
// server's CPU takes no part in the transfer: it posts no receive and polls
// no completion for it; its CQ stays empty. A TCP barrier afterwards tells
// the server that the bytes are there, and it prints them.
//
// Also taught here: IBV_SEND_INLINE (the payload travels inside the work
// request, so the device does not read it from memory), what a wrong rkey or
// an address past the end of the region does (IBV_WC_REM_ACCESS_ERR), and how
// to measure bandwidth (--bw) and latency (--lat) the way perftest does.
//
// Run:   ./lab run 07_rdma_write                      (server and client)
//        ./lab run 07_rdma_write --wrong-rkey         (the client uses a wrong rkey)
//        ./lab run 07_rdma_write --bw -s 65536 -n 2000 --depth 64
//        ./lab run 07_rdma_write --lat -s 8 -n 2000
// By hand: 07_rdma_write [flags]             (server)
//          07_rdma_write [flags] SERVER      (client, the same flags)
//
// The ten steps: 1 device list, 2 open, 3 query, 4 PD, 5 MR, 6 CQ, 7 QP,
// 8 INIT/RTR/RTS, 9 post and poll, 10 clean up.

#include <infiniband/verbs.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
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

constexpr std::string_view kGreeting = "hello verbs";

enum class Mode { kHello, kBandwidth, kLatency };

// The options only this lesson has.
struct LessonOptions {
    Mode mode = Mode::kHello;
    bool wrong_rkey = false;
    bool wrong_address = false;
    bool use_inline = false;
    std::size_t depth = 64;
};

// Step 9: one RDMA write. The remote side is named only by an address and an
// rkey: no receive is consumed there, and nothing runs on the peer's CPU.
void post_write(ibv_qp* qp, std::span<const std::byte> local, std::uint32_t lkey,
                std::uint64_t remote_addr, std::uint32_t rkey, unsigned send_flags,
                std::uint64_t wr_id) {
    ibv_sge sge{};
    sge.addr = reinterpret_cast<std::uintptr_t>(local.data());
    sge.length = static_cast<std::uint32_t>(local.size());
    sge.lkey = lkey;  // ignored with IBV_SEND_INLINE: the bytes are copied at post time

    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = send_flags;
    wr.wr.rdma.remote_addr = remote_addr;
    wr.wr.rdma.rkey = rkey;

    ibv_send_wr* bad_wr = nullptr;
    lab::check(ibv_post_send(qp, &wr, &bad_wr), "ibv_post_send(IBV_WR_RDMA_WRITE)",
               "more work requests outstanding than max_send_wr, or an inline payload above "
               "max_inline_data?");
}

// How long the server waits for a measuring client to finish. A client that
// dies closes its socket and ends the wait at once; this bound is only for a
// client that stops answering, so it grows with the work asked for.
std::chrono::milliseconds run_timeout(const lab::Options& options) {
    return options.timeout + std::chrono::milliseconds(options.iters);
}

// Busy-wait until the peer's write changes the last byte of @p area to @p marker.
// @p peer_gone (lab::Connection::watch) ends the wait early if the peer exits.
void wait_for_marker(std::span<std::byte> area, std::uint8_t marker,
                     std::chrono::milliseconds timeout, lab::PeerWatch peer_gone) {
    // The device writes this memory behind the compiler's back: read it through
    // an atomic so that every iteration really loads it.
    std::atomic_ref<std::byte> last(area.back());
    // Reading the clock is not free (a system call on a machine without a
    // usable TSC), so it is read only every few thousand spins: a message that
    // is already there costs no clock read. The same deadline also looks at
    // the peer now and then.
    lab::Deadline deadline(timeout, peer_gone);
    for (unsigned spins = 1; last.load(std::memory_order_acquire) != std::byte{marker}; ++spins) {
        if (spins % 4096 == 0 && !deadline.still_waiting()) {
            throw lab::Error("no write from the peer within " + std::to_string(timeout.count()) +
                             " ms (hint: is the peer still running, with the same -s and -n?)");
        }
    }
}

// --bw (client): keep up to --depth writes outstanding, as ib_write_bw does.
// Only every signal_every-th write asks for a completion (IBV_SEND_SIGNALED):
// one completion also retires all unsignaled writes posted before it, because
// a send queue completes in order.
void measure_bandwidth(ibv_qp* qp, ibv_cq* cq, std::span<const std::byte> local, std::uint32_t lkey,
                       const lab::ConnectionInfo& remote, const lab::Options& options,
                       const LessonOptions& flags, lab::PeerWatch peer_gone) {
    const std::size_t iters = options.iters;
    // Every 8th of 64 (lab::signal_interval): measured on rxe, fewer completions
    // (every 32nd or 64th) made the send queue drain in bursts, and every one
    // cost polling.
    const std::size_t signal_every = lab::signal_interval(flags.depth);
    std::size_t posted = 0;
    std::size_t completed = 0;
    const auto start = Clock::now();
    while (completed < iters) {
        while (posted < iters && posted - completed < flags.depth) {
            ++posted;
            const bool signaled = posted % signal_every == 0 || posted == iters;
            post_write(qp, local, lkey, remote.remote_addr, remote.rkey,
                       signaled ? IBV_SEND_SIGNALED : 0, posted);
        }
        // wr_id counts the writes up to this one, all of which are now done.
        completed = lab::wait_for_completion(cq, "RDMA write", options.timeout, peer_gone).wr_id;
    }
    lab::print_bandwidth(options.size, iters, Clock::now() - start);
}

// --lat (both sides): ping-pong, as ib_write_lat does. Each side writes a
// message into the peer's receive area; the peer sees it arrive by watching
// the last byte change (no completion is needed to detect a write), then
// writes back. Half a round trip is the one-way latency.
void measure_latency(ibv_qp* qp, ibv_cq* cq, std::span<std::byte> buffer, std::uint32_t lkey,
                     std::uint32_t max_inline, const lab::ConnectionInfo& remote,
                     const lab::Options& options, const LessonOptions& flags,
                     lab::PeerWatch peer_gone) {
    const std::size_t size = options.size;
    const auto receive_area = buffer.first(size);       // the peer writes here
    const auto send_area = buffer.subspan(size, size);  // we write from here
    // On a hardware NIC, IBV_SEND_INLINE saves the DMA read of a small
    // payload. Soft-RoCE copies every payload in software anyway, and on it
    // inline writes measure slower (perftest turns inline off on rxe too):
    // so it is opt-in here (--inline), to be measured rather than assumed.
    unsigned send_flags = IBV_SEND_SIGNALED;
    if (flags.use_inline && size <= max_inline) {
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
            wait_for_marker(receive_area, marker, options.timeout,
                            peer_gone);  // the server answers
        }
        send_area.back() = std::byte{marker};
        post_write(qp, send_area, lkey, remote.remote_addr, remote.rkey, send_flags, i);
        lab::wait_for_completion(cq, "RDMA write", options.timeout, peer_gone);
        if (is_client) {
            wait_for_marker(receive_area, marker, options.timeout, peer_gone);
        }
        const auto now = Clock::now();
        const std::chrono::duration<double, std::micro> round_trip = now - previous;
        microseconds.push_back(round_trip.count() / 2);
        previous = now;
    }
    if (!is_client) {
        return;
    }
    lab::print_latency(size, std::move(microseconds));
}

}  // namespace

int main(int argc, char** argv) {
    lab::CommandLine command_line(
        "Lesson 07: RDMA write, a one-sided operation",
        lab::kDevice | lab::kTcpPort | lab::kSize | lab::kIters | lab::kTimeout | lab::kServerArg);
    LessonOptions flags;
    bool bandwidth = false;
    bool latency = false;
    auto& app = command_line.app();
    auto* bw_flag = app.add_flag("--bw", bandwidth, "measure bandwidth (like ib_write_bw)");
    auto* lat_flag =
        app.add_flag("--lat", latency, "measure latency (like ib_write_lat)")->excludes(bw_flag);
    app.add_flag("--wrong-rkey", flags.wrong_rkey, "client: write with a wrong rkey")
        ->excludes(bw_flag)
        ->excludes(lat_flag);
    app.add_flag("--wrong-address", flags.wrong_address,
                 "client: write across the end of the region")
        ->excludes(bw_flag)
        ->excludes(lat_flag);
    app.add_flag("--inline", flags.use_inline, "--lat: send messages up to max_inline_data inline")
        ->needs(lat_flag);
    app.add_option("--depth", flags.depth, "writes outstanding at once in --bw")
        ->check(CLI::Range(std::size_t{1}, std::size_t{4096}))
        ->capture_default_str();
    const lab::Options options = command_line.parse(argc, argv);
    flags.mode = bandwidth ? Mode::kBandwidth : latency ? Mode::kLatency : Mode::kHello;

    return lab::run_main([&] {
        const bool is_server = options.is_server();
        if (flags.mode == Mode::kHello && options.size < kGreeting.size() + 1) {
            throw lab::Error("--size " + std::to_string(options.size) + " cannot hold \"" +
                             std::string(kGreeting) + "\" (hint: use at least " +
                             std::to_string(kGreeting.size() + 1) + " bytes)");
        }

        // Steps 1-3 (lesson 01): open the device, query the port, choose the GID.
        const lab::Port port = lab::open_port(options);
        std::printf("Step 1-3: %s port %u, GID index %d (%s)\n",
                    ibv_get_device_name(port.context->device), port.number, port.gid.index,
                    lab::gid_to_string(port.gid.gid).c_str());

        // Step 4 (lesson 02): the protection domain.
        const lab::ProtectionDomain pd = lab::alloc_pd(port.context.get());

        // Step 5: register memory (ibv_reg_mr, through lab::register_memory).
        // What a region may be used for is decided here. The server's region is the target of the
        // client's writes, so it needs IBV_ACCESS_REMOTE_WRITE, and the verbs demand LOCAL_WRITE
        // with it (the device writes into this memory on the peer's behalf). The client only reads
        // its own buffer to send it: LOCAL_WRITE is not needed there, and 0 grants nothing to any
        // peer. --lat writes both ways.
        const std::size_t buffer_size =
            flags.mode == Mode::kLatency ? 2 * options.size : options.size;
        std::vector<std::byte> buffer(buffer_size);
        const int access = (is_server || flags.mode == Mode::kLatency)
                               ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE
                               : 0;
        const lab::MemoryRegion mr = lab::register_memory(pd.get(), buffer, access);
        std::printf("Step 5: registered %zu bytes, lkey 0x%x, rkey 0x%x, access %s\n",
                    buffer.size(), mr->lkey, mr->rkey,
                    access != 0 ? "LOCAL_WRITE | REMOTE_WRITE" : "none (local read only)");

        // Steps 6-7 (lessons 03-04): one CQ for both queues, an RC QP. Ask for
        // room to carry a small payload inline.
        const int cq_entries = static_cast<int>(flags.depth) + 16;
        const lab::CompletionQueue cq = lab::create_cq(port.context.get(), cq_entries);
        lab::QueueSizes sizes;
        sizes.send_wr = static_cast<std::uint32_t>(flags.depth) + 1;
        sizes.recv_wr = 1;  // no receive is ever posted: writes consume none
        sizes.inline_data = 64;
        const lab::QueuePair qp = lab::create_rc_qp(pd.get(), cq.get(), cq.get(), sizes);

        // The device may grant more inline room than asked for, never less
        // (or ibv_create_qp fails); ibv_query_qp tells what it granted.
        ibv_qp_attr qp_attr{};
        ibv_qp_init_attr qp_init{};
        lab::check(ibv_query_qp(qp.get(), &qp_attr, IBV_QP_CAP, &qp_init), "ibv_query_qp");
        const std::uint32_t max_inline = qp_init.cap.max_inline_data;
        std::printf("Step 7: QP 0x%06x, max_inline_data granted: %u bytes\n", qp->qp_num,
                    max_inline);

        // Step 8 (lesson 05): INIT, the exchange, RTR, RTS. The QP, too, must
        // allow remote writes (qp_access_flags at INIT): a write is refused
        // unless both the QP and the MR permit it. The exchange also hands
        // over, for one-sided work, the region's address, rkey and length.
        auto [remote, connection] = lab::connect_qp(
            qp.get(), port, options,
            {.access = IBV_ACCESS_REMOTE_WRITE,
             .region = access != 0 ? mr.get() : nullptr,
             .region_length = flags.mode == Mode::kLatency ? options.size : buffer.size()});
        if (!is_server) {
            std::printf("  remote buffer:  addr 0x%llx, rkey 0x%x, length %u\n",
                        static_cast<unsigned long long>(remote.remote_addr), remote.rkey,
                        remote.length);
        }
        std::printf("Step 8: QP is in RTS\n");
        connection.barrier(options.timeout);  // both QPs are ready: the client may write

        // Step 9: the work.
        if (flags.mode == Mode::kLatency) {
            if (remote.length < options.size) {
                throw lab::Error("the peer's region has " + std::to_string(remote.length) +
                                 " bytes, fewer than --size (hint: give both sides the same -s)");
            }
            measure_latency(qp.get(), cq.get(), buffer, mr->lkey, max_inline, remote, options,
                            flags, connection.watch());
            connection.barrier(options.timeout);
            return 0;
        }

        if (is_server) {
            // The server does nothing while the client writes: no receive was
            // posted, and no completion will come. It only waits for the
            // client to say "done" over TCP.
            connection.barrier(flags.mode == Mode::kBandwidth ? run_timeout(options)
                                                              : options.timeout);
            ibv_wc wc{};
            const int found = ibv_poll_cq(cq.get(), 1, &wc);
            lab::check(found < 0 ? -1 : 0, "ibv_poll_cq");
            std::printf(
                "Step 9: completions on the server's CQ: %d (the write needed no work "
                "here)\n",
                found);
            if (flags.mode == Mode::kHello) {
                std::printf("Step 9: the server's buffer holds: \"%s\"\n",
                            lab::text_in(buffer).c_str());
            }
            std::printf("Step 10: cleaning up\n");
            return 0;
        }

        if (flags.mode == Mode::kBandwidth) {
            if (remote.length < options.size) {
                throw lab::Error("the server's region has " + std::to_string(remote.length) +
                                 " bytes, fewer than --size (hint: give both sides the same -s)");
            }
            // The TCP connection doubles as a watch on the server: if it exits,
            // its socket closes at once, while its vanished QP may bring no
            // error completion here for a long time (none in 20 s on rxe).
            measure_bandwidth(qp.get(), cq.get(), buffer, mr->lkey, remote, options, flags,
                              connection.watch());
            connection.barrier(options.timeout);
            std::printf("Step 10: cleaning up\n");
            return 0;
        }

        // Hello: the message including its terminating zero, so the server can print it.
        const auto message = std::span<std::byte>(buffer).first(kGreeting.size() + 1);
        std::memcpy(message.data(), kGreeting.data(), kGreeting.size());
        std::uint64_t target_addr = remote.remote_addr;
        std::uint32_t target_rkey = remote.rkey;
        if (flags.wrong_rkey) {
            target_rkey = remote.rkey ^ 0x5a;  // the key byte no longer matches
            std::printf("Step 9: --wrong-rkey: using rkey 0x%x instead of 0x%x\n", target_rkey,
                        remote.rkey);
        }
        if (flags.wrong_address) {
            target_addr = remote.remote_addr + remote.length - 4;
            std::printf(
                "Step 9: --wrong-address: writing %zu bytes at offset %u of a %u-byte region\n",
                message.size(), remote.length - 4, remote.length);
        }
        // Small enough to travel inside the work request: IBV_SEND_INLINE lets
        // the buffer be reused as soon as ibv_post_send returns.
        unsigned send_flags = IBV_SEND_SIGNALED;
        if (message.size() <= max_inline) {
            send_flags |= IBV_SEND_INLINE;
        }
        post_write(qp.get(), message, mr->lkey, target_addr, target_rkey, send_flags, 1);
        std::printf("Step 9: posted IBV_WR_RDMA_WRITE of \"%s\" (%zu bytes%s)\n",
                    std::string(kGreeting).c_str(), message.size(),
                    (send_flags & IBV_SEND_INLINE) != 0 ? ", inline" : "");

        // The completion on the client's own CQ means the server's device
        // acknowledged the data: it is in the server's memory.
        const ibv_wc wc =
            lab::wait_for_completion(cq.get(), "RDMA write", options.timeout, connection.watch());
        std::printf("Step 9: write completed: %s, opcode IBV_WC_RDMA_WRITE=%d\n",
                    ibv_wc_status_str(wc.status), wc.opcode);
        connection.barrier(options.timeout);  // tells the server: look now
        std::printf("Step 10: cleaning up\n");
        return 0;
    });
}

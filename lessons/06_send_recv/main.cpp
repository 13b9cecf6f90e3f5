// Lesson 06: send and receive — steps 9 and 10, the whole hello world.
//
// Two processes connect their RC QPs as in lesson 05. Then the data moves:
// the server posts a receive (ibv_post_recv), the client posts a send
// (ibv_post_send), and both learn that it happened from a work completion
// (ibv_poll_cq). First one greeting, then a ping-pong of --iters messages of
// --size bytes, timed and reported as ibv_rc_pingpong reports it.
//
// A send needs a receive already posted on the other side. With --rnr-demo
// (give it to both sides) the client sends before the server has posted
// one, with rnr_retry 0, and gets IBV_WC_RNR_RETRY_EXC_ERR (status 13).
//
// Run:   ./lab run 06_send_recv                (server)
//        ./lab run 06_send_recv 127.0.0.1      (client, in a second shell)
//        options: -d DEV -i PORT -g GID_INDEX -p TCP_PORT -s SIZE -n ITERS
//                 --timeout SECONDS --rnr-demo
//
// The ten steps: 1 device list, 2 open, 3 query, 4 PD, 5 MR, 6 CQ, 7 QP,
// 8 INIT/RTR/RTS, 9 post and poll, 10 clean up. This lesson teaches 9 and 10.

#include <infiniband/verbs.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/device.hpp"
#include "lab/exchange.hpp"
#include "lab/options.hpp"
#include "lab/resources.hpp"
#include "lab/verbs.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// wr_id is ours to choose; the completion hands it back, so it says which
// request completed.
constexpr std::uint64_t kSendId = 1;
constexpr std::uint64_t kReceiveId = 2;

// How many receives the ping-pong keeps posted, as ibv_rc_pingpong's rx_depth:
// the peer's next message must never find the receive queue empty.
constexpr std::uint32_t kReceiveDepth = 500;

// Step 9a: post one receive for the whole buffer. The buffer is where the
// next incoming send lands; the lkey proves this process registered it.
void post_receive(ibv_qp* qp, ibv_mr* mr, std::span<std::byte> buffer) {
    ibv_sge sge{};
    sge.addr = reinterpret_cast<std::uintptr_t>(buffer.data());
    sge.length = static_cast<std::uint32_t>(buffer.size());
    sge.lkey = mr->lkey;
    ibv_recv_wr wr{};
    wr.wr_id = kReceiveId;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad_wr = nullptr;
    lab::check(ibv_post_recv(qp, &wr, &bad_wr), "ibv_post_recv",
               "is the receive queue full (max_recv_wr) or the QP in RESET?");
}

// Step 9b: post one send of @p message. IBV_SEND_SIGNALED asks for a
// completion; the QP was created with sq_sig_all off, so it is needed.
void post_send(ibv_qp* qp, ibv_mr* mr, std::span<const std::byte> message) {
    ibv_sge sge{};
    sge.addr = reinterpret_cast<std::uintptr_t>(message.data());
    sge.length = static_cast<std::uint32_t>(message.size());
    sge.lkey = mr->lkey;
    ibv_send_wr wr{};
    wr.wr_id = kSendId;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad_wr = nullptr;
    lab::check(ibv_post_send(qp, &wr, &bad_wr), "ibv_post_send",
               "is the QP in RTS, and the send queue not full (max_send_wr)?");
}

// Step 9c: busy-poll the CQ for one completion. ibv_poll_cq never blocks: it
// returns 0 while nothing has completed, so the deadline is ours to keep.
ibv_wc poll_one(ibv_cq* cq, std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    ibv_wc wc{};
    for (;;) {
        const int found = ibv_poll_cq(cq, 1, &wc);
        if (found < 0) {
            lab::fail("ibv_poll_cq", EIO, "the CQ overran or the device failed");
        }
        if (found == 1) {
            return wc;
        }
        if (Clock::now() > deadline) {
            throw lab::Error("no completion within " + std::to_string(timeout.count() / 1000) +
                             " s (hint: is the peer still running?)");
        }
    }
}

// What IBV_WC_RNR_RETRY_EXC_ERR means, for --rnr-demo.
void explain_rnr(const ibv_wc& wc) {
    std::printf("client: the send completed with status %d: %s\n", int(wc.status),
                ibv_wc_status_str(wc.status));
    std::printf("client: what it means: %s\n", std::string(lab::wc_status_hint(wc.status)).c_str());
    std::printf(
        "client: the server's QP answered with an RNR NAK (receiver not ready): its receive\n"
        "        queue was empty. With rnr_retry 0 the sender gives up at the first NAK;\n"
        "        with rnr_retry 7 (the default here) it would wait min_rnr_timer and retry\n"
        "        forever. The fix: post the receive before the peer sends, and keep\n"
        "        enough receives posted (ibv_rc_pingpong keeps 500).\n");
    std::printf(
        "client: the QP is now in the error state; every later request would be\n"
        "        flushed (IBV_WC_WR_FLUSH_ERR) until it is reset.\n");
}

}  // namespace

int main(int argc, char** argv) {
    lab::CommandLine command_line(
        "Lesson 06: RC send/receive between two processes, then a timed ping-pong",
        lab::kDevice | lab::kTcpPort | lab::kSize | lab::kIters | lab::kServerArg);
    int timeout_seconds = 20;
    command_line.app()
        .add_option(
            "--timeout", timeout_seconds,
            "seconds to wait for the peer: to connect, at each barrier, for each completion")
        ->check(CLI::Range(1, 3600))
        ->capture_default_str();
    bool rnr_demo = false;
    command_line.app().add_flag(
        "--rnr-demo", rnr_demo,
        "the client sends before the server posts its receive, with rnr_retry 0 (both sides)");
    const lab::Options options = command_line.parse(argc, argv);
    const std::chrono::milliseconds timeout = std::chrono::seconds(timeout_seconds);

    return lab::run_main([&] {
        const char* role = options.is_server() ? "server" : "client";

        // Steps 1-3 (lesson 01): device, port, GID.
        lab::Context context = lab::open_device(options.device);
        const ibv_port_attr port_attr = lab::query_port(context.get(), options.ib_port);
        const lab::GidChoice gid =
            lab::choose_gid(context.get(), options.ib_port, options.gid_index);

        // Steps 4-7 (lessons 02-04). One buffer serves every send and receive;
        // LOCAL_WRITE lets a receive write into it. One CQ takes both kinds of
        // completion, like ibv_rc_pingpong's.
        lab::ProtectionDomain pd = lab::alloc_pd(context.get());
        // Page-aligned, as ibv_rc_pingpong's buffer: a 4 KiB message then lies
        // in one page, and the device maps one page per message, not two.
        constexpr std::size_t kPage = 4096;
        std::vector<std::byte> storage(options.size + kPage);
        void* start_of_page = storage.data();
        std::size_t space = storage.size();
        std::align(kPage, options.size, start_of_page, space);
        const std::span<std::byte> buffer(static_cast<std::byte*>(start_of_page), options.size);
        lab::MemoryRegion mr = lab::register_memory(pd.get(), buffer, IBV_ACCESS_LOCAL_WRITE);
        lab::CompletionQueue cq = lab::create_cq(context.get(), kReceiveDepth + 16);
        lab::QueueSizes sizes;
        sizes.send_wr = 16;
        sizes.recv_wr = kReceiveDepth;
        lab::QueuePair qp = lab::create_rc_qp(pd.get(), cq.get(), cq.get(), sizes);

        // Step 8 (lessons 04-05): INIT, exchange over TCP, RTR, RTS.
        lab::move_to_init(qp.get(), options.ib_port, IBV_ACCESS_LOCAL_WRITE);
        lab::ConnectionInfo mine;
        mine.address = {qp->qp_num, lab::random_psn(), port_attr.lid, gid.gid};
        lab::print_address("local", mine.address);
        lab::Connection connection =
            options.is_server()
                ? lab::Connection::accept_one(options.tcp_port, timeout)
                : lab::Connection::connect_to(options.server, options.tcp_port, timeout);
        const lab::ConnectionInfo peer = connection.exchange(mine, timeout);
        lab::print_address("remote", peer.address);
        lab::move_to_rtr(qp.get(), {options.ib_port, gid.index, port_attr.active_mtu},
                         peer.address);
        // rnr_retry: how often a send that met an empty receive queue is
        // retried; 7 means forever, 0 means never (the demo).
        const std::uint8_t rnr_retry = rnr_demo ? 0 : 7;
        lab::move_to_rts(qp.get(), mine.address.psn, 16, rnr_retry);

        // Part 1: hello world. The order matters: a send that arrives before
        // its receive is posted is refused (RNR), so the server posts first
        // and then tells the client, over TCP, that it may send.
        const std::array<std::byte, 1> go{std::byte{'R'}};
        std::array<std::byte, 1> peer_go{};
        if (options.is_server()) {
            connection.barrier(timeout);  // both QPs are in RTS
            if (rnr_demo) {
                std::printf(
                    "server: --rnr-demo: no receive is posted; the client's send "
                    "finds none\n");
                connection.barrier(timeout);  // the client has seen its completion
                return 0;
            }
            post_receive(qp.get(), mr.get(), buffer);
            connection.barrier(timeout);  // "my receive is posted: send now"
            const ibv_wc wc = poll_one(cq.get(), timeout);
            lab::check_completion(wc, "receive");
            const std::string text(reinterpret_cast<const char*>(buffer.data()), wc.byte_len);
            std::printf("server: received %u bytes: \"%s\"\n", wc.byte_len, text.c_str());
        } else {
            if (rnr_demo) {
                // Wait only for the server's half of the barrier: it is in RTS,
                // and it posts nothing until our half arrives.
                connection.receive_bytes(peer_go, timeout);
                std::printf(
                    "client: --rnr-demo: sending before the server posted a receive, "
                    "rnr_retry 0\n");
                const std::string text = "this send finds no receive";
                std::memcpy(buffer.data(), text.data(), std::min(text.size(), buffer.size()));
                post_send(qp.get(), mr.get(),
                          std::span(buffer).first(std::min(text.size(), buffer.size())));
                const ibv_wc wc = poll_one(cq.get(), timeout);
                if (wc.status != IBV_WC_RNR_RETRY_EXC_ERR) {
                    lab::check_completion(wc, "send");  // throws, unless it succeeded
                    throw lab::Error(
                        "the send succeeded: the server had a receive posted "
                        "(hint: start the server with --rnr-demo too)");
                }
                explain_rnr(wc);
                connection.send_bytes(go, timeout);  // our half of the first barrier
                connection.barrier(timeout);
                return 0;
            }
            connection.barrier(timeout);  // both QPs are in RTS
            connection.barrier(timeout);  // the server's receive is posted
            char hello[64];
            const int length =
                std::snprintf(hello, sizeof hello, "Hello from the client, QP 0x%06x", qp->qp_num);
            const std::size_t hello_size = std::min(std::size_t(length), buffer.size());
            std::memcpy(buffer.data(), hello, hello_size);
            post_send(qp.get(), mr.get(), std::span(buffer).first(hello_size));
            lab::check_completion(poll_one(cq.get(), timeout), "send");
            std::printf("client: sent %zu bytes: \"%.*s\"\n", hello_size, int(hello_size), hello);
        }
        std::fflush(stdout);

        // Part 2: the ping-pong. Each side keeps up to kReceiveDepth receives
        // posted and refills them when they run low, as ibv_rc_pingpong does,
        // so no message ever waits for a receive. The client sends first;
        // each side sends its next message once its last send has completed
        // and the peer's message has arrived.
        const std::uint32_t receive_depth =
            static_cast<std::uint32_t>(std::min<std::size_t>(kReceiveDepth, options.iters + 1));
        std::uint32_t receives_posted = 0;
        for (; receives_posted < receive_depth; ++receives_posted) {
            post_receive(qp.get(), mr.get(), buffer);
        }
        connection.barrier(timeout);  // the peer's receives are posted too
        std::printf("%s: ping-pong of %zu messages of %zu bytes each way\n", role, options.iters,
                    options.size);
        std::fflush(stdout);

        std::size_t sends_posted = 0;
        std::size_t sends_completed = 0;
        std::size_t receives_completed = 0;
        bool send_in_flight = false;
        bool receive_awaited = true;
        const auto start = Clock::now();
        if (!options.is_server()) {
            post_send(qp.get(), mr.get(), buffer);
            ++sends_posted;
            send_in_flight = true;
        }
        // For the deadline: the clock is read only while nothing completes,
        // every 4096 empty polls, never on the fast path.
        unsigned empty_polls = 0;
        std::size_t progress_seen = 0;
        auto progress_time = start;
        std::array<ibv_wc, 16> completions{};
        while (sends_completed < options.iters || receives_completed < options.iters) {
            // One call may return several completions: fewer calls, less overhead.
            const int found = ibv_poll_cq(cq.get(), int(completions.size()), completions.data());
            if (found < 0) {
                lab::fail("ibv_poll_cq", EIO, "the CQ overran or the device failed");
            }
            if (found == 0) {
                if (++empty_polls % 4096 == 0) {
                    const auto now = Clock::now();
                    if (receives_completed + sends_completed != progress_seen) {
                        progress_seen = receives_completed + sends_completed;
                        progress_time = now;
                    } else if (now - progress_time > timeout) {
                        throw lab::Error("no completion within " + std::to_string(timeout_seconds) +
                                         " s after " + std::to_string(receives_completed) +
                                         " messages (hint: is the peer still running?)");
                    }
                }
                continue;
            }
            for (const ibv_wc& wc : std::span(completions).first(std::size_t(found))) {
                if (wc.wr_id == kReceiveId) {
                    lab::check_completion(wc, "receive");
                    ++receives_completed;
                    receive_awaited = false;
                    if (--receives_posted <= 1) {
                        for (; receives_posted < receive_depth; ++receives_posted) {
                            post_receive(qp.get(), mr.get(), buffer);
                        }
                    }
                } else {
                    lab::check_completion(wc, "send");
                    ++sends_completed;
                    send_in_flight = false;
                }
            }
            if (!send_in_flight && !receive_awaited && sends_posted < options.iters) {
                post_send(qp.get(), mr.get(), buffer);
                ++sends_posted;
                send_in_flight = true;
                receive_awaited = true;
            }
        }
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        const double usec = seconds * 1e6;
        const auto bytes = static_cast<unsigned long long>(options.size) * options.iters * 2;
        std::printf("%llu bytes in %.2f seconds = %.2f Mbit/sec\n", bytes, seconds,
                    double(bytes) * 8.0 / usec);
        std::printf("%zu iters in %.2f seconds = %.2f usec/iter\n", options.iters, seconds,
                    usec / double(options.iters));

        // Both sides are done before either destroys its QP: the peer may
        // still be waiting for the acknowledgement of its last send.
        connection.barrier(timeout);

        // Step 10: clean up. The owners are destroyed in reverse order of
        // creation: connection, QP (unposted receives are flushed), CQ, MR,
        // PD, context.
        return 0;
    });
}

// SPDX-License-Identifier: MIT
// Lesson 06: send and receive — steps 9 and 10, the whole hello world.
//
// Two processes connect their RC QPs as in lesson 05. Then the data moves:
// the server posts a receive (ibv_post_recv), the client posts a send
// (ibv_post_send), and both learn that it happened from a work completion
// (ibv_poll_cq). First one greeting, then a ping-pong of --iters messages of
// --size bytes, timed and reported as ibv_rc_pingpong reports it.
//
// A send needs a receive already posted on the other side. With --rnr-demo (both
// sides) the client sends before the server posts one, with rnr_retry 0, and gets
// IBV_WC_RNR_RETRY_EXC_ERR (status 13).
//
// Run:   ./lab run 06_send_recv                (server and client; --help lists options)
//        by hand, in two terminals: ./lab shell PROGRAM (server), ./lab shell PROGRAM 10.77.0.1
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
#include <span>
#include <string>
#include <vector>

#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/connect.hpp"
#include "lab/device.hpp"
#include "lab/exchange.hpp"
#include "lab/options.hpp"
#include "lab/report.hpp"
#include "lab/resources.hpp"
#include "lab/verbs.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// Step 9 posts with ibv_post_recv and ibv_post_send (lab::post_receive and
// lab::post_send, written out in lesson 04) and waits with ibv_poll_cq. The
// completion hands our wr_id back: it says which request completed.
constexpr std::uint64_t kSendId = 1;
constexpr std::uint64_t kReceiveId = 2;

// How many receives the ping-pong keeps posted, as ibv_rc_pingpong's rx_depth:
// the peer's next message must never find the receive queue empty.
constexpr std::uint32_t kReceiveDepth = 500;

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
        "        enough receives posted (ibv_rc_pingpong keeps 500).\n"
        "client: the QP is now in the error state; every later request would be\n"
        "        flushed (IBV_WC_WR_FLUSH_ERR) until it is reset.\n");
}

}  // namespace

int main(int argc, char** argv) {
    lab::CommandLine command_line(
        "Lesson 06: RC send/receive between two processes, then a timed ping-pong",
        lab::kDevice | lab::kTcpPort | lab::kSize | lab::kIters | lab::kTimeout | lab::kServerArg);
    bool rnr_demo = false;
    command_line.flag(
        "--rnr-demo", rnr_demo,
        "the client sends before the server posts its receive, with rnr_retry 0 (both sides)");
    const lab::Options options = command_line.parse(argc, argv);
    const std::chrono::milliseconds timeout = options.timeout;

    return lab::run_main([&] {
        const char* role = options.is_server() ? "server" : "client";

        // Steps 1-3 (lesson 01): device, port, GID.
        const lab::Port port = lab::open_port(options);

        // Steps 4-7 (lessons 02-04). One buffer serves every send and receive (LOCAL_WRITE
        // lets a receive write into it); one CQ takes both kinds of completion.
        // That is safe only here, as in ibv_rc_pingpong: the sides strictly alternate, so
        // one message at a time is in flight, and nobody reads the ping-pong's payload.
        // Real code gives each posted receive its own buffer and sends from another:
        // a buffer with a receive posted may be written at any moment (lesson 11).
        lab::ProtectionDomain pd = lab::alloc_pd(port.context.get());
        // Page-aligned, as ibv_rc_pingpong's: a message of a page then lies in one page.
        std::vector<std::byte> storage;
        const std::span<std::byte> buffer = lab::page_aligned(storage, options.size);
        lab::MemoryRegion mr = lab::register_memory(pd.get(), buffer, IBV_ACCESS_LOCAL_WRITE);
        // An entry for each of the QP's 16 send and kReceiveDepth receive slots (lesson 03).
        lab::CompletionQueue cq = lab::create_cq(port.context.get(), kReceiveDepth + 16);
        lab::QueuePair qp = lab::create_rc_qp(pd.get(), cq.get(), cq.get(),
                                              {.send_wr = 16, .recv_wr = kReceiveDepth});

        // Step 8 (lesson 05): INIT, exchange over TCP, RTR, RTS. rnr_retry: how often a
        // send that met an empty receive queue is retried; 7 = forever, 0 = never (the demo).
        auto [peer, connection] = lab::connect_qp(
            qp.get(), port, options,
            {.access = IBV_ACCESS_LOCAL_WRITE, .rnr_retry = std::uint8_t(rnr_demo ? 0 : 7)});
        // Every wait below also ends as soon as the peer's socket closes (lesson 05).
        const lab::PeerWatch peer_gone = connection.watch();

        // Part 1: hello world. The order matters: a send that finds no receive
        // posted is answered with an RNR NAK, and the sender waits and retries
        // (rnr_retry 7: forever). So the server posts first, then tells the
        // client over TCP that it may send.
        const std::array<std::byte, 1> go{std::byte{'R'}};
        std::array<std::byte, 1> peer_go{};
        if (options.is_server()) {
            connection.barrier(timeout);  // both QPs are in RTS
            if (rnr_demo) {
                std::printf(
                    "server: --rnr-demo: no receive is posted; the client's send finds none\n");
                connection.barrier(timeout);  // the client has seen its completion
                return 0;
            }
            lab::post_receive(qp.get(), buffer, mr->lkey, kReceiveId);  // ibv_post_recv
            connection.barrier(timeout);  // "my receive is posted: send now"
            const ibv_wc wc = lab::wait_for_completion(cq.get(), "receive", timeout, peer_gone);
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
                lab::post_send(qp.get(), buffer, mr->lkey, IBV_SEND_SIGNALED, kSendId);
                const ibv_wc wc = lab::poll_completion(cq.get(), timeout, peer_gone);
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
            lab::post_send(qp.get(), std::span(buffer).first(hello_size), mr->lkey,
                           IBV_SEND_SIGNALED, kSendId);
            lab::wait_for_completion(cq.get(), "send", timeout, peer_gone);
            std::printf("client: sent %zu bytes: \"%.*s\"\n", hello_size, int(hello_size), hello);
        }

        // Part 2: the ping-pong. Each side keeps up to kReceiveDepth receives posted and
        // refills them when they run low, as ibv_rc_pingpong does. The client sends first;
        // each side sends again once its last send completed and the peer's message came.
        const std::uint32_t receive_depth =
            static_cast<std::uint32_t>(std::min<std::size_t>(kReceiveDepth, options.iters + 1));
        std::uint32_t receives_posted = 0;
        for (; receives_posted < receive_depth; ++receives_posted) {
            lab::post_receive(qp.get(), buffer, mr->lkey, kReceiveId);
        }
        connection.barrier(timeout);  // the peer's receives are posted too
        std::printf("%s: ping-pong of %zu messages of %zu bytes each way\n", role, options.iters,
                    options.size);

        std::size_t sends_posted = 0;
        std::size_t sends_completed = 0;
        std::size_t receives_completed = 0;
        bool send_in_flight = false;
        bool receive_awaited = true;
        const auto start = Clock::now();
        if (!options.is_server()) {
            lab::post_send(qp.get(), buffer, mr->lkey, IBV_SEND_SIGNALED, kSendId);
            ++sends_posted;
            send_in_flight = true;
        }
        // The deadline (lesson 03) reads the clock only every 4096 empty polls,
        // starts again at each completion, and watches the peer (lesson 05).
        lab::Deadline idle(timeout, peer_gone);
        unsigned empty_polls = 0;
        std::array<ibv_wc, 16> completions{};
        while (sends_completed < options.iters || receives_completed < options.iters) {
            // One call may return several completions: fewer calls, less overhead.
            const int found = ibv_poll_cq(cq.get(), int(completions.size()), completions.data());
            if (found < 0) {
                lab::fail("ibv_poll_cq", EIO, "the CQ overran or the device failed");
            }
            if (found == 0) {
                if (++empty_polls % 4096 == 0 && !idle.still_waiting()) {
                    throw lab::Error("no completion within " + std::to_string(timeout.count()) +
                                     " ms after " + std::to_string(receives_completed) +
                                     " messages (hint: is the peer still running?)");
                }
                continue;
            }
            idle.reset();
            for (const ibv_wc& wc : std::span(completions).first(std::size_t(found))) {
                if (wc.status != IBV_WC_SUCCESS) {
                    peer_gone.throw_if_gone();  // a dead peer is the cause, not the symptom
                }
                if (wc.wr_id == kReceiveId) {
                    lab::check_completion(wc, "receive");
                    ++receives_completed;
                    receive_awaited = false;
                    if (--receives_posted <= 1) {
                        for (; receives_posted < receive_depth; ++receives_posted) {
                            lab::post_receive(qp.get(), buffer, mr->lkey, kReceiveId);
                        }
                    }
                } else {
                    lab::check_completion(wc, "send");
                    ++sends_completed;
                    send_in_flight = false;
                }
            }
            if (!send_in_flight && !receive_awaited && sends_posted < options.iters) {
                lab::post_send(qp.get(), buffer, mr->lkey, IBV_SEND_SIGNALED, kSendId);
                ++sends_posted;
                send_in_flight = true;
                receive_awaited = true;
            }
        }
        lab::print_pingpong(options.size, options.iters, Clock::now() - start);

        // Both sides are done before either destroys its QP: the peer may
        // still be waiting for the acknowledgement of its last send.
        connection.barrier(timeout);

        // Step 10: clean up. The owners are destroyed in reverse order of creation:
        // connection, QP (its unused receives are discarded without a completion;
        // only a move to ERR flushes them), CQ, MR, PD, context.
        return 0;
    });
}

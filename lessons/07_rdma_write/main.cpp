// SPDX-License-Identifier: MIT
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
// request, so the device does not read it from memory), and what a wrong rkey
// or an address past the end of the region does (IBV_WC_REM_ACCESS_ERR).
// Measuring writes the way ib_write_bw and ib_write_lat do is not part of the
// lesson: bench/07_rdma_write.cpp does it, and `./lab bench` compares it.
//
// Run:   ./lab run 07_rdma_write                      (server and client)
//        ./lab run 07_rdma_write --wrong-rkey         (the client uses a wrong rkey)
//        ./lab run 07_rdma_write --wrong-address      (the client writes past the end)
// By hand, in two terminals: ./lab shell PROGRAM [flags]             (server)
//                            ./lab shell PROGRAM [flags] 10.77.0.1   (client)
//
// The ten steps: 1 device list, 2 open, 3 query, 4 PD, 5 MR, 6 CQ, 7 QP,
// 8 INIT/RTR/RTS, 9 post and poll, 10 clean up.

#include <infiniband/verbs.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
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

constexpr std::string_view kGreeting = "hello verbs";

// The options only this lesson has.
struct LessonOptions {
    bool wrong_rkey = false;
    bool wrong_address = false;
    std::size_t inline_size = 0;  // --inline N: write N bytes, always with IBV_SEND_INLINE
};

// Step 9: one RDMA write. The remote side is named only by an address and an
// rkey: no receive is consumed there, and nothing runs on the peer's CPU.
void post_write(ibv_qp* qp, std::span<const std::byte> local, std::uint32_t lkey,
                std::uint64_t remote_addr, std::uint32_t rkey, unsigned send_flags) {
    ibv_sge sge{};
    sge.addr = reinterpret_cast<std::uintptr_t>(local.data());
    sge.length = static_cast<std::uint32_t>(local.size());
    sge.lkey = lkey;  // ignored with IBV_SEND_INLINE: the bytes are copied at post time

    ibv_send_wr wr{};
    wr.wr_id = 1;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = send_flags;
    wr.wr.rdma.remote_addr = remote_addr;
    wr.wr.rdma.rkey = rkey;

    ibv_send_wr* bad_wr = nullptr;
    lab::check(ibv_post_send(qp, &wr, &bad_wr), "ibv_post_send(IBV_WR_RDMA_WRITE)",
               "an inline payload above max_inline_data, or a full send queue?");
}

}  // namespace

int main(int argc, char** argv) {
    lab::CommandLine command_line(
        "Lesson 07: RDMA write, a one-sided operation",
        lab::kDevice | lab::kTcpPort | lab::kSize | lab::kTimeout | lab::kServerArg);
    LessonOptions flags;
    const lab::Argument wrong_rkey =
        command_line.flag("--wrong-rkey", flags.wrong_rkey, "client: write with a wrong rkey");
    command_line
        .flag("--wrong-address", flags.wrong_address, "client: write across the end of the region")
        .excludes(wrong_rkey);
    command_line.option("--inline", flags.inline_size,
                        "client: write N bytes (the greeting, padded with dots) with "
                        "IBV_SEND_INLINE; without --inline, the usual write of the greeting",
                        {.min = kGreeting.size() + 1, .max = std::size_t{1} << 20});
    const lab::Options options = command_line.parse(argc, argv);

    return lab::run_main([&] {
        const bool is_server = options.is_server();
        if (options.size < kGreeting.size() + 1) {
            throw lab::Error("--size " + std::to_string(options.size) + " cannot hold \"" +
                             std::string(kGreeting) + "\" (hint: use at least " +
                             std::to_string(kGreeting.size() + 1) + " bytes)");
        }
        if (flags.inline_size > options.size) {
            throw lab::Error("--inline " + std::to_string(flags.inline_size) +
                             " is larger than the buffer (hint: raise -s on both sides)");
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
        // peer.
        std::vector<std::byte> buffer(options.size);
        const int access = is_server ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE : 0;
        const lab::MemoryRegion mr = lab::register_memory(pd.get(), buffer, access);
        std::printf("Step 5: registered %zu bytes, lkey 0x%x, rkey 0x%x, access %s\n",
                    buffer.size(), mr->lkey, mr->rkey,
                    is_server ? "LOCAL_WRITE | REMOTE_WRITE" : "none (local read only)");

        // Steps 6-7 (lessons 03-04): an RC QP, and one CQ for both its queues with
        // an entry for every work request they may hold (lesson 03). Ask for room to
        // carry a small payload inline.
        lab::QueueSizes sizes;
        sizes.recv_wr = 1;  // no receive is ever posted: writes consume none
        sizes.inline_data = 64;
        const lab::CompletionQueue cq =
            lab::create_cq(port.context.get(), int(sizes.send_wr + sizes.recv_wr));
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
        auto [remote, connection] = lab::connect_qp(qp.get(), port, options,
                                                    {.access = IBV_ACCESS_REMOTE_WRITE,
                                                     .region = is_server ? mr.get() : nullptr,
                                                     .region_length = buffer.size()});
        if (!is_server) {
            std::printf("  remote buffer:  addr 0x%llx, rkey 0x%x, length %u\n",
                        static_cast<unsigned long long>(remote.remote_addr), remote.rkey,
                        remote.length);
        }
        std::printf("Step 8: QP is in RTS\n");
        connection.barrier(options.timeout);  // both QPs are ready: the client may write

        // Step 9: the work.
        if (is_server) {
            // The server does nothing while the client writes: no receive was
            // posted, and no completion will come. A write is invisible to its
            // target, so the client says "done" over TCP (enough on rxe, which
            // copies the bytes into this buffer before it acknowledges them).
            // Real programs ring a doorbell on the QP instead: a SEND after the
            // write, or the write with immediate data of lesson 08. May the
            // server poll the buffer's last byte, as ib_write_lat does? The
            // specification promises no order of placement within a message;
            // ibv_query_qp_data_in_order(3) says whether this device does (1)
            // for the writes that arrive on this QP, or does not promise it (0).
            std::printf("Step 9: ibv_query_qp_data_in_order(IBV_WR_RDMA_WRITE) = %d\n",
                        ibv_query_qp_data_in_order(qp.get(), IBV_WR_RDMA_WRITE, 0));
            connection.barrier(options.timeout);
            ibv_wc wc{};
            const int found = ibv_poll_cq(cq.get(), 1, &wc);
            lab::check(found < 0 ? -1 : 0, "ibv_poll_cq");
            std::printf(
                "Step 9: completions on the server's CQ: %d (the write needed no work here)\n",
                found);
            std::printf("Step 9: the server's buffer holds: \"%s\"\n",
                        lab::text_in(buffer).c_str());
            std::printf("Step 10: cleaning up\n");
            return 0;
        }

        // The message including its terminating zero, so the server can print it
        // (--inline N: padded with dots to N bytes).
        const auto message = std::span<std::byte>(buffer).first(
            flags.inline_size > 0 ? flags.inline_size : kGreeting.size() + 1);
        std::ranges::fill(message, std::byte{'.'});
        std::memcpy(message.data(), kGreeting.data(), kGreeting.size());
        message.back() = std::byte{0};
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
        // the buffer be reused as soon as ibv_post_send returns. Above
        // max_inline_data the device cannot take it inline: ibv_post_send
        // refuses the request (--inline N asks anyway, to show it).
        unsigned send_flags = IBV_SEND_SIGNALED;
        if (message.size() <= max_inline || flags.inline_size > 0) {
            send_flags |= IBV_SEND_INLINE;
        }
        if (flags.inline_size > 0) {
            std::printf("Step 9: --inline %zu: IBV_SEND_INLINE, max_inline_data is %u\n",
                        message.size(), max_inline);
        }
        post_write(qp.get(), message, mr->lkey, target_addr, target_rkey, send_flags);
        std::printf("Step 9: posted IBV_WR_RDMA_WRITE of \"%s\" (%zu bytes%s)\n",
                    std::string(kGreeting).c_str(), message.size(),
                    (send_flags & IBV_SEND_INLINE) != 0 ? ", inline" : "");

        // The completion on the client's own CQ means the server's device
        // acknowledged the write: it arrived whole and was accepted, and the
        // buffer may be reused. It does not promise that the server's CPU sees
        // the bytes yet (FLUSH exists for that); a completion on the server's
        // side would (lesson 08). The TCP connection is watched meanwhile: a
        // server that exits closes it at once, sooner than its vanished QP ends
        // the write in an error completion (docs/devices.md#dead-peer).
        const ibv_wc wc =
            lab::wait_for_completion(cq.get(), "RDMA write", options.timeout, connection.watch());
        std::printf("Step 9: write completed: %s, opcode IBV_WC_RDMA_WRITE=%d\n",
                    ibv_wc_status_str(wc.status), wc.opcode);
        connection.barrier(options.timeout);  // tells the server: look now
        std::printf("Step 10: cleaning up\n");
        return 0;
    });
}

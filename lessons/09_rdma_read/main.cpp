// SPDX-License-Identifier: MIT
// Lesson 09: RDMA read — fetch a peer's memory without its CPU.
//
// The server registers a buffer with IBV_ACCESS_REMOTE_READ only, fills it
// and sends its address and rkey. The client reads it with IBV_WR_RDMA_READ:
// the request goes out, the server's device answers from memory, and only the
// client sees a completion. A read is bounded by how many may be in flight at
// once: max_rd_atomic on the initiator (RTS), capped by the device's
// max_qp_init_rd_atom, and max_dest_rd_atomic on the responder (RTR), capped
// by max_qp_rd_atom; the lesson prints them and sets both (--rd-atomic).
//
// Also taught here: IBV_SEND_FENCE. The client sends back what it read, with a
// send posted right behind the read. Without the fence the device may gather
// the send's bytes before the read's data has landed in them; with
// IBV_SEND_FENCE the send waits until every earlier read has completed.
//
// Run:   ./lab run 09_rdma_read                  (read, then a fenced echo)
//        ./lab run 09_rdma_read --wrong-rkey     (or --wrong-address, --no-fence)
// By hand, in two terminals: ./lab shell PROGRAM [flags]             (server)
//                            ./lab shell PROGRAM [flags] 10.77.0.1   (client)
//
// The ten steps: 1 device list, 2 open, 3 query, 4 PD, 5 MR, 6 CQ, 7 QP,
// 8 INIT/RTR/RTS, 9 post and poll, 10 clean up.

#include <infiniband/verbs.h>

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

constexpr std::string_view kServerText = "hello from the server's memory";

// The options only this lesson has.
struct LessonOptions {
    bool wrong_rkey = false;
    bool wrong_address = false;
    bool no_fence = false;
    int rd_atomic = 16;
};

// Step 9: one RDMA read of local.size() bytes from the peer's remote_addr into
// @p local. The data is written into local memory, so the local region needs
// IBV_ACCESS_LOCAL_WRITE.
void post_read(ibv_qp* qp, std::span<std::byte> local, std::uint32_t lkey,
               std::uint64_t remote_addr, std::uint32_t rkey, unsigned send_flags,
               std::uint64_t wr_id) {
    ibv_sge sge{};
    sge.addr = reinterpret_cast<std::uintptr_t>(local.data());
    sge.length = static_cast<std::uint32_t>(local.size());
    sge.lkey = lkey;
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_READ;
    wr.send_flags = send_flags;
    wr.wr.rdma.remote_addr = remote_addr;
    wr.wr.rdma.rkey = rkey;
    ibv_send_wr* bad_wr = nullptr;
    lab::check(ibv_post_send(qp, &wr, &bad_wr), "ibv_post_send(IBV_WR_RDMA_READ)",
               "more work requests outstanding than max_send_wr?");
}

}  // namespace

int main(int argc, char** argv) {
    lab::CommandLine command_line(
        "Lesson 09: RDMA read, fetching a peer's memory",
        lab::kDevice | lab::kTcpPort | lab::kSize | lab::kTimeout | lab::kServerArg);
    LessonOptions flags;
    command_line.flag("--wrong-rkey", flags.wrong_rkey, "client: read with a wrong rkey");
    command_line.flag("--wrong-address", flags.wrong_address,
                      "client: read across the end of the region");
    command_line.flag("--no-fence", flags.no_fence, "client: post the echo without IBV_SEND_FENCE");
    command_line.option("--rd-atomic", flags.rd_atomic,
                        "reads in flight: max_rd_atomic (client) and max_dest_rd_atomic (server)",
                        {.min = 1, .max = 255});
    const lab::Options options = command_line.parse(argc, argv);

    return lab::run_main([&] {
        const bool is_server = options.is_server();
        if (options.size < kServerText.size() + 1) {
            throw lab::Error("--size " + std::to_string(options.size) + " cannot hold \"" +
                             std::string(kServerText) + "\" (hint: use at least " +
                             std::to_string(kServerText.size() + 1) + " bytes)");
        }

        // Steps 1-3 (lesson 01): open the device, query the port, choose the GID.
        const lab::Port port = lab::open_port(options);
        std::printf("Step 1-3: %s port %u, GID index %d (%s)\n",
                    ibv_get_device_name(port.context->device), port.number, port.gid.index,
                    lab::gid_to_string(port.gid.gid).c_str());

        // Step 3: the device's limits on reads in flight. max_qp_rd_atom caps
        // max_dest_rd_atomic (reads a QP serves as responder), max_qp_init_rd_atom
        // caps max_rd_atomic (reads it issues as initiator). A device need not check
        // both (docs/devices.md#rd-atomic-check): lab::check_rd_atomic refuses an
        // --rd-atomic above either, naming both.
        ibv_device_attr device_attr{};
        lab::check(ibv_query_device(port.context.get(), &device_attr), "ibv_query_device");
        std::printf("Step 3: device max_qp_rd_atom %d, max_qp_init_rd_atom %d\n",
                    device_attr.max_qp_rd_atom, device_attr.max_qp_init_rd_atom);
        lab::check_rd_atomic(device_attr, flags.rd_atomic);

        // Steps 4-5: PD and memory (ibv_reg_mr, via lab::register_memory). The server's region
        // grants REMOTE_READ and nothing else: a peer may read it, never write it, and no local
        // write access is needed for that. The client's region is where read data lands, so its own
        // device must write it: LOCAL_WRITE. The server also keeps a receive buffer for the
        // client's echo.
        const lab::ProtectionDomain pd = lab::alloc_pd(port.context.get());
        std::vector<std::byte> buffer(options.size);
        const int access = is_server ? IBV_ACCESS_REMOTE_READ : IBV_ACCESS_LOCAL_WRITE;
        const lab::MemoryRegion mr = lab::register_memory(pd.get(), buffer, access);
        std::vector<std::byte> echo(options.size);
        lab::MemoryRegion echo_mr;
        if (is_server) {
            echo_mr = lab::register_memory(pd.get(), echo, IBV_ACCESS_LOCAL_WRITE);
        }
        std::printf("Step 5: registered %zu bytes, rkey 0x%x, access %s\n", buffer.size(), mr->rkey,
                    is_server ? "REMOTE_READ only" : "LOCAL_WRITE");
        if (is_server) {
            for (std::size_t i = 0; i < buffer.size(); ++i) {
                buffer[i] = std::byte(i % 251);  // a pattern a wrong offset would not match
            }
            std::memcpy(buffer.data(), kServerText.data(), kServerText.size());  // it fits
            buffer[kServerText.size()] = std::byte{0};
        }

        // Steps 6-7 (lessons 03-04): CQ and RC QP. The client has a read and a send
        // outstanding, the server one receive: the CQ has an entry for each (lesson 03).
        const lab::QueueSizes sizes{.send_wr = 2, .recv_wr = 1};
        const lab::CompletionQueue cq =
            lab::create_cq(port.context.get(), int(sizes.send_wr + sizes.recv_wr));
        const lab::QueuePair qp = lab::create_rc_qp(pd.get(), cq.get(), cq.get(), sizes);

        // Step 8 (lesson 05): INIT, the exchange of addresses and the region,
        // RTR, RTS. The QP must grant remote reads too (qp_access_flags), or
        // the device refuses them whatever the MR allows. And the read
        // limits: max_dest_rd_atomic (set in RTR, at most max_qp_rd_atom) is
        // how many reads this QP serves at once as responder; max_rd_atomic
        // (set in RTS, at most max_qp_init_rd_atom) how many it issues at once
        // as initiator. An initiator must not issue more than its responder
        // accepts: both sides here use --rd-atomic.
        auto [remote, connection] =
            lab::connect_qp(qp.get(), port, options,
                            {.access = IBV_ACCESS_REMOTE_READ,
                             .region = is_server ? mr.get() : nullptr,
                             .rd_atomic = static_cast<std::uint8_t>(flags.rd_atomic)});
        ibv_qp_attr qp_attr{};
        ibv_qp_init_attr qp_init{};
        lab::check(ibv_query_qp(qp.get(), &qp_attr,
                                IBV_QP_STATE | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC,
                                &qp_init),
                   "ibv_query_qp");
        std::printf("Step 8: QP is in %s, max_rd_atomic %u, max_dest_rd_atomic %u\n",
                    lab::qp_state_name(qp_attr.qp_state), qp_attr.max_rd_atomic,
                    qp_attr.max_dest_rd_atomic);
        if (is_server) {
            // The receive for the echo, posted before the barrier lets the client send.
            lab::post_receive(qp.get(), echo, echo_mr->lkey);  // ibv_post_recv, lesson 04
        }
        connection.barrier(options.timeout);  // both QPs are ready: the client may read

        if (is_server) {
            // The reads took no work here. The echo is a send, which does:
            // once the client says it is done, its receive has completed.
            connection.barrier(options.timeout);
            const ibv_wc wc = lab::wait_for_completion(cq.get(), "receive of the echo",
                                                       options.timeout, connection.watch());
            const std::string echoed = lab::text_in(std::span(echo).first(wc.byte_len));
            std::printf("Step 9: the client read our buffer and sent back \"%s\" (%s)\n",
                        echoed.c_str(),
                        echoed == kServerText ? "it matches" : "NOT what the buffer holds");
            std::printf("Step 10: cleaning up\n");
            return 0;
        }

        if (remote.length < options.size) {
            throw lab::Error("the server's region has " + std::to_string(remote.length) +
                             " bytes, fewer than --size (hint: give both sides the same -s)");
        }
        // Read the server's text (with its terminating zero) into our buffer.
        const auto landing = std::span(buffer).first(kServerText.size() + 1);
        std::uint64_t source_addr = remote.remote_addr;
        std::uint32_t source_rkey = remote.rkey;
        if (flags.wrong_rkey) {
            // The server's device will refuse it: IBV_WC_REM_ACCESS_ERR.
            source_rkey = remote.rkey ^ 0x5a;  // the key byte no longer matches
            std::printf("Step 9: --wrong-rkey: using rkey 0x%x instead of 0x%x\n", source_rkey,
                        remote.rkey);
        }
        if (flags.wrong_address) {
            source_addr = remote.remote_addr + remote.length - 4;
            std::printf(
                "Step 9: --wrong-address: reading %zu bytes at offset %u of a %u-byte region\n",
                landing.size(), remote.length - 4, remote.length);
        }
        post_read(qp.get(), landing, mr->lkey, source_addr, source_rkey, IBV_SEND_SIGNALED, 1);
        std::printf("Step 9: posted IBV_WR_RDMA_READ of %zu bytes\n", landing.size());

        // Right behind it, without waiting: send the same bytes back. The send
        // gathers `landing`, which the read has not necessarily filled yet;
        // IBV_SEND_FENCE holds the send until the read has completed.
        unsigned echo_flags = IBV_SEND_SIGNALED;
        if (!flags.no_fence) {
            echo_flags |= IBV_SEND_FENCE;
        }
        lab::post_send(qp.get(), landing, mr->lkey, echo_flags, 2);
        std::printf("Step 9: posted IBV_WR_SEND of the same bytes%s\n",
                    flags.no_fence ? " (no fence)" : " with IBV_SEND_FENCE");

        // Its completion (opcode IBV_WC_RDMA_READ) means the data is in our buffer.
        const ibv_wc read_wc =
            lab::wait_for_completion(cq.get(), "RDMA read", options.timeout, connection.watch());
        std::printf("Step 9: read completed: %s, byte_len %u, we read \"%s\"\n",
                    ibv_wc_status_str(read_wc.status), read_wc.byte_len,
                    lab::text_in(landing).c_str());
        lab::wait_for_completion(cq.get(), "send of the echo", options.timeout, connection.watch());
        std::printf("Step 9: echo sent\n");
        connection.barrier(options.timeout);
        std::printf("Step 10: cleaning up\n");
        return 0;
    });
}

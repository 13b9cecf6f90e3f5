// SPDX-License-Identifier: MIT
// Lesson 08: RDMA write with immediate — data in place, plus a doorbell.
//
// A plain RDMA write (lesson 07) leaves the receiver unaware that anything
// arrived. IBV_WR_RDMA_WRITE_WITH_IMM writes the data in place exactly like a
// write, and also hands the receiver a completion that carries a 32-bit
// immediate value. That completion consumes one posted receive, but none of
// the receive's buffers: the data went where the write said. The receiver
// sleeps on its CQ instead of watching memory, and the immediate value says
// which message arrived (here: the slot number).
//
// For contrast the client then sends one IBV_WR_SEND_WITH_IMM: the data goes
// into the receive's buffer, as with any send (lesson 06), and the immediate
// value comes along in the same completion.
//
// Run:   ./lab run 08_write_with_imm              (three messages, then a send)
//        ./lab run 08_write_with_imm -n 10 -s 128
// By hand, in two terminals: ./lab shell PROGRAM [flags]             (server)
//                            ./lab shell PROGRAM [flags] 10.77.0.1   (client, the same -n, -s)
//
// The ten steps: 1 device list, 2 open, 3 query, 4 PD, 5 MR, 6 CQ, 7 QP,
// 8 INIT/RTR/RTS, 9 post and poll, 10 clean up.

#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <chrono>
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

constexpr std::string_view kSendText = "and this came by send";
constexpr std::uint32_t kSendImmediate = 0xC0FFEE;
constexpr std::size_t kMaxMessages = 1000;  // each one needs a posted receive

// The text the client writes into slot @p slot.
std::string slot_message(std::size_t slot) {
    return "message " + std::to_string(slot);
}

std::string_view wc_opcode_name(ibv_wc_opcode opcode) {
    return opcode == IBV_WC_RECV_RDMA_WITH_IMM ? "IBV_WC_RECV_RDMA_WITH_IMM"
           : opcode == IBV_WC_RECV             ? "IBV_WC_RECV"
           : opcode == IBV_WC_RDMA_WRITE       ? "IBV_WC_RDMA_WRITE"
           : opcode == IBV_WC_SEND             ? "IBV_WC_SEND"
                                               : "another opcode";
}

// Step 9 (server): one receive. With @p slot empty it has no scatter/gather
// entry at all: enough for a write with immediate, which only needs a receive
// to consume, not a buffer to fill.
void post_receive(ibv_qp* qp, std::span<std::byte> slot, std::uint32_t lkey, std::uint64_t wr_id) {
    ibv_sge sge{};
    sge.addr = reinterpret_cast<std::uintptr_t>(slot.data());
    sge.length = static_cast<std::uint32_t>(slot.size());
    sge.lkey = lkey;
    ibv_recv_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = slot.empty() ? nullptr : &sge;
    wr.num_sge = slot.empty() ? 0 : 1;
    ibv_recv_wr* bad_wr = nullptr;
    lab::check(ibv_post_recv(qp, &wr, &bad_wr), "ibv_post_recv", "more receives than max_recv_wr?");
}

// Step 9 (client): a write or a send, each with a 32-bit immediate value.
// imm_data travels in network byte order: convert with htonl, and the
// receiver converts back with ntohl.
void post_with_immediate(ibv_qp* qp, ibv_wr_opcode opcode, std::span<const std::byte> local,
                         std::uint32_t lkey, std::uint64_t remote_addr, std::uint32_t rkey,
                         std::uint32_t immediate, std::uint64_t wr_id) {
    ibv_sge sge{};
    sge.addr = reinterpret_cast<std::uintptr_t>(local.data());
    sge.length = static_cast<std::uint32_t>(local.size());
    sge.lkey = lkey;
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = opcode;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(immediate);
    if (opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
        wr.wr.rdma.remote_addr = remote_addr;
        wr.wr.rdma.rkey = rkey;
    }
    ibv_send_wr* bad_wr = nullptr;
    lab::check(ibv_post_send(qp, &wr, &bad_wr),
               opcode == IBV_WR_RDMA_WRITE_WITH_IMM ? "ibv_post_send(IBV_WR_RDMA_WRITE_WITH_IMM)"
                                                    : "ibv_post_send(IBV_WR_SEND_WITH_IMM)",
               "more work requests outstanding than max_send_wr?");
}

}  // namespace

int main(int argc, char** argv) {
    lab::CommandLine command_line(
        "Lesson 08: RDMA write with immediate, a write with a doorbell",
        lab::kDevice | lab::kTcpPort | lab::kSize | lab::kIters | lab::kTimeout | lab::kServerArg);
    command_line.defaults().size = 64;  // one slot per message
    command_line.defaults().iters = 3;
    const lab::Options options = command_line.parse(argc, argv);
    const std::chrono::milliseconds timeout = options.timeout;

    return lab::run_main([&] {
        const bool is_server = options.is_server();
        const std::size_t messages = options.iters;
        const std::size_t slot_size = options.size;
        if (messages > kMaxMessages) {
            throw lab::Error("--iters " + std::to_string(messages) + " is too many (hint: each " +
                             "message needs a posted receive; use at most " +
                             std::to_string(kMaxMessages) + ")");
        }
        const std::size_t longest = std::max(slot_message(messages - 1).size(), kSendText.size());
        if (slot_size < longest + 1) {
            throw lab::Error("--size " + std::to_string(slot_size) +
                             " is too small for a message (hint: use at least " +
                             std::to_string(longest + 1) + " bytes)");
        }

        // Steps 1-3 (lesson 01): open the device, query the port, choose the GID.
        const lab::Port port = lab::open_port(options);
        std::printf("Step 1-3: %s port %u, GID index %d (%s)\n",
                    ibv_get_device_name(port.context->device), port.number, port.gid.index,
                    lab::gid_to_string(port.gid.gid).c_str());

        // Steps 4-5 (lesson 02): PD and memory. One slot per message, plus a
        // last slot that receives the send. The server's region is written
        // remotely (REMOTE_WRITE, which requires LOCAL_WRITE); the client's
        // is only read by its own device.
        const lab::ProtectionDomain pd = lab::alloc_pd(port.context.get());
        std::vector<std::byte> buffer((messages + 1) * slot_size);
        const auto slot = [&](std::size_t index) {
            return std::span<std::byte>(buffer).subspan(index * slot_size, slot_size);
        };
        const int access = is_server ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE : 0;
        const lab::MemoryRegion mr = lab::register_memory(pd.get(), buffer, access);

        // Steps 6-7 (lessons 03-04): CQ and RC QP, with a receive queue deep
        // enough for one receive per message.
        const auto queue_depth = static_cast<std::uint32_t>(messages + 1);
        const lab::CompletionQueue cq = lab::create_cq(port.context.get(), 2 * queue_depth);
        lab::QueueSizes sizes;
        sizes.send_wr = queue_depth;
        sizes.recv_wr = queue_depth;
        const lab::QueuePair qp = lab::create_rc_qp(pd.get(), cq.get(), cq.get(), sizes);

        // Step 8 (lesson 05): exchange addresses and the region, connect.
        auto [remote, connection] = lab::connect_qp(qp.get(), port, options,
                                                    {.access = IBV_ACCESS_REMOTE_WRITE,
                                                     .region = is_server ? mr.get() : nullptr,
                                                     .region_length = messages * slot_size});
        std::printf("Step 8: QP is in RTS\n");

        // Step 9a (server): post the receives before the barrier lets the
        // client send. A write with immediate that finds no receive posted is
        // refused like a send would be (receiver not ready). The receive queue
        // is consumed in order, so the buffer-less "doorbell" receives come
        // first and the receive with a buffer, for the send, comes last.
        if (is_server) {
            for (std::size_t index = 0; index < messages; ++index) {
                post_receive(qp.get(), {}, mr->lkey, index);
            }
            post_receive(qp.get(), slot(messages), mr->lkey, messages);
            std::printf("Step 9a: posted %zu receives without a buffer and 1 with one\n", messages);
        }

        connection.barrier(timeout);  // both QPs are ready

        if (is_server) {
            // Step 9b: the doorbells. Each completion says "a message is in
            // slot imm_data"; its byte_len is the length the client wrote.
            for (std::size_t received = 0; received <= messages; ++received) {
                const ibv_wc wc =
                    lab::wait_for_completion(cq.get(), "receive", timeout, connection.watch());
                const bool has_immediate = (wc.wc_flags & IBV_WC_WITH_IMM) != 0;
                const std::uint32_t immediate = has_immediate ? ntohl(wc.imm_data) : 0;
                std::printf(
                    "Step 9: completion %s, wr_id %llu, byte_len %u, IBV_WC_WITH_IMM %s, "
                    "imm_data 0x%x\n",
                    std::string(wc_opcode_name(wc.opcode)).c_str(),
                    static_cast<unsigned long long>(wc.wr_id), wc.byte_len,
                    has_immediate ? "set" : "not set", immediate);
                if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
                    if (immediate >= messages) {
                        throw lab::Error("immediate value " + std::to_string(immediate) +
                                         " names no slot (hint: both sides need the same -n)");
                    }
                    std::printf("        slot %u holds \"%s\" (written in place)\n", immediate,
                                lab::text_in(slot(immediate)).c_str());
                } else {
                    std::printf("        the receive buffer holds \"%s\" (a send lands there)\n",
                                lab::text_in(slot(messages)).c_str());
                }
            }
            connection.barrier(timeout);
            std::printf("Step 10: cleaning up\n");
            return 0;
        }

        // Step 9 (client): the writes with immediate, then the send with immediate.
        if (remote.length < messages * slot_size) {
            throw lab::Error("the server's region has " + std::to_string(remote.length) +
                             " bytes, too few for the messages (hint: give both sides the same "
                             "-n and -s)");
        }
        for (std::size_t index = 0; index < messages; ++index) {
            const std::string text = slot_message(index);
            std::memcpy(slot(index).data(), text.c_str(), text.size() + 1);
            post_with_immediate(qp.get(), IBV_WR_RDMA_WRITE_WITH_IMM,
                                slot(index).first(text.size() + 1), mr->lkey,
                                remote.remote_addr + index * slot_size, remote.rkey,
                                static_cast<std::uint32_t>(index), index);
            std::printf("Step 9: posted IBV_WR_RDMA_WRITE_WITH_IMM \"%s\" to slot %zu, imm %zu\n",
                        text.c_str(), index, index);
        }
        std::memcpy(slot(messages).data(), kSendText.data(), kSendText.size());
        post_with_immediate(qp.get(), IBV_WR_SEND_WITH_IMM,
                            slot(messages).first(kSendText.size() + 1), mr->lkey, 0, 0,
                            kSendImmediate, messages);
        std::printf("Step 9: posted IBV_WR_SEND_WITH_IMM \"%s\", imm 0x%x\n",
                    std::string(kSendText).c_str(), kSendImmediate);
        for (std::size_t done = 0; done <= messages; ++done) {
            const ibv_wc wc = lab::wait_for_completion(cq.get(), "write or send with immediate",
                                                       timeout, connection.watch());
            std::printf("Step 9: completion %s, wr_id %llu\n",
                        std::string(wc_opcode_name(wc.opcode)).c_str(),
                        static_cast<unsigned long long>(wc.wr_id));
        }
        connection.barrier(timeout);
        std::printf("Step 10: cleaning up\n");
        return 0;
    });
}

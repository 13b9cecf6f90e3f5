// SPDX-License-Identifier: MIT
// Exercise 03: an SRQ server — the program that uses your functions.
//
// One server, three clients, all in this process: the server has one RC QP
// per client, all taking their receives from one shared receive queue of 16
// slots, with the SRQ limit armed at 4. Each client sends -n messages. The
// server prints who sent each one (the completion's qp_num), and refills the
// SRQ when the limit event says it is running low.
//
// Run (./lab run builds it; on a host with an RDMA device or in the lab machine):
//   ./lab run ex03 -n 6

#include <array>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/options.hpp"
#include "srq.hpp"

int main(int argc, char** argv) {
    return lab::run_main([&] {
        lab::CommandLine command_line("Exercise 03: one server, three clients, one SRQ",
                                      lab::kDevice | lab::kIters);
        command_line.defaults().iters = 6;
        const lab::Options options = command_line.parse(argc, argv);
        constexpr std::size_t kClients = 3, kSlots = 16, kSlotSize = 64;
        constexpr std::uint32_t kLimit = 4;

        srq::Device device = srq::open(options.device, options.ib_port);
        // The server's QPs only receive, from the SRQ: at most its kSlots
        // receives can complete at once, and 64 holds them (lesson 03).
        lab::CompletionQueue server_cq = lab::create_cq(device.context.get(), 64);
        lab::SharedReceiveQueue shared = srq::create_srq(device.pd.get(), kSlots);
        std::vector<lab::CompletionQueue> client_cqs;
        std::vector<lab::QueuePair> server_qps, client_qps;
        std::map<std::uint32_t, std::size_t> client_of;  // server QPN -> client number
        for (std::size_t c = 0; c < kClients; ++c) {
            server_qps.push_back(
                srq::create_server_qp(device.pd.get(), server_cq.get(), shared.get()));
            // A CQ per client QP, with an entry for every work request that QP may hold.
            const lab::QueueSizes sizes;
            client_cqs.push_back(
                lab::create_cq(device.context.get(), int(sizes.send_wr + sizes.recv_wr)));
            client_qps.push_back(lab::create_rc_qp(device.pd.get(), client_cqs[c].get(),
                                                   client_cqs[c].get(), sizes));
            srq::connect_pair(device, server_qps[c].get(), client_qps[c].get());
            client_of[server_qps[c]->qp_num] = c;
        }
        std::vector<std::byte> server_memory(kSlots * kSlotSize),
            client_memory(kClients * kSlotSize);
        lab::MemoryRegion server_mr =
            lab::register_memory(device.pd.get(), server_memory, IBV_ACCESS_LOCAL_WRITE);
        lab::MemoryRegion client_mr = lab::register_memory(device.pd.get(), client_memory, 0);
        const srq::LocalBuffer slots{server_memory, server_mr->lkey};

        srq::post_srq_receives(shared.get(), slots, kSlotSize, kSlots, 0);
        std::size_t posted = kSlots;
        std::vector<std::size_t> free_slots;  // consumed, to be posted again
        srq::arm_srq_limit(shared.get(), kLimit);
        std::printf("server: 3 RC QPs on one SRQ of %zu receives, limit %u\n", kSlots, kLimit);

        for (std::size_t round = 0; round < options.iters; ++round) {
            if (posted < kClients) {
                // Fewer receives than the next round needs: the limit event must have come.
                if (!srq::wait_for_srq_limit(device.context.get(), shared.get(),
                                             std::chrono::seconds(2))) {
                    throw lab::Error("the SRQ ran low but IBV_EVENT_SRQ_LIMIT_REACHED never came");
                }
                for (const std::size_t slot : free_slots) {
                    srq::post_srq_receives(
                        shared.get(),
                        {std::span(server_memory).subspan(slot * kSlotSize, kSlotSize),
                         server_mr->lkey},
                        kSlotSize, 1, slot);
                }
                std::printf(
                    "server: SRQ limit reached with %zu receives left; posted %zu more, re-armed\n",
                    posted, free_slots.size());
                free_slots.clear();
                posted = kSlots;
                srq::arm_srq_limit(shared.get(), kLimit);
            }
            for (std::size_t c = 0; c < kClients; ++c) {
                const std::string text =
                    "client " + std::to_string(c) + " message " + std::to_string(round);
                std::byte* from = client_memory.data() + c * kSlotSize;
                std::memcpy(from, text.data(), text.size());
                ibv_sge sge{reinterpret_cast<std::uint64_t>(from),
                            static_cast<std::uint32_t>(text.size()), client_mr->lkey};
                ibv_send_wr wr{};
                wr.opcode = IBV_WR_SEND;
                wr.send_flags = IBV_SEND_SIGNALED;
                wr.sg_list = &sge;
                wr.num_sge = 1;
                ibv_send_wr* bad_wr = nullptr;
                lab::check(ibv_post_send(client_qps[c].get(), &wr, &bad_wr), "ibv_post_send");
                lab::wait_for_completion(client_cqs[c].get(), "client send");
            }
            for (std::size_t c = 0; c < kClients; ++c) {
                const ibv_wc wc = lab::wait_for_completion(server_cq.get(), "server receive");
                --posted;
                free_slots.push_back(wc.wr_id);
                const char* text =
                    reinterpret_cast<const char*>(server_memory.data() + wc.wr_id * kSlotSize);
                std::printf("server: from client %zu (QP 0x%06x), slot %2llu: \"%.*s\"\n",
                            client_of.at(wc.qp_num), wc.qp_num,
                            static_cast<unsigned long long>(wc.wr_id),
                            static_cast<int>(wc.byte_len), text);
            }
        }
        return 0;
    });
}

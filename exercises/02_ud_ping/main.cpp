// SPDX-License-Identifier: MIT
// Exercise 02: UD ping — the program that uses your functions.
//
// Two UD QPs of this process, A and B, each with an address handle for the
// other. A sends -n pings of -s bytes to B; B answers each with a pong of the
// same bytes; A prints the round trip. Every datagram goes through the device.
//
// Run (./lab run builds it; on a host with an RDMA device or in the lab machine):
//   ./lab run ex02 -n 5 -s 64
// A size above the path MTU (1024 on rxe) is refused before anything is sent.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/options.hpp"
#include "lab/verbs.hpp"
#include "ud.hpp"

int main(int argc, char** argv) {
    return lab::run_main([&] {
        lab::CommandLine command_line("Exercise 02: ping over unreliable datagrams (UD)",
                                      lab::kDevice | lab::kSize | lab::kIters);
        command_line.defaults().size = 64;
        command_line.defaults().iters = 5;
        const lab::Options options = command_line.parse(argc, argv);
        constexpr std::uint32_t kQkey = 0x11111111;

        ud::Device device = ud::open(options.device, options.ib_port);
        lab::QueuePair qp_a = ud::create_ud_qp(device.pd.get(), device.cq_a.get());
        lab::QueuePair qp_b = ud::create_ud_qp(device.pd.get(), device.cq_b.get());
        ud::bring_up(qp_a.get(), device.port, kQkey, lab::random_psn());
        ud::bring_up(qp_b.get(), device.port, kQkey, lab::random_psn());
        // Both QPs are on this device, so each one's peer GID is our own GID.
        lab::AddressHandle to_b =
            ud::create_ah(device.pd.get(), device.port, device.gid.index, device.gid.gid);
        lab::AddressHandle to_a =
            ud::create_ah(device.pd.get(), device.port, device.gid.index, device.gid.gid);
        std::printf(
            "UD QPs A 0x%06x and B 0x%06x, Q_Key 0x%08x, GID index %d, largest message %zu B\n",
            qp_a->qp_num, qp_b->qp_num, kQkey, device.gid.index, ud::max_payload(device));

        const std::size_t slot_size = ud::kGrhBytes + ud::max_payload(device);
        std::vector<std::byte> memory(4 * slot_size);
        lab::MemoryRegion mr = ud::register_buffer(device, memory);
        const auto slot = [&](std::size_t i) {
            return ud::LocalBuffer{std::span(memory).subspan(i * slot_size, slot_size), mr->lkey};
        };
        // Slots: 0 A's outgoing ping, 1 B's receive, 2 B's outgoing pong, 3 A's receive.
        const std::size_t size = options.size;
        for (std::size_t n = 0; n < options.iters; ++n) {
            std::fill_n(memory.begin(), std::min(size, slot_size), static_cast<std::byte>(n));
            const auto ping =
                ud::LocalBuffer{slot(0).bytes.first(std::min(size, slot_size)), mr->lkey};
            const auto start = std::chrono::steady_clock::now();
            ud::post_ud_receive(qp_b.get(), slot(1), 1);
            ud::post_ud_receive(qp_a.get(), slot(3), 3);
            ud::post_ud_send(qp_a.get(), to_b.get(), qp_b->qp_num, kQkey,
                             ud::LocalBuffer{std::span(memory).first(size), mr->lkey},
                             ud::max_payload(device), 0);
            lab::wait_for_completion(device.cq_a.get(), "ping send", std::chrono::seconds(2));
            const ibv_wc at_b = lab::wait_for_completion(device.cq_b.get(), "ping receive",
                                                         std::chrono::seconds(2));
            const auto received = ud::payload_of(at_b, slot(1).bytes);
            std::copy(received.begin(), received.end(), slot(2).bytes.begin());
            ud::post_ud_send(qp_b.get(), to_a.get(), at_b.src_qp, kQkey,
                             ud::LocalBuffer{slot(2).bytes.first(received.size()), mr->lkey},
                             ud::max_payload(device), 2);
            lab::wait_for_completion(device.cq_b.get(), "pong send", std::chrono::seconds(2));
            const ibv_wc at_a = lab::wait_for_completion(device.cq_a.get(), "pong receive",
                                                         std::chrono::seconds(2));
            const auto pong = ud::payload_of(at_a, slot(3).bytes);
            const std::chrono::duration<double, std::micro> rtt =
                std::chrono::steady_clock::now() - start;
            const bool same =
                std::equal(pong.begin(), pong.end(), ping.bytes.begin(), ping.bytes.end());
            std::printf("%zu bytes from QP 0x%06x: ping %zu, time %.0f us%s\n", pong.size(),
                        at_a.src_qp, n, rtt.count(), same ? "" : " (DIFFERENT bytes)");
            if (!same) {
                throw lab::Error("the pong does not carry the bytes of the ping");
            }
        }
        return 0;
    });
}

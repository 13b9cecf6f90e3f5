// SPDX-License-Identifier: MIT
// Exercise 06: recover a QP — the program to run until it works.
//
// Connects two RC QPs of this process (A and B), makes a fault (an RDMA
// write with a wrong rkey: both QPs go to ERR), drains A's CQ, brings both
// QPs back to RTS with new PSNs, writes again, and pauses A's send queue.
//
// Run (./lab run builds it; on a host with an RDMA device or in the lab machine):
//   ./lab run ex06
// Check with: ./lab grade --exercises 06

#include <infiniband/verbs.h>

#include <chrono>
#include <iostream>

#include "lab/check.hpp"
#include "lab/options.hpp"
#include "recover.hpp"

int main(int argc, char** argv) {
    return lab::run_main([&] {
        lab::CommandLine command_line("Exercise 06: recover a QP after a fault", lab::kDevice);
        const lab::Options options = command_line.parse(argc, argv);
        using namespace std::chrono_literals;
        recover::Resources r = recover::create_resources(options.device, options.ib_port);
        recover::connect(r, lab::random_psn(), lab::random_psn());
        std::cout << "1. connected; " << recover::write_greeting(r, "hello") << " written\n";
        recover::post_writes(r, 3, r.mr_b->rkey ^ 0x5a5a);
        for (const ibv_wc& wc : recover::drain_after_fault(r.cq_a.get(), 3, 5000ms)) {
            std::cout << "2. wr_id " << wc.wr_id << ": " << ibv_wc_status_str(wc.status) << "\n";
        }
        const std::uint32_t psn_a = lab::random_psn(), psn_b = lab::random_psn();
        recover::recover_qp(r.qp_a.get(), r.local, recover::address_of(r, r.qp_b.get(), psn_b),
                            psn_a);
        recover::recover_qp(r.qp_b.get(), r.local, recover::address_of(r, r.qp_a.get(), psn_a),
                            psn_b);
        std::cout << "3. recovered; B received \"" << recover::write_greeting(r, "again") << "\"\n";
        recover::pause_send_queue(r.context.get(), r.qp_a.get(), 5000ms);
        std::cout << "4. A's send queue drained (SQD) and back in RTS\n";
        return 0;
    });
}

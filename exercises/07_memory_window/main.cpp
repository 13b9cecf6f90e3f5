// SPDX-License-Identifier: MIT
// Exercise 07: a memory window — the program to run until it works.
//
// Connects two RC QPs of this process: the owner registers a 16 KiB region
// and lends the peer 1 KiB of it through a type 2 memory window; the peer
// writes inside the window and across its end; then the owner revokes the
// window, once by a local invalidate and once by letting the peer's send
// with invalidate do it, and the peer's next write is refused. As shipped it
// stops at the first TODO in window.cpp; README.md explains the task.
//
// Run (./lab run builds it; on a host with an RDMA device or in the lab machine):
//   ./lab run ex07
// Check with: ./lab grade

#include <iostream>

#include "lab/check.hpp"
#include "lab/options.hpp"
#include "window.hpp"

int main(int argc, char** argv) {
    return lab::run_main([&] {
        lab::CommandLine command_line(
            "Exercise 07: lend a peer a window of a region, then revoke it", lab::kDevice);
        const lab::Options options = command_line.parse(argc, argv);
        mw::run(options.device, options.ib_port, std::cout);
        return 0;
    });
}

// SPDX-License-Identifier: MIT
// Exercise 05: fix the connection — the program to run until it works.
//
// Connects two RC QPs of this process (A and B), then moves data from A to
// B twice: an RDMA write into B's buffer and a SEND into a receive B posted.
// As shipped it fails: connection.cpp has five classic mistakes. Each run
// stops at the first one with one line naming the verb, the error and a
// hint. Fix it in connection.cpp, rebuild, run again; README.md teaches how
// to read completion statuses and QP transition errors.
//
// Run (./lab run builds it; on a host with an RDMA device or in the lab machine):
//   ./lab run ex05
// Check with: ./lab grade

#include <iostream>

#include "connection.hpp"
#include "lab/check.hpp"
#include "lab/options.hpp"

int main(int argc, char** argv) {
    return lab::run_main([&] {
        lab::CommandLine command_line("Exercise 05: a connection with five mistakes to fix",
                                      lab::kDevice);
        const lab::Options options = command_line.parse(argc, argv);
        fix::run(options.device, options.ib_port, std::cout);
        return 0;
    });
}

// SPDX-License-Identifier: MIT
// Exercise 04: send bandwidth — the program that measures your stream_sends.
//
// Streams -n messages of -s bytes from QP A to QP B (one process, through
// the device) and prints the bandwidth in perftest's format and unit
// (MB/sec = 2^20 bytes per second), so that bench/ex04_throughput.sh can put
// it next to ib_send_bw on the same device.
//
// Run (./lab run builds it; on a host with an RDMA device or in the lab machine):
//   ./lab run ex04 -s 64 -n 20000

#include <chrono>
#include <cstdio>

#include "lab/check.hpp"
#include "lab/options.hpp"
#include "lab/report.hpp"
#include "throughput.hpp"

int main(int argc, char** argv) {
    return lab::run_main([&] {
        lab::CommandLine command_line(
            "Exercise 04: send bandwidth with inline data, selective "
            "signaling and lists of work requests",
            lab::kDevice | lab::kSize | lab::kIters);
        command_line.defaults().size = 64;
        command_line.defaults().iters = 20000;
        tp::StreamOptions stream;
        std::uint32_t inline_bytes = 220;
        command_line.option("--signal-every", stream.signal_every,
                            "one signaled send every N (default 16)");
        command_line.option("--batch", stream.batch,
                            "work requests per ibv_post_send (default 16)");
        command_line.option("--inline", inline_bytes,
                            "max_inline_data to ask for (default 220, 0: none)");
        const lab::Options options = command_line.parse(argc, argv);
        stream.message_size = options.size;
        stream.count = options.iters;

        tp::Pair pair(options.device, inline_bytes);
        std::printf("max_inline_data granted: %u; signal every %u, lists of %u, depth %u\n",
                    tp::granted_inline(pair.sender()), stream.signal_every, stream.batch,
                    tp::Pair::kSendDepth);
        const auto start = std::chrono::steady_clock::now();
        tp::stream_sends(pair, stream);
        const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
        if (!pair.receive_error().empty()) {
            throw lab::Error("the receiver saw: " + pair.receive_error());
        }
        lab::print_bandwidth(stream.message_size, stream.count, seconds);
        return 0;
    });
}

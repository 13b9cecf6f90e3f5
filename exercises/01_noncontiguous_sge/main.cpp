// SPDX-License-Identifier: MIT
// Exercise 01: non-contiguous data — the program that tries and measures your functions.
//
// With --block-size, --block-num and --stride it moves that one layout with
// each of the six functions of sge.hpp and checks every byte. Without them it
// sweeps message sizes from 64 B to --max-size for several block sizes
// (stride = 2 × block size) and prints, for each operation, the bandwidth of
// the zero-copy version (several SGEs per work request) next to the
// pack-and-copy baseline (CPU memcpy into one contiguous buffer, one SGE).
//
// Run it (./lab run builds it and runs it in the lab machine):
//   ./lab run ex01 --block-size 64 --block-num 100 --stride 128
//   ./lab run ex01 --csv sweep.csv
//
// Both QPs live in this process (sge::Loopback): the data still goes through
// the device, and on rxe through the kernel's RoCE v2 stack.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "lab/check.hpp"
#include "lab/options.hpp"
#include "sge.hpp"

namespace {

// Byte i of a test pattern: never zero, and different for neighbouring blocks.
std::byte pattern(std::size_t i) {
    return static_cast<std::byte>(1 + (i * 7 + i / 251) % 253);
}

struct Buffers {
    std::vector<std::byte> strided_source, strided_destination, packed, staging_a, staging_b;
    lab::MemoryRegion source_mr, destination_mr, packed_mr, staging_a_mr, staging_b_mr;

    Buffers(sge::Loopback& pair, std::size_t strided_bytes, std::size_t packed_bytes)
        : strided_source(strided_bytes),
          strided_destination(strided_bytes),
          packed(packed_bytes),
          staging_a(packed_bytes),
          staging_b(packed_bytes),
          source_mr(pair.register_buffer(strided_source)),
          destination_mr(pair.register_buffer(strided_destination)),
          packed_mr(pair.register_buffer(packed)),
          staging_a_mr(pair.register_buffer(staging_a)),
          staging_b_mr(pair.register_buffer(staging_b)) {
        for (std::size_t i = 0; i < strided_source.size(); ++i) {
            strided_source[i] = pattern(i);
        }
    }

    void clear_results() {
        std::fill(strided_destination.begin(), strided_destination.end(), std::byte{0});
        std::fill(packed.begin(), packed.end(), std::byte{0});
    }
};

// The six operations, each as "move the layout once".
struct Operation {
    std::string name;    // gather-WRITE, ...
    std::string method;  // zero-copy or pack-and-copy
    bool packed_result;  // true: the result is in Buffers::packed, else in strided_destination
    std::function<void(const sge::Layout&)> run;
};

std::vector<Operation> operations(sge::Loopback& pair, Buffers& buffers) {
    const sge::Endpoint& a = pair.a();
    const sge::Endpoint& b = pair.b();
    const auto source = sge::as_local(buffers.source_mr.get());
    const auto destination = sge::as_local(buffers.destination_mr.get());
    const auto packed_remote = sge::as_remote(buffers.packed_mr.get());
    const auto staging_a = sge::as_local(buffers.staging_a_mr.get());
    const auto staging_b = sge::as_local(buffers.staging_b_mr.get());
    return {
        {"gather-WRITE", "zero-copy", true,
         [=](const sge::Layout& l) { sge::gather_write(a, l, source, packed_remote); }},
        {"gather-WRITE", "pack-and-copy", true,
         [=](const sge::Layout& l) { sge::copy_write(a, l, source, staging_a, packed_remote); }},
        {"scatter-READ", "zero-copy", false,
         [=](const sge::Layout& l) { sge::scatter_read(a, l, destination, packed_remote); }},
        {"scatter-READ", "pack-and-copy", false,
         [=](const sge::Layout& l) {
             sge::read_copy(a, l, destination, staging_a, packed_remote);
         }},
        {"SEND/RECV", "zero-copy", false,
         [=](const sge::Layout& l) {
             sge::gather_send_scatter_recv(a, source, b, destination, l);
         }},
        {"SEND/RECV", "pack-and-copy", false,
         [=](const sge::Layout& l) {
             sge::copy_send_recv(a, source, staging_a, b, staging_b, destination, l);
         }},
    };
}

// The reads start from packed data: fill it with the packed form of the source.
void prepare(const Operation& operation, const sge::Layout& layout, Buffers& buffers) {
    buffers.clear_results();
    if (operation.name == "scatter-READ") {
        for (std::size_t i = 0; i < layout.block_num; ++i) {
            std::copy_n(buffers.strided_source.begin() + i * layout.stride, layout.block_size,
                        buffers.packed.begin() + i * layout.block_size);
        }
    }
}

// Every block arrived, in order, and nothing else was written.
void verify(const Operation& operation, const sge::Layout& layout, const Buffers& buffers) {
    for (std::size_t block = 0; block < layout.block_num; ++block) {
        for (std::size_t offset = 0; offset < layout.block_size; ++offset) {
            const std::size_t from = block * layout.stride + offset;
            const std::byte got = operation.packed_result
                                      ? buffers.packed[block * layout.block_size + offset]
                                      : buffers.strided_destination[from];
            if (got != buffers.strided_source[from]) {
                throw lab::Error(operation.name + " (" + operation.method + ") with " +
                                 sge::describe(layout) + ": block " + std::to_string(block) +
                                 ", byte " + std::to_string(offset) + " is wrong");
            }
        }
        if (!operation.packed_result && layout.stride > layout.block_size &&
            buffers.strided_destination[block * layout.stride + layout.block_size] !=
                std::byte{0}) {
            throw lab::Error(operation.name + " (" + operation.method +
                             ") wrote into the gap after block " + std::to_string(block));
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    return lab::run_main([&] {
        lab::CommandLine command_line(
            "Exercise 01: gather/scatter non-contiguous data with several SGEs per work request",
            lab::kDevice | lab::kIters);
        command_line.defaults().iters = 200;
        std::size_t block_size = 0, block_num = 0, stride = 0;
        std::size_t max_size = std::size_t{4} << 20;
        double min_seconds = 0.2;
        std::string csv_path;
        std::vector<std::size_t> block_sizes = {64, 1024, 16384};
        command_line.option("--block-size", block_size, "one layout: bytes per block");
        command_line.option("--block-num", block_num, "one layout: number of blocks");
        command_line.option("--stride", stride,
                            "one layout: bytes from block start to block start");
        command_line.option("--max-size", max_size, "sweep: the largest message",
                            {.min = 64, .max = std::size_t{64} << 20});
        command_line.option("--block-sizes", block_sizes,
                            "sweep: block sizes (default 64 1024 16384)");
        command_line.option("--min-time", min_seconds, "sweep: seconds to measure each point",
                            {.min = 0.0, .max = 60.0});
        command_line.option("--csv", csv_path, "sweep: also write the results to this CSV file");
        const lab::Options options = command_line.parse(argc, argv);
        const bool one_layout = block_size != 0 || block_num != 0 || stride != 0;

        // Steps 1-8: device, PD, CQs, two QPs connected to each other.
        sge::LoopbackOptions loopback;
        loopback.device = options.device;
        loopback.port = options.ib_port;
        loopback.gid_index = options.gid_index;
        sge::Loopback pair(loopback);
        std::printf("device max_sge %d; QPs created with max_send_sge %u, max_recv_sge %u\n",
                    pair.device_attr().max_sge, pair.a().limits.max_send_sge,
                    pair.a().limits.max_recv_sge);

        if (one_layout) {
            const sge::Layout layout{block_size, block_num, stride};
            // Sized generously so that the functions, not this program, judge the layout.
            const std::size_t strided_bytes =
                block_num == 0 ? block_size
                               : std::max(block_size, (block_num - 1) * stride + block_size);
            Buffers buffers(pair, std::max<std::size_t>(strided_bytes, 1),
                            std::max<std::size_t>(block_size * block_num, 1));
            for (const Operation& operation : operations(pair, buffers)) {
                prepare(operation, layout, buffers);
                operation.run(layout);
                verify(operation, layout, buffers);
                std::printf("%-13s %-14s %s: every byte arrived\n", operation.name.c_str(),
                            operation.method.c_str(), sge::describe(layout).c_str());
            }
            return 0;
        }

        // Step 9, the sweep: message sizes 64 B, 256 B, ... up to max_size.
        std::ofstream csv;
        if (!csv_path.empty()) {
            csv.open(csv_path);
            if (!csv) {
                throw lab::Error("cannot write " + csv_path);
            }
            csv << "operation,method,block_size,message_bytes,block_num,iterations,"
                   "microseconds_per_message,mb_per_second\n";
        }
        Buffers buffers(pair, 2 * max_size, max_size);
        const auto all = operations(pair, buffers);
        std::printf("%-13s %-14s %10s %10s %8s %12s %10s\n", "operation", "method", "block",
                    "message", "blocks", "us/message", "MB/s");
        for (const std::size_t block : block_sizes) {
            for (std::size_t message = 64; message <= max_size; message *= 4) {
                if (block > message) {
                    continue;
                }
                const sge::Layout layout{block, message / block, 2 * block};
                for (const Operation& operation : all) {
                    prepare(operation, layout, buffers);
                    operation.run(layout);  // warm-up, and the run that is checked
                    verify(operation, layout, buffers);
                    std::size_t iterations = 0;
                    const auto start = std::chrono::steady_clock::now();
                    std::chrono::duration<double> elapsed{};
                    do {
                        operation.run(layout);
                        ++iterations;
                        elapsed = std::chrono::steady_clock::now() - start;
                    } while (iterations < options.iters &&
                             (elapsed.count() < min_seconds || iterations < 3));
                    const double microseconds =
                        elapsed.count() * 1e6 / static_cast<double>(iterations);
                    const double mb_per_second = static_cast<double>(message) / microseconds;
                    std::printf("%-13s %-14s %10zu %10zu %8zu %12.1f %10.1f\n",
                                operation.name.c_str(), operation.method.c_str(), block, message,
                                layout.block_num, microseconds, mb_per_second);
                    if (csv.is_open()) {
                        csv << operation.name << ',' << operation.method << ',' << block << ','
                            << message << ',' << layout.block_num << ',' << iterations << ','
                            << microseconds << ',' << mb_per_second << '\n';
                    }
                }
            }
        }
        std::fflush(stdout);
        return 0;
        // Step 10: the owners in pair and buffers clean up in reverse order.
    });
}

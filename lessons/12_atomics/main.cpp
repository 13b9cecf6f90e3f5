// SPDX-License-Identifier: MIT
// Lesson 12: atomics — fetch-and-add and compare-and-swap on a peer's memory.
//
// An RDMA atomic reads an 8-byte word of the peer's memory, changes it and
// returns the old value, as one indivisible step at the peer's device:
//   IBV_WR_ATOMIC_FETCH_AND_ADD   word += compare_add; old value back
//   IBV_WR_ATOMIC_CMP_AND_SWP     if (word == compare_add) word = swap; old value back
// The server accepts --clients connections (one QP each) and owns three words: a counter every
// client adds to, a lock (compare-and-swap 0 → 1 takes it, 1 → 0 frees it), and a word each lock
// holder increments by RDMA read, +1, RDMA write: right only if the lock excludes the others.
//
// Run: ./lab run 12_atomics [flags]; by hand ./lab shell PROGRAM --clients N [flags] (server),
// then in N more terminals ./lab shell PROGRAM [flags] 10.77.0.1. Flags: -n ITERS, one of
// --wrong-alignment, --wrong-rkey, --wrong-address (one atomic the device must refuse).

#include <infiniband/verbs.h>

#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
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
#include "lab/wait.hpp"

namespace {

// The server's words, by index into its region; the lock is taken this often by each client.
enum Word : std::size_t { kCounter, kLock, kProtected };
constexpr std::size_t kLockRounds = 200;
// Each QP: a client waits for every request before it posts the next; the server posts nothing.
constexpr lab::QueueSizes kQueueSizes{.send_wr = 1, .recv_wr = 1};

// The options only this lesson has.
struct LessonOptions {
    std::size_t clients = 1;                                                  // --clients
    bool wrong_alignment = false, wrong_rkey = false, wrong_address = false;  // --wrong-*
};

// Step 3: atomics are optional. ATOMIC_NONE: none; ATOMIC_HCA: atomic among operations through
// this device only; ATOMIC_GLOB: also against CPUs and other devices (docs/devices.md#atomic-cap).
void require_atomics(ibv_context* context) {
    ibv_device_attr attr{};
    lab::check(ibv_query_device(context, &attr), "ibv_query_device");
    // Lesson 09's limits for reads count atomics too: max_rd_atomic (RTS) is capped by
    // max_qp_init_rd_atom, max_dest_rd_atomic (RTR) by max_qp_rd_atom; connect_qp asks 16.
    std::printf("%s atomic_cap %s, max_qp_rd_atom %d, max_qp_init_rd_atom %d\n",
                ibv_get_device_name(context->device),
                std::string(lab::atomic_cap_name(attr.atomic_cap)).c_str(), attr.max_qp_rd_atom,
                attr.max_qp_init_rd_atom);
    if (attr.atomic_cap == IBV_ATOMIC_NONE) {
        throw lab::Error(std::string("device ") + ibv_get_device_name(context->device) +
                         " has no RDMA atomics (atomic_cap ATOMIC_NONE) (hint: use rxe or an HCA)");
    }
}

// Step 9: one atomic work request. The old value is written to *old_value
// (8 bytes of our registered memory); remote_addr must be 8-byte aligned.
void post_atomic(ibv_qp* qp, ibv_wr_opcode opcode, std::uint64_t* old_value, std::uint32_t lkey,
                 std::uint64_t remote_addr, std::uint32_t rkey, std::uint64_t compare_add,
                 std::uint64_t swap) {
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(old_value), sizeof(std::uint64_t), lkey};
    ibv_send_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = opcode;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.atomic.remote_addr = remote_addr;
    wr.wr.atomic.rkey = rkey;
    wr.wr.atomic.compare_add = compare_add;  // in host order: the library converts
    wr.wr.atomic.swap = swap;
    ibv_send_wr* bad = nullptr;
    // A misaligned remote_addr may be refused here (docs/devices.md#post-send-errno).
    lab::check(ibv_post_send(qp, &wr, &bad),
               opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ? "ibv_post_send(FETCH_AND_ADD)"
                                                     : "ibv_post_send(CMP_AND_SWP)",
               "an atomic's remote_addr must be 8-byte aligned and its SGE exactly 8 bytes");
}

int run_server(const lab::Options& options, const LessonOptions& settings, const lab::Port& port,
               ibv_pd* pd, ibv_cq* cq) {
    // Step 5: the words, 8-byte aligned, with IBV_ACCESS_REMOTE_ATOMIC (which needs LOCAL_WRITE
    // too); lock holders also read and write the protected word (REMOTE_READ, REMOTE_WRITE).
    std::vector<std::uint64_t> words(3, 0);
    const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_READ |
                       IBV_ACCESS_REMOTE_WRITE;
    const auto mr = lab::register_memory(pd, std::as_writable_bytes(std::span(words)), access);

    // Steps 7-8 (lessons 04-05), per client: a QP (allowing remote atomics too) and a TCP
    // exchange. Clients that connect at once wait in the listening socket's queue.
    std::vector<lab::QueuePair> qps;
    std::vector<lab::Connection> connections;
    lab::Listener listener(options.tcp_port);
    for (std::size_t client = 1; client <= settings.clients; ++client) {
        qps.push_back(lab::create_rc_qp(pd, cq, cq, kQueueSizes));
        connections.push_back(
            lab::connect_qp(qps.back().get(), port, listener.accept(options.timeout),
                            {.access = access, .region = mr.get()}, options.timeout)
                .connection);
    }
    std::printf("server: %zu client(s) connected\n", settings.clients);
    for (lab::Connection& connection : connections) {
        connection.barrier(options.timeout);  // all may start: together
    }

    // Step 9: nothing to do: the atomics run in our device, not on our CPU. Wait for "done".
    for (lab::Connection& connection : connections) {
        connection.barrier(options.timeout * 10);  // a client that died ends it at once
    }
    const std::uint64_t counter = settings.clients * options.iters;
    const std::uint64_t protected_word = settings.clients * kLockRounds;
    const bool correct =
        words[kCounter] == counter && words[kLock] == 0 && words[kProtected] == protected_word;
    std::printf("server: counter %" PRIu64 ", lock %" PRIu64 ", protected word %" PRIu64
                " (expected %" PRIu64 ", 0, %" PRIu64 "): %s\n",
                words[kCounter], words[kLock], words[kProtected], counter, protected_word,
                correct ? "correct" : "WRONG");
    return correct ? 0 : 1;
}

int run_client(const lab::Options& options, const LessonOptions& settings, const lab::Port& port,
               ibv_pd* pd, ibv_cq* cq) {
    // Step 5: one 8-byte word, local write only: old values land here.
    std::uint64_t slot = 0;
    const auto word = std::as_writable_bytes(std::span(&slot, 1));
    lab::MemoryRegion mr = lab::register_memory(pd, word, IBV_ACCESS_LOCAL_WRITE);

    lab::QueuePair qp = lab::create_rc_qp(pd, cq, cq, kQueueSizes);  // steps 7-8 (04-05)
    auto [peer, connection] = lab::connect_qp(qp.get(), port, options);
    std::uint64_t counter = peer.remote_addr + kCounter * sizeof(std::uint64_t);
    const std::uint64_t lock = peer.remote_addr + kLock * sizeof(std::uint64_t);
    const std::uint64_t protected_word = peer.remote_addr + kProtected * sizeof(std::uint64_t);
    connection.barrier(options.timeout);  // start together with the other clients

    // Step 9: post, then wait for the completion. Every wait also watches the socket: a dead
    // server closes it sooner than its QP's retries end in an error (docs/devices.md#dead-peer).
    auto atomic = [&](ibv_wr_opcode opcode, std::uint64_t compare_add, std::uint64_t swap,
                      std::uint64_t address, const std::string& what) {
        post_atomic(qp.get(), opcode, &slot, mr->lkey, address, peer.rkey, compare_add, swap);
        lab::wait_for_completion(cq, what, options.timeout, connection.watch());
        return slot;
    };

    // A fault: a wrong rkey or an address outside the region ends in IBV_WC_REM_ACCESS_ERR, a
    // misaligned one in IBV_WC_REM_INV_REQ_ERR or at ibv_post_send
    // (docs/devices.md#post-send-errno).
    if (settings.wrong_alignment || settings.wrong_rkey || settings.wrong_address) {
        const std::string what =
            settings.wrong_alignment ? "fetch-and-add at a misaligned address (8-byte word + 4)"
            : settings.wrong_rkey    ? "fetch-and-add with a wrong rkey"
                                     : "fetch-and-add outside the server's region";
        counter += settings.wrong_alignment ? 4 : settings.wrong_address ? peer.length + 4096 : 0;
        peer.rkey ^= settings.wrong_rkey ? 0x5a5a00 : 0;
        std::printf("client: %s: remote address 0x%" PRIx64 ", rkey 0x%x\n", what.c_str(), counter,
                    peer.rkey);
        atomic(IBV_WR_ATOMIC_FETCH_AND_ADD, 1, 0, counter, what);
        throw lab::Error(what + " succeeded, but the device should have refused it");
    }

    // Step 9a: the counter. Each fetch-and-add returns the word as it was; an RC QP executes
    // in order, so our old values increase (other clients' additions fall in between).
    std::uint64_t last = 0;
    bool increasing = true;
    for (std::size_t n = 0; n < options.iters; ++n) {
        const auto old = atomic(IBV_WR_ATOMIC_FETCH_AND_ADD, 1, 0, counter, "fetch-and-add");
        increasing = increasing && (n == 0 || old > last);
        last = old;
    }
    std::printf(  // its byte order: docs/devices.md#atomic-byte-order
        "client: fetch-and-add: %zu operations, old values came back %s; the last one "
        "was %" PRIu64 ", bytes %s\n",
        options.iters, increasing ? "increasing" : "OUT OF ORDER", last,
        lab::hex_bytes(std::as_bytes(std::span(&last, 1))).c_str());

    // Step 9b: the lock. Compare-and-swap 0 → 1 took it only if it returns 0; else try again.
    std::size_t busy = 0;
    lab::Deadline deadline(options.timeout);
    for (std::size_t round = 0; round < kLockRounds; ++round) {
        while (atomic(IBV_WR_ATOMIC_CMP_AND_SWP, 0, 1, lock, "take the lock") != 0) {
            if (++busy; !deadline.still_waiting()) {
                throw lab::Error(
                    "the lock stayed taken for --timeout (hint: a client died holding it?)");
            }
        }
        // The critical section: a read-modify-write that only the lock keeps from interleaving.
        lab::post_rdma(qp.get(), IBV_WR_RDMA_READ, word, mr->lkey, protected_word, peer.rkey);
        lab::wait_for_completion(cq, "RDMA read", options.timeout, connection.watch());
        slot += 1;
        lab::post_rdma(qp.get(), IBV_WR_RDMA_WRITE, word, mr->lkey, protected_word, peer.rkey);
        lab::wait_for_completion(cq, "RDMA write", options.timeout, connection.watch());
        // Release with 1 → 0: the old value must be 1, or someone else touched a lock we hold.
        if (atomic(IBV_WR_ATOMIC_CMP_AND_SWP, 1, 0, lock, "release the lock") != 1) {
            throw lab::Error("the lock did not read 1 when released: mutual exclusion is broken");
        }
    }
    std::printf("client: lock taken and released %zu times (%zu attempts found it held)\n",
                kLockRounds, busy);
    connection.barrier(options.timeout * 10);  // done; the server counts
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    lab::CommandLine command_line(
        "Lesson 12: RDMA atomics: a shared counter (fetch-and-add) and a lock (compare-and-swap)",
        lab::kDevice | lab::kTcpPort | lab::kIters | lab::kTimeout | lab::kServerArg);
    LessonOptions settings;
    command_line.option("--clients", settings.clients, "server: how many clients to accept",
                        {.min = 1, .max = 64});
    const lab::Argument wrong_alignment =
        command_line.flag("--wrong-alignment", settings.wrong_alignment,
                          "client: one fetch-and-add 4 bytes off the word");
    const lab::Argument wrong_rkey = command_line.flag(
        "--wrong-rkey", settings.wrong_rkey, "client: one fetch-and-add with a wrong rkey");
    command_line
        .flag("--wrong-address", settings.wrong_address,
              "client: one fetch-and-add outside the server's region")
        .excludes(wrong_alignment)
        .excludes(wrong_rkey);
    wrong_alignment.excludes(wrong_rkey);
    command_line.defaults().iters = 1000;
    const lab::Options options = command_line.parse(argc, argv);

    return lab::run_main([&] {
        // Steps 1-3 (lesson 01), the atomic_cap check, steps 4 and 6 (02-03): both sides alike.
        const lab::Port port = lab::open_port(options);
        require_atomics(port.context.get());
        const lab::ProtectionDomain pd = lab::alloc_pd(port.context.get());
        // One CQ for every QP of this side (the server has one per client), with an
        // entry for every work request those QPs may hold (lesson 03).
        const std::size_t qp_count = options.is_server() ? settings.clients : 1;
        const lab::CompletionQueue cq = lab::create_cq(
            port.context.get(), int(qp_count * (kQueueSizes.send_wr + kQueueSizes.recv_wr)));
        // Step 10: the owners are destroyed in reverse order when these return.
        return options.is_server() ? run_server(options, settings, port, pd.get(), cq.get())
                                   : run_client(options, settings, port, pd.get(), cq.get());
    });
}

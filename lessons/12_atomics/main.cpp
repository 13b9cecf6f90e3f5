// Lesson 12: atomics — fetch-and-add and compare-and-swap on a peer's memory.
//
// An RDMA atomic reads an 8-byte word of the peer's memory, changes it and
// returns the old value, as one indivisible step at the peer's device:
//
//   IBV_WR_ATOMIC_FETCH_AND_ADD   word += compare_add; old value back
//   IBV_WR_ATOMIC_CMP_AND_SWP     if (word == compare_add) word = swap; old value back
//
// The word must be 8-byte aligned and registered with IBV_ACCESS_REMOTE_ATOMIC;
// the old value lands in an 8-byte local buffer the work request's SGE names.
// Atomics from many QPs on the same word do not lose updates, so a word in
// the server's memory works as a shared counter and as a lock, with no
// server CPU involved.
//
// The server accepts --clients connections (one QP each) and owns three words:
//   counter    every client adds --add to it -n times, with FETCH_AND_ADD
//   lock       0 = free; a client takes it with CMP_AND_SWP 0 → 1, frees it with 1 → 0
//   protected  a plain number each lock holder increments by RDMA read, +1,
//              RDMA write: correct only if the lock really excludes the others
// When all clients are done the server prints the three words.
//
// Run:   ./lab run 12_atomics                                     (one server, one client)
//        12_atomics [--clients N] [-n ITERS] [--add A]            server
//        12_atomics [-n ITERS] [--add A] [--depth D] SERVER       client (start N of them)
//        options: -d DEV -i PORT -g GID_INDEX -p TCP_PORT --timeout SECONDS --lock-iters L
//        faults:  --wrong-alignment, --wrong-rkey, --wrong-address (one atomic that must fail)

#include <infiniband/verbs.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/connect.hpp"
#include "lab/device.hpp"
#include "lab/exchange.hpp"
#include "lab/options.hpp"
#include "lab/resources.hpp"
#include "lab/verbs.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// The server's words, by index into its region.
constexpr std::size_t kCounter = 0;
constexpr std::size_t kLock = 1;
constexpr std::size_t kProtected = 2;
constexpr std::size_t kWords = 4;

// The options only this lesson has.
struct LessonOptions {
    std::size_t clients = 1;
    std::uint64_t add = 1;
    std::size_t lock_iters = 20;
    std::uint32_t depth = 16;
    bool wrong_alignment = false;
    bool wrong_rkey = false;
    bool wrong_address = false;
};

// Step 3: atomics are optional. ATOMIC_NONE: the device has none at all.
// ATOMIC_HCA: atomic among operations through this device (rxe, most HCAs);
// a CPU writing the same word at the same time is not excluded.
// ATOMIC_GLOB: atomic also against the CPU and other devices.
void require_atomics(ibv_context* context, const char* role) {
    ibv_device_attr attr{};
    lab::check(ibv_query_device(context, &attr), "ibv_query_device");
    std::printf("%s: %s atomic_cap %s, max_qp_rd_atom %d\n", role,
                ibv_get_device_name(context->device),
                std::string(lab::atomic_cap_name(attr.atomic_cap)).c_str(), attr.max_qp_rd_atom);
    if (attr.atomic_cap == IBV_ATOMIC_NONE) {
        throw lab::Error(std::string("device ") + ibv_get_device_name(context->device) +
                         " has no RDMA atomics (atomic_cap ATOMIC_NONE) (hint: use a device "
                         "that has them, e.g. rxe or a ConnectX HCA; iWARP devices have none)");
    }
}

// One atomic work request. The old value is written to *old_value (8 bytes, in
// our registered memory); remote_addr must be 8-byte aligned.
void post_atomic(ibv_qp* qp, ibv_wr_opcode opcode, std::uint64_t wr_id, std::uint64_t* old_value,
                 std::uint32_t lkey, std::uint64_t remote_addr, std::uint32_t rkey,
                 std::uint64_t compare_add, std::uint64_t swap = 0) {
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(old_value), sizeof(std::uint64_t), lkey};
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = opcode;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.atomic.remote_addr = remote_addr;
    wr.wr.atomic.rkey = rkey;
    wr.wr.atomic.compare_add = compare_add;  // in host order: the library converts
    wr.wr.atomic.swap = swap;
    ibv_send_wr* bad = nullptr;
    const int result = ibv_post_send(qp, &wr, &bad);
    if (result != 0) {
        // rxe checks the alignment when the request is posted, before anything
        // is sent: a misaligned remote_addr is refused here with EINVAL.
        lab::fail(opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ? "ibv_post_send(FETCH_AND_ADD)"
                                                        : "ibv_post_send(CMP_AND_SWP)",
                  result,
                  result == EINVAL ? "an atomic's remote_addr must be 8-byte aligned and its "
                                     "SGE exactly 8 bytes"
                                   : "is the send queue full (--depth above its size)?");
    }
}

std::string bytes_of(std::uint64_t word) {
    unsigned char raw[8];
    std::memcpy(raw, &word, sizeof raw);
    std::string text;
    for (unsigned char byte : raw) {
        char two[4];
        std::snprintf(two, sizeof two, "%02x ", byte);
        text += two;
    }
    text.pop_back();
    return text;
}

int run_server(const lab::Options& options, const LessonOptions& settings) {
    // Steps 1-3 (lesson 01), and this lesson's check of atomic_cap.
    const lab::Port port = lab::open_port(options);
    require_atomics(port.context.get(), "server");

    // Step 5: the words, 8-byte aligned (a vector of uint64_t is), registered
    // (ibv_reg_mr, in lab::register_memory) with IBV_ACCESS_REMOTE_ATOMIC (which needs LOCAL_WRITE
    // too). The lock holders also read and write the protected word.
    lab::ProtectionDomain pd = lab::alloc_pd(port.context.get());
    std::vector<std::uint64_t> words(kWords, 0);
    const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_READ |
                       IBV_ACCESS_REMOTE_WRITE;
    lab::MemoryRegion mr =
        lab::register_memory(pd.get(), std::as_writable_bytes(std::span(words)), access);
    lab::CompletionQueue cq = lab::create_cq(port.context.get(), 16);

    // Steps 7-8 (lessons 04-05), once per client: its own QP, its own TCP
    // exchange. The QP must allow remote atomics (qp_access_flags), and
    // max_dest_rd_atomic in RTR bounds the atomics and reads in flight to us.
    // One listening socket for all of them: clients that connect at the same
    // moment wait in its queue until the loop comes to them.
    std::vector<lab::QueuePair> qps;
    std::vector<lab::Connection> connections;
    lab::Listener listener(options.tcp_port);
    for (std::size_t client = 1; client <= settings.clients; ++client) {
        lab::QueuePair qp = lab::create_rc_qp(pd.get(), cq.get(), cq.get(), lab::QueueSizes{});
        auto [peer, connection] =
            lab::connect_qp(qp.get(), port, listener.accept(options.timeout),
                            {.access = access, .region = mr.get()}, options.timeout);
        std::printf("server: client %zu connected: our QPN 0x%06x, theirs 0x%06x\n", client,
                    qp->qp_num, peer.address.qp_num);
        qps.push_back(std::move(qp));
        connections.push_back(std::move(connection));
    }
    std::printf("server: counter at 0x%llx, rkey 0x%x; %zu client(s) may start\n",
                static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(words.data())),
                mr->rkey, settings.clients);
    for (lab::Connection& connection : connections) {
        connection.barrier(options.timeout);  // start together
    }

    // Step 9: nothing to do: the clients' atomics run in the device, not on
    // our CPU. We only wait until every client says it is done.
    const auto busy = options.timeout * 10;
    for (std::size_t client = 0; client < connections.size(); ++client) {
        try {
            connections[client].barrier(busy);
        } catch (const lab::Error& error) {
            throw lab::Error("client " + std::to_string(client + 1) +
                             " did not finish: " + error.what());
        }
    }
    const std::uint64_t expected_counter = settings.clients * options.iters * settings.add;
    const std::uint64_t expected_protected = settings.clients * settings.lock_iters;
    std::printf("server: final counter %llu (expected %zu clients x %zu iters x %llu = %llu): %s\n",
                static_cast<unsigned long long>(words[kCounter]), settings.clients, options.iters,
                static_cast<unsigned long long>(settings.add),
                static_cast<unsigned long long>(expected_counter),
                words[kCounter] == expected_counter ? "correct" : "WRONG");
    std::printf("server: counter bytes in our memory: %s (host order)\n",
                bytes_of(words[kCounter]).c_str());
    std::printf("server: lock word %llu (%s), protected word %llu (expected %llu): %s\n",
                static_cast<unsigned long long>(words[kLock]), words[kLock] == 0 ? "free" : "HELD",
                static_cast<unsigned long long>(words[kProtected]),
                static_cast<unsigned long long>(expected_protected),
                words[kProtected] == expected_protected ? "correct" : "WRONG");
    for (lab::Connection& connection : connections) {
        connection.barrier(options.timeout);  // the clients may go
    }
    // Step 10: the owners are destroyed in reverse order: connections, QPs, CQ, MR, PD, context.
    const bool correct = words[kCounter] == expected_counter && words[kLock] == 0 &&
                         words[kProtected] == expected_protected;
    return correct ? 0 : 1;
}

// One atomic that must fail: the status shows what the responder checks.
// A wrong rkey or an address outside the region: IBV_WC_REM_ACCESS_ERR.
// A misaligned address: rxe refuses it in ibv_post_send (EINVAL); hardware
// that passes it on gets an "invalid request" NAK, IBV_WC_REM_INV_REQ_ERR.
int run_fault(ibv_qp* qp, ibv_cq* cq, std::uint64_t* old_value, std::uint32_t lkey,
              const lab::ConnectionInfo& peer, const LessonOptions& settings,
              std::chrono::milliseconds timeout, lab::PeerWatch server_gone) {
    std::uint64_t address = peer.remote_addr + kCounter * sizeof(std::uint64_t);
    std::uint32_t rkey = peer.rkey;
    std::string what;
    if (settings.wrong_alignment) {
        address += 4;
        what = "fetch-and-add at a misaligned address (8-byte word + 4)";
    } else if (settings.wrong_rkey) {
        rkey ^= 0x5a5a00;
        what = "fetch-and-add with a wrong rkey";
    } else {
        address = peer.remote_addr + peer.length + 4096;
        what = "fetch-and-add outside the server's region";
    }
    std::printf("client: %s: remote address 0x%llx, rkey 0x%x\n", what.c_str(),
                static_cast<unsigned long long>(address), rkey);
    post_atomic(qp, IBV_WR_ATOMIC_FETCH_AND_ADD, 1, old_value, lkey, address, rkey, settings.add);
    lab::wait_for_completion(cq, what, timeout, server_gone);
    throw lab::Error(what + " succeeded, but the device should have refused it");
}

int run_client(const lab::Options& options, const LessonOptions& settings) {
    // Steps 1-3 (lesson 01), and this lesson's check of atomic_cap.
    const lab::Port port = lab::open_port(options);
    require_atomics(port.context.get(), "client");

    // Step 5: where the old values land: one 8-byte slot per atomic in
    // flight, plus two for the lock and the protected word. Local write only.
    lab::ProtectionDomain pd = lab::alloc_pd(port.context.get());
    std::vector<std::uint64_t> slots(settings.depth + 2, 0);
    std::uint64_t* lock_slot = &slots[settings.depth];
    std::uint64_t* word_slot = &slots[settings.depth + 1];
    lab::MemoryRegion mr = lab::register_memory(pd.get(), std::as_writable_bytes(std::span(slots)),
                                                IBV_ACCESS_LOCAL_WRITE);
    lab::CompletionQueue cq =
        lab::create_cq(port.context.get(), static_cast<int>(settings.depth) + 16);

    // Steps 7-8 (lessons 04-05). max_rd_atomic in RTS: how many atomics and
    // reads this QP keeps in flight; more posted ones wait in the send queue.
    lab::QueueSizes sizes;
    sizes.send_wr = settings.depth + 4;
    lab::QueuePair qp = lab::create_rc_qp(pd.get(), cq.get(), cq.get(), sizes);
    auto [peer, connection] = lab::connect_qp(qp.get(), port, options);
    const std::uint64_t counter = peer.remote_addr + kCounter * sizeof(std::uint64_t);
    const std::uint64_t lock = peer.remote_addr + kLock * sizeof(std::uint64_t);
    const std::uint64_t protected_word = peer.remote_addr + kProtected * sizeof(std::uint64_t);
    std::printf("client: connected to QPN 0x%06x; counter at 0x%llx, rkey 0x%x\n",
                peer.address.qp_num, static_cast<unsigned long long>(counter), peer.rkey);
    connection.barrier(options.timeout);
    // A server that exited closes its socket at once; its vanished QP may
    // bring no error completion for a long time (none in 20 s on rxe): every
    // wait below also watches the socket.
    const lab::PeerWatch server_gone = connection.watch();

    if (settings.wrong_alignment || settings.wrong_rkey || settings.wrong_address) {
        return run_fault(qp.get(), cq.get(), &slots[0], mr->lkey, peer, settings, options.timeout,
                         server_gone);
    }

    // Step 9a: the shared counter. Up to --depth FETCH_AND_ADDs in flight,
    // operation n using result slot n % depth. Two things keep the loop fast:
    //  - selective signaling: only every signal_every-th request asks for a
    //    completion (IBV_SEND_SIGNALED). An RC QP completes in order, so one
    //    completion for operation n means every operation up to n is done and
    //    its old value is in its slot;
    //  - whenever slots are freed, their new requests are chained (wr.next)
    //    and posted with ONE ibv_post_send: one doorbell for many requests.
    // The QP executes them in order, so the old values must increase.
    const std::size_t depth = std::min<std::size_t>(settings.depth, options.iters);
    const std::size_t signal_every = std::max<std::size_t>(1, depth / 4);
    std::vector<ibv_sge> sges(depth);
    std::vector<ibv_send_wr> wrs(depth);
    for (std::size_t slot = 0; slot < depth; ++slot) {
        sges[slot] = {reinterpret_cast<std::uintptr_t>(&slots[slot]), sizeof(std::uint64_t),
                      mr->lkey};
        ibv_send_wr& wr = wrs[slot];
        wr.sg_list = &sges[slot];
        wr.num_sge = 1;
        wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
        wr.wr.atomic.remote_addr = counter;
        wr.wr.atomic.rkey = peer.rkey;
        wr.wr.atomic.compare_add = settings.add;
    }
    const auto start = Clock::now();
    std::size_t posted = 0;
    std::size_t completed = 0;
    std::uint64_t last_fetched = 0;
    bool increasing = true;
    unsigned empty_polls = 0;
    // While the loop polls in vain, the deadline also looks at the socket.
    lab::Deadline idle_deadline(options.timeout, server_gone);
    // With one atomic in flight, the round trips are timed in batches of
    // kBatch: reading the clock is not free (under emulation it can cost a
    // microsecond or more), and the median of the batch averages is robust
    // against the occasional stall.
    constexpr std::size_t kBatch = 16;
    std::vector<double> round_trips;
    Clock::time_point batch_start = start;
    std::vector<ibv_wc> wcs(depth);
    while (completed < options.iters) {
        // Refill: chain every free slot's next operation, post them at once.
        const std::size_t first = posted;
        const std::size_t last = std::min(completed + depth, options.iters);
        for (std::size_t n = first; n < last; ++n) {
            ibv_send_wr& wr = wrs[n % depth];
            wr.wr_id = n;
            const bool signaled = (n + 1) % signal_every == 0 || n + 1 == options.iters;
            wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
            wr.next = n + 1 < last ? &wrs[(n + 1) % depth] : nullptr;
        }
        if (last > first) {
            ibv_send_wr* bad = nullptr;
            lab::check(ibv_post_send(qp.get(), &wrs[first % depth], &bad),
                       "ibv_post_send(FETCH_AND_ADD list)");
            posted = last;
        }
        const int found = ibv_poll_cq(cq.get(), static_cast<int>(wcs.size()), wcs.data());
        if (found < 0) {
            lab::fail("ibv_poll_cq", EIO);
        }
        if (found == 0) {
            // Reading the clock on every empty poll would slow the loop down.
            if (++empty_polls % 1024 == 0 && !idle_deadline.still_waiting()) {
                throw lab::Error(
                    "fetch-and-add: no completion within the timeout (hint: is "
                    "the server still running?)");
            }
            continue;
        }
        idle_deadline.reset();
        empty_polls = 0;
        for (const ibv_wc& wc : std::span(wcs).first(static_cast<std::size_t>(found))) {
            lab::check_completion(wc, "fetch-and-add");
            // Operations completed..wr_id are done: read their old values (in
            // host byte order on rxe, see the README) before the slots are reused.
            for (; completed <= wc.wr_id; ++completed) {
                const std::uint64_t fetched = slots[completed % depth];
                if (completed > 0 && fetched <= last_fetched) {
                    increasing = false;
                }
                last_fetched = fetched;
            }
        }
        if (depth == 1 && completed % kBatch == 0) {
            const auto now = Clock::now();
            round_trips.push_back(
                std::chrono::duration<double, std::micro>(now - batch_start).count() / kBatch);
            batch_start = now;
        }
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf(
        "client: fetch-and-add: %zu operations in %.3f s, %.0f per second, %.2f us each "
        "(depth %zu, every %zu. signaled)\n",
        options.iters, seconds, static_cast<double>(options.iters) / seconds,
        seconds * 1e6 / static_cast<double>(options.iters), depth, signal_every);
    if (!round_trips.empty()) {
        std::ranges::nth_element(round_trips, round_trips.begin() + round_trips.size() / 2);
        std::printf("client: one at a time: median round trip %.2f us (over batches of %zu)\n",
                    round_trips[round_trips.size() / 2], kBatch);
    }
    std::printf("client: old values came back %s; the last one was %llu, bytes %s\n",
                increasing ? "increasing" : "OUT OF ORDER",
                static_cast<unsigned long long>(last_fetched), bytes_of(last_fetched).c_str());

    // Step 9b: the lock. CMP_AND_SWP 0 → 1 succeeds only when the old value
    // it returns is 0; otherwise another client holds it and we try again.
    std::size_t taken = 0;
    std::size_t released = 0;
    std::size_t busy = 0;
    const auto deadline = Clock::now() + options.timeout;
    for (std::size_t round = 0; round < settings.lock_iters; ++round) {
        while (true) {
            post_atomic(qp.get(), IBV_WR_ATOMIC_CMP_AND_SWP, 0, lock_slot, mr->lkey, lock,
                        peer.rkey, 0, 1);
            lab::wait_for_completion(cq.get(), "compare-and-swap (take the lock)", options.timeout,
                                     server_gone);
            if (*lock_slot == 0) {
                break;
            }
            ++busy;
            if (Clock::now() > deadline) {
                throw lab::Error(
                    "the lock stayed taken for the whole timeout (hint: a client "
                    "that died holding it never frees it; restart the server)");
            }
        }
        ++taken;
        // In the critical section: a read-modify-write that is NOT atomic
        // by itself. Only the lock keeps two clients from interleaving here.
        // An RDMA read and an RDMA write of one word (lab::post_rdma, lessons 07 and 09).
        lab::post_rdma(qp.get(), IBV_WR_RDMA_READ, std::as_bytes(std::span(word_slot, 1)), mr->lkey,
                       protected_word, peer.rkey);
        lab::wait_for_completion(cq.get(), "RDMA read", options.timeout, server_gone);
        *word_slot += 1;
        lab::post_rdma(qp.get(), IBV_WR_RDMA_WRITE, std::as_bytes(std::span(word_slot, 1)),
                       mr->lkey, protected_word, peer.rkey);
        lab::wait_for_completion(cq.get(), "RDMA write", options.timeout, server_gone);
        // Release with CMP_AND_SWP 1 → 0. The old value must be 1: anything
        // else means someone else touched a lock we hold.
        post_atomic(qp.get(), IBV_WR_ATOMIC_CMP_AND_SWP, 0, lock_slot, mr->lkey, lock, peer.rkey, 1,
                    0);
        lab::wait_for_completion(cq.get(), "compare-and-swap (release the lock)", options.timeout,
                                 server_gone);
        if (*lock_slot != 1) {
            throw lab::Error("released a lock that read " + std::to_string(*lock_slot) +
                             ", not 1: mutual exclusion is broken");
        }
        ++released;
    }
    std::printf(
        "client: lock taken %zu times and released %zu times (%zu attempts found it held)\n", taken,
        released, busy);

    // Step 9c: one RDMA read of the counter: its bytes as they are in the
    // server's memory, the same order as the old values above.
    lab::post_rdma(qp.get(), IBV_WR_RDMA_READ, std::as_bytes(std::span(word_slot, 1)), mr->lkey,
                   counter, peer.rkey);
    lab::wait_for_completion(cq.get(), "RDMA read", options.timeout, server_gone);
    std::printf("client: the counter now reads %llu, bytes %s\n",
                static_cast<unsigned long long>(*word_slot), bytes_of(*word_slot).c_str());

    connection.barrier(options.timeout * 10);  // done; the server counts
    connection.barrier(options.timeout);       // the server has read the words
    // Step 10: the owners are destroyed in reverse order.
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    lab::CommandLine command_line(
        "Lesson 12: RDMA atomics: a shared counter (fetch-and-add) and a lock (compare-and-swap)",
        lab::kDevice | lab::kTcpPort | lab::kIters | lab::kTimeout | lab::kServerArg);
    LessonOptions settings;
    command_line.app()
        .add_option("--clients", settings.clients, "server: how many clients to accept")
        ->check(CLI::Range(std::size_t{1}, std::size_t{64}))
        ->capture_default_str();
    command_line.app()
        .add_option("--add", settings.add, "what each fetch-and-add adds")
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000}))
        ->capture_default_str();
    command_line.app()
        .add_option("--lock-iters", settings.lock_iters, "how often each client takes the lock")
        ->check(CLI::Range(std::size_t{0}, std::size_t{1'000'000}))
        ->capture_default_str();
    command_line.app()
        .add_option("--depth", settings.depth, "client: fetch-and-adds in flight at once")
        ->check(CLI::Range(1, 1024))
        ->capture_default_str();
    auto* wrong_alignment =
        command_line.app().add_flag("--wrong-alignment", settings.wrong_alignment,
                                    "client: one fetch-and-add 4 bytes off the word");
    auto* wrong_rkey = command_line.app().add_flag("--wrong-rkey", settings.wrong_rkey,
                                                   "client: one fetch-and-add with a wrong rkey");
    auto* wrong_address =
        command_line.app().add_flag("--wrong-address", settings.wrong_address,
                                    "client: one fetch-and-add outside the server's region");
    wrong_alignment->excludes(wrong_rkey)->excludes(wrong_address);
    wrong_rkey->excludes(wrong_address);
    command_line.defaults().iters = 1000;
    const lab::Options options = command_line.parse(argc, argv);

    return lab::run_main([&] {
        return options.is_server() ? run_server(options, settings) : run_client(options, settings);
    });
}

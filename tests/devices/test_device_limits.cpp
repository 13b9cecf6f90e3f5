// SPDX-License-Identifier: MIT
// Rows of the device page (docs/devices.md) measured on rxe: the limits a
// device reports (MTU, atomics, SGEs of a READ, RDMA READ and atomic depths,
// FLUSH and ATOMIC WRITE), how rxe checks and rounds the QP attributes that
// use them, what ibv_post_send does before RTS, which ibv_wr_* operations the
// provider takes, fork with registered memory, a full CQ, and two memory
// window rules. The page quotes each TEST_CASE by name as the test of its row;
// where Linux 6.1 and 6.12 differ, a case asserts the row's cell for the
// kernel it runs on. Limits are read from the device; a value is written here
// only where the row states rxe's value.
#include <infiniband/verbs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "lab/check.hpp"
#include "lab/device.hpp"
#include "lab/verbs.hpp"
#include "support/catch.hpp"
#include "support/rxe.hpp"

using lab::test::LoopbackPair;
using lab::test::poll_completions;
using lab::test::query_qp;
using lab::test::state_of;
using namespace std::chrono_literals;

namespace {

// The first PSN of every QP made here besides a LoopbackPair's own.
constexpr std::uint32_t kPsn = 0x3000;

// B's half of a LoopbackPair's region, where A's requests land.
constexpr std::size_t kHalf = 32 * 1024;

ibv_device_attr query_device(ibv_context* context) {
    ibv_device_attr attr{};
    REQUIRE(ibv_query_device(context, &attr) == 0);
    return attr;
}

lab::PeerAddress address_of(const lab::Port& port, ibv_qp* qp) {
    return {qp->qp_num, kPsn, port.attr.lid, port.gid.gid};
}

// RESET -> INIT -> RTR -> RTS towards @p peer, with the course's attributes.
void bring_up(const lab::Port& port, ibv_qp* qp, ibv_qp* peer) {
    lab::move_to_init(qp, port.number, lab::test::kAllAccess);
    lab::move_to_rtr(qp, port.local(), address_of(port, peer));
    lab::move_to_rts(qp, kPsn);
}

// Two more RC QPs, C and D, on a LoopbackPair's PD, connected to each other:
// for rows that need sizes or CQs the pair's own QPs do not have.
struct ExtraPair {
    lab::QueuePair c, d;
    ExtraPair(LoopbackPair& pair, ibv_cq* c_send, ibv_cq* c_recv, ibv_cq* d_send, ibv_cq* d_recv,
              const lab::QueueSizes& c_sizes = {})
        : c(lab::create_rc_qp(pair.pd.get(), c_send, c_recv, c_sizes)),
          d(lab::create_rc_qp(pair.pd.get(), d_send, d_recv, {})) {
        bring_up(pair.port, c.get(), d.get());
        bring_up(pair.port, d.get(), c.get());
    }
};

// Every asynchronous event of @p context until none came for @p quiet.
std::vector<ibv_event_type> drain_async_events(ibv_context* context,
                                               std::chrono::milliseconds quiet) {
    std::vector<ibv_event_type> seen;
    while (const auto event = lab::test::next_async_event(context, quiet)) {
        seen.push_back(event->type);
    }
    return seen;
}

// Waits up to @p timeout for @p qp to reach @p state; the state it is in then.
ibv_qp_state wait_for_state(ibv_qp* qp, ibv_qp_state state, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (state_of(qp) != state && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(10ms);
    }
    return state_of(qp);
}

std::string read_line(const std::string& path) {
    std::ifstream file(path);
    std::string line;
    std::getline(file, line);
    return line;
}

struct WindowDeleter {
    void operator()(ibv_mw* window) const noexcept {
        lab::warn_if_failed(ibv_dealloc_mw(window), "ibv_dealloc_mw");
    }
};
using MemoryWindow = std::unique_ptr<ibv_mw, WindowDeleter>;

// Binds a type 2 @p window to @p length bytes of @p region at @p address, for
// remote writes, by IBV_WR_BIND_MW on @p qp; returns the window's new rkey.
std::uint32_t bind_type2(ibv_qp* qp, ibv_cq* cq, ibv_mw* window, ibv_mr* region,
                         std::uint64_t address, std::uint64_t length) {
    const std::uint32_t rkey = ibv_inc_rkey(window->rkey);
    ibv_send_wr wr{};
    wr.wr_id = 0xb1;
    wr.opcode = IBV_WR_BIND_MW;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.bind_mw.mw = window;
    wr.bind_mw.rkey = rkey;
    wr.bind_mw.bind_info.mr = region;
    wr.bind_mw.bind_info.addr = address;
    wr.bind_mw.bind_info.length = length;
    wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
    ibv_send_wr* bad_wr = nullptr;
    REQUIRE(ibv_post_send(qp, &wr, &bad_wr) == 0);
    const auto done = poll_completions(cq, 1, 5s);
    REQUIRE(done.size() == 1);
    REQUIRE(done[0].status == IBV_WC_SUCCESS);
    return rkey;
}

// An RC QP's creation attributes for ibv_create_qp_ex, on A's CQ, with the
// ibv_wr_* operations @p ops.
ibv_qp_init_attr_ex rc_init_ex(LoopbackPair& pair, std::uint64_t ops) {
    const ibv_qp_init_attr basic = lab::rc_qp_init_attr(pair.cq_a.get(), pair.cq_a.get(), {});
    ibv_qp_init_attr_ex init{};
    init.send_cq = basic.send_cq;
    init.recv_cq = basic.recv_cq;
    init.cap = basic.cap;
    init.qp_type = basic.qp_type;
    init.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    init.pd = pair.pd.get();
    init.send_ops_flags = ops;
    return init;
}

// Bits of device_cap_flags_ex that rdma-core 44's headers do not name: the
// kernel uapi's enum ib_uverbs_device_cap_flags (rdma/ib_user_verbs.h).
constexpr std::uint64_t kDeviceFlushGlobal = 1ULL << 38;      // IB_UVERBS_DEVICE_FLUSH_GLOBAL
constexpr std::uint64_t kDeviceFlushPersistent = 1ULL << 39;  // IB_UVERBS_DEVICE_FLUSH_PERSISTENT
constexpr std::uint64_t kDeviceAtomicWrite = 1ULL << 40;      // IB_UVERBS_DEVICE_ATOMIC_WRITE
// IBV_QP_EX_WITH_FLUSH of enum ibv_qp_create_send_ops_flags (verbs.h from rdma-core 45).
constexpr std::uint64_t kQpExWithFlush = 1ULL << 11;

}  // namespace

TEST_CASE("devices: active-mtu: rxe on a 1500-byte netdev reports active_mtu 1024, max_mtu 4096",
          "[devices]") {
    LoopbackPair pair;
    const std::string device = ibv_get_device_name(pair.port.context->device);
    const std::string port_dir =
        "/sys/class/infiniband/" + device + "/ports/" + std::to_string(pair.port.number);
    const std::string netdev =
        read_line(port_dir + "/gid_attrs/ndevs/" + std::to_string(pair.port.gid.index));
    INFO(device << " over " << netdev);
    REQUIRE_FALSE(netdev.empty());
    // The row is about a netdev of 1500 bytes, the lab machine's.
    REQUIRE(read_line("/sys/class/net/" + netdev + "/mtu") == "1500");
    const ibv_port_attr attr = lab::query_port(pair.port.context.get(), pair.port.number);
    CHECK(attr.active_mtu == IBV_MTU_1024);
    CHECK(attr.max_mtu == IBV_MTU_4096);
}

TEST_CASE("devices: atomic-cap: rxe reports IBV_ATOMIC_HCA", "[devices]") {
    LoopbackPair pair;
    CHECK(query_device(pair.port.context.get()).atomic_cap == IBV_ATOMIC_HCA);
}

TEST_CASE(
    "devices: max-sge-rd: rxe reports max_sge_rd 32, as max_sge; a READ scatters into "
    "that many",
    "[devices]") {
    LoopbackPair pair;
    const ibv_device_attr attr = query_device(pair.port.context.get());
    CHECK(attr.max_sge_rd == 32);
    CHECK(attr.max_sge == attr.max_sge_rd);
    const auto sges = static_cast<std::uint32_t>(attr.max_sge_rd);
    // A QP asking for one SGE more than max_sge is refused.
    lab::QueueSizes too_many;
    too_many.send_sge = static_cast<std::uint32_t>(attr.max_sge) + 1;
    ibv_qp_init_attr refused = lab::rc_qp_init_attr(pair.cq_a.get(), pair.cq_a.get(), too_many);
    errno = 0;
    CHECK(ibv_create_qp(pair.pd.get(), &refused) == nullptr);
    CHECK(errno == EINVAL);
    // One READ of 8 * max_sge_rd bytes of B's half, scattered 8 bytes to each
    // of max_sge_rd SGEs, 64 bytes apart in A's half.
    lab::QueueSizes sizes;
    sizes.send_sge = sges;
    ExtraPair qps(pair, pair.cq_a.get(), pair.cq_a.get(), pair.cq_b.get(), pair.cq_b.get(), sizes);
    auto source = pair.at(kHalf, 8 * sges);
    for (std::size_t i = 0; i < source.size(); ++i) {
        source[i] = static_cast<std::byte>(i + 1);
    }
    std::vector<ibv_sge> list;
    for (std::uint32_t i = 0; i < sges; ++i) {
        list.push_back({pair.address(64 * i), 8, pair.mr->lkey});
    }
    ibv_send_wr wr{};
    wr.wr_id = 1;
    wr.opcode = IBV_WR_RDMA_READ;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.sg_list = list.data();
    wr.num_sge = static_cast<int>(sges);
    wr.wr.rdma.remote_addr = pair.address(kHalf);
    wr.wr.rdma.rkey = pair.mr->rkey;
    ibv_send_wr* bad_wr = nullptr;
    REQUIRE(ibv_post_send(qps.c.get(), &wr, &bad_wr) == 0);
    const auto done = poll_completions(pair.cq_a.get(), 1, 5s);
    REQUIRE(done.size() == 1);
    CHECK(done[0].status == IBV_WC_SUCCESS);
    CHECK(done[0].byte_len == 8 * sges);
    for (std::uint32_t i = 0; i < sges; ++i) {
        INFO("SGE " << i);
        CHECK(std::equal(source.begin() + 8 * i, source.begin() + 8 * (i + 1),
                         pair.at(64 * i, 8).begin()));
    }
}

TEST_CASE("devices: rd-atomic-limits: rxe reports max_qp_rd_atom 128 and max_qp_init_rd_atom 128",
          "[devices]") {
    LoopbackPair pair;
    const ibv_device_attr attr = query_device(pair.port.context.get());
    CHECK(attr.max_qp_rd_atom == 128);
    CHECK(attr.max_qp_init_rd_atom == 128);
}

TEST_CASE(
    "devices: rd-atomic-check: rxe checks only max_rd_atomic and rounds both up to a "
    "power of two",
    "[devices]") {
    LoopbackPair pair;
    const ibv_device_attr device = query_device(pair.port.context.get());
    REQUIRE(device.max_qp_rd_atom < 255);
    const auto above = static_cast<std::uint8_t>(device.max_qp_rd_atom + 1);
    const lab::PeerAddress peer = address_of(pair.port, pair.b.get());
    SECTION("3 and 3 are granted as 4 and 4") {
        lab::QueuePair qp = lab::create_rc_qp(pair.pd.get(), pair.cq_a.get(), pair.cq_a.get(), {});
        lab::move_to_init(qp.get(), pair.port.number, lab::test::kAllAccess);
        lab::move_to_rtr(qp.get(), pair.port.local(), peer, 3);
        lab::move_to_rts(qp.get(), kPsn, 3);
        const ibv_qp_attr attr =
            query_qp(qp.get(), IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MAX_QP_RD_ATOMIC);
        CHECK(attr.max_dest_rd_atomic == 4);
        CHECK(attr.max_rd_atomic == 4);
    }
    SECTION("one above max_qp_rd_atom: max_dest_rd_atomic is taken, max_rd_atomic refused") {
        lab::QueuePair qp = lab::create_rc_qp(pair.pd.get(), pair.cq_a.get(), pair.cq_a.get(), {});
        lab::move_to_init(qp.get(), pair.port.number, lab::test::kAllAccess);
        // move_to_rtr throws on a refusal: the test fails if rxe checks the limit.
        lab::move_to_rtr(qp.get(), pair.port.local(), peer, above);
        ibv_qp_attr rts{};
        rts.qp_state = IBV_QPS_RTS;
        rts.sq_psn = kPsn;
        rts.timeout = 17;
        rts.retry_cnt = 6;
        rts.rnr_retry = 7;
        rts.max_rd_atomic = above;
        const int mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                         IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
        CHECK(ibv_modify_qp(qp.get(), &rts, mask) == EINVAL);
        CHECK(state_of(qp.get()) == IBV_QPS_RTR);
        rts.max_rd_atomic = static_cast<std::uint8_t>(device.max_qp_rd_atom);
        CHECK(ibv_modify_qp(qp.get(), &rts, mask) == 0);
        const ibv_qp_attr attr =
            query_qp(qp.get(), IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MAX_QP_RD_ATOMIC);
        CHECK(attr.max_rd_atomic == device.max_qp_rd_atom);
        // 129 rounds up to 256, which the 8-bit attribute reads back as 0.
        CHECK(attr.max_dest_rd_atomic == 0);
    }
}

TEST_CASE(
    "devices: post-send-state: ibv_post_send before RTS fails with EINVAL, yet the "
    "request stays queued and runs in RTS",
    "[devices]") {
    // rxe's provider writes the request into the send queue it shares with
    // the kernel, then rings the kernel, which refuses a QP not in RTS: the
    // post fails, bad_wr is left null, and the request is still in the queue.
    LoopbackPair pair;
    lab::QueuePair c = lab::create_rc_qp(pair.pd.get(), pair.cq_a.get(), pair.cq_a.get(), {});
    lab::QueuePair d = lab::create_rc_qp(pair.pd.get(), pair.cq_b.get(), pair.cq_b.get(), {});
    bring_up(pair.port, d.get(), c.get());
    // One signaled 8-byte write per state, each to its own place in B's half.
    const auto write = [&](std::uint64_t id) {
        std::fill_n(pair.at(8 * id, 8).begin(), 8, static_cast<std::byte>(id));
        ibv_sge sge{pair.address(8 * id), 8, pair.mr->lkey};
        ibv_send_wr wr{};
        wr.wr_id = id;
        wr.opcode = IBV_WR_RDMA_WRITE;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.wr.rdma.remote_addr = pair.address(kHalf + 8 * id);
        wr.wr.rdma.rkey = pair.mr->rkey;
        ibv_send_wr* bad_wr = &wr;
        const int result = ibv_post_send(c.get(), &wr, &bad_wr);
        CHECK(bad_wr == nullptr);
        return result;
    };
    CHECK(write(1) == EINVAL);  // RESET
    lab::move_to_init(c.get(), pair.port.number, lab::test::kAllAccess);
    CHECK(write(2) == EINVAL);
    lab::move_to_rtr(c.get(), pair.port.local(), address_of(pair.port, d.get()));
    CHECK(write(3) == EINVAL);
    lab::move_to_rts(c.get(), kPsn);
    // In RTS they wait for the next post to ring the kernel.
    CHECK(poll_completions(pair.cq_a.get(), 1, 300ms).empty());
    CHECK(write(4) == 0);
    const auto done = poll_completions(pair.cq_a.get(), 4, 5s);
    REQUIRE(done.size() == 4);
    for (std::uint64_t id = 1; id <= 4; ++id) {
        INFO("write " << id);
        CHECK(done[id - 1].wr_id == id);
        CHECK(done[id - 1].status == IBV_WC_SUCCESS);
        CHECK(pair.at(kHalf + 8 * id, 1)[0] == static_cast<std::byte>(id));
    }
}

TEST_CASE("devices: flush-atomic-write: rxe on 6.12 reports FLUSH and ATOMIC WRITE, on 6.1 neither",
          "[devices]") {
    const auto series = lab::test::kernel_series();
    INFO("kernel " << series);
    LoopbackPair pair;
    ibv_device_attr_ex attr{};
    REQUIRE(ibv_query_device_ex(pair.port.context.get(), nullptr, &attr) == 0);
    const std::uint64_t flags = attr.device_cap_flags_ex;
    const bool newer = series == "6.12";
    if (!newer && series != "6.1") {
        WARN("kernel " << series << ": the row knows 6.1 and 6.12 only");
        return;
    }
    CHECK(((flags & kDeviceFlushGlobal) != 0) == newer);
    CHECK(((flags & kDeviceFlushPersistent) != 0) == newer);
    CHECK(((flags & kDeviceAtomicWrite) != 0) == newer);
}

TEST_CASE(
    "devices: extended-wr-api: the send_ops_flags rxe's provider takes, FLUSH from "
    "rdma-core 56; a WRITE by ibv_wr_* lands",
    "[devices]") {
    // Each release of the lab pairs its kernel with its rdma-core: Debian 12
    // has 6.1 and rdma-core 44, Debian 13 has 6.12 and rdma-core 56.
    const auto series = lab::test::kernel_series();
    INFO("kernel " << series);
    const bool known = series == "6.1" || series == "6.12";
    LoopbackPair pair;
    struct Operation {
        const char* name;
        std::uint64_t flag;
        bool taken;
    };
    const Operation operation =
        GENERATE_COPY(Operation{"RDMA_WRITE", IBV_QP_EX_WITH_RDMA_WRITE, true},
                      Operation{"RDMA_WRITE_WITH_IMM", IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, true},
                      Operation{"SEND", IBV_QP_EX_WITH_SEND, true},
                      Operation{"SEND_WITH_IMM", IBV_QP_EX_WITH_SEND_WITH_IMM, true},
                      Operation{"RDMA_READ", IBV_QP_EX_WITH_RDMA_READ, true},
                      Operation{"ATOMIC_CMP_AND_SWP", IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, true},
                      Operation{"ATOMIC_FETCH_AND_ADD", IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, true},
                      Operation{"LOCAL_INV", IBV_QP_EX_WITH_LOCAL_INV, true},
                      Operation{"BIND_MW", IBV_QP_EX_WITH_BIND_MW, true},
                      Operation{"SEND_WITH_INV", IBV_QP_EX_WITH_SEND_WITH_INV, true},
                      Operation{"ATOMIC_WRITE", IBV_QP_EX_WITH_ATOMIC_WRITE, true},
                      Operation{"TSO", IBV_QP_EX_WITH_TSO, false},  // UD and raw packet QPs only
                      Operation{"FLUSH", kQpExWithFlush, series == "6.12"});
    INFO(operation.name);
    ibv_qp_init_attr_ex init = rc_init_ex(pair, operation.flag);
    errno = 0;
    const lab::QueuePair c(ibv_create_qp_ex(pair.port.context.get(), &init));
    if (operation.flag == kQpExWithFlush && !known) {
        return;  // which rdma-core runs here is not known
    }
    REQUIRE((c != nullptr) == operation.taken);
    if (!operation.taken) {
        CHECK(errno == EOPNOTSUPP);
        return;
    }
    if (operation.flag != IBV_QP_EX_WITH_RDMA_WRITE) {
        return;
    }
    const lab::QueuePair d = lab::create_rc_qp(pair.pd.get(), pair.cq_b.get(), pair.cq_b.get(), {});
    bring_up(pair.port, c.get(), d.get());
    bring_up(pair.port, d.get(), c.get());
    std::fill_n(pair.at(0, 16).begin(), 16, std::byte{0x5c});
    ibv_qp_ex* qpx = ibv_qp_to_qp_ex(c.get());
    REQUIRE(qpx != nullptr);
    ibv_wr_start(qpx);
    qpx->wr_id = 7;
    qpx->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_rdma_write(qpx, pair.mr->rkey, pair.address(kHalf));
    ibv_wr_set_sge(qpx, pair.mr->lkey, pair.address(0), 16);
    REQUIRE(ibv_wr_complete(qpx) == 0);
    const auto done = poll_completions(pair.cq_a.get(), 1, 5s);
    REQUIRE(done.size() == 1);
    CHECK(done[0].wr_id == 7);
    CHECK(done[0].status == IBV_WC_SUCCESS);
    const auto landed = pair.at(kHalf, 16);
    CHECK(std::all_of(landed.begin(), landed.end(),
                      [](std::byte b) { return b == std::byte{0x5c}; }));
}

TEST_CASE("devices: fork: IBV_FORK_UNNEEDED, and a registered buffer stays the parent's after fork",
          "[devices]") {
    // Asked before anything could call ibv_fork_init: the kernel's answer.
    CHECK(ibv_is_fork_initialized() == IBV_FORK_UNNEEDED);
    LoopbackPair pair;
    std::fill_n(pair.at(0, 64).begin(), 64, std::byte{0x11});
    int gate[2];
    REQUIRE(pipe(gate) == 0);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        // The child holds its copy of the pages until the parent is done.
        char byte = 0;
        close(gate[1]);
        const auto ignored = read(gate[0], &byte, 1);
        static_cast<void>(ignored);
        _exit(0);
    }
    close(gate[0]);
    // With the child alive, the parent writes the buffer, then sends it. Were
    // the pages shared copy-on-write, this write would go to a new page and
    // the device would send the old one (0x11).
    std::fill_n(pair.at(0, 64).begin(), 64, std::byte{0x22});
    lab::post_rdma(pair.a.get(), IBV_WR_RDMA_WRITE, pair.at(0, 64), pair.mr->lkey,
                   pair.address(kHalf), pair.mr->rkey, IBV_SEND_SIGNALED, 1);
    const auto done = poll_completions(pair.cq_a.get(), 1, 5s);
    close(gate[1]);
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    REQUIRE(done.size() == 1);
    CHECK(done[0].status == IBV_WC_SUCCESS);
    const auto landed = pair.at(kHalf, 64);
    CHECK(std::all_of(landed.begin(), landed.end(),
                      [](std::byte b) { return b == std::byte{0x22}; }));
}

TEST_CASE(
    "devices: cq-overrun: a full CQ raises IBV_EVENT_CQ_ERR; a send's completion is "
    "dropped, a receive's moves its QP to ERR",
    "[devices]") {
    LoopbackPair pair;
    ibv_context* context = pair.port.context.get();
    const lab::CompletionQueue small = lab::create_cq(context, 1);
    const lab::CompletionQueue other = lab::create_cq(context, 64);
    const auto room = static_cast<std::size_t>(small->cqe);
    INFO("the small CQ holds " << room);
    SECTION("send completions") {
        ExtraPair qps(pair, small.get(), other.get(), other.get(), other.get());
        for (std::uint64_t id = 1; id <= room + 2; ++id) {
            lab::post_rdma(qps.c.get(), IBV_WR_RDMA_WRITE, pair.at(0, 8), pair.mr->lkey,
                           pair.address(kHalf), pair.mr->rkey, IBV_SEND_SIGNALED, id);
        }
        // One event for each completion that did not fit, none for the QP.
        const auto events = drain_async_events(context, 300ms);
        CHECK(events == std::vector<ibv_event_type>(2, IBV_EVENT_CQ_ERR));
        const auto done = poll_completions(small.get(), room + 2, 200ms);
        CHECK(done.size() == room);
        CHECK(state_of(qps.c.get()) == IBV_QPS_RTS);
        // The QP goes on: the next request completes.
        lab::post_rdma(qps.c.get(), IBV_WR_RDMA_WRITE, pair.at(0, 8), pair.mr->lkey,
                       pair.address(kHalf), pair.mr->rkey, IBV_SEND_SIGNALED, 99);
        const auto next = poll_completions(small.get(), 1, 5s);
        REQUIRE(next.size() == 1);
        CHECK(next[0].wr_id == 99);
        CHECK(next[0].status == IBV_WC_SUCCESS);
    }
    SECTION("receive completions") {
        ExtraPair qps(pair, other.get(), other.get(), other.get(), small.get());
        for (std::uint64_t id = 1; id <= room + 1; ++id) {
            lab::post_receive(qps.d.get(), pair.at(kHalf + 64 * id, 64), pair.mr->lkey, id);
        }
        for (std::uint64_t id = 1; id <= room + 1; ++id) {
            lab::post_send(qps.c.get(), pair.at(0, 8), pair.mr->lkey, IBV_SEND_SIGNALED, id);
        }
        CHECK(wait_for_state(qps.d.get(), IBV_QPS_ERR, 2s) == IBV_QPS_ERR);
        // The CQ's event, and none for the QP.
        const auto events = drain_async_events(context, 300ms);
        CHECK(events == std::vector{IBV_EVENT_CQ_ERR});
    }
}

TEST_CASE("devices: dereg-with-bound-mw: ibv_dereg_mr fails with EINVAL while a window is bound",
          "[devices]") {
    LoopbackPair pair;
    std::vector<std::byte> memory(4096);
    lab::MemoryRegion region =
        lab::register_memory(pair.pd.get(), memory, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
    const auto type = GENERATE(IBV_MW_TYPE_1, IBV_MW_TYPE_2);
    INFO("window type " << type);
    MemoryWindow window(lab::check_ptr(ibv_alloc_mw(pair.pd.get(), type), "ibv_alloc_mw"));
    const auto start = reinterpret_cast<std::uintptr_t>(memory.data());
    if (type == IBV_MW_TYPE_2) {
        bind_type2(pair.a.get(), pair.cq_a.get(), window.get(), region.get(), start, 256);
    } else {
        ibv_mw_bind bind{};
        bind.wr_id = 0xb1;
        bind.send_flags = IBV_SEND_SIGNALED;
        bind.bind_info.mr = region.get();
        bind.bind_info.addr = start;
        bind.bind_info.length = 256;
        bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
        REQUIRE(ibv_bind_mw(pair.a.get(), window.get(), &bind) == 0);
        const auto done = poll_completions(pair.cq_a.get(), 1, 5s);
        REQUIRE(done.size() == 1);
        REQUIRE(done[0].status == IBV_WC_SUCCESS);
    }
    CHECK(ibv_dereg_mr(region.get()) == EINVAL);
    // With the window gone, the region goes too.
    window.reset();
    CHECK(ibv_dereg_mr(region.release()) == 0);
}

TEST_CASE(
    "devices: mw-bounds: rxe checks a write through a window against the region, not the "
    "window",
    "[devices]") {
    lab::test::PairSetup setup;
    setup.region_access = lab::test::kAllAccess | IBV_ACCESS_MW_BIND;
    LoopbackPair pair(setup);
    MemoryWindow window(lab::check_ptr(ibv_alloc_mw(pair.pd.get(), IBV_MW_TYPE_2), "ibv_alloc_mw"));
    struct Case {
        const char* what;
        std::size_t window_offset;  // where the 64-byte window starts in the region
        ibv_wc_status status;       // of a 128-byte write at the window's start
    };
    const Case c =
        GENERATE(Case{"past the window, inside the region", kHalf, IBV_WC_SUCCESS},
                 Case{"past the window and the region", 64 * 1024 - 64, IBV_WC_REM_ACCESS_ERR});
    INFO(c.what);
    // B binds the window: a type 2 window serves the QP that bound it.
    const std::uint32_t rkey = bind_type2(pair.b.get(), pair.cq_b.get(), window.get(),
                                          pair.mr.get(), pair.address(c.window_offset), 64);
    std::fill_n(pair.at(0, 128).begin(), 128, std::byte{0x77});
    lab::post_rdma(pair.a.get(), IBV_WR_RDMA_WRITE, pair.at(0, 128), pair.mr->lkey,
                   pair.address(c.window_offset), rkey, IBV_SEND_SIGNALED, 1);
    const auto done = poll_completions(pair.cq_a.get(), 1, 5s);
    REQUIRE(done.size() == 1);
    CHECK(done[0].status == c.status);
    if (c.status == IBV_WC_SUCCESS) {
        const auto landed = pair.at(c.window_offset, 128);
        CHECK(std::all_of(landed.begin(), landed.end(),
                          [](std::byte b) { return b == std::byte{0x77}; }));
    }
}

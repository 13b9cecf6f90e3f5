// SPDX-License-Identifier: MIT
// Lesson 04 on the real device: the granted QP caps, the states in order,
// the refused transitions, the message the QP sent itself, and bad input.
// Then, with raw verbs, what the READMEs say of QP states on rxe: the path
// MTU it accepts, what RESET and ibv_destroy_qp do to requests and to
// completions, and that a failed UC or UD send ends in ERR, never in SQE.
#include <infiniband/verbs.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "lab/check.hpp"
#include "lab/device.hpp"
#include "lab/options.hpp"
#include "lab/verbs.hpp"
#include "support/catch.hpp"
#include "support/expect.hpp"
#include "support/process.hpp"
#include "support/rxe.hpp"

using lab::test::check_each_rejected;
using lab::test::check_one_error_line;
using lab::test::lesson;
using lab::test::run;
using namespace std::chrono_literals;

#ifndef LAB_BAD_INPUT_ONLY

namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("04_queue_pair prints the caps it asked for and the ones granted", "[lesson04]") {
    const auto result = run({lesson("04_queue_pair")});
    INFO(result.out << result.err);
    REQUIRE(result.exit_code == 0);
    for (const char* cap :
         {"max_send_wr", "max_recv_wr", "max_send_sge", "max_recv_sge", "max_inline_data"}) {
        std::smatch match;
        INFO("cap " << cap);
        REQUIRE(std::regex_search(result.out, match,
                                  std::regex(std::string("\\t") + cap + R"(\s+(\d+)\s+(\d+)\n)")));
        CHECK(std::stoul(match[2]) >= std::stoul(match[1]));  // never less than asked
    }
    CHECK(std::regex_search(result.out, std::regex(R"(max_inline_data\s+64\s+\d+)")));
}

TEST_CASE("04_queue_pair walks RESET, INIT, RTR, RTS in order and refuses shortcuts",
          "[lesson04]") {
    const auto result = run({lesson("04_queue_pair")});
    INFO(result.out << result.err);
    REQUIRE(result.exit_code == 0);
    std::vector<std::string> states;
    const std::regex state(R"(ibv_query_qp: state (\w+))");
    for (std::sregex_iterator it(result.out.begin(), result.out.end(), state), end; it != end;
         ++it) {
        states.push_back((*it)[1]);
    }
    CHECK(states == std::vector<std::string>{"RESET", "INIT", "RTR", "RTS"});

    const auto refused = result.out.find("RESET->RTR     ibv_modify_qp: refused: Invalid argument");
    const auto init = result.out.find("state INIT");
    REQUIRE(refused != std::string::npos);
    CHECK(refused < init);  // refused while still in RESET
    CHECK(
        contains(result.out,
                 "INIT->RTR      without IBV_QP_DEST_QPN in the mask: refused: Invalid argument"));
    CHECK(contains(result.out, "RESET->INIT    mask STATE|PKEY_INDEX|PORT|ACCESS_FLAGS"));
    CHECK(contains(
        result.out,
        "INIT->RTR      mask STATE|AV|PATH_MTU|DEST_QPN|RQ_PSN|MAX_DEST_RD_ATOMIC|MIN_RNR_TIMER"));
    CHECK(
        contains(result.out,
                 "RTR->RTS       mask STATE|SQ_PSN|TIMEOUT|RETRY_CNT|RNR_RETRY|MAX_QP_RD_ATOMIC"));

    // Connected to itself: the destination QPN is its own, and the PSN it
    // expects is the one it sends with.
    std::smatch match;
    REQUIRE(std::regex_search(result.out, match, std::regex(R"(RC QP number (0x[0-9a-f]+))")));
    const std::string qpn = match[1];
    REQUIRE(std::regex_search(
        result.out, match,
        std::regex(R"(dest_qp_num (0x[0-9a-f]+), path_mtu \d+, rq_psn (0x[0-9a-f]+))")));
    CHECK(match[1] == qpn);
    const std::string rq_psn = match[2];
    REQUIRE(std::regex_search(result.out, match, std::regex(R"(sq_psn (0x[0-9a-f]+))")));
    CHECK(match[1] == rq_psn);
}

TEST_CASE("04_queue_pair receives exactly the message it sent itself", "[lesson04]") {
    for (const char* size : {"32", "4096"}) {  // one packet, and four at MTU 1024
        const auto result = run({lesson("04_queue_pair"), "-s", size});
        INFO("-s " << size << "\n" << result.out << result.err);
        REQUIRE(result.exit_code == 0);
        std::smatch match;
        REQUIRE(std::regex_search(result.out, match, std::regex(R"(RC QP number (0x[0-9a-f]+))")));
        const std::string qpn = match[1];
        // Both completions, successful, on this QP, with the bytes sent.
        CHECK(contains(result.out,
                       "completion: wr_id 2, status success, opcode IBV_WC_RECV, byte_len " +
                           std::string(size) + ", qp_num " + qpn));
        CHECK(contains(result.out, "completion: wr_id 1, status success, opcode IBV_WC_SEND"));
        REQUIRE(std::regex_search(result.out, match, std::regex("received: \"([^\"]*)\"")));
        const std::string sent = "Hello from QP " + qpn + " to itself";
        const std::string received = match[1];
        CHECK(received.substr(0, sent.size()) == sent);
        CHECK(received.find_first_not_of('.', sent.size()) == std::string::npos);
        CHECK(contains(result.out,
                       "all " + std::string(size) + " received bytes equal the sent ones"));
    }
}

TEST_CASE("04_queue_pair --send-first: RNR NAKs, retried for ever, or fatal with --rnr-retry 0",
          "[lesson04]") {
    // The send goes out 200 ms before any receive is posted.
    const auto patient = run({lesson("04_queue_pair"), "--send-first"});
    INFO(patient.out << patient.err);
    REQUIRE(patient.exit_code == 0);
    CHECK(contains(patient.out, "Step 9: --send-first: no receive yet, ibv_post_send IBV_WR_SEND"));
    CHECK(contains(patient.out, "rnr_retry 7)"));  // the RTS line of ibv_query_qp
    const auto late = patient.out.find("200 ms later: ibv_post_recv (wr_id 2); rnr_retry is 7");
    const auto received =
        patient.out.find("completion: wr_id 2, status success, opcode IBV_WC_RECV");
    const auto sent = patient.out.find("completion: wr_id 1, status success, opcode IBV_WC_SEND");
    REQUIRE(late != std::string::npos);
    REQUIRE(received != std::string::npos);
    REQUIRE(sent != std::string::npos);
    CHECK(late < received);  // the send completed only after the receive was posted
    CHECK(late < sent);
    CHECK(contains(patient.out, "all 32 received bytes equal the sent ones"));

    const auto impatient = run({lesson("04_queue_pair"), "--send-first", "--rnr-retry", "0"});
    INFO(impatient.out << impatient.err);
    CHECK(contains(impatient.out, "rnr_retry 0)"));
    lab::test::check_one_error_line(
        impatient,
        "send to itself: work completion failed: RNR retry counter exceeded (status 13, wr_id 1");
    CHECK(contains(impatient.err, "hint: receiver not ready"));
    CHECK_FALSE(contains(impatient.out, "received bytes equal"));
}

TEST_CASE("04_queue_pair honours -g: the link-local GID works for a QP talking to itself",
          "[lesson04]") {
    const auto result = run({lesson("04_queue_pair"), "-g", "0"});
    INFO(result.out << result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(contains(result.out, "GID index 0 (fe80::"));
    CHECK(contains(result.out, "all 32 received bytes equal the sent ones"));
}

TEST_CASE("rxe takes a path MTU above active_mtu: it checks against max_mtu", "[lesson04]") {
    const lab::Port port = lab::open_port(lab::Options{});
    INFO("active_mtu " << lab::mtu_name(port.attr.active_mtu) << ", max_mtu "
                       << lab::mtu_name(port.attr.max_mtu));
    REQUIRE(port.attr.active_mtu < IBV_MTU_4096);  // 1024 on a 1500-byte netdev
    REQUIRE(port.attr.max_mtu == IBV_MTU_4096);
    const lab::ProtectionDomain pd = lab::alloc_pd(port.context.get());
    std::vector<std::byte> memory(3 * 4096);
    const lab::MemoryRegion mr = lab::register_memory(pd.get(), memory, IBV_ACCESS_LOCAL_WRITE);
    const lab::CompletionQueue cq = lab::create_cq(port.context.get(), 16);
    const lab::QueuePair qp = lab::create_rc_qp(pd.get(), cq.get(), cq.get(), {});
    lab::move_to_init(qp.get(), port.number, 0);
    const lab::LocalPort local{port.number, port.gid.index, IBV_MTU_4096};
    const std::uint32_t psn = lab::random_psn();
    lab::move_to_rtr(qp.get(), local, {qp->qp_num, psn, port.attr.lid, port.gid.gid});
    CHECK(lab::test::query_qp(qp.get(), IBV_QP_PATH_MTU).path_mtu == IBV_MTU_4096);
    // The QP talks to itself, so the 4096-byte packet never meets the netdev's MTU.
    lab::move_to_rts(qp.get(), psn);
    std::fill(memory.begin(), memory.begin() + 4096, std::byte{0x5a});
    lab::post_receive(qp.get(), std::span(memory).subspan(4096, 8192), mr->lkey, 1);
    lab::post_send(qp.get(), std::span(memory).first(4096), mr->lkey, IBV_SEND_SIGNALED, 2);
    const auto done = lab::test::poll_completions(cq.get(), 2, 10s);
    REQUIRE(done.size() == 2);
    for (const ibv_wc& wc : done) {
        CHECK(wc.status == IBV_WC_SUCCESS);
        if (wc.wr_id == 1) {
            CHECK(wc.byte_len == 4096);
        }
    }
}

TEST_CASE("RESET and ibv_destroy_qp discard requests silently; RESET leaves completions in the CQ",
          "[lesson04]") {
    lab::test::LoopbackPair pair;
    ibv_cq* cq = pair.cq_a.get();
    SECTION("receives posted, then ibv_destroy_qp or RESET: no completion") {
        lab::post_receive(pair.a.get(), pair.at(0, 64), pair.mr->lkey, 1);
        lab::post_receive(pair.a.get(), pair.at(64, 64), pair.mr->lkey, 2);
        lab::post_receive(pair.b.get(), pair.at(32768, 64), pair.mr->lkey, 3);
        ibv_qp_attr reset{};
        reset.qp_state = IBV_QPS_RESET;
        REQUIRE(ibv_modify_qp(pair.b.get(), &reset, IBV_QP_STATE) == 0);
        pair.a.reset();  // ibv_destroy_qp; the CQ lives on
        CHECK(lab::test::poll_completions(cq, 1, 1s).empty());
        CHECK(lab::test::poll_completions(pair.cq_b.get(), 1, 1s).empty());
    }
    SECTION("a fault, then RESET without draining: rxe keeps the completions") {
        // mlx5's provider removes a QP's completions from its CQs at RESET;
        // rxe (6.1 and 6.12) leaves them to be polled after the recovery.
        for (std::uint64_t id = 1; id <= 3; ++id) {
            lab::post_rdma(pair.a.get(), IBV_WR_RDMA_WRITE, pair.at(0, 16), pair.mr->lkey,
                           pair.address(32768), id == 1 ? pair.mr->rkey ^ 0x1000 : pair.mr->rkey,
                           IBV_SEND_SIGNALED, id);
        }
        for (int tries = 0; tries < 100 && lab::test::state_of(pair.a.get()) != IBV_QPS_ERR;
             ++tries) {
            std::this_thread::sleep_for(50ms);
        }
        REQUIRE(lab::test::state_of(pair.a.get()) == IBV_QPS_ERR);
        std::this_thread::sleep_for(500ms);  // the flushes come a moment after the error
        ibv_qp_attr reset{};
        reset.qp_state = IBV_QPS_RESET;
        REQUIRE(ibv_modify_qp(pair.a.get(), &reset, IBV_QP_STATE) == 0);
        const auto left = lab::test::poll_completions(cq, 3, 5s);
        REQUIRE(left.size() == 3);
        CHECK(left[0].status == IBV_WC_REM_ACCESS_ERR);
        CHECK(left[1].status == IBV_WC_WR_FLUSH_ERR);
        CHECK(left[2].status == IBV_WC_WR_FLUSH_ERR);
    }
}

TEST_CASE("rxe never enters SQE: a UC or UD send that fails moves its QP to ERR", "[lesson04]") {
    const auto series = lab::test::kernel_series();
    INFO("kernel " << series);
    // The failure: a wrong lkey. 6.1 reports it, 6.12 completes the request flushed.
    const auto expect_failure = [&](const ibv_wc& wc) {
        if (series == "6.1") {
            CHECK(wc.status == IBV_WC_LOC_QP_OP_ERR);
        } else if (series == "6.12") {
            CHECK(wc.status == IBV_WC_WR_FLUSH_ERR);
        } else {
            CHECK(wc.status != IBV_WC_SUCCESS);
        }
    };
    SECTION("UC") {
        lab::test::PairSetup setup;
        setup.type = IBV_QPT_UC;
        lab::test::LoopbackPair pair(setup);
        lab::post_receive(pair.b.get(), pair.at(32768, 64), pair.mr->lkey);
        lab::post_send(pair.a.get(), pair.at(0, 16), pair.mr->lkey ^ 0x1000, IBV_SEND_SIGNALED, 1);
        const auto done = lab::test::poll_completions(pair.cq_a.get(), 1, 5s);
        REQUIRE(done.size() == 1);
        expect_failure(done[0]);
        CHECK(lab::test::state_of(pair.a.get()) == IBV_QPS_ERR);
        CHECK(lab::test::state_of(pair.b.get()) == IBV_QPS_RTS);
    }
    SECTION("UD") {
        const lab::Port port = lab::open_port(lab::Options{});
        const lab::ProtectionDomain pd = lab::alloc_pd(port.context.get());
        std::vector<std::byte> memory(4096);
        const lab::MemoryRegion mr = lab::register_memory(pd.get(), memory, IBV_ACCESS_LOCAL_WRITE);
        const lab::CompletionQueue cq = lab::create_cq(port.context.get(), 16);
        ibv_qp_init_attr init{};
        init.send_cq = cq.get();
        init.recv_cq = cq.get();
        init.qp_type = IBV_QPT_UD;
        init.cap.max_send_wr = 4;
        init.cap.max_recv_wr = 4;
        init.cap.max_send_sge = 1;
        init.cap.max_recv_sge = 1;
        const lab::QueuePair qp(lab::check_ptr(ibv_create_qp(pd.get(), &init), "ibv_create_qp"));
        constexpr std::uint32_t kQkey = 0x11111111;
        ibv_qp_attr attr{};
        attr.qp_state = IBV_QPS_INIT;
        attr.port_num = port.number;
        attr.qkey = kQkey;
        REQUIRE(ibv_modify_qp(qp.get(), &attr,
                              IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY) == 0);
        attr.qp_state = IBV_QPS_RTR;
        REQUIRE(ibv_modify_qp(qp.get(), &attr, IBV_QP_STATE) == 0);
        attr.qp_state = IBV_QPS_RTS;
        attr.sq_psn = 0;
        REQUIRE(ibv_modify_qp(qp.get(), &attr, IBV_QP_STATE | IBV_QP_SQ_PSN) == 0);
        ibv_ah_attr path{};
        path.is_global = 1;
        path.grh.dgid = port.gid.gid;
        path.grh.sgid_index = static_cast<std::uint8_t>(port.gid.index);
        path.grh.hop_limit = 64;
        path.port_num = port.number;
        const lab::AddressHandle ah(
            lab::check_ptr(ibv_create_ah(pd.get(), &path), "ibv_create_ah"));
        ibv_sge sge{reinterpret_cast<std::uintptr_t>(memory.data()), 16, mr->lkey ^ 0x1000};
        ibv_send_wr wr{};
        wr.wr_id = 1;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_SEND;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.wr.ud.ah = ah.get();
        wr.wr.ud.remote_qpn = qp->qp_num;
        wr.wr.ud.remote_qkey = kQkey;
        ibv_send_wr* bad = nullptr;
        REQUIRE(ibv_post_send(qp.get(), &wr, &bad) == 0);
        const auto done = lab::test::poll_completions(cq.get(), 1, 5s);
        REQUIRE(done.size() == 1);
        expect_failure(done[0]);
        CHECK(lab::test::state_of(qp.get()) == IBV_QPS_ERR);
    }
}

#else

TEST_CASE("04_queue_pair rejects bad input with one line and a non-zero exit",
          "[lesson04][bad-input]") {
    check_each_rejected(lesson("04_queue_pair"),
                        {
                            {{"-d", "no_such_dev0"}, "unknown RDMA device 'no_such_dev0'"},
                            {{"-g", "100000"}, "GID index 100000 is out of range"},
                            {{"-g", "900"}, "GID index 900 has no GID"},
                            {{"-i", "7"}, "port 7 is out of range"},
                            {{"-s", "0"}, "--size"},
                            {{"-s", "huge"}, "--size"},
                            {{"--rnr-retry", "8"}, "--rnr-retry: Value 8 not in range"},
                            {{"--rnr-retry", "-1"}, "--rnr-retry"},
                            {{"--send-first", "now"}, "now"},
                        });
}

namespace {

// The largest message port 1 of the first device takes, read from the device
// itself (rxe: 8 MiB on Linux 6.1, 2 GiB on 6.12).
std::uint32_t first_port_max_msg_sz() {
    int count = 0;
    ibv_device** devices = ibv_get_device_list(&count);
    REQUIRE(devices != nullptr);
    REQUIRE(count > 0);
    ibv_context* context = ibv_open_device(devices[0]);
    ibv_free_device_list(devices);
    REQUIRE(context != nullptr);
    ibv_port_attr port_attr{};
    const int status = ibv_query_port(context, 1, &port_attr);
    ibv_close_device(context);
    REQUIRE(status == 0);
    return port_attr.max_msg_sz;
}

}  // namespace

TEST_CASE("04_queue_pair refuses a message one byte above the device's max_msg_sz",
          "[lesson04][bad-input]") {
    const std::uint64_t limit = first_port_max_msg_sz();
    const std::string too_big = std::to_string(limit + 1);
    INFO("max_msg_sz " << limit);
    constexpr std::uint64_t kLargestSize = std::uint64_t{1} << 30;  // the -s range (lab::Options)
    if (limit + 1 <= kLargestSize) {
        check_one_error_line(
            run({lesson("04_queue_pair"), "-s", too_big}, 20s),
            "message size " + too_big + " is above the port's max_msg_sz " + std::to_string(limit));
    } else {
        // Linux 6.12's rxe takes messages up to 2 GiB, more than -s allows:
        // the command line refuses the size before the device is asked.
        check_one_error_line(run({lesson("04_queue_pair"), "-s", too_big}, 20s), "--size");
    }
}

#endif

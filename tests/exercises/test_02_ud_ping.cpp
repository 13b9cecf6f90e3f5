// The checks of exercise 02 (UD ping).
//
// Built twice, against exercises/02_ud_ping (the skeleton: checks fail) and
// solutions/02_ud_ping (all pass). Datagrams really travel through the
// device between two UD QPs of this process; the checks look at the bytes,
// the completions, and at what does NOT arrive.
#include <infiniband/verbs.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/verbs.hpp"
#include "support/catch.hpp"
#include "ud.hpp"

namespace {

constexpr std::uint32_t kQkey = 0x5eed0001;

std::string error_of(const std::function<void()>& action) {
    try {
        action();
    } catch (const lab::Error& error) {
        return error.what();
    }
    return {};
}

// The checks' own UD set-up, so that each check exercises one of the
// student's functions and does the rest itself.
lab::QueuePair reference_create(ibv_pd* pd, ibv_cq* cq) {
    ibv_qp_init_attr init{};
    init.send_cq = cq;
    init.recv_cq = cq;
    init.qp_type = IBV_QPT_UD;
    init.cap = {32, 32, 1, 1, 0};
    return lab::QueuePair(lab::check_ptr(ibv_create_qp(pd, &init), "ibv_create_qp(UD)"));
}

lab::QueuePair reference_qp(ibv_pd* pd, ibv_cq* cq) {
    lab::QueuePair qp = reference_create(pd, cq);
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.port_num = 1;
    attr.qkey = kQkey;
    lab::check(ibv_modify_qp(qp.get(), &attr,
                             IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY),
               "INIT");
    attr = {};
    attr.qp_state = IBV_QPS_RTR;
    lab::check(ibv_modify_qp(qp.get(), &attr, IBV_QP_STATE), "RTR");
    attr.qp_state = IBV_QPS_RTS;
    lab::check(ibv_modify_qp(qp.get(), &attr, IBV_QP_STATE | IBV_QP_SQ_PSN), "RTS");
    return qp;
}

lab::AddressHandle reference_ah(const ud::Device& device) {
    ibv_ah_attr attr{};
    attr.port_num = device.port;
    attr.is_global = 1;
    attr.grh.dgid = device.gid.gid;
    attr.grh.sgid_index = static_cast<std::uint8_t>(device.gid.index);
    attr.grh.hop_limit = 64;
    return lab::AddressHandle(
        lab::check_ptr(ibv_create_ah(device.pd.get(), &attr), "ibv_create_ah"));
}

void reference_receive(ibv_qp* qp, const ud::LocalBuffer& slot, std::uint64_t wr_id) {
    ibv_sge sge{reinterpret_cast<std::uint64_t>(slot.bytes.data()),
                static_cast<std::uint32_t>(slot.bytes.size()), slot.lkey};
    ibv_recv_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    lab::check(ibv_post_recv(qp, &wr, &bad), "ibv_post_recv");
}

void reference_send(ibv_qp* qp, ibv_ah* ah, std::uint32_t qpn, const ud::LocalBuffer& message) {
    ibv_sge sge{reinterpret_cast<std::uint64_t>(message.bytes.data()),
                static_cast<std::uint32_t>(message.bytes.size()), message.lkey};
    ibv_send_wr wr{};
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.wr.ud.ah = ah;
    wr.wr.ud.remote_qpn = qpn;
    wr.wr.ud.remote_qkey = kQkey;
    ibv_send_wr* bad = nullptr;
    lab::check(ibv_post_send(qp, &wr, &bad), "ibv_post_send");
}

// Two UD QPs in RTS, an address handle for B, a registered buffer of slots.
struct Pair {
    ud::Device device = ud::open("", 1);
    lab::QueuePair a = reference_qp(device.pd.get(), device.cq_a.get());
    lab::QueuePair b = reference_qp(device.pd.get(), device.cq_b.get());
    lab::AddressHandle to_b = reference_ah(device);
    std::size_t slot_size = ud::kGrhBytes + ud::max_payload(device);
    std::vector<std::byte> memory = std::vector<std::byte>(8 * slot_size);
    lab::MemoryRegion mr = ud::register_buffer(device, memory);

    ud::LocalBuffer slot(std::size_t i, std::size_t length = 0) {
        return {std::span(memory).subspan(i * slot_size, length == 0 ? slot_size : length),
                mr->lkey};
    }
    // Send slot 0's first @p length bytes from A to B with @p qkey (the student's post_ud_send).
    void send(std::size_t length, std::uint32_t qkey = kQkey) {
        ud::post_ud_send(a.get(), to_b.get(), b->qp_num, qkey, slot(0, length),
                         ud::max_payload(device), 7);
        lab::wait_for_completion(device.cq_a.get(), "UD send", std::chrono::seconds(2));
    }
    ibv_wc receive() {
        return lab::wait_for_completion(device.cq_b.get(), "UD receive", std::chrono::seconds(2));
    }
};

std::size_t completions_within(ibv_cq* cq, std::chrono::milliseconds wait) {
    std::this_thread::sleep_for(wait);
    std::size_t found = 0;
    ibv_wc wc{};
    while (ibv_poll_cq(cq, 1, &wc) == 1) {
        ++found;
    }
    return found;
}

ibv_qp_attr query(ibv_qp* qp, int mask) {
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    lab::check(ibv_query_qp(qp, &attr, mask, &init), "ibv_query_qp");
    return attr;
}

}  // namespace

TEST_CASE("create_ud_qp: a UD QP, in RESET, with room for 32 requests", "[ex02]") {
    ud::Device device = ud::open("", 1);
    lab::QueuePair qp = ud::create_ud_qp(device.pd.get(), device.cq_a.get());
    CHECK(qp->qp_type == IBV_QPT_UD);
    CHECK(qp->send_cq == device.cq_a.get());
    CHECK(qp->recv_cq == device.cq_a.get());
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    lab::check(ibv_query_qp(qp.get(), &attr, IBV_QP_STATE | IBV_QP_CAP, &init), "ibv_query_qp");
    CHECK(attr.qp_state == IBV_QPS_RESET);
    CHECK(init.cap.max_send_wr >= 32);
    CHECK(init.cap.max_recv_wr >= 32);
}

TEST_CASE("bring_up: RESET to RTS with our Q_Key and send PSN", "[ex02]") {
    ud::Device device = ud::open("", 1);
    lab::QueuePair qp = reference_create(device.pd.get(), device.cq_a.get());
    ud::bring_up(qp.get(), device.port, kQkey, 0x1234);
    const ibv_qp_attr attr = query(qp.get(), IBV_QP_STATE | IBV_QP_QKEY | IBV_QP_SQ_PSN);
    CHECK(attr.qp_state == IBV_QPS_RTS);
    CHECK(attr.qkey == kQkey);
    CHECK(attr.sq_psn == 0x1234u);
}

TEST_CASE("payload_of skips the 40-byte GRH", "[ex02]") {
    std::vector<std::byte> slot(100);
    ibv_wc wc{};
    wc.byte_len = 40 + 25;
    const auto payload = ud::payload_of(wc, slot);
    CHECK(payload.data() == slot.data() + 40);
    CHECK(payload.size() == 25);
    wc.byte_len = 30;
    CHECK(error_of([&] { ud::payload_of(wc, slot); }).find("byte_len 30") != std::string::npos);
}

TEST_CASE("post_ud_send: a ping arrives, exact bytes after the GRH, from A's QPN", "[ex02]") {
    Pair pair;
    for (const std::size_t length :
         {std::size_t{1}, std::size_t{64}, ud::max_payload(pair.device)}) {
        INFO("message of " << length << " bytes");
        for (std::size_t i = 0; i < length; ++i) {
            pair.memory[i] = static_cast<std::byte>(i * 3 + length);
        }
        reference_receive(pair.b.get(), pair.slot(1), 11);
        pair.send(length);
        const ibv_wc wc = pair.receive();
        CHECK(wc.wr_id == 11);
        CHECK(wc.byte_len == ud::kGrhBytes + length);
        CHECK(wc.src_qp == pair.a->qp_num);
        CHECK((wc.wc_flags & IBV_WC_GRH) != 0);
        const auto received = pair.slot(1).bytes.subspan(ud::kGrhBytes, length);
        CHECK(std::equal(received.begin(), received.end(), pair.memory.begin()));
    }
}

TEST_CASE("post_ud_receive: one SGE over the whole slot, GRH first", "[ex02]") {
    Pair pair;
    const std::size_t length = ud::max_payload(pair.device);
    for (std::size_t i = 0; i < length; ++i) {
        pair.memory[i] = static_cast<std::byte>(i * 7 + 1);
    }
    ud::post_ud_receive(pair.b.get(), pair.slot(1), 21);
    reference_send(pair.a.get(), pair.to_b.get(), pair.b->qp_num, pair.slot(0, length));
    const ibv_wc wc = pair.receive();
    CHECK(wc.wr_id == 21);
    CHECK(wc.byte_len == ud::kGrhBytes + length);
    const auto received = pair.slot(1).bytes.subspan(ud::kGrhBytes, length);
    CHECK(std::equal(received.begin(), received.end(), pair.memory.begin()));
}

TEST_CASE("create_ah: the address handle leads to the peer's GID", "[ex02]") {
    Pair pair;
    lab::AddressHandle ah = ud::create_ah(pair.device.pd.get(), pair.device.port,
                                          pair.device.gid.index, pair.device.gid.gid);
    REQUIRE(ah != nullptr);
    pair.memory[0] = std::byte{0x5a};
    reference_receive(pair.b.get(), pair.slot(1), 31);
    reference_send(pair.a.get(), ah.get(), pair.b->qp_num, pair.slot(0, 8));
    lab::wait_for_completion(pair.device.cq_a.get(), "UD send", std::chrono::seconds(2));
    const ibv_wc wc = pair.receive();
    CHECK(wc.wr_id == 31);
    CHECK(pair.slot(1).bytes[ud::kGrhBytes] == std::byte{0x5a});
}

TEST_CASE("a datagram with no receive posted is dropped without a word", "[ex02]") {
    Pair pair;
    pair.memory[0] = std::byte{0x42};
    pair.send(16);  // the send itself succeeds: UD has no acknowledgement
    CHECK(completions_within(pair.device.cq_b.get(), std::chrono::milliseconds(300)) == 0);
    // The next one, with a receive posted, arrives; the first is gone for good.
    ud::post_ud_receive(pair.b.get(), pair.slot(1), 12);
    pair.memory[0] = std::byte{0x43};
    pair.send(16);
    CHECK(pair.receive().wr_id == 12);
    CHECK(pair.slot(1).bytes[ud::kGrhBytes] == std::byte{0x43});
    CHECK(completions_within(pair.device.cq_b.get(), std::chrono::milliseconds(100)) == 0);
}

TEST_CASE("a datagram with the wrong Q_Key is dropped", "[ex02]") {
    Pair pair;
    ud::post_ud_receive(pair.b.get(), pair.slot(1), 13);
    pair.send(16, kQkey + 1);
    CHECK(completions_within(pair.device.cq_b.get(), std::chrono::milliseconds(300)) == 0);
    pair.send(16, kQkey);  // the receive is still there for the right Q_Key
    const ibv_wc wc = pair.receive();
    CHECK(wc.wr_id == 13);
}

TEST_CASE("messages above the path MTU and receive slots without room are refused",
          "[ex02][bad-input]") {
    Pair pair;
    const std::size_t mtu = ud::max_payload(pair.device);
    const std::string too_long = error_of([&] {
        ud::post_ud_send(pair.a.get(), pair.to_b.get(), pair.b->qp_num, kQkey,
                         pair.slot(0, mtu + 1), mtu, 1);
    });
    INFO(too_long);
    CHECK(too_long.find("path MTU") != std::string::npos);
    CHECK(too_long.find(std::to_string(mtu + 1)) != std::string::npos);
    CHECK(completions_within(pair.device.cq_a.get(), std::chrono::milliseconds(100)) == 0);
    const std::string too_small =
        error_of([&] { ud::post_ud_receive(pair.b.get(), pair.slot(1, ud::kGrhBytes), 1); });
    CHECK(too_small.find("GRH") != std::string::npos);
}

// The checks of exercise 03 (SRQ server).
//
// Built twice, against exercises/03_srq_server (the skeleton: checks fail)
// and solutions/03_srq_server (all pass). Clients and server are RC QPs of
// this process; messages really travel through the device.
#include <infiniband/verbs.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "srq.hpp"
#include "support/catch.hpp"

namespace {

constexpr std::size_t kSlotSize = 64;

std::string error_of(const std::function<void()>& action) {
    try {
        action();
    } catch (const lab::Error& error) {
        return error.what();
    }
    return {};
}

// The checks' own SRQ code, so that each check exercises one student function.
lab::SharedReceiveQueue reference_srq(ibv_pd* pd, std::uint32_t max_wr) {
    ibv_srq_init_attr init{};
    init.attr.max_wr = max_wr;
    init.attr.max_sge = 1;
    return lab::SharedReceiveQueue(lab::check_ptr(ibv_create_srq(pd, &init), "ibv_create_srq"));
}

void reference_post(ibv_srq* shared, std::span<std::byte> slots, std::uint32_t lkey,
                    std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
        ibv_sge sge{reinterpret_cast<std::uint64_t>(slots.data() + i * kSlotSize), kSlotSize, lkey};
        ibv_recv_wr wr{};
        wr.wr_id = i;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        ibv_recv_wr* bad = nullptr;
        lab::check(ibv_post_srq_recv(shared, &wr, &bad), "ibv_post_srq_recv");
    }
}

ibv_srq_attr query(ibv_srq* shared) {
    ibv_srq_attr attr{};
    lab::check(ibv_query_srq(shared, &attr), "ibv_query_srq");
    return attr;
}

// A server with @p clients RC QPs on one SRQ, and the clients.
struct Server {
    srq::Device device = srq::open("", 1);
    lab::CompletionQueue server_cq = lab::create_cq(device.context.get(), 128);
    lab::SharedReceiveQueue shared;
    std::vector<lab::CompletionQueue> client_cqs;
    std::vector<lab::QueuePair> server_qps, client_qps;
    std::vector<std::byte> server_memory = std::vector<std::byte>(64 * kSlotSize);
    std::vector<std::byte> client_memory = std::vector<std::byte>(kSlotSize);
    lab::MemoryRegion server_mr =
        lab::register_memory(device.pd.get(), server_memory, IBV_ACCESS_LOCAL_WRITE);
    lab::MemoryRegion client_mr = lab::register_memory(device.pd.get(), client_memory, 0);

    Server(std::size_t clients, std::uint32_t srq_size, bool students_qps) {
        shared = reference_srq(device.pd.get(), srq_size);
        for (std::size_t c = 0; c < clients; ++c) {
            if (students_qps) {
                server_qps.push_back(
                    srq::create_server_qp(device.pd.get(), server_cq.get(), shared.get()));
            } else {
                server_qps.push_back(lab::create_rc_qp(device.pd.get(), server_cq.get(),
                                                       server_cq.get(), lab::QueueSizes{},
                                                       shared.get()));
            }
            client_cqs.push_back(lab::create_cq(device.context.get(), 16));
            client_qps.push_back(lab::create_rc_qp(device.pd.get(), client_cqs[c].get(),
                                                   client_cqs[c].get(), lab::QueueSizes{}));
            srq::connect_pair(device, server_qps[c].get(), client_qps[c].get());
        }
    }
    srq::LocalBuffer slots() { return {server_memory, server_mr->lkey}; }
    void send(std::size_t client, const std::string& text) {
        std::memcpy(client_memory.data(), text.data(), text.size());
        ibv_sge sge{reinterpret_cast<std::uint64_t>(client_memory.data()),
                    static_cast<std::uint32_t>(text.size()), client_mr->lkey};
        ibv_send_wr wr{};
        wr.opcode = IBV_WR_SEND;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        ibv_send_wr* bad = nullptr;
        lab::check(ibv_post_send(client_qps[client].get(), &wr, &bad), "ibv_post_send");
        lab::wait_for_completion(client_cqs[client].get(), "client send", std::chrono::seconds(5));
    }
    std::string text_of(const ibv_wc& wc) const {
        return {reinterpret_cast<const char*>(server_memory.data() + wc.wr_id * kSlotSize),
                wc.byte_len};
    }
};

}  // namespace

TEST_CASE("create_srq: an SRQ with room for the receives asked for", "[ex03]") {
    srq::Device device = srq::open("", 1);
    lab::SharedReceiveQueue shared = srq::create_srq(device.pd.get(), 32);
    REQUIRE(shared != nullptr);
    CHECK(query(shared.get()).max_wr >= 32);
    CHECK(query(shared.get()).srq_limit == 0);
}

TEST_CASE("create_server_qp: clients' messages land in the SRQ's buffers", "[ex03]") {
    Server server(2, 16, true);
    CHECK(server.server_qps[0]->srq == server.shared.get());
    reference_post(server.shared.get(), server.server_memory, server.server_mr->lkey, 4);
    server.send(0, "to QP 0");
    server.send(1, "to QP 1");
    for (std::size_t i = 0; i < 2; ++i) {
        const ibv_wc wc =
            lab::wait_for_completion(server.server_cq.get(), "receive", std::chrono::seconds(5));
        CHECK(wc.qp_num == server.server_qps[i]->qp_num);
        CHECK(server.text_of(wc) == "to QP " + std::to_string(i));
    }
}

TEST_CASE("post_srq_receives: every client's messages arrive, each in its own slot", "[ex03]") {
    Server server(3, 32, false);
    srq::post_srq_receives(server.shared.get(), server.slots(), kSlotSize, 12, 100);
    std::set<std::uint64_t> slots_used;
    std::map<std::uint32_t, int> per_qp;
    for (int round = 0; round < 4; ++round) {
        for (std::size_t c = 0; c < 3; ++c) {
            server.send(c, "c" + std::to_string(c) + " r" + std::to_string(round));
        }
    }
    for (int i = 0; i < 12; ++i) {
        const ibv_wc wc =
            lab::wait_for_completion(server.server_cq.get(), "receive", std::chrono::seconds(5));
        REQUIRE(wc.wr_id >= 100);
        REQUIRE(wc.wr_id < 112);
        slots_used.insert(wc.wr_id);
        ++per_qp[wc.qp_num];
        const std::string text(reinterpret_cast<const char*>(server.server_memory.data() +
                                                             (wc.wr_id - 100) * kSlotSize),
                               wc.byte_len);
        std::size_t client = 0;
        while (client < 3 && server.server_qps[client]->qp_num != wc.qp_num) {
            ++client;
        }
        CHECK(text.rfind("c" + std::to_string(client) + " r", 0) == 0);
    }
    CHECK(slots_used.size() == 12);
    CHECK(per_qp.size() == 3);
    const std::string refused = error_of(
        [&] { srq::post_srq_receives(server.shared.get(), server.slots(), kSlotSize, 65, 0); });
    CHECK(refused.find("do not fit") != std::string::npos);
}

TEST_CASE("arm_srq_limit sets the SRQ limit", "[ex03]") {
    Server server(1, 16, false);
    srq::arm_srq_limit(server.shared.get(), 4);
    CHECK(query(server.shared.get()).srq_limit == 4);
    srq::arm_srq_limit(server.shared.get(), 9);
    CHECK(query(server.shared.get()).srq_limit == 9);
}

TEST_CASE("wait_for_srq_limit: the event comes once, below the limit, and disarms it", "[ex03]") {
    Server server(1, 16, false);
    reference_post(server.shared.get(), server.server_memory, server.server_mr->lkey, 8);
    ibv_srq_attr arm{};
    arm.srq_limit = 4;
    lab::check(ibv_modify_srq(server.shared.get(), &arm, IBV_SRQ_LIMIT), "ibv_modify_srq");
    // 8 posted, limit 4: after 4 receives 4 are left, not yet below the limit.
    for (int i = 0; i < 4; ++i) {
        server.send(0, "m");
        lab::wait_for_completion(server.server_cq.get(), "receive", std::chrono::seconds(5));
    }
    const auto start = std::chrono::steady_clock::now();
    CHECK_FALSE(srq::wait_for_srq_limit(server.device.context.get(), server.shared.get(),
                                        std::chrono::milliseconds(300)));
    CHECK(std::chrono::steady_clock::now() - start <
          std::chrono::seconds(3));  // it gave up in time
    server.send(0, "m");             // 3 left: below the limit
    lab::wait_for_completion(server.server_cq.get(), "receive", std::chrono::seconds(5));
    CHECK(srq::wait_for_srq_limit(server.device.context.get(), server.shared.get(),
                                  std::chrono::seconds(3)));
    CHECK(query(server.shared.get()).srq_limit == 0);  // the event disarms the limit
}

TEST_CASE("a limit above the SRQ's size is refused by ibv_modify_srq", "[ex03][bad-input]") {
    Server server(1, 16, false);
    const std::string message = error_of([&] { srq::arm_srq_limit(server.shared.get(), 100000); });
    INFO(message);
    CHECK(message.find("ibv_modify_srq") != std::string::npos);
}

// SPDX-License-Identifier: MIT
// Exercise 03 built for grading: the course's main() around the student's
// srq.cpp. Each scenario is the student's half of one check in
// check_03_srq_server.cpp: this program is the server, the check owns the
// clients (RC QPs of its own, connected to the server's QPs) and judges from
// its own send completions (with rnr_retry 0 a send succeeds only when a
// receive was waiting for it), the receives and SRQ limits this program
// posts (tracer), and the bytes that landed in its slots.
#include <infiniband/verbs.h>

#include <chrono>
#include <string>
#include <vector>

#include "grade/subject_main.hpp"
#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/verbs.hpp"
#include "srq.hpp"

namespace {

using lab::grade::Link;
using lab::grade::Message;

constexpr std::size_t kSlotSize = 64;
constexpr auto kWait = std::chrono::seconds(5);

// The course's own SRQ code, so that each check exercises one student function.
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

// The server: device, one CQ for its QPs, 64 slots of registered memory.
struct Server {
    srq::Device device = srq::open("", 1);
    lab::CompletionQueue cq = lab::create_cq(device.context.get(), 128);
    std::vector<std::byte> memory = std::vector<std::byte>(64 * kSlotSize);
    lab::MemoryRegion mr = lab::register_memory(device.pd.get(), memory, IBV_ACCESS_LOCAL_WRITE);
    std::vector<lab::QueuePair> qps;

    srq::LocalBuffer slots() { return {memory, mr->lkey}; }
    lab::QueuePair reference_qp(ibv_srq* shared) const {
        return lab::create_rc_qp(device.pd.get(), cq.get(), cq.get(), lab::QueueSizes{}, shared);
    }
    // Connect every QP to a client of the check, then say where the slots are.
    void connect_all(Link& link) {
        link.send(Message{"server"}.add(qps.size()));
        for (const auto& qp : qps) {
            lab::grade::connect_to_check(link, qp.get(), device.local, device.gid,
                                         IBV_ACCESS_LOCAL_WRITE);
        }
        link.send(
            Message{"slots"}.add(reinterpret_cast<std::uint64_t>(memory.data())).add(kSlotSize));
    }
    // Wait for @p count receive completions; report each one's QP, wr_id and length.
    void report_receives(Link& link, std::size_t count) {
        Message received{"received"};
        for (std::size_t i = 0; i < count; ++i) {
            const ibv_wc wc = lab::wait_for_completion(cq.get(), "receive", kWait);
            received.add(wc.qp_num).add(wc.wr_id).add(wc.byte_len);
        }
        link.send(received);
    }
};

std::uint32_t srq_limit(ibv_srq* shared) {
    ibv_srq_attr attr{};
    lab::check(ibv_query_srq(shared, &attr), "ibv_query_srq");
    return attr.srq_limit;
}

void create_srq(Link& link) {
    Server server;
    lab::SharedReceiveQueue shared = srq::create_srq(server.device.pd.get(), 32);
    reference_post(shared.get(), server.memory, server.mr->lkey, 32);
    server.qps.push_back(server.reference_qp(shared.get()));
    server.connect_all(link);
    link.send(Message{"limit"}.add(srq_limit(shared.get())));
    server.report_receives(link, 32);
    link.expect("checked");
}

void create_server_qp(Link& link) {
    Server server;
    lab::SharedReceiveQueue shared = reference_srq(server.device.pd.get(), 16);
    reference_post(shared.get(), server.memory, server.mr->lkey, 4);
    for (int i = 0; i < 2; ++i) {
        server.qps.push_back(
            srq::create_server_qp(server.device.pd.get(), server.cq.get(), shared.get()));
    }
    server.connect_all(link);
    server.report_receives(link, 2);
    link.expect("checked");
}

void post_srq_receives(Link& link) {
    Server server;
    link.send({"ready"});
    link.expect("go");
    lab::SharedReceiveQueue shared = reference_srq(server.device.pd.get(), 32);
    for (int i = 0; i < 3; ++i) {
        server.qps.push_back(server.reference_qp(shared.get()));
    }
    server.connect_all(link);
    link.expect("post");
    srq::post_srq_receives(shared.get(), server.slots(), kSlotSize, 12, 100);
    link.send({"posted"});
    server.report_receives(link, 12);
    link.expect("refuse");
    std::string refused;
    try {
        srq::post_srq_receives(shared.get(), server.slots(), kSlotSize, 65, 0);
    } catch (const lab::Error& error) {
        refused = error.what();
    }
    link.send({"refused", refused});
    link.expect("checked");
}

void arm_srq_limit(Link& link) {
    Server server;
    link.send({"ready"});
    link.expect("go");
    lab::SharedReceiveQueue shared = reference_srq(server.device.pd.get(), 16);
    srq::arm_srq_limit(shared.get(), 4);
    const std::uint32_t first = srq_limit(shared.get());
    srq::arm_srq_limit(shared.get(), 9);
    link.send(Message{"armed"}.add(first).add(srq_limit(shared.get())));
    link.expect("checked");
}

void wait_for_srq_limit(Link& link) {
    Server server;
    lab::SharedReceiveQueue shared = reference_srq(server.device.pd.get(), 16);
    reference_post(shared.get(), server.memory, server.mr->lkey, 8);
    ibv_srq_attr arm{};
    arm.srq_limit = 4;
    lab::check(ibv_modify_srq(shared.get(), &arm, IBV_SRQ_LIMIT), "ibv_modify_srq");
    server.qps.push_back(server.reference_qp(shared.get()));
    server.connect_all(link);
    for (const char* step : {"wait short", "wait long"}) {
        const Message order = link.expect(step);
        const auto start = std::chrono::steady_clock::now();
        const bool came = srq::wait_for_srq_limit(server.device.context.get(), shared.get(),
                                                  std::chrono::milliseconds(order.number(1)));
        const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count();
        link.send(Message{"waited"}
                      .add(came ? "event" : "none")
                      .add(static_cast<std::uint64_t>(took))
                      .add(srq_limit(shared.get())));
    }
    link.expect("checked");
}

void limit_above_size(Link& link) {
    Server server;
    lab::SharedReceiveQueue shared = reference_srq(server.device.pd.get(), 16);
    std::string refused;
    try {
        srq::arm_srq_limit(shared.get(), 100000);
    } catch (const lab::Error& error) {
        refused = error.what();
    }
    link.send({"refused", refused});
}

}  // namespace

int main(int argc, char** argv) {
    return lab::grade::subject_main(argc, argv,
                                    {
                                        {"create_srq", create_srq},
                                        {"create_server_qp", create_server_qp},
                                        {"post_srq_receives", post_srq_receives},
                                        {"arm_srq_limit", arm_srq_limit},
                                        {"wait_for_srq_limit", wait_for_srq_limit},
                                        {"limit_above_size", limit_above_size},
                                    });
}

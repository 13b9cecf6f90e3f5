// SPDX-License-Identifier: MIT
// Exercise 06 built for grading: the course's main() around the student's
// recover.cpp. Each scenario is the student's half of one check in
// check_06_recover_qp.cpp; everything but the function under check is done
// by course code, so one function earns one check.
#include <infiniband/verbs.h>

#include <chrono>
#include <string>

#include "grade/subject_main.hpp"
#include "lab/check.hpp"
#include "lab/verbs.hpp"
#include "recover.hpp"

namespace {

using lab::grade::Link;
using lab::grade::Message;
using namespace std::chrono_literals;

constexpr std::uint8_t kPort = 1;

// Connected A and B, then the fault: three writes, the first with a wrong rkey.
recover::Resources faulted(Link& link) {
    recover::Resources r = recover::create_resources("", kPort);
    recover::connect(r, lab::random_psn(), lab::random_psn());
    link.send(Message{"ready"}.add(r.qp_a->qp_num).add(r.qp_b->qp_num));
    link.expect("go");
    recover::post_writes(r, 3, r.mr_b->rkey ^ 0x5a5a);
    return r;
}

// Back to a fresh connection after a round of the fault: both QPs through
// RESET, the CQ emptied of what the student's drain left.
void reconnect(recover::Resources& r) {
    for (ibv_qp* qp : {r.qp_a.get(), r.qp_b.get()}) {
        ibv_qp_attr attr{};
        attr.qp_state = IBV_QPS_RESET;
        lab::check(ibv_modify_qp(qp, &attr, IBV_QP_STATE), "ibv_modify_qp(RESET)");
    }
    ibv_wc wc{};
    for (ibv_cq* cq : {r.cq_a.get(), r.cq_b.get()}) {
        while (ibv_poll_cq(cq, 1, &wc) > 0) {
        }
    }
    recover::connect(r, lab::random_psn(), lab::random_psn());
}

void drain_after_fault(Link& link) {
    recover::Resources r = faulted(link);
    Message seen{"seen"};
    for (const ibv_wc& wc : recover::drain_after_fault(r.cq_a.get(), 3, 5000ms)) {
        seen.add(static_cast<std::uint64_t>(wc.status));
    }
    link.send(seen);
    link.expect("checked");
}

// The fault again and again on one pair of QPs: the check says how many
// rounds and how many writes a round posts (the first with a wrong rkey);
// each round's statuses go back as they were drained ("round"), then the
// course's code starts the next round from a fresh connection.
void drain_rounds(Link& link) {
    recover::Resources r = recover::create_resources("", kPort);
    recover::connect(r, lab::random_psn(), lab::random_psn());
    link.send(Message{"ready"}.add(r.qp_a->qp_num).add(r.qp_b->qp_num));
    link.expect("go");
    const Message asked = link.expect("rounds");
    const auto rounds = asked.number(1);
    const auto writes = static_cast<int>(asked.number(2));
    for (std::uint64_t round = 0; round < rounds; ++round) {
        recover::post_writes(r, writes, r.mr_b->rkey ^ 0x5a5a);
        Message seen{"round"};
        for (const ibv_wc& wc : recover::drain_after_fault(r.cq_a.get(), writes, 5000ms)) {
            seen.add(static_cast<std::uint64_t>(wc.status));
        }
        link.send(seen);
        link.expect(round + 1 < rounds ? "next" : "checked");
        if (round + 1 < rounds) {
            reconnect(r);
        }
    }
}

// The check gives the PSNs each QP sends from after the recovery.
void recover_qp(Link& link) {
    recover::Resources r = faulted(link);
    int left = 3;
    ibv_wc wc{};
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (left > 0 && std::chrono::steady_clock::now() < deadline) {
        left -= ibv_poll_cq(r.cq_a.get(), 1, &wc) == 1 ? 1 : 0;
    }
    const Message psns = link.expect("psns");
    const auto psn_a = static_cast<std::uint32_t>(psns.number(1));
    const auto psn_b = static_cast<std::uint32_t>(psns.number(2));
    recover::recover_qp(r.qp_a.get(), r.local, recover::address_of(r, r.qp_b.get(), psn_b), psn_a);
    recover::recover_qp(r.qp_b.get(), r.local, recover::address_of(r, r.qp_a.get(), psn_a), psn_b);
    link.send({"recovered"});
    link.expect("write");
    link.send({"received", recover::write_greeting(r, "after the recovery")});
    link.expect("checked");
}

void pause_send_queue(Link& link) {
    recover::Resources r = recover::create_resources("", kPort);
    recover::connect(r, lab::random_psn(), lab::random_psn());
    link.send(Message{"ready"}.add(r.qp_a->qp_num).add(r.qp_b->qp_num));
    link.expect("go");
    recover::pause_send_queue(r.context.get(), r.qp_a.get(), 5000ms);
    link.send({"resumed"});
    link.expect("write");
    link.send({"received", recover::write_greeting(r, "after the pause")});
    link.expect("checked");
}

}  // namespace

int main(int argc, char** argv) {
    return lab::grade::subject_main(argc, argv,
                                    {
                                        {"drain_after_fault", drain_after_fault},
                                        {"drain_rounds", drain_rounds},
                                        {"recover_qp", recover_qp},
                                        {"pause_send_queue", pause_send_queue},
                                    });
}

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

void drain_after_fault(Link& link) {
    recover::Resources r = faulted(link);
    Message seen{"seen"};
    for (const ibv_wc& wc : recover::drain_after_fault(r.cq_a.get(), 3, 5000ms)) {
        seen.add(static_cast<std::uint64_t>(wc.status));
    }
    link.send(seen);
    link.expect("checked");
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
                                        {"recover_qp", recover_qp},
                                        {"pause_send_queue", pause_send_queue},
                                    });
}

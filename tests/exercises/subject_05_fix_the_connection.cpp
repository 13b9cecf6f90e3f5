// SPDX-License-Identifier: MIT
// Exercise 05 built for grading: the course's main() around the student's
// connection.cpp. Each scenario is the student's half of one check in
// check_05_fix_the_connection.cpp, which starts this program in the sandbox
// and judges what it sees. Every function the student fixes is called here;
// everything else is done right by course code, so one fix earns one check.
#include <infiniband/verbs.h>

#include <optional>
#include <sstream>
#include <string>

#include "connection.hpp"
#include "grade/subject_main.hpp"
#include "lab/check.hpp"
#include "lab/device.hpp"
#include "lab/verbs.hpp"

namespace {

using lab::grade::Link;
using lab::grade::Message;

constexpr std::uint8_t kPort = 1;

// The connection done right (the same steps as the solution), so that a
// check of one function does not depend on the student's other functions.
void connect_correctly(fix::Resources& r) {
    const lab::GidChoice gid = lab::choose_gid(r.context.get(), kPort, std::nullopt);
    const ibv_port_attr port = lab::query_port(r.context.get(), kPort);
    constexpr int kAccess =
        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    lab::move_to_init(r.qp_a.get(), kPort, kAccess);
    lab::move_to_init(r.qp_b.get(), kPort, kAccess);
    const lab::PeerAddress a{r.qp_a->qp_num, lab::random_psn(), port.lid, gid.gid};
    const lab::PeerAddress b{r.qp_b->qp_num, lab::random_psn(), port.lid, gid.gid};
    const lab::LocalPort local{kPort, gid.index, port.active_mtu};
    lab::move_to_rtr(r.qp_a.get(), local, b);
    lab::move_to_rtr(r.qp_b.get(), local, a);
    lab::move_to_rts(r.qp_a.get(), a.psn, 16, 0, 2, 12);
    lab::move_to_rts(r.qp_b.get(), b.psn, 16, 0, 2, 12);
}

// Tell the check which QP is A and which is B, and let it start watching.
void let_the_check_watch(Link& link, const fix::Resources& r) {
    link.send(Message{"ready"}.add(r.qp_a->qp_num).add(r.qp_b->qp_num));
    link.expect("go");
}

void choose_gid_index(Link& link) {
    const lab::Context context = lab::open_device("");
    const int index = fix::choose_gid_index(context.get(), kPort);
    link.send({"gid", std::to_string(index)});
}

void choose_path_mtu(Link& link) {
    const lab::Context context = lab::open_device("");
    const ibv_mtu mtu = fix::choose_path_mtu(context.get(), kPort);
    link.send({"mtu", std::to_string(static_cast<int>(mtu))});
}

// B's buffer is registered with the student's flags; the check, connected to
// QP B, writes into it and sees whether the write is allowed.
void memory_access_flags(Link& link) {
    const int flags = fix::memory_access_flags();
    link.send({"flags", std::to_string(flags)});
    fix::Resources r = fix::create_resources("", kPort);
    const lab::GidChoice gid = lab::choose_gid(r.context.get(), kPort, std::nullopt);
    const ibv_port_attr port = lab::query_port(r.context.get(), kPort);
    lab::grade::connect_to_check(
        link, r.qp_b.get(), {kPort, gid.index, port.active_mtu}, gid.gid,
        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
    link.send(Message{"buffer"}
                  .add(reinterpret_cast<std::uint64_t>(r.memory_b.data()))
                  .add(r.mr_b->rkey)
                  .add(fix::kBufferSize));
    link.expect("checked");
}

// The student's connect(); the check reads the QPs' states and PSNs from the kernel.
void connect(Link& link) {
    fix::Resources r = fix::create_resources("", kPort);
    const lab::GidChoice gid = lab::choose_gid(r.context.get(), kPort, std::nullopt);
    const ibv_port_attr port = lab::query_port(r.context.get(), kPort);
    let_the_check_watch(link, r);
    fix::connect(r, gid.index, port.active_mtu);
    link.send({"connected"});
    link.expect("checked");
}

void send_message(Link& link) {
    fix::Resources r = fix::create_resources("", kPort);
    connect_correctly(r);
    let_the_check_watch(link, r);
    const std::string received = fix::send_message(r, "sent by A");
    link.send({"received", received});
    link.expect("checked");
}

void whole_program(Link& link) {
    static_cast<void>(lab::open_device(""));  // loads the provider, for watching
    link.send(Message{"ready"}.add(0).add(0));
    link.expect("go");
    std::ostringstream out;
    fix::run("", kPort, out);
    link.send({"output", out.str()});
    link.expect("checked");
}

// The whole program again and again in one process: the check says how many
// rounds; each round's output, or its error, goes back ("round"). A round
// that fails does not end the scenario, so that the check can count them.
void whole_program_rounds(Link& link) {
    static_cast<void>(lab::open_device(""));
    link.send(Message{"ready"}.add(0).add(0));
    link.expect("go");
    const std::uint64_t rounds = link.expect("rounds").number(1);
    for (std::uint64_t round = 0; round < rounds; ++round) {
        std::ostringstream out;
        std::string error;
        try {
            fix::run("", kPort, out);
        } catch (const std::exception& failure) {
            error = failure.what();
        }
        link.send(Message{"round", out.str()}.add(error));
        link.expect(round + 1 < rounds ? "next" : "checked");
    }
}

}  // namespace

int main(int argc, char** argv) {
    return lab::grade::subject_main(argc, argv,
                                    {
                                        {"choose_gid_index", choose_gid_index},
                                        {"choose_path_mtu", choose_path_mtu},
                                        {"memory_access_flags", memory_access_flags},
                                        {"connect", connect},
                                        {"send_message", send_message},
                                        {"whole_program", whole_program},
                                        {"whole_program_rounds", whole_program_rounds},
                                    });
}

// SPDX-License-Identifier: MIT
// The checks of exercise 05 (fix the connection): one per function the
// student fixes, and one for the whole program.
//
// This program contains no student code. Each check starts the student's
// program (subject_05_fix_the_connection.cpp linked with their
// connection.cpp) in the sandbox, runs one scenario in it, and judges from
// outside: the values the student's functions returned, compared with the
// device's own answers; a write of its own into the student's buffer; the
// QPs' states and PSNs as the kernel reports them; the work requests and QP
// attributes the program handed to the device, seen by the tracer.
#include <infiniband/verbs.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "grade/feedback.hpp"
#include "grade/peer.hpp"
#include "grade/student.hpp"
#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/device.hpp"
#include "support/catch.hpp"

using lab::grade::expect;
using lab::grade::Feedback;
using lab::grade::Message;
using lab::grade::PostedRequest;
using lab::grade::StudentProgram;

namespace {

constexpr std::uint8_t kPort = 1;

// What index @p index of the port's GID table holds, in words.
std::string describe_gid_entry(ibv_context* context, int index) {
    ibv_gid_entry entry{};
    if (index < 0 ||
        ibv_query_gid_ex(context, kPort, static_cast<std::uint32_t>(index), &entry, 0) != 0) {
        const ibv_port_attr port = lab::query_port(context, kPort);
        return "index " + std::to_string(index) + ", which holds no GID (the table has " +
               std::to_string(port.gid_tbl_len) + " slots, most of them empty)";
    }
    return "index " + std::to_string(index) + ", " +
           std::string(lab::gid_type_name(static_cast<ibv_gid_type>(entry.gid_type))) + " " +
           lab::gid_to_string(entry.gid);
}

std::string mtu_text(int mtu) {
    if (mtu < IBV_MTU_256 || mtu > IBV_MTU_4096) {
        return std::to_string(mtu) + " (not an ibv_mtu value)";
    }
    return std::string(lab::mtu_name(static_cast<ibv_mtu>(mtu))) + " bytes";
}

const lab::grade::KernelQp* find_qp(const std::vector<lab::grade::KernelQp>& qps,
                                    std::uint32_t qp_num) {
    const auto found =
        std::find_if(qps.begin(), qps.end(), [&](const auto& qp) { return qp.qp_num == qp_num; });
    return found == qps.end() ? nullptr : &*found;
}

}  // namespace

TEST_CASE("choose_gid_index: the RoCE v2 IPv4 GID, chosen by type, not a fixed number", "[ex05]") {
    StudentProgram program("choose_gid_index");
    const int chosen = static_cast<int>(program.receive("gid").signed_number(1));
    program.finish();
    const lab::Context context = lab::open_device("");
    const lab::GidChoice right = lab::choose_gid(context.get(), kPort, std::nullopt);
    expect(chosen == right.index,
           {describe_gid_entry(context.get(), right.index) + " (the RoCE v2 entry of this port)",
            describe_gid_entry(context.get(), chosen),
            "GID tables differ from machine to machine: choose the entry by its type "
            "(lab::choose_gid, or ibv_query_gid_table), never by a number"});
}

TEST_CASE("choose_path_mtu: not above what the port carries (active_mtu)", "[ex05]") {
    StudentProgram program("choose_path_mtu");
    const int chosen = static_cast<int>(program.receive("mtu").signed_number(1));
    program.finish();
    const lab::Context context = lab::open_device("");
    const ibv_port_attr port = lab::query_port(context.get(), kPort);
    expect(chosen == port.active_mtu,
           {"the port's active_mtu, " + mtu_text(port.active_mtu), mtu_text(chosen),
            "ibv_query_port gives active_mtu: the largest packet this port carries now"});
}

TEST_CASE("memory_access_flags: the peer may RDMA-write into the buffer", "[ex05]") {
    StudentProgram program("memory_access_flags");
    const int flags = static_cast<int>(program.receive("flags").signed_number(1));
    expect((flags & IBV_ACCESS_LOCAL_WRITE) != 0,
           {"IBV_ACCESS_LOCAL_WRITE among the flags (the NIC writes received data)",
            "flags " + std::to_string(flags) + " without it",
            "a receive buffer, and any buffer a peer may write, needs local write"});

    // The check writes into the student's buffer B from a QP of its own.
    lab::grade::Peer peer;
    const lab::QueuePair qp = peer.create_rc_qp();
    peer.connect(program, qp.get());
    const Message buffer = program.receive("buffer");
    std::string text = "written by the check";
    const lab::MemoryRegion mr = peer.register_memory(
        {reinterpret_cast<std::byte*>(text.data()), text.size()}, IBV_ACCESS_LOCAL_WRITE);
    ibv_sge sge{reinterpret_cast<std::uint64_t>(text.data()),
                static_cast<std::uint32_t>(text.size()), mr->lkey};
    ibv_send_wr wr{};
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.wr.rdma.remote_addr = buffer.number(1);
    wr.wr.rdma.rkey = static_cast<std::uint32_t>(buffer.number(2));
    ibv_send_wr* bad = nullptr;
    lab::check(ibv_post_send(qp.get(), &wr, &bad), "ibv_post_send");
    const ibv_wc wc = lab::grade::next_completion(peer.cq(), std::chrono::seconds(10));
    expect(wc.status == IBV_WC_SUCCESS,
           {"the check's RDMA write into B's buffer completes",
            std::string("it completed with \"") + ibv_wc_status_str(wc.status) + "\"",
            "a peer may write into a buffer only when it was registered with "
            "IBV_ACCESS_REMOTE_WRITE"});
    program.send({"checked"});
    program.finish();
}

TEST_CASE("connect: both QPs in RTS, each sending at the PSN the other expects", "[ex05]") {
    StudentProgram program("connect");
    const Message ready = program.watch();
    const auto qp_a = static_cast<std::uint32_t>(ready.number(1));
    const auto qp_b = static_cast<std::uint32_t>(ready.number(2));
    program.receive("connected");
    const auto qps = lab::grade::kernel_qps(program.pid());
    const auto changes = program.tracer().take_qp_changes();
    program.send({"checked"});
    program.finish();

    const auto* a = find_qp(qps, qp_a);
    const auto* b = find_qp(qps, qp_b);
    lab::grade::require(a != nullptr && b != nullptr,
                        {"the kernel lists QP A and QP B", "it does not", ""});
    expect(a->state == "RTS" && b->state == "RTS",
           {"A and B in RTS", "A in " + a->state + ", B in " + b->state,
            "connect() takes each QP through INIT, RTR and RTS"});
    expect(
        a->remote_qp_num == qp_b && b->remote_qp_num == qp_a,
        {"A connected to B's QPN and B to A's",
         "A to " + std::to_string(a->remote_qp_num) + ", B to " + std::to_string(b->remote_qp_num) +
             " (A is " + std::to_string(qp_a) + ", B " + std::to_string(qp_b) + ")",
         "RTR takes the peer's QPN (dest_qp_num)"});
    expect(a->sq_psn == b->rq_psn && b->sq_psn == a->rq_psn,
           {"A sends from the PSN B expects, and B from the one A expects",
            "A sends from " + std::to_string(a->sq_psn) + ", B expects " +
                std::to_string(b->rq_psn) + "; B sends from " + std::to_string(b->sq_psn) +
                ", A expects " + std::to_string(a->rq_psn),
            "a QP's sq_psn (RTS) must be the rq_psn its peer got at RTR; otherwise the peer "
            "drops every packet as out of sequence"});
    const lab::Context context = lab::open_device("");
    const ibv_port_attr port = lab::query_port(context.get(), kPort);
    for (const std::uint32_t qp : {qp_a, qp_b}) {
        std::optional<int> mtu;
        for (const auto& change : changes) {
            if (change.qp_num == qp && (change.mask & IBV_QP_PATH_MTU) != 0) {
                mtu = change.attr.path_mtu;
            }
        }
        expect(mtu == port.active_mtu,
               {std::string("QP ") + (qp == qp_a ? "A" : "B") + "'s path MTU " +
                    mtu_text(port.active_mtu) + " (the port's active_mtu)",
                mtu ? mtu_text(*mtu) : "no path MTU set at RTR",
                "connect() uses the path MTU it is given; choose_path_mtu() chooses it"});
    }
}

TEST_CASE("send_message: the receive is posted in time and the message arrives", "[ex05]") {
    StudentProgram program("send_message");
    const Message ready = program.watch();
    const auto qp_a = static_cast<std::uint32_t>(ready.number(1));
    const auto qp_b = static_cast<std::uint32_t>(ready.number(2));
    std::string received;
    std::string error;
    try {
        received = program.receive("received").text(1);
    } catch (const lab::grade::ProgramFailed& failure) {
        error = failure.what();
    }
    const auto requests = program.tracer().take_requests();
    const auto send = std::find_if(requests.begin(), requests.end(), [&](const PostedRequest& r) {
        return r.queue == PostedRequest::Queue::send && r.qp_num == qp_a;
    });
    const auto receive =
        std::find_if(requests.begin(), requests.end(), [&](const PostedRequest& r) {
            return r.queue == PostedRequest::Queue::receive && r.qp_num == qp_b;
        });
    expect(receive != requests.end() && (send == requests.end() || receive->call < send->call),
           {"a receive posted on B before the send on A",
            receive == requests.end() ? "no receive posted on B"
                                      : "the receive was posted after the send",
            "a SEND consumes a receive its peer posted before it arrived; with none there it "
            "ends in \"RNR retry counter exceeded\""});
    // What landed, read from B's receive buffer by the check itself.
    std::string landed;
    if (receive != requests.end() && !receive->sges.empty()) {
        landed = lab::grade::read_program_memory(program.pid(), receive->sges.front().addr,
                                                 std::string("sent by A").size());
    }
    expect(error.empty() && received == "sent by A" && landed == "sent by A",
           {"B receives \"sent by A\" and send_message returns it",
            !error.empty()
                ? error
                : "send_message returned \"" + received + "\", B's buffer holds \"" + landed + "\"",
            "post the receive first, then the send; wait for both completions"});
    if (error.empty()) {
        program.send({"checked"});
        program.finish();
    }
}

TEST_CASE("the whole program connects, writes and sends", "[ex05]") {
    StudentProgram program("whole_program");
    program.watch();
    std::string output, error;
    try {
        output = program.receive("output").text(1);
    } catch (const lab::grade::ProgramFailed& failure) {
        error = failure.what();
    }
    const auto requests = program.tracer().take_requests();
    const auto posted = [&](ibv_wr_opcode opcode) {
        return std::any_of(requests.begin(), requests.end(), [&](const PostedRequest& r) {
            return r.queue == PostedRequest::Queue::send && r.opcode == opcode;
        });
    };
    expect(error.empty() && output.find("B received \"hello through SEND\"") != std::string::npos &&
               posted(IBV_WR_RDMA_WRITE) && posted(IBV_WR_SEND),
           {"the program's steps 1 to 5: an RDMA write and a SEND that arrive",
            !error.empty() ? error : "it printed: " + output,
            "fix the functions one by one: the checks above say which is still wrong"});
    if (error.empty()) {
        program.send({"checked"});
        program.finish();
    }
}

// The instructor's own checks (tests/exercises/hidden/05_fix_the_connection.cpp), where this
// checkout has them: the student edition leaves them out (./lab export --student).
#ifdef LAB_HIDDEN_CHECKS
#include LAB_HIDDEN_CHECKS
#endif

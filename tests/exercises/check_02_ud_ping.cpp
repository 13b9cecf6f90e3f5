// SPDX-License-Identifier: MIT
// The checks of exercise 02 (UD ping).
//
// This program contains no student code. Each check starts the student's
// program (subject_02_ud_ping.cpp and their ud.cpp) and is its peer: a UD QP
// of the check's own sends datagrams to the program's QP and receives the
// program's, so the check sees with its own completions what arrived, from
// which QP, and what did NOT arrive. It also reads the program's QP state
// from the kernel, the work requests it posts (tracer), and the bytes that
// landed in its receive buffers.
#include <infiniband/verbs.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "grade/feedback.hpp"
#include "grade/peer.hpp"
#include "grade/student.hpp"
#include "grade/subject_main.hpp"
#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/verbs.hpp"
#include "support/catch.hpp"

using lab::grade::expect;
using lab::grade::Message;
using lab::grade::PostedRequest;
using lab::grade::StudentProgram;

namespace {

constexpr std::uint32_t kQkey = 0x5eed0001;
constexpr std::size_t kGrh = 40;

std::byte pattern(std::uint64_t seed, std::size_t i) {
    return static_cast<std::byte>((seed * 31 + i * 7 + i / 13 + 1) % 251);
}

std::string expected_bytes(std::uint64_t seed, std::size_t length) {
    std::string bytes(length, '\0');
    for (std::size_t i = 0; i < length; ++i) {
        bytes[i] = static_cast<char>(pattern(seed, i));
    }
    return bytes;
}

// The check's side: a UD QP in RTS with Q_Key kQkey, a buffer of slots.
struct CheckStation {
    lab::grade::Peer peer{256};
    lab::QueuePair qp;
    std::size_t slot_size = 0;
    std::vector<std::byte> memory;
    lab::MemoryRegion mr;

    CheckStation() {
        ibv_qp_init_attr init{};
        init.send_cq = peer.cq();
        init.recv_cq = peer.cq();
        init.qp_type = IBV_QPT_UD;
        init.cap = {64, 64, 1, 1, 0};
        qp = lab::QueuePair(lab::check_ptr(ibv_create_qp(peer.pd(), &init), "ibv_create_qp(UD)"));
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
        slot_size = kGrh + mtu();
        memory.resize(64 * slot_size);
        mr = peer.register_memory(memory, IBV_ACCESS_LOCAL_WRITE);
    }
    [[nodiscard]] std::size_t mtu() const {
        return std::stoul(std::string(lab::mtu_name(peer.port_attr().active_mtu)));
    }
    // "address" from the program, ours back.
    lab::PeerAddress exchange(StudentProgram& program) {
        const lab::PeerAddress theirs = lab::grade::address_from(program.receive("address"), 1);
        Message ours{"address"};
        program.send(lab::grade::add_address(ours, {qp->qp_num, 0, 0, peer.gid().gid}));
        return theirs;
    }
    void post_receive(std::size_t slot) {
        lab::post_receive(qp.get(), std::span(memory).subspan(slot * slot_size, slot_size),
                          mr->lkey, slot);
    }
    std::string slot_bytes(std::size_t slot, std::size_t offset, std::size_t length) const {
        return {reinterpret_cast<const char*>(memory.data() + slot * slot_size + offset), length};
    }
    void send(const lab::PeerAddress& to, std::size_t slot, std::size_t length,
              std::uint64_t seed) {
        for (std::size_t i = 0; i < length; ++i) {
            memory[slot * slot_size + i] = pattern(seed, i);
        }
        ibv_ah_attr attr{};
        attr.port_num = 1;
        attr.is_global = 1;
        attr.grh.dgid = to.gid;
        attr.grh.sgid_index = static_cast<std::uint8_t>(peer.gid().index);
        attr.grh.hop_limit = 64;
        const lab::AddressHandle ah(
            lab::check_ptr(ibv_create_ah(peer.pd(), &attr), "ibv_create_ah"));
        ibv_sge sge{reinterpret_cast<std::uint64_t>(memory.data() + slot * slot_size),
                    static_cast<std::uint32_t>(length), mr->lkey};
        ibv_send_wr wr{};
        wr.wr_id = 1000 + slot;
        wr.opcode = IBV_WR_SEND;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.wr.ud.ah = ah.get();
        wr.wr.ud.remote_qpn = to.qp_num;
        wr.wr.ud.remote_qkey = kQkey;
        ibv_send_wr* bad = nullptr;
        lab::check(ibv_post_send(qp.get(), &wr, &bad), "ibv_post_send");
        lab::wait_for_completion(peer.cq(), "the check's UD send", std::chrono::seconds(5));
    }
    // Every completion within @p wait.
    std::vector<ibv_wc> completions(std::chrono::milliseconds wait) {
        std::this_thread::sleep_for(wait);
        std::vector<ibv_wc> found;
        ibv_wc wc{};
        while (ibv_poll_cq(peer.cq(), 1, &wc) == 1) {
            found.push_back(wc);
        }
        return found;
    }
    ibv_wc receive() { return lab::grade::next_completion(peer.cq(), std::chrono::seconds(5)); }
};

// Where the program's slots are: "slots" ADDRESS SLOT_SIZE MTU.
struct ProgramSlots {
    std::uint64_t address = 0;
    std::size_t size = 0;
    explicit ProgramSlots(const Message& message)
        : address(message.number(1)), size(message.number(2)) {}
    std::string read(StudentProgram& program, std::size_t slot, std::size_t offset,
                     std::size_t length) const {
        return lab::grade::read_program_memory(program.pid(), address + slot * size + offset,
                                               length);
    }
};

const lab::grade::KernelQp* kernel_qp(pid_t pid, std::uint32_t qp_num,
                                      std::vector<lab::grade::KernelQp>& qps) {
    qps = lab::grade::kernel_qps(pid);
    for (const auto& qp : qps) {
        if (qp.qp_num == qp_num) {
            return &qp;
        }
    }
    return nullptr;
}

}  // namespace

TEST_CASE("create_ud_qp: a UD QP, in RESET, with room for 32 requests", "[ex02]") {
    StudentProgram program("create_ud_qp");
    const auto qp_num = static_cast<std::uint32_t>(program.receive("created").number(1));
    std::vector<lab::grade::KernelQp> qps;
    const auto* qp = kernel_qp(program.pid(), qp_num, qps);
    lab::grade::require(qp != nullptr, {"the kernel lists the program's new QP", "it does not",
                                        "create_ud_qp returns the QP ibv_create_qp made"});
    expect(qp->type == "UD" && qp->state == "RESET",
           {"a UD QP in RESET", "a " + qp->type + " QP in " + qp->state,
            "qp_type IBV_QPT_UD; a new QP starts in RESET"});
    program.send({"bring up"});
    CheckStation station;
    const lab::PeerAddress theirs = station.exchange(program);
    const ProgramSlots slots(program.receive("slots"));
    for (std::size_t i = 0; i < 32; ++i) {
        station.send(theirs, i, 16, i);
    }
    program.receive("received");
    std::size_t wrong = 32;
    for (std::size_t i = 0; i < 32 && wrong == 32; ++i) {
        if (slots.read(program, i, kGrh, 16) != expected_bytes(i, 16)) {
            wrong = i;
        }
    }
    expect(wrong == 32, {"32 datagrams received at once, each in its receive",
                         "datagram " + std::to_string(wrong) + " is not in its slot",
                         "max_recv_wr 32, on the CQ it is given"});
    for (std::size_t i = 0; i < 32; ++i) {
        station.post_receive(i);
    }
    program.send({"send 32"});
    program.receive("sent");
    std::size_t arrived = 0;
    for (int i = 0; i < 32; ++i) {
        const ibv_wc wc = station.receive();
        arrived += wc.status == IBV_WC_SUCCESS && wc.src_qp == qp_num ? 1 : 0;
    }
    expect(arrived == 32, {"32 datagrams sent at once, all from the program's QP",
                           std::to_string(arrived) + " arrived", "max_send_wr 32"});
    program.send({"checked"});
    program.finish();
}

TEST_CASE("bring_up: RESET to RTS with our Q_Key and send PSN", "[ex02]") {
    StudentProgram program("bring_up");
    CheckStation station;
    const lab::PeerAddress theirs = station.exchange(program);
    std::vector<lab::grade::KernelQp> qps;
    const auto* qp = kernel_qp(program.pid(), theirs.qp_num, qps);
    lab::grade::require(qp != nullptr, {"the kernel lists the program's QP", "it does not", ""});
    expect(qp->state == "RTS" && qp->sq_psn == 0x1234,
           {"the QP in RTS, sending from PSN 4660 (0x1234)",
            "in " + qp->state + ", send PSN " + std::to_string(qp->sq_psn),
            "RESET -> INIT -> RTR -> RTS; RTS takes sq_psn (mask IBV_QP_SQ_PSN)"});
    const ProgramSlots slots(program.receive("slots"));
    station.send(theirs, 0, 32, 9);
    std::string failure;
    try {
        program.receive("received");
    } catch (const lab::grade::ProgramFailed& error) {
        failure = error.what();
    }
    const std::string landed = failure.empty() ? slots.read(program, 0, kGrh, 32) : "";
    expect(landed == expected_bytes(9, 32),
           {"a datagram sent with Q_Key 0x5eed0001 is accepted",
            failure.empty() ? "its bytes did not land" : failure,
            "INIT sets the Q_Key (IBV_QP_QKEY); a datagram with another Q_Key is dropped"});
    if (failure.empty()) {
        program.send({"checked"});
        program.finish();
    }
}

TEST_CASE("payload_of skips the 40-byte GRH", "[ex02]") {
    StudentProgram program("payload_of");
    const Message payload = program.receive("payload");
    program.finish();
    expect(payload.signed_number(1) == 40 && payload.number(2) == 25,
           {"the 25 bytes after the 40-byte GRH of a 100-byte slot (byte_len 65)",
            std::to_string(payload.number(2)) + " bytes at offset " +
                std::to_string(payload.signed_number(1)),
            "the device writes the GRH first: the payload starts at kGrhBytes and is "
            "wc.byte_len - kGrhBytes long"});
    expect(payload.text(3).find("byte_len 30") != std::string::npos,
           {"byte_len 30 (shorter than a GRH) refused with a lab::Error naming it",
            payload.text(3).empty() ? "no error" : "\"" + payload.text(3) + "\"",
            "throw lab::Error(\"payload_of: byte_len 30 ...\")"});
}

TEST_CASE("post_ud_send: a ping arrives, exact bytes after the GRH, from A's QPN", "[ex02]") {
    StudentProgram program("post_ud_send");
    CheckStation station;
    const lab::PeerAddress theirs = station.exchange(program);
    for (const std::size_t length : {std::size_t{1}, std::size_t{64}, station.mtu()}) {
        station.post_receive(1);
        program.send(Message{"send"}.add(length).add(length + 3).add(kQkey));
        program.receive("sent");
        const ibv_wc wc = station.receive();
        const std::string got = station.slot_bytes(1, kGrh, length);
        expect(wc.status == IBV_WC_SUCCESS && wc.byte_len == kGrh + length &&
                   wc.src_qp == theirs.qp_num && (wc.wc_flags & IBV_WC_GRH) != 0 &&
                   got == expected_bytes(length + 3, length),
               {"a " + std::to_string(length) + "-byte message from QP " +
                    std::to_string(theirs.qp_num) + ", byte for byte, after a GRH",
                std::to_string(wc.byte_len) + " bytes (GRH included) from QP " +
                    std::to_string(wc.src_qp) +
                    (got == expected_bytes(length + 3, length) ? "" : ", other bytes"),
                "one SGE over the message; wr.ud.ah, remote_qpn and remote_qkey say where"});
    }
    program.send({"end"});
    program.receive("ended");
    program.finish();
}

TEST_CASE("post_ud_receive: one SGE over the whole slot, GRH first", "[ex02]") {
    StudentProgram program("post_ud_receive");
    program.watch(lab::grade::kReceives);
    CheckStation station;
    const lab::PeerAddress theirs = station.exchange(program);
    const ProgramSlots slots(program.receive("slots"));
    station.send(theirs, 0, station.mtu(), 21);
    const Message received = program.receive("received");
    const auto receives = program.tracer().take_requests();
    expect(
        receives.size() == 1 && receives[0].sges.size() == 1 &&
            receives[0].sges[0].addr == slots.address + slots.size &&
            receives[0].sges[0].length == slots.size && receives[0].wr_id == 21,
        {"one receive, wr_id 21, one SGE over the whole " + std::to_string(slots.size) +
             "-byte slot",
         receives.size() == 1
             ? std::to_string(receives[0].sges.size()) + " SGE(s), " +
                   (receives[0].sges.empty()
                        ? std::string()
                        : std::to_string(receives[0].sges[0].length) + " bytes from offset " +
                              std::to_string(receives[0].sges[0].addr - slots.address - slots.size))
             : std::to_string(receives.size()) + " receives",
         "the GRH needs room too: the SGE covers all of slot.bytes"});
    expect(received.number(2) == kGrh + station.mtu() &&
               slots.read(program, 1, kGrh, station.mtu()) == expected_bytes(21, station.mtu()),
           {"the check's " + std::to_string(station.mtu()) + "-byte datagram after the GRH",
            std::to_string(received.number(2)) + " bytes received",
            "post the receive before "
            "the datagram comes"});
    program.send({"checked"});
    program.finish();
}

TEST_CASE("create_ah: the address handle leads to the peer's GID", "[ex02]") {
    StudentProgram program("create_ah");
    CheckStation station;
    station.post_receive(2);
    const lab::PeerAddress theirs = station.exchange(program);
    std::string failure;
    try {
        program.receive("sent");
    } catch (const lab::grade::ProgramFailed& error) {
        failure = error.what();
    }
    const auto found = station.completions(std::chrono::milliseconds(200));
    expect(failure.empty() && found.size() == 1 && found[0].src_qp == theirs.qp_num &&
               station.slot_bytes(2, kGrh, 8) == expected_bytes(5, 8),
           {"the program's datagram, sent through the student's address handle, arrives",
            !failure.empty() ? failure : std::to_string(found.size()) + " datagram(s) arrived",
            "ibv_ah_attr: port_num, is_global = 1, grh.dgid = the peer's GID, grh.sgid_index, "
            "grh.hop_limit"});
    if (failure.empty()) {
        program.send({"checked"});
        program.finish();
    }
}

TEST_CASE("a datagram with no receive posted is dropped without a word", "[ex02]") {
    StudentProgram program("post_ud_send");
    CheckStation station;
    station.exchange(program);
    program.send(Message{"send"}.add(16).add(0x42).add(kQkey));  // no receive posted here
    program.receive("sent");  // the send itself succeeds: UD has no acknowledgement
    expect(station.completions(std::chrono::milliseconds(300)).empty(),
           {"no completion at the receiver: the datagram is gone", "a completion", ""});
    station.post_receive(3);
    program.send(Message{"send"}.add(16).add(0x43).add(kQkey));
    program.receive("sent");
    const auto found = station.completions(std::chrono::milliseconds(300));
    expect(found.size() == 1 && station.slot_bytes(3, kGrh, 16) == expected_bytes(0x43, 16),
           {"only the second datagram arrives: UD never retries",
            std::to_string(found.size()) + " arrived", ""});
    program.send({"end"});
    program.receive("ended");
    program.finish();
}

TEST_CASE("a datagram with the wrong Q_Key is dropped", "[ex02]") {
    StudentProgram program("post_ud_send");
    CheckStation station;
    station.exchange(program);
    station.post_receive(4);
    program.send(Message{"send"}.add(16).add(7).add(kQkey + 1));
    program.receive("sent");
    expect(station.completions(std::chrono::milliseconds(300)).empty(),
           {"a datagram with Q_Key 0x5eed0002 dropped by a QP whose Q_Key is 0x5eed0001",
            "it arrived", "wr.wr.ud.remote_qkey is the Q_Key the datagram carries"});
    program.send(Message{"send"}.add(16).add(8).add(kQkey));
    program.receive("sent");
    const auto found = station.completions(std::chrono::milliseconds(300));
    expect(found.size() == 1 && station.slot_bytes(4, kGrh, 16) == expected_bytes(8, 16),
           {"the receive still there for the right Q_Key",
            std::to_string(found.size()) + " arrived", ""});
    program.send({"end"});
    program.receive("ended");
    program.finish();
}

TEST_CASE("messages above the path MTU and receive slots without room are refused",
          "[ex02][bad-input]") {
    StudentProgram program("refuse_bad_sizes");
    program.watch(lab::grade::kSends | lab::grade::kReceives);
    CheckStation station;
    station.post_receive(5);
    station.exchange(program);
    const Message refused = program.receive("refused");
    const std::string too_long = refused.text(1), too_small = refused.text(2);
    const std::string mtu_plus_one = std::to_string(refused.number(3) + 1);
    const auto posted = program.tracer().take_requests();
    expect(too_long.find("path MTU") != std::string::npos &&
               too_long.find(mtu_plus_one) != std::string::npos,
           {"a " + mtu_plus_one +
                "-byte message refused with a lab::Error naming the path MTU "
                "and both sizes",
            too_long.empty() ? "no error" : "\"" + too_long + "\"",
            "UD does not segment: a message is one packet, at most the path MTU"});
    expect(too_small.find("GRH") != std::string::npos,
           {"a 40-byte receive slot refused with a lab::Error naming the GRH",
            too_small.empty() ? "no error" : "\"" + too_small + "\"",
            "a slot must hold the 40-byte GRH and at least one byte"});
    expect(posted.empty() && station.completions(std::chrono::milliseconds(100)).empty(),
           {"nothing posted", std::to_string(posted.size()) + " work request(s) posted",
            "refuse before ibv_post_send / ibv_post_recv"});
    program.send({"checked"});
    program.finish();
}

// The instructor's own checks (tests/exercises/hidden/02_ud_ping.cpp), where this
// checkout has them: the student edition leaves them out (./lab export --student).
#ifdef LAB_HIDDEN_CHECKS
#include LAB_HIDDEN_CHECKS
#endif

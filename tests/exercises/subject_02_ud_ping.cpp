// SPDX-License-Identifier: MIT
// Exercise 02 built for grading: the course's main() around the student's
// ud.cpp. Each scenario is the student's half of one check in
// check_02_ud_ping.cpp: the check owns a UD QP of its own and judges from
// what its QP receives, what the kernel says about this program's QP, the
// work requests it posts (tracer) and the bytes that landed in its buffers.
// One student function per check; the rest is done by the course's own code.
#include <infiniband/verbs.h>

#include <chrono>
#include <string>
#include <vector>

#include "grade/subject_main.hpp"
#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/verbs.hpp"
#include "ud.hpp"

namespace {

using lab::grade::Link;
using lab::grade::Message;

constexpr std::uint32_t kQkey = 0x5eed0001;
constexpr auto kWait = std::chrono::seconds(5);

std::byte pattern(std::uint64_t seed, std::size_t i) {
    return static_cast<std::byte>((seed * 31 + i * 7 + i / 13 + 1) % 251);
}

// The course's own UD QP: created and brought to RTS without the student's code.
lab::QueuePair reference_qp(const ud::Device& device) {
    ibv_qp_init_attr init{};
    init.send_cq = device.cq_a.get();
    init.recv_cq = device.cq_a.get();
    init.qp_type = IBV_QPT_UD;
    init.cap = {32, 32, 1, 1, 0};
    lab::QueuePair qp(lab::check_ptr(ibv_create_qp(device.pd.get(), &init), "ibv_create_qp(UD)"));
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.port_num = device.port;
    attr.qkey = kQkey;
    lab::check(ibv_modify_qp(qp.get(), &attr,
                             IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY),
               "ibv_modify_qp(INIT)");
    attr = {};
    attr.qp_state = IBV_QPS_RTR;
    lab::check(ibv_modify_qp(qp.get(), &attr, IBV_QP_STATE), "ibv_modify_qp(RTR)");
    attr.qp_state = IBV_QPS_RTS;
    lab::check(ibv_modify_qp(qp.get(), &attr, IBV_QP_STATE | IBV_QP_SQ_PSN), "ibv_modify_qp(RTS)");
    return qp;
}

lab::AddressHandle reference_ah(const ud::Device& device, const ibv_gid& peer) {
    ibv_ah_attr attr{};
    attr.port_num = device.port;
    attr.is_global = 1;
    attr.grh.dgid = peer;
    attr.grh.sgid_index = static_cast<std::uint8_t>(device.gid.index);
    attr.grh.hop_limit = 64;
    return lab::AddressHandle(
        lab::check_ptr(ibv_create_ah(device.pd.get(), &attr), "ibv_create_ah"));
}

void reference_receive(ibv_qp* qp, const ud::LocalBuffer& slot, std::uint64_t wr_id) {
    lab::post_receive(qp, slot.bytes, slot.lkey, wr_id);
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

// The device, a registered buffer of slots and this program's UD address.
struct Station {
    ud::Device device = ud::open("", 1);
    std::size_t slot_size = ud::kGrhBytes + ud::max_payload(device);
    std::vector<std::byte> memory = std::vector<std::byte>(40 * slot_size);
    lab::MemoryRegion mr = ud::register_buffer(device, memory);

    ud::LocalBuffer slot(std::size_t i, std::size_t length = 0) {
        return {std::span(memory).subspan(i * slot_size, length == 0 ? slot_size : length),
                mr->lkey};
    }
    // "address": our QPN and GID; the check answers with its own.
    lab::PeerAddress exchange(Link& link, ibv_qp* qp) {
        Message ours{"address"};
        link.send(lab::grade::add_address(ours, {qp->qp_num, 0, 0, device.gid.gid}));
        return lab::grade::address_from(link.expect("address"), 1);
    }
    void fill(std::size_t slot_index, std::size_t length, std::uint64_t seed) {
        for (std::size_t i = 0; i < length; ++i) {
            memory[slot_index * slot_size + i] = pattern(seed, i);
        }
    }
    Message slots_message() const {
        return Message{"slots"}
            .add(reinterpret_cast<std::uint64_t>(memory.data()))
            .add(slot_size)
            .add(ud::max_payload(device));
    }
};

void create_ud_qp(Link& link) {
    Station station;
    lab::QueuePair qp = ud::create_ud_qp(station.device.pd.get(), station.device.cq_a.get());
    link.send(Message{"created"}.add(qp->qp_num));
    link.expect("bring up");
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.port_num = station.device.port;
    attr.qkey = kQkey;
    lab::check(ibv_modify_qp(qp.get(), &attr,
                             IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY),
               "ibv_modify_qp(INIT) of the student's QP");
    attr = {};
    attr.qp_state = IBV_QPS_RTR;
    lab::check(ibv_modify_qp(qp.get(), &attr, IBV_QP_STATE), "ibv_modify_qp(RTR)");
    attr.qp_state = IBV_QPS_RTS;
    lab::check(ibv_modify_qp(qp.get(), &attr, IBV_QP_STATE | IBV_QP_SQ_PSN), "ibv_modify_qp(RTS)");
    const lab::PeerAddress check = station.exchange(link, qp.get());
    // 32 receives at once, on the student's QP and CQ.
    for (std::size_t i = 0; i < 32; ++i) {
        reference_receive(qp.get(), station.slot(i), i);
    }
    link.send(station.slots_message());
    for (int i = 0; i < 32; ++i) {
        lab::wait_for_completion(station.device.cq_a.get(), "UD receive on the student's CQ",
                                 kWait);
    }
    link.send({"received"});
    // 32 sends at once.
    link.expect("send 32");
    const lab::AddressHandle ah = reference_ah(station.device, check.gid);
    for (std::size_t i = 0; i < 32; ++i) {
        station.fill(32 + (i % 8), 16, i);
        reference_send(qp.get(), ah.get(), check.qp_num, station.slot(32 + (i % 8), 16));
    }
    for (int i = 0; i < 32; ++i) {
        lab::wait_for_completion(station.device.cq_a.get(), "UD send on the student's CQ", kWait);
    }
    link.send({"sent"});
    link.expect("checked");
}

void bring_up(Link& link) {
    Station station;
    ibv_qp_init_attr init{};
    init.send_cq = station.device.cq_a.get();
    init.recv_cq = station.device.cq_a.get();
    init.qp_type = IBV_QPT_UD;
    init.cap = {32, 32, 1, 1, 0};
    lab::QueuePair qp(
        lab::check_ptr(ibv_create_qp(station.device.pd.get(), &init), "ibv_create_qp(UD)"));
    ud::bring_up(qp.get(), station.device.port, kQkey, 0x1234);
    station.exchange(link, qp.get());
    reference_receive(qp.get(), station.slot(0), 1);
    link.send(station.slots_message());
    lab::wait_for_completion(station.device.cq_a.get(), "UD receive", kWait);
    link.send({"received"});
    link.expect("checked");
}

void payload_of(Link& link) {
    std::vector<std::byte> slot(100);
    ibv_wc wc{};
    wc.byte_len = ud::kGrhBytes + 25;
    const auto payload = ud::payload_of(wc, slot);
    std::string refused;
    try {
        wc.byte_len = 30;
        ud::payload_of(wc, slot);
    } catch (const lab::Error& error) {
        refused = error.what();
    }
    link.send(Message{"payload"}
                  .add(std::to_string(payload.data() - slot.data()))
                  .add(payload.size())
                  .add(refused));
}

// Student's post_ud_send; the check says what to send and where.
void post_ud_send(Link& link) {
    Station station;
    const lab::QueuePair qp = reference_qp(station.device);
    const lab::PeerAddress check = station.exchange(link, qp.get());
    const lab::AddressHandle ah = reference_ah(station.device, check.gid);
    for (;;) {
        const Message order = link.receive();
        if (order.name() == "end") {
            break;
        }
        const std::size_t length = order.number(1);
        station.fill(0, length, order.number(2));
        ud::post_ud_send(qp.get(), ah.get(), check.qp_num,
                         static_cast<std::uint32_t>(order.number(3)), station.slot(0, length),
                         ud::max_payload(station.device), 7);
        lab::wait_for_completion(station.device.cq_a.get(), "UD send", kWait);
        link.send({"sent"});
    }
    link.send({"ended"});
}

void post_ud_receive(Link& link) {
    Station station;
    link.send(Message{"ready"});
    link.expect("go");
    const lab::QueuePair qp = reference_qp(station.device);
    station.exchange(link, qp.get());
    ud::post_ud_receive(qp.get(), station.slot(1), 21);
    link.send(station.slots_message());
    const ibv_wc wc = lab::wait_for_completion(station.device.cq_a.get(), "UD receive", kWait);
    link.send(Message{"received"}.add(wc.wr_id).add(wc.byte_len));
    link.expect("checked");
}

void create_ah(Link& link) {
    Station station;
    const lab::QueuePair qp = reference_qp(station.device);
    const lab::PeerAddress check = station.exchange(link, qp.get());
    const lab::AddressHandle ah = ud::create_ah(station.device.pd.get(), station.device.port,
                                                station.device.gid.index, check.gid);
    station.fill(0, 8, 5);
    reference_send(qp.get(), ah.get(), check.qp_num, station.slot(0, 8));
    lab::wait_for_completion(station.device.cq_a.get(), "UD send", kWait);
    link.send({"sent"});
    link.expect("checked");
}

// The student's checks on bad sizes: both must refuse before posting.
void refuse_bad_sizes(Link& link) {
    Station station;
    link.send(Message{"ready"});
    link.expect("go");
    const lab::QueuePair qp = reference_qp(station.device);
    const lab::PeerAddress check = station.exchange(link, qp.get());
    const lab::AddressHandle ah = reference_ah(station.device, check.gid);
    const std::size_t mtu = ud::max_payload(station.device);
    std::string too_long, too_small;
    try {
        ud::post_ud_send(qp.get(), ah.get(), check.qp_num, kQkey, station.slot(0, mtu + 1), mtu, 1);
    } catch (const lab::Error& error) {
        too_long = error.what();
    }
    try {
        ud::post_ud_receive(qp.get(), station.slot(1, ud::kGrhBytes), 1);
    } catch (const lab::Error& error) {
        too_small = error.what();
    }
    link.send(Message{"refused"}.add(too_long).add(too_small).add(mtu));
    link.expect("checked");
}

}  // namespace

int main(int argc, char** argv) {
    return lab::grade::subject_main(argc, argv,
                                    {
                                        {"create_ud_qp", create_ud_qp},
                                        {"bring_up", bring_up},
                                        {"payload_of", payload_of},
                                        {"post_ud_send", post_ud_send},
                                        {"post_ud_receive", post_ud_receive},
                                        {"create_ah", create_ah},
                                        {"refuse_bad_sizes", refuse_bad_sizes},
                                    });
}

// SPDX-License-Identifier: MIT
// Exercise 07 built for grading: the course's main() around the student's
// window.cpp. Each scenario is the student's half of one check in
// check_07_memory_window.cpp, which starts this program in the sandbox, plays
// the peer with a QP of its own, and judges what it sees. The student's QP
// is created and connected to the check by course code; a scenario calls only
// the student's functions its check is about and does the rest right, so one
// function earns one check.
#include <infiniband/verbs.h>

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "grade/subject_main.hpp"
#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/device.hpp"
#include "lab/verbs.hpp"
#include "window.hpp"

namespace {

using lab::grade::Link;
using lab::grade::Message;

constexpr std::uint8_t kPort = 1;

// The owner's side: the student's QP, connected to the check's, and the region.
struct Owner {
    lab::Context context;
    lab::ProtectionDomain pd;
    lab::CompletionQueue cq;
    lab::QueuePair qp;
    std::vector<std::byte> region;
};

Owner create_owner() {
    Owner o;
    o.context = lab::open_device("");
    o.pd = lab::alloc_pd(o.context.get());
    const lab::QueueSizes sizes;
    o.cq = lab::create_cq(o.context.get(), int(sizes.send_wr + sizes.recv_wr));  // room for all
    o.qp = lab::create_rc_qp(o.pd.get(), o.cq.get(), o.cq.get(), sizes);
    o.region.assign(mw::kRegionSize, std::byte{'.'});
    return o;
}

void connect(Link& link, Owner& o) {
    const lab::GidChoice gid = lab::choose_gid(o.context.get(), kPort, std::nullopt);
    const ibv_port_attr port = lab::query_port(o.context.get(), kPort);
    lab::grade::connect_to_check(link, o.qp.get(), {kPort, gid.index, port.active_mtu}, gid.gid,
                                 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
}

std::span<std::byte> window_part(Owner& o) {
    return std::span(o.region).subspan(mw::kWindowOffset, mw::kWindowLength);
}

std::uint64_t address_of(const void* pointer) {
    return reinterpret_cast<std::uint64_t>(pointer);
}

// The course's own register_region, bind_window: done right.
lab::MemoryRegion register_correctly(Owner& o) {
    return lab::register_memory(o.pd.get(), o.region, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
}

std::uint32_t bind_correctly(Owner& o, ibv_mw* window, ibv_mr* region) {
    const std::uint32_t rkey = ibv_inc_rkey(window->rkey);
    ibv_send_wr wr{};
    wr.opcode = IBV_WR_BIND_MW;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.bind_mw.mw = window;
    wr.bind_mw.rkey = rkey;
    wr.bind_mw.bind_info.mr = region;
    wr.bind_mw.bind_info.addr = address_of(window_part(o).data());
    wr.bind_mw.bind_info.length = mw::kWindowLength;
    wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
    ibv_send_wr* bad_wr = nullptr;
    lab::check(ibv_post_send(o.qp.get(), &wr, &bad_wr), "ibv_post_send");
    lab::wait_for_completion(o.cq.get(), "bind of the memory window");
    return rkey;
}

lab::grade::Message& add_window(Message& message, Owner& o, const lab::MemoryRegion& region,
                                std::uint32_t window_rkey) {
    return message.add(address_of(o.region.data()))
        .add(region->rkey)
        .add(address_of(window_part(o).data()))
        .add(window_rkey);
}

// The student's allocate_window: the check compares the window's type and PD.
void allocate_window(Link& link) {
    Owner o = create_owner();
    const mw::MemoryWindow window = mw::allocate_window(o.pd.get());
    link.send(Message{"window"}
                  .add(window ? static_cast<std::uint64_t>(window->type) : 0)
                  .add(window && window->pd == o.pd.get() ? 1 : 0));
    link.expect("checked");
}

// The student's register_region under a window the course binds: the check
// writes through the window (it must land) and with the region's own rkey
// (it must be refused).
void register_region(Link& link) {
    Owner o = create_owner();
    connect(link, o);
    const lab::MemoryRegion region = mw::register_region(o.pd.get(), o.region);
    const mw::MemoryWindow window(
        lab::check_ptr(ibv_alloc_mw(o.pd.get(), IBV_MW_TYPE_2), "ibv_alloc_mw"));
    const std::uint32_t rkey = bind_correctly(o, window.get(), region.get());
    Message message{"region"};
    link.send(add_window(message, o, region, rkey));
    link.expect("checked");
}

// The student's bind_window (the course registers the region and allocates
// the window); the check watches the work request and writes in and out.
void bind_window(Link& link) {
    Owner o = create_owner();
    connect(link, o);
    const lab::MemoryRegion region = register_correctly(o);
    const mw::MemoryWindow window(
        lab::check_ptr(ibv_alloc_mw(o.pd.get(), IBV_MW_TYPE_2), "ibv_alloc_mw"));
    link.send(Message{"ready"}.add(o.qp->qp_num));
    link.expect("go");
    const std::uint32_t rkey =
        mw::bind_window(o.qp.get(), o.cq.get(), window.get(), region.get(), window_part(o));
    Message message{"bound"};
    link.send(add_window(message, o, region, rkey));
    link.expect("checked");
}

// The student's invalidate_window on a window the course bound.
void invalidate_window(Link& link) {
    Owner o = create_owner();
    connect(link, o);
    const lab::MemoryRegion region = register_correctly(o);
    const mw::MemoryWindow window(
        lab::check_ptr(ibv_alloc_mw(o.pd.get(), IBV_MW_TYPE_2), "ibv_alloc_mw"));
    const std::uint32_t rkey = bind_correctly(o, window.get(), region.get());
    Message message{"bound"};
    link.send(add_window(message, o, region, rkey));
    link.expect("invalidate");
    link.send(Message{"ready"}.add(o.qp->qp_num));
    link.expect("go");
    mw::invalidate_window(o.qp.get(), o.cq.get(), rkey);
    link.send({"invalidated"});
    link.expect("checked");
}

// The student's wait_for_invalidation: the course posts the receive, the check
// sends with invalidate, the student's function reads the completion.
void wait_for_invalidation(Link& link) {
    Owner o = create_owner();
    connect(link, o);
    const lab::MemoryRegion region = register_correctly(o);
    const mw::MemoryWindow window(
        lab::check_ptr(ibv_alloc_mw(o.pd.get(), IBV_MW_TYPE_2), "ibv_alloc_mw"));
    const std::uint32_t rkey = bind_correctly(o, window.get(), region.get());
    lab::post_receive(o.qp.get(), std::span(o.region).first(64), region->lkey);
    Message message{"bound"};
    link.send(add_window(message, o, region, rkey));
    link.expect("sending");
    const std::uint32_t invalidated = mw::wait_for_invalidation(o.cq.get());
    link.send(Message{"invalidated"}.add(invalidated));
    link.expect("checked");
}

}  // namespace

int main(int argc, char** argv) {
    return lab::grade::subject_main(argc, argv,
                                    {
                                        {"allocate_window", allocate_window},
                                        {"register_region", register_region},
                                        {"bind_window", bind_window},
                                        {"invalidate_window", invalidate_window},
                                        {"wait_for_invalidation", wait_for_invalidation},
                                    });
}

// SPDX-License-Identifier: MIT
// Exercise 07, the given part: the two connected QPs, the peer's writes and
// its send with invalidate, and the program's steps in order.
#include <cstring>
#include <optional>
#include <string>

#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "lab/device.hpp"
#include "lab/verbs.hpp"
#include "window.hpp"

namespace mw {

Resources create_resources(const std::string& device, std::uint8_t port) {
    Resources r;
    r.context = lab::open_device(device);
    r.port = port;
    const ibv_port_attr port_attr = lab::query_port(r.context.get(), port);
    r.pd = lab::alloc_pd(r.context.get());
    // Each QP has a CQ of its own, with an entry for every work request the QP may
    // hold: a completion of each can be waiting at once.
    const lab::QueueSizes sizes;  // 64 sends and 64 receives, one SGE each
    const int entries = int(sizes.send_wr + sizes.recv_wr);
    r.owner_cq = lab::create_cq(r.context.get(), entries);
    r.peer_cq = lab::create_cq(r.context.get(), entries);
    r.owner_qp = lab::create_rc_qp(r.pd.get(), r.owner_cq.get(), r.owner_cq.get(), sizes);
    r.peer_qp = lab::create_rc_qp(r.pd.get(), r.peer_cq.get(), r.peer_cq.get(), sizes);
    r.region.assign(kRegionSize, std::byte{'.'});
    r.peer_memory.assign(256, std::byte{0});
    r.peer_mr = lab::register_memory(r.pd.get(), r.peer_memory, IBV_ACCESS_LOCAL_WRITE);

    // The owner's QP lets the peer write (through whatever rkey it holds).
    const lab::GidChoice gid = lab::choose_gid(r.context.get(), port, std::nullopt);
    lab::move_to_init(r.owner_qp.get(), port, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    lab::move_to_init(r.peer_qp.get(), port, IBV_ACCESS_LOCAL_WRITE);
    const lab::PeerAddress owner{r.owner_qp->qp_num, lab::random_psn(), port_attr.lid, gid.gid};
    const lab::PeerAddress peer{r.peer_qp->qp_num, lab::random_psn(), port_attr.lid, gid.gid};
    const lab::LocalPort local{port, gid.index, port_attr.active_mtu};
    lab::move_to_rtr(r.owner_qp.get(), local, peer);
    lab::move_to_rtr(r.peer_qp.get(), local, owner);
    lab::move_to_rts(r.owner_qp.get(), owner.psn, 16, 7, 2, 12);
    lab::move_to_rts(r.peer_qp.get(), peer.psn, 16, 7, 2, 12);
    return r;
}

ibv_wc_status peer_write(Resources& resources, std::uint64_t address, std::uint32_t rkey,
                         std::string_view text) {
    const std::size_t length = std::min(text.size(), resources.peer_memory.size());
    std::memcpy(resources.peer_memory.data(), text.data(), length);
    lab::post_rdma(resources.peer_qp.get(), IBV_WR_RDMA_WRITE,
                   std::span(resources.peer_memory).first(length), resources.peer_mr->lkey, address,
                   rkey);
    return lab::poll_completion(resources.peer_cq.get(), std::chrono::seconds(10)).status;
}

void peer_send_with_invalidate(Resources& resources, std::uint32_t rkey, std::string_view text) {
    const std::size_t length = std::min(text.size(), resources.peer_memory.size());
    std::memcpy(resources.peer_memory.data(), text.data(), length);
    ibv_sge sge{reinterpret_cast<std::uint64_t>(resources.peer_memory.data()),
                static_cast<std::uint32_t>(length), resources.peer_mr->lkey};
    ibv_send_wr wr{};
    wr.opcode = IBV_WR_SEND_WITH_INV;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.invalidate_rkey = rkey;
    ibv_send_wr* bad_wr = nullptr;
    lab::check(ibv_post_send(resources.peer_qp.get(), &wr, &bad_wr), "ibv_post_send");
    lab::wait_for_completion(resources.peer_cq.get(), "send with invalidate",
                             std::chrono::seconds(10));
}

namespace {

std::string status_text(ibv_wc_status status) {
    return std::string("\"") + ibv_wc_status_str(status) + "\"";
}

// One connection with the region registered and a window lent to the peer.
// Declared in creation order, so the window goes first, then the region's
// registration, then the QPs and the PD.
struct Lending {
    Resources r;
    lab::MemoryRegion region;
    MemoryWindow window;
    std::uint32_t rkey = 0;
    std::uint64_t window_address = 0;
};

Lending lend(const std::string& device, std::uint8_t port) {
    Lending l{create_resources(device, port), {}, {}, 0, 0};
    l.region = register_region(l.r.pd.get(), l.r.region);
    l.window = allocate_window(l.r.pd.get());
    const std::span<std::byte> part = std::span(l.r.region).subspan(kWindowOffset, kWindowLength);
    l.rkey =
        bind_window(l.r.owner_qp.get(), l.r.owner_cq.get(), l.window.get(), l.region.get(), part);
    l.window_address = reinterpret_cast<std::uint64_t>(part.data());
    return l;
}

}  // namespace

void run(const std::string& device, std::uint8_t port, std::ostream& out) {
    // A write the device refuses moves both QPs to ERR, so each part of the
    // run that ends in one starts from fresh, connected QPs.
    {
        Lending l = lend(device, port);
        out << "step 1: registered the " << kRegionSize << "-byte region (rkey 0x" << std::hex
            << l.region->rkey << ") and bound a type 2 window to its bytes " << std::dec
            << kWindowOffset << ".." << kWindowOffset + kWindowLength - 1 << " (rkey 0x" << std::hex
            << l.rkey << std::dec << ")" << std::endl;
        const ibv_wc_status inside = peer_write(l.r, l.window_address, l.rkey, "inside");
        out << "step 2: the peer's write inside the window: " << status_text(inside)
            << "; the window starts with \""
            << std::string(reinterpret_cast<const char*>(l.r.region.data()) + kWindowOffset, 6)
            << "\"" << std::endl;
        const ibv_wc_status outside =
            peer_write(l.r, l.window_address + kWindowLength - 4, l.rkey, "past the end");
        out << "step 3: the peer's write across the window's end: " << status_text(outside)
            << (outside == IBV_WC_SUCCESS
                    ? " (this device checks the region's bounds, not the window's)"
                    : "")
            << std::endl;
    }
    {
        Lending l = lend(device, port);
        invalidate_window(l.r.owner_qp.get(), l.r.owner_cq.get(), l.rkey);
        const ibv_wc_status after = peer_write(l.r, l.window_address, l.rkey, "too late");
        out << "step 4: after IBV_WR_LOCAL_INV, the peer's write: " << status_text(after)
            << std::endl;
    }
    {
        Lending l = lend(device, port);
        // The message lands in the region's first bytes, outside the window.
        lab::post_receive(l.r.owner_qp.get(), std::span(l.r.region).first(64), l.region->lkey);
        peer_send_with_invalidate(l.r, l.rkey, "done with it");
        const std::uint32_t invalidated = wait_for_invalidation(l.r.owner_cq.get());
        const ibv_wc_status after = peer_write(l.r, l.window_address, l.rkey, "too late");
        out << "step 5: the peer's IBV_WR_SEND_WITH_INV invalidated rkey 0x" << std::hex
            << invalidated << std::dec << "; the peer's next write: " << status_text(after)
            << std::endl;
    }
}

}  // namespace mw

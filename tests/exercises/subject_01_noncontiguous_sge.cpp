// SPDX-License-Identifier: MIT
// Exercise 01 built for grading: the course's main() around the student's
// sge.cpp. The check (check_01_noncontiguous_sge.cpp) drives one session per
// check: it says which queue pair to set up and which of the student's
// functions to run on which layout; this program fills its buffers, runs the
// function and says where its buffers are. The check judges from outside:
// the bytes that arrived in its own memory (RDMA WRITE targets) or in this
// program's buffers (read with process_vm_readv), the work requests posted
// (tracer) and the packets the QPs exchanged (kernel PSNs).
#include <infiniband/verbs.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "grade/subject_main.hpp"
#include "lab/check.hpp"
#include "lab/device.hpp"
#include "lab/verbs.hpp"
#include "sge.hpp"

namespace {

using lab::grade::Link;
using lab::grade::Message;

constexpr std::byte kUntouched{0xEE};
constexpr std::size_t kGuard = 64;
constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

// Byte i of the source data of a run: never kUntouched.
std::byte pattern(std::uint64_t seed, std::size_t i) {
    return static_cast<std::byte>((i * 131 + i / 97 + seed + 1) % 233);
}

// A QP of this program connected to the check's QP: the one-sided functions
// write to and read from the check's memory.
struct CheckEndpoint {
    lab::Context context = lab::open_device("");
    lab::ProtectionDomain pd = lab::alloc_pd(context.get());
    lab::CompletionQueue cq;
    lab::QueuePair qp;
    sge::Endpoint endpoint;

    CheckEndpoint(Link& link, std::uint32_t sge_count, std::uint32_t depth) {
        ibv_device_attr device{};
        lab::check(ibv_query_device(context.get(), &device), "ibv_query_device");
        lab::QueueSizes sizes;
        sizes.send_wr = depth;
        sizes.recv_wr = depth;
        sizes.send_sge = sge_count != 0 ? sge_count : static_cast<std::uint32_t>(device.max_sge);
        sizes.recv_sge = sizes.send_sge;
        cq = lab::create_cq(context.get(), static_cast<int>(2 * depth + 16));
        qp = lab::create_rc_qp(pd.get(), cq.get(), cq.get(), sizes);
        const ibv_port_attr port = lab::query_port(context.get(), 1);
        const lab::GidChoice gid = lab::choose_gid(context.get(), 1, std::nullopt);
        lab::grade::connect_to_check(link, qp.get(), {1, gid.index, port.active_mtu}, gid.gid,
                                     kAccess);
        endpoint = {qp.get(),
                    cq.get(),
                    {sizes.send_wr, sizes.recv_wr, sizes.send_sge, sizes.recv_sge},
                    static_cast<std::uint32_t>(device.max_sge_rd)};
    }
    lab::MemoryRegion register_buffer(std::span<std::byte> bytes) const {
        return lab::register_memory(pd.get(), bytes, kAccess);
    }
};

// A buffer of @p size bytes and kGuard untouched bytes after it, registered.
struct Memory {
    std::vector<std::byte> bytes;
    lab::MemoryRegion mr;
    template <typename Owner>
    Memory(Owner& owner, std::size_t size, bool filled, std::uint64_t seed)
        : bytes(size + kGuard, kUntouched), mr(owner.register_buffer(bytes)) {
        for (std::size_t i = 0; filled && i < size; ++i) {
            bytes[i] = pattern(seed, i);
        }
    }
    [[nodiscard]] sge::LocalBuffer local() const {
        return {{static_cast<std::byte*>(mr->addr), bytes.size() - kGuard}, mr->lkey};
    }
    [[nodiscard]] std::uint64_t address() const {
        return reinterpret_cast<std::uint64_t>(bytes.data());
    }
};

// "run" OP BLOCK_SIZE BLOCK_NUM STRIDE SEED REMOTE_ADDR RKEY REMOTE_LENGTH
void run(Link& link, const Message& order, CheckEndpoint* remote, sge::Loopback* pair,
         std::vector<std::unique_ptr<Memory>>& memories) {
    const std::string& op = order.text(1);
    const sge::Layout layout{order.number(2), order.number(3), order.number(4)};
    const std::uint64_t seed = order.number(5);
    const sge::RemoteBuffer target{order.number(6), static_cast<std::uint32_t>(order.number(7)),
                                   order.number(8)};
    memories.clear();
    const auto add = [&](auto& owner, std::size_t size, bool filled) -> Memory& {
        memories.push_back(std::make_unique<Memory>(owner, size, filled, seed));
        return *memories.back();
    };
    const bool one_sided =
        op == "gather_write" || op == "scatter_read" || op == "copy_write" || op == "read_copy";
    if ((one_sided && remote == nullptr) || (!one_sided && pair == nullptr)) {
        throw lab::Error("the check asked for " + op + " before setting up its queue pair");
    }
    const std::size_t extent = std::max<std::size_t>(order.number(9), 1);
    const std::size_t payload = std::max<std::size_t>(order.number(10), 1);
    if (op == "gather_write") {
        Memory& source = add(*remote, extent, true);
        sge::gather_write(remote->endpoint, layout, source.local(), target);
    } else if (op == "scatter_read") {
        Memory& destination = add(*remote, extent, false);
        sge::scatter_read(remote->endpoint, layout, destination.local(), target);
    } else if (op == "copy_write") {
        Memory& source = add(*remote, extent, true);
        Memory& staging = add(*remote, payload, false);
        sge::copy_write(remote->endpoint, layout, source.local(), staging.local(), target);
    } else if (op == "read_copy") {
        Memory& destination = add(*remote, extent, false);
        Memory& staging = add(*remote, payload, false);
        sge::read_copy(remote->endpoint, layout, destination.local(), staging.local(), target);
    } else if (op == "gather_send_scatter_recv") {
        Memory& source = add(*pair, extent, true);
        Memory& destination = add(*pair, extent, false);
        sge::gather_send_scatter_recv(pair->a(), source.local(), pair->b(), destination.local(),
                                      layout);
    } else if (op == "copy_send_recv") {
        Memory& source = add(*pair, extent, true);
        Memory& send_staging = add(*pair, payload, false);
        Memory& receive_staging = add(*pair, payload, false);
        Memory& destination = add(*pair, extent, false);
        sge::copy_send_recv(pair->a(), source.local(), send_staging.local(), pair->b(),
                            receive_staging.local(), destination.local(), layout);
    } else {
        throw lab::Error("unknown operation " + op);
    }
    Message done{"done"};
    for (const auto& memory : memories) {
        done.add(memory->address());
    }
    link.send(done);
}

// The one-sided and two-sided functions, as the check orders.
void session(Link& link) {
    std::unique_ptr<CheckEndpoint> remote;
    std::unique_ptr<sge::Loopback> pair;
    std::vector<std::unique_ptr<Memory>> memories;
    static_cast<void>(lab::open_device(""));  // loads the provider, for watching
    link.send({"ready"});
    link.expect("go");
    for (;;) {
        const Message order = link.receive();
        if (order.name() == "end") {
            break;
        }
        if (order.name() == "endpoint") {
            memories.clear();
            remote.reset();
            remote =
                std::make_unique<CheckEndpoint>(link, static_cast<std::uint32_t>(order.number(1)),
                                                static_cast<std::uint32_t>(order.number(2)));
            link.send(Message{"endpoint"}
                          .add(remote->qp->qp_num)
                          .add(remote->endpoint.limits.max_send_sge)
                          .add(remote->endpoint.limits.max_send_wr)
                          .add(remote->endpoint.max_sge_rd));
        } else if (order.name() == "loopback") {
            memories.clear();
            pair.reset();
            sge::LoopbackOptions options;
            options.sge_count = static_cast<std::uint32_t>(order.number(1));
            options.queue_depth = static_cast<std::uint32_t>(order.number(2));
            pair = std::make_unique<sge::Loopback>(options);
            link.send(Message{"loopback"}
                          .add(pair->a().qp->qp_num)
                          .add(pair->b().qp->qp_num)
                          .add(pair->a().limits.max_send_sge)
                          .add(pair->b().limits.max_recv_sge));
        } else if (order.name() == "run") {
            std::string refused;
            try {
                run(link, order, remote.get(), pair.get(), memories);
                continue;
            } catch (const lab::Error& error) {
                if (order.text(11) != "refuse") {
                    throw;
                }
                refused = error.what();
            }
            link.send({"refused", refused});
        }
    }
    link.send({"ended"});
}

void query_limits(Link& link) {
    Message limits{"limits"};
    for (const std::uint32_t sge_count : {0U, 4U}) {
        sge::LoopbackOptions options;
        options.sge_count = sge_count;
        options.queue_depth = sge_count == 0 ? 128 : 2;
        sge::Loopback pair(options);
        const sge::QueueLimits asked = pair.a().limits;
        const sge::QueueLimits got = sge::query_limits(pair.a().qp);
        limits.add(asked.max_send_sge)
            .add(asked.max_recv_sge)
            .add(asked.max_send_wr)
            .add(asked.max_recv_wr);
        limits.add(got.max_send_sge)
            .add(got.max_recv_sge)
            .add(got.max_send_wr)
            .add(got.max_recv_wr);
    }
    link.send(limits);
}

// "layout" BLOCK_SIZE BLOCK_NUM STRIDE SIZE run|refuse: block_sges on a buffer of SIZE bytes.
void block_sges(Link& link) {
    for (;;) {
        const Message order = link.receive();
        if (order.name() == "end") {
            break;
        }
        const sge::Layout layout{order.number(1), order.number(2), order.number(3)};
        std::vector<std::byte> bytes(order.number(4));
        Message reply{"sges"};
        reply.add(reinterpret_cast<std::uint64_t>(bytes.data()));
        try {
            for (const ibv_sge& sge : sge::block_sges(layout, {bytes, 0x1234})) {
                reply.add(sge.addr).add(sge.length).add(sge.lkey);
            }
        } catch (const lab::Error& error) {
            if (order.text(5) != "refuse") {
                throw;
            }
            reply = Message{"refused", error.what()};
        }
        link.send(reply);
    }
    link.send({"ended"});
}

// "layout" BLOCK_SIZE BLOCK_NUM STRIDE SEED FROM_SIZE TO_SIZE run|refuse: pack or unpack
// between two plain buffers.
void copy_by_cpu(Link& link, bool packing) {
    std::vector<std::byte> from, to;
    for (;;) {
        const Message order = link.receive();
        if (order.name() == "end") {
            break;
        }
        const sge::Layout layout{order.number(1), order.number(2), order.number(3)};
        const std::uint64_t seed = order.number(4);
        const std::size_t from_size = order.number(5), to_size = order.number(6);
        from.assign(from_size, kUntouched);
        to.assign(to_size + kGuard, kUntouched);
        for (std::size_t i = 0; i < from_size; ++i) {
            from[i] = pattern(seed, i);
        }
        try {
            if (packing) {
                sge::pack(layout, from, std::span(to).first(to_size));
            } else {
                sge::unpack(layout, from, std::span(to).first(to_size));
            }
            link.send(Message{"done"}.add(reinterpret_cast<std::uint64_t>(to.data())));
        } catch (const lab::Error& error) {
            if (order.text(7) != "refuse") {
                throw;
            }
            link.send({"refused", error.what()});
        }
    }
    link.send({"ended"});
}

}  // namespace

int main(int argc, char** argv) {
    return lab::grade::subject_main(argc, argv,
                                    {
                                        {"session", session},
                                        {"query_limits", query_limits},
                                        {"block_sges", block_sges},
                                        {"pack", [](Link& link) { copy_by_cpu(link, true); }},
                                        {"unpack", [](Link& link) { copy_by_cpu(link, false); }},
                                    });
}

// SPDX-License-Identifier: MIT
// Exercise 01, your part: zero-copy gather/scatter with several SGEs per work
// request, and the pack-and-copy baseline. README.md explains the task.
//
// Every function below is a TODO. Each one ends in todo(...), which throws
// "TODO: <function> is not written yet"; replace that line with your code.
// Run the checks with `./lab grade` (all exercises) and read what fails.
#include <infiniband/verbs.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "lab/check.hpp"
#include "sge.hpp"

namespace sge {

namespace {

// Marks an unwritten function; the arguments are only there so that the
// skeleton compiles without "unused parameter" warnings.
template <typename... Unused>
[[noreturn]] void todo(std::string_view function, const Unused&... /*unused*/) {
    throw lab::Error("TODO: " + std::string(function) +
                     " is not written yet (exercise 01, sge.cpp)");
}

}  // namespace

QueueLimits query_limits(ibv_qp* qp) {
    // TODO: ask the QP what it was really given. ibv_query_qp(qp, &attr,
    // IBV_QP_CAP, &init_attr) fills init_attr.cap (an ibv_qp_cap) with
    // max_send_wr, max_recv_wr, max_send_sge, max_recv_sge. Check the result
    // with lab::check(result, "ibv_query_qp").
    todo("query_limits", qp);
}

std::vector<ibv_sge> block_sges(const Layout& layout, const LocalBuffer& buffer) {
    // TODO:
    // 1. validate_layout(layout, buffer.bytes.size(), <no packed buffer here: the
    //    largest size_t>, "block_sges") — bad layouts end here, before any SGE exists.
    // 2. One ibv_sge per block: addr = address of block i in buffer.bytes
    //    (i × stride bytes from the start), length = block_size, lkey = buffer.lkey.
    todo("block_sges", layout, buffer);
}

void pack(const Layout& layout, std::span<const std::byte> strided, std::span<std::byte> packed) {
    // TODO: validate_layout(layout, strided.size(), packed.size(), "pack"), then
    // copy block i (at i × stride in strided) to i × block_size in packed.
    todo("pack", layout, strided, packed);
}

void unpack(const Layout& layout, std::span<const std::byte> packed, std::span<std::byte> strided) {
    // TODO: the reverse of pack(): block i of packed back to i × stride in strided.
    todo("unpack", layout, packed, strided);
}

void gather_write(const Endpoint& local, const Layout& layout, const LocalBuffer& source,
                  const RemoteBuffer& target) {
    // TODO:
    // 1. validate_layout(layout, source.bytes.size(), target.length, "gather_write").
    // 2. sges = block_sges(layout, source).
    // 3. A work request can carry at most local.limits.max_send_sge SGEs (rxe: 32),
    //    so make ceil(block_num / max_send_sge) ibv_send_wr, each with
    //    opcode IBV_WR_RDMA_WRITE, sg_list/num_sge = its share of sges,
    //    wr.rdma.rkey = target.rkey, and wr.rdma.remote_addr = target.addr plus the
    //    bytes the requests before it write (the remote side is packed).
    // 4. post_sends_and_wait(local, wrs, "gather-WRITE").
    // The sges vector must outlive the post: the WRs point into it.
    todo("gather_write", local, layout, source, target);
}

void scatter_read(const Endpoint& local, const Layout& layout, const LocalBuffer& destination,
                  const RemoteBuffer& source) {
    // TODO: as gather_write, with IBV_WR_RDMA_READ: the SGEs now say where the
    // bytes read from the packed remote buffer land. Validate against
    // destination.bytes.size() and source.length first ("scatter_read").
    // A READ has a limit of its own: split at min(local.limits.max_send_sge,
    // local.max_sge_rd) SGEs (equal on rxe; 1 on some iWARP devices).
    todo("scatter_read", local, layout, destination, source);
}

void gather_send_scatter_recv(const Endpoint& sender, const LocalBuffer& source,
                              const Endpoint& receiver, const LocalBuffer& destination,
                              const Layout& layout) {
    // TODO:
    // 1. Validate the layout against source and destination ("gather_send_scatter_recv").
    // 2. SGEs for the blocks of source (sends) and of destination (receives).
    // 3. Message i carries the same blocks on both sides, so split both at
    //    min(sender.limits.max_send_sge, receiver.limits.max_recv_sge) SGEs.
    // 4. One ibv_send_wr (opcode IBV_WR_SEND) and one ibv_recv_wr per message,
    //    then transfer_messages(sender, sends, receiver, receives).
    todo("gather_send_scatter_recv", sender, source, receiver, destination, layout);
}

void copy_write(const Endpoint& local, const Layout& layout, const LocalBuffer& source,
                const LocalBuffer& staging, const RemoteBuffer& target) {
    // TODO: the baseline. Validate (source against staging, and against
    // target.length), pack(layout, source.bytes, staging.bytes), then ONE
    // IBV_WR_RDMA_WRITE with ONE SGE covering payload_bytes() of staging.
    todo("copy_write", local, layout, source, staging, target);
}

void read_copy(const Endpoint& local, const Layout& layout, const LocalBuffer& destination,
               const LocalBuffer& staging, const RemoteBuffer& source) {
    // TODO: the baseline. Validate, ONE IBV_WR_RDMA_READ of payload_bytes()
    // into staging with ONE SGE, then unpack(layout, staging.bytes, destination.bytes).
    todo("read_copy", local, layout, destination, staging, source);
}

void copy_send_recv(const Endpoint& sender, const LocalBuffer& source,
                    const LocalBuffer& send_staging, const Endpoint& receiver,
                    const LocalBuffer& receive_staging, const LocalBuffer& destination,
                    const Layout& layout) {
    // TODO: the baseline. Validate, pack into send_staging, one send of one SGE
    // into one receive of one SGE (receive_staging) with transfer_messages,
    // then unpack receive_staging into destination.
    todo("copy_send_recv", sender, source, send_staging, receiver, receive_staging, destination,
         layout);
}

}  // namespace sge

// SPDX-License-Identifier: MIT
#include "lab/verbs.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <random>

#include "lab/check.hpp"

namespace lab {

ProtectionDomain alloc_pd(ibv_context* context) {
    return ProtectionDomain(check_ptr(ibv_alloc_pd(context), "ibv_alloc_pd"));
}

MemoryRegion register_memory(ibv_pd* pd, std::span<std::byte> buffer, int access) {
    ibv_mr* mr = ibv_reg_mr(pd, buffer.data(), buffer.size(), access);
    if (mr == nullptr) {
        const int error_number = errno;
        fail("ibv_reg_mr", error_number,
             error_number == ENOMEM
                 ? "registered memory is pinned and counts against the memlock limit: "
                   "check 'ulimit -l' and raise it, e.g. 'ulimit -l unlimited'"
             : error_number == EINVAL
                 ? "remote write or atomic access also needs IBV_ACCESS_LOCAL_WRITE"
                 : "");
    }
    return MemoryRegion(mr);
}

std::span<std::byte> page_aligned(std::vector<std::byte>& storage, std::size_t size) {
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    storage.resize(size + page);
    const std::size_t offset = page - reinterpret_cast<std::uintptr_t>(storage.data()) % page;
    return std::span(storage).subspan(offset % page, size);
}

CompletionQueue create_cq(ibv_context* context, int entries, ibv_comp_channel* channel) {
    return CompletionQueue(check_ptr(ibv_create_cq(context, entries, nullptr, channel, 0),
                                     "ibv_create_cq",
                                     "is the size above the device's max_cqe (lesson 01)?"));
}

ibv_qp_init_attr rc_qp_init_attr(ibv_cq* send_cq, ibv_cq* recv_cq, const QueueSizes& sizes,
                                 ibv_srq* srq, bool sq_sig_all) {
    ibv_qp_init_attr init{};
    init.send_cq = send_cq;
    init.recv_cq = recv_cq;
    init.srq = srq;
    init.qp_type = IBV_QPT_RC;
    init.sq_sig_all = sq_sig_all ? 1 : 0;
    init.cap.max_send_wr = sizes.send_wr;
    init.cap.max_recv_wr = sizes.recv_wr;
    init.cap.max_send_sge = sizes.send_sge;
    init.cap.max_recv_sge = sizes.recv_sge;
    init.cap.max_inline_data = sizes.inline_data;
    return init;
}

QueuePair create_rc_qp(ibv_pd* pd, ibv_cq* send_cq, ibv_cq* recv_cq, const QueueSizes& sizes,
                       ibv_srq* srq, bool sq_sig_all) {
    ibv_qp_init_attr init = rc_qp_init_attr(send_cq, recv_cq, sizes, srq, sq_sig_all);
    return QueuePair(check_ptr(ibv_create_qp(pd, &init), "ibv_create_qp",
                               "are the queue sizes within max_qp_wr and max_sge (lesson 01)?"));
}

void move_to_init(ibv_qp* qp, std::uint8_t port, int access_flags) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = port;
    attr.qp_access_flags = static_cast<unsigned>(access_flags);
    check(ibv_modify_qp(qp, &attr,
                        IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
          "ibv_modify_qp(RESET->INIT)", "is the port number valid?");
}

void move_to_rtr(ibv_qp* qp, const LocalPort& local, const PeerAddress& peer,
                 std::uint8_t max_dest_rd_atomic, std::uint8_t min_rnr_timer) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = local.path_mtu;
    attr.dest_qp_num = peer.qp_num;
    attr.rq_psn = peer.psn;
    attr.max_dest_rd_atomic = max_dest_rd_atomic;
    attr.min_rnr_timer = min_rnr_timer;
    attr.ah_attr.dlid = peer.lid;
    attr.ah_attr.sl = 0;
    attr.ah_attr.src_path_bits = 0;
    attr.ah_attr.port_num = local.port;
    // RoCE has no LIDs: the path is an IP route, so the GRH (global route
    // header) with the peer's GID and our GID index is mandatory.
    attr.ah_attr.is_global = 1;
    attr.ah_attr.grh.dgid = peer.gid;
    attr.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(local.gid_index);
    attr.ah_attr.grh.hop_limit = 64;
    check(ibv_modify_qp(qp, &attr,
                        IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                            IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
          "ibv_modify_qp(INIT->RTR)",
          "check the peer's GID and QPN and the GID index (-g); some devices also refuse a "
          "path MTU above the port's active_mtu");
}

void move_to_rts(ibv_qp* qp, std::uint32_t local_psn, std::uint8_t max_rd_atomic,
                 std::uint8_t rnr_retry, std::uint8_t retry_count, std::uint8_t timeout) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_RTS;
    attr.sq_psn = local_psn;
    attr.timeout = timeout;
    attr.retry_cnt = retry_count;
    attr.rnr_retry = rnr_retry;
    attr.max_rd_atomic = max_rd_atomic;
    check(ibv_modify_qp(qp, &attr,
                        IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                            IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC),
          "ibv_modify_qp(RTR->RTS)");
}

void post_receive(ibv_qp* qp, std::span<std::byte> buffer, std::uint32_t lkey,
                  std::uint64_t wr_id) {
    ibv_sge sge{};
    sge.addr = reinterpret_cast<std::uintptr_t>(buffer.data());
    sge.length = static_cast<std::uint32_t>(buffer.size());
    sge.lkey = lkey;
    ibv_recv_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad_wr = nullptr;
    check(ibv_post_recv(qp, &wr, &bad_wr), "ibv_post_recv",
          "is the receive queue full (max_recv_wr) or the QP in RESET?");
}

void post_send(ibv_qp* qp, std::span<const std::byte> message, std::uint32_t lkey,
               unsigned send_flags, std::uint64_t wr_id) {
    ibv_sge sge{};
    sge.addr = reinterpret_cast<std::uintptr_t>(message.data());
    sge.length = static_cast<std::uint32_t>(message.size());
    sge.lkey = lkey;
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = send_flags;
    ibv_send_wr* bad_wr = nullptr;
    check(ibv_post_send(qp, &wr, &bad_wr), "ibv_post_send(IBV_WR_SEND)",
          "is the send queue full (max_send_wr), the QP not in RTS, or an inline message above "
          "max_inline_data?");
}

void post_rdma(ibv_qp* qp, ibv_wr_opcode opcode, std::span<const std::byte> local,
               std::uint32_t lkey, std::uint64_t remote_addr, std::uint32_t rkey,
               unsigned send_flags, std::uint64_t wr_id) {
    ibv_sge sge{};
    sge.addr = reinterpret_cast<std::uintptr_t>(local.data());
    sge.length = static_cast<std::uint32_t>(local.size());
    sge.lkey = lkey;
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = opcode;
    wr.send_flags = send_flags;
    wr.wr.rdma.remote_addr = remote_addr;
    wr.wr.rdma.rkey = rkey;
    ibv_send_wr* bad_wr = nullptr;
    check(ibv_post_send(qp, &wr, &bad_wr),
          opcode == IBV_WR_RDMA_READ ? "ibv_post_send(IBV_WR_RDMA_READ)"
                                     : "ibv_post_send(IBV_WR_RDMA_WRITE)",
          "more work requests outstanding than max_send_wr, or an inline payload above "
          "max_inline_data?");
}

const char* qp_state_name(ibv_qp_state state) {
    switch (state) {
        case IBV_QPS_RESET:
            return "RESET";
        case IBV_QPS_INIT:
            return "INIT";
        case IBV_QPS_RTR:
            return "RTR";
        case IBV_QPS_RTS:
            return "RTS";
        case IBV_QPS_SQD:
            return "SQD";
        case IBV_QPS_SQE:
            return "SQE";
        case IBV_QPS_ERR:
            return "ERR";
        case IBV_QPS_UNKNOWN:
            break;
    }
    return "UNKNOWN";
}

std::uint32_t random_psn() {
    std::random_device source;
    return source() & 0xffffff;
}

}  // namespace lab

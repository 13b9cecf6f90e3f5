#include "peer.hpp"

#include <cstdio>
#include <optional>
#include <sstream>
#include <thread>

#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "student.hpp"
#include "subject_main.hpp"

namespace lab::grade {

Peer::Peer(int cq_entries) : context_(lab::open_device("")) {
    port_attr_ = lab::query_port(context_.get(), 1);
    gid_ = lab::choose_gid(context_.get(), 1, std::nullopt);
    pd_ = lab::alloc_pd(context_.get());
    cq_ = lab::create_cq(context_.get(), cq_entries);
}

lab::LocalPort Peer::local() const noexcept {
    return {1, gid_.index, port_attr_.active_mtu};
}

lab::QueuePair Peer::create_rc_qp(const lab::QueueSizes& sizes) const {
    return lab::create_rc_qp(pd_.get(), cq_.get(), cq_.get(), sizes);
}

lab::MemoryRegion Peer::register_memory(std::span<std::byte> bytes, int access) const {
    return lab::register_memory(pd_.get(), bytes, access);
}

void Peer::connect(StudentProgram& program, ibv_qp* qp, std::uint8_t rnr_retry) const {
    const lab::PeerAddress theirs = address_from(program.receive("address"), 1);
    const lab::PeerAddress ours{qp->qp_num, lab::random_psn(), port_attr_.lid, gid_.gid};
    Message reply{"address"};
    program.send(add_address(reply, ours));
    constexpr int kAccess =
        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    lab::move_to_init(qp, 1, kAccess);
    lab::move_to_rtr(qp, local(), theirs);
    lab::move_to_rts(qp, ours.psn, 16, rnr_retry);
}

std::vector<KernelQp> kernel_qps(pid_t pid) {
    FILE* listing = ::popen("rdma resource show qp 2>/dev/null", "r");
    if (listing == nullptr) {
        throw lab::Error("cannot run 'rdma resource show qp' (iproute2's rdma tool)");
    }
    std::string text;
    char buffer[4096];
    while (const std::size_t got = std::fread(buffer, 1, sizeof buffer, listing)) {
        text.append(buffer, got);
    }
    ::pclose(listing);
    std::vector<KernelQp> qps;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        std::istringstream words(line);
        std::string key, value;
        KernelQp qp;
        long owner = -1;
        while (words >> key) {
            if (key == "link" || key == "lqpn" || key == "rqpn" || key == "type" ||
                key == "state" || key == "rq-psn" || key == "sq-psn" || key == "pid" ||
                key == "comm" || key == "path-mig-state" || key == "pdn") {
                words >> value;
            }
            if (key == "lqpn")
                qp.qp_num = static_cast<std::uint32_t>(std::stoul(value));
            if (key == "rqpn")
                qp.remote_qp_num = static_cast<std::uint32_t>(std::stoul(value));
            if (key == "type")
                qp.type = value;
            if (key == "state")
                qp.state = value;
            if (key == "rq-psn")
                qp.rq_psn = static_cast<std::uint32_t>(std::stoul(value));
            if (key == "sq-psn")
                qp.sq_psn = static_cast<std::uint32_t>(std::stoul(value));
            if (key == "pid")
                owner = std::stol(value);
        }
        if (owner == pid) {
            qps.push_back(qp);
        }
    }
    return qps;
}

ibv_wc next_completion(ibv_cq* cq, std::chrono::milliseconds timeout) {
    return lab::poll_completion(cq, timeout);
}

}  // namespace lab::grade

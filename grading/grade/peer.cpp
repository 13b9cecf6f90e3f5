// SPDX-License-Identifier: MIT
#include "peer.hpp"

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

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

namespace {

// RDMA netlink (what `rdma resource show qp` uses), spoken directly: no tool to start.
class RdmaNetlink {
  public:
    RdmaNetlink() : fd_(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA)) {
        if (fd_ < 0) {
            lab::fail("socket(NETLINK_RDMA)", errno);
        }
    }
    ~RdmaNetlink() { ::close(fd_); }
    RdmaNetlink(const RdmaNetlink&) = delete;
    RdmaNetlink& operator=(const RdmaNetlink&) = delete;

    // Send a dump request of @p command (with the device index when given);
    // call @p on_attributes for the top-level attributes of every answer.
    template <typename OnAttributes>
    void dump(int command, std::optional<std::uint32_t> device, OnAttributes on_attributes) {
        struct {
            nlmsghdr header;
            nlattr attribute;
            std::uint32_t value;
        } request{};
        request.header.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, command);
        request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
        request.header.nlmsg_seq = ++sequence_;
        request.header.nlmsg_len = NLMSG_LENGTH(0);
        if (device) {
            request.attribute.nla_type = RDMA_NLDEV_ATTR_DEV_INDEX;
            request.attribute.nla_len = NLA_HDRLEN + sizeof(std::uint32_t);
            request.value = *device;
            request.header.nlmsg_len += NLA_ALIGN(request.attribute.nla_len);
        }
        if (::send(fd_, &request, request.header.nlmsg_len, 0) < 0) {
            lab::fail("send(NETLINK_RDMA)", errno);
        }
        std::vector<char> buffer(1 << 16);
        for (;;) {
            const ssize_t got = ::recv(fd_, buffer.data(), buffer.size(), 0);
            if (got < 0) {
                lab::fail("recv(NETLINK_RDMA)", errno);
            }
            auto length = static_cast<int>(got);
            for (auto* message = reinterpret_cast<nlmsghdr*>(buffer.data());
                 NLMSG_OK(message, static_cast<unsigned>(length));
                 message = NLMSG_NEXT(message, length)) {
                if (message->nlmsg_type == NLMSG_DONE) {
                    return;
                }
                if (message->nlmsg_type == NLMSG_ERROR) {
                    const auto* error = static_cast<const nlmsgerr*>(NLMSG_DATA(message));
                    if (error->error == 0) {
                        continue;
                    }
                    lab::fail("RDMA netlink dump", -error->error);
                }
                on_attributes(static_cast<const char*>(NLMSG_DATA(message)),
                              message->nlmsg_len - NLMSG_HDRLEN);
            }
        }
    }

  private:
    int fd_;
    std::uint32_t sequence_ = 0;
};

// Call @p on_attribute(type, data, length) for each attribute in [data, data + length).
template <typename OnAttribute>
void for_each_attribute(const char* data, std::size_t length, OnAttribute on_attribute) {
    while (length >= NLA_HDRLEN) {
        const auto* attribute = reinterpret_cast<const nlattr*>(data);
        if (attribute->nla_len < NLA_HDRLEN || attribute->nla_len > length) {
            return;
        }
        on_attribute(attribute->nla_type & NLA_TYPE_MASK, data + NLA_HDRLEN,
                     attribute->nla_len - NLA_HDRLEN);
        const std::size_t step = NLA_ALIGN(attribute->nla_len);
        if (step >= length) {
            return;
        }
        data += step;
        length -= step;
    }
}

std::uint32_t u32_of(const char* data, std::size_t length) {
    std::uint32_t value = 0;
    std::memcpy(&value, data, std::min(length, sizeof value));
    return value;
}

// The kernel's enum ib_qp_state and ib_qp_type have verbs' values.
const char* state_name(unsigned state) {
    static const char* const kNames[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
    return state < 7 ? kNames[state] : "UNKNOWN";
}

const char* type_name(unsigned type) {
    switch (type) {
        case IBV_QPT_RC:
            return "RC";
        case IBV_QPT_UC:
            return "UC";
        case IBV_QPT_UD:
            return "UD";
        default:
            return "other";
    }
}

}  // namespace

std::vector<KernelQp> kernel_qps(pid_t pid) {
    RdmaNetlink netlink;
    std::vector<std::uint32_t> devices;
    netlink.dump(RDMA_NLDEV_CMD_GET, std::nullopt, [&](const char* data, std::size_t length) {
        for_each_attribute(data, length, [&](unsigned type, const char* value, std::size_t size) {
            if (type == RDMA_NLDEV_ATTR_DEV_INDEX) {
                devices.push_back(u32_of(value, size));
            }
        });
    });
    std::vector<KernelQp> qps;
    for (const std::uint32_t device : devices) {
        netlink.dump(RDMA_NLDEV_CMD_RES_QP_GET, device, [&](const char* data, std::size_t length) {
            for_each_attribute(
                data, length, [&](unsigned type, const char* table, std::size_t size) {
                    if (type != RDMA_NLDEV_ATTR_RES_QP) {
                        return;
                    }
                    for_each_attribute(
                        table, size,
                        [&](unsigned entry_type, const char* entry, std::size_t entry_size) {
                            if (entry_type != RDMA_NLDEV_ATTR_RES_QP_ENTRY) {
                                return;
                            }
                            KernelQp qp;
                            long owner = -1;
                            for_each_attribute(
                                entry, entry_size,
                                [&](unsigned field, const char* value, std::size_t value_size) {
                                    switch (field) {
                                        case RDMA_NLDEV_ATTR_RES_LQPN:
                                            qp.qp_num = u32_of(value, value_size);
                                            break;
                                        case RDMA_NLDEV_ATTR_RES_RQPN:
                                            qp.remote_qp_num = u32_of(value, value_size);
                                            break;
                                        case RDMA_NLDEV_ATTR_RES_RQ_PSN:
                                            qp.rq_psn = u32_of(value, value_size);
                                            break;
                                        case RDMA_NLDEV_ATTR_RES_SQ_PSN:
                                            qp.sq_psn = u32_of(value, value_size);
                                            break;
                                        case RDMA_NLDEV_ATTR_RES_TYPE:
                                            qp.type =
                                                type_name(static_cast<unsigned char>(value[0]));
                                            break;
                                        case RDMA_NLDEV_ATTR_RES_STATE:
                                            qp.state =
                                                state_name(static_cast<unsigned char>(value[0]));
                                            break;
                                        case RDMA_NLDEV_ATTR_RES_PID:
                                            owner = u32_of(value, value_size);
                                            break;
                                        default:
                                            break;
                                    }
                                });
                            if (owner == pid) {
                                qps.push_back(qp);
                            }
                        });
                });
        });
    }
    return qps;
}

ibv_wc next_completion(ibv_cq* cq, std::chrono::milliseconds timeout) {
    return lab::poll_completion(cq, timeout);
}

}  // namespace lab::grade

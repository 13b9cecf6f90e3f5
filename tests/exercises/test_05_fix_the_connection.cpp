// The checks of exercise 05 (fix the connection).
//
// Built twice, against exercises/05_fix_the_connection (as shipped, with its
// five mistakes, every check fails) and solutions/05_fix_the_connection
// (every check passes). Each check looks at one function, with everything
// else done right by the check itself, so one fix earns one check.
#include <infiniband/verbs.h>

#include <optional>
#include <sstream>
#include <string>

#include "connection.hpp"
#include "lab/check.hpp"
#include "lab/device.hpp"
#include "lab/verbs.hpp"
#include "support/catch.hpp"

namespace {

constexpr std::uint8_t kPort = 1;

struct QpState {
    ibv_qp_state state;
    std::uint32_t sq_psn;
    std::uint32_t rq_psn;
    ibv_mtu path_mtu;
};

QpState query_state(ibv_qp* qp) {
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    lab::check(ibv_query_qp(qp, &attr,
                            IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_RQ_PSN | IBV_QP_PATH_MTU, &init),
               "ibv_query_qp");
    return {attr.qp_state, attr.sq_psn, attr.rq_psn, attr.path_mtu};
}

// The connection done right, independent of the exercise's connect().
void connect_correctly(fix::Resources& r) {
    const lab::GidChoice gid = lab::choose_gid(r.context.get(), kPort, std::nullopt);
    const ibv_port_attr port = lab::query_port(r.context.get(), kPort);
    constexpr int kAccess =
        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    lab::move_to_init(r.qp_a.get(), kPort, kAccess);
    lab::move_to_init(r.qp_b.get(), kPort, kAccess);
    const lab::PeerAddress a{r.qp_a->qp_num, lab::random_psn(), port.lid, gid.gid};
    const lab::PeerAddress b{r.qp_b->qp_num, lab::random_psn(), port.lid, gid.gid};
    const lab::LocalPort local{kPort, gid.index, port.active_mtu};
    lab::move_to_rtr(r.qp_a.get(), local, b);
    lab::move_to_rtr(r.qp_b.get(), local, a);
    lab::move_to_rts(r.qp_a.get(), a.psn, 16, 0, 2, 12);
    lab::move_to_rts(r.qp_b.get(), b.psn, 16, 0, 2, 12);
}

}  // namespace

TEST_CASE("choose_gid_index: the RoCE v2 IPv4 GID, chosen by type, not a fixed number", "[ex05]") {
    const lab::Context context = lab::open_device("");
    const int chosen = fix::choose_gid_index(context.get(), kPort);
    const lab::GidChoice expected = lab::choose_gid(context.get(), kPort, std::nullopt);
    INFO("chosen index " << chosen << ", the table's RoCE v2 IPv4 entry is " << expected.index
                         << " (" << lab::gid_to_string(expected.gid) << ")");
    CHECK(chosen == expected.index);
}

TEST_CASE("choose_path_mtu: not above what the port carries (active_mtu)", "[ex05]") {
    const lab::Context context = lab::open_device("");
    const ibv_mtu chosen = fix::choose_path_mtu(context.get(), kPort);
    const ibv_port_attr port = lab::query_port(context.get(), kPort);
    INFO("chosen " << lab::mtu_name(chosen) << ", active_mtu " << lab::mtu_name(port.active_mtu));
    CHECK(chosen == port.active_mtu);
}

TEST_CASE("memory_access_flags: the peer may RDMA-write into the buffer", "[ex05]") {
    const int flags = fix::memory_access_flags();
    CHECK((flags & IBV_ACCESS_LOCAL_WRITE) != 0);
    CHECK((flags & IBV_ACCESS_REMOTE_WRITE) != 0);
    // And it works: a write from A lands in B's buffer.
    fix::Resources resources = fix::create_resources("", kPort);
    connect_correctly(resources);
    std::string written;
    const std::string error = [&] {
        try {
            written = fix::write_greeting(resources, "written by A");
        } catch (const lab::Error& e) {
            return std::string(e.what());
        }
        return std::string();
    }();
    INFO(error);
    CHECK(written == "written by A");
}

TEST_CASE("connect: both QPs in RTS, each sending at the PSN the other expects", "[ex05]") {
    fix::Resources resources = fix::create_resources("", kPort);
    const lab::GidChoice gid = lab::choose_gid(resources.context.get(), kPort, std::nullopt);
    const ibv_port_attr port = lab::query_port(resources.context.get(), kPort);
    fix::connect(resources, gid.index, port.active_mtu);
    const QpState a = query_state(resources.qp_a.get());
    const QpState b = query_state(resources.qp_b.get());
    CHECK(a.state == IBV_QPS_RTS);
    CHECK(b.state == IBV_QPS_RTS);
    INFO("A sends from PSN " << a.sq_psn << ", B expects " << b.rq_psn << "; B sends from "
                             << b.sq_psn << ", A expects " << a.rq_psn);
    CHECK(a.sq_psn == b.rq_psn);
    CHECK(b.sq_psn == a.rq_psn);
    CHECK(a.path_mtu == port.active_mtu);
}

TEST_CASE("send_message: the receive is posted in time and the message arrives", "[ex05]") {
    fix::Resources resources = fix::create_resources("", kPort);
    connect_correctly(resources);
    std::string received;
    std::string error;
    try {
        received = fix::send_message(resources, "sent by A");
    } catch (const lab::Error& e) {
        error = e.what();
    }
    INFO(error);
    CHECK(received == "sent by A");
}

TEST_CASE("the whole program connects, writes and sends", "[ex05]") {
    std::ostringstream out;
    std::string error;
    try {
        fix::run("", kPort, out);
    } catch (const lab::Error& e) {
        error = e.what();
    }
    INFO(out.str() << "error: " << error);
    CHECK(error.empty());
    CHECK(out.str().find("B received \"hello through SEND\"") != std::string::npos);
}

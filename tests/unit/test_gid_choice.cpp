// SPDX-License-Identifier: MIT
// Unit tests of lab::pick_gid: the rule that chooses a GID by its type and
// address, never by a fixed index. No device needed.
#include <arpa/inet.h>

#include <vector>

#include "lab/device.hpp"
#include "support/catch.hpp"

namespace {

ibv_gid_entry entry(std::uint32_t index, const char* address, ibv_gid_type type) {
    ibv_gid_entry result{};
    REQUIRE(inet_pton(AF_INET6, address, result.gid.raw) == 1);
    result.gid_index = index;
    result.port_num = 1;
    result.gid_type = type;
    return result;
}

}  // namespace

TEST_CASE("the RoCE v2 IPv4-mapped entry wins, wherever it is", "[gid]") {
    // rxe on an IPv4 netdev: link-local first, the IPv4 entry second.
    const std::vector<ibv_gid_entry> rxe = {
        entry(0, "fe80::60dd:24ff:fe8b:28c0", IBV_GID_TYPE_ROCE_V2),
        entry(1, "::ffff:10.77.0.1", IBV_GID_TYPE_ROCE_V2),
    };
    CHECK(lab::pick_gid(rxe) == 1u);

    // A hardware RoCE NIC lists each address twice, v1 then v2.
    const std::vector<ibv_gid_entry> nic = {
        entry(0, "fe80::1", IBV_GID_TYPE_ROCE_V1),
        entry(1, "fe80::1", IBV_GID_TYPE_ROCE_V2),
        entry(2, "::ffff:192.0.2.7", IBV_GID_TYPE_ROCE_V1),
        entry(3, "::ffff:192.0.2.7", IBV_GID_TYPE_ROCE_V2),
    };
    CHECK(lab::pick_gid(nic) == 3u);
}

TEST_CASE("without IPv4, a global RoCE v2 entry beats a link-local one", "[gid]") {
    const std::vector<ibv_gid_entry> table = {
        entry(0, "fe80::1", IBV_GID_TYPE_ROCE_V2),
        entry(1, "2001:db8::5", IBV_GID_TYPE_ROCE_V1),
        entry(2, "2001:db8::5", IBV_GID_TYPE_ROCE_V2),
    };
    CHECK(lab::pick_gid(table) == 2u);
}

TEST_CASE("only link-local RoCE v2: that entry, not a RoCE v1 one", "[gid]") {
    const std::vector<ibv_gid_entry> table = {
        entry(0, "fe80::1", IBV_GID_TYPE_ROCE_V1),
        entry(1, "fe80::1", IBV_GID_TYPE_ROCE_V2),
    };
    CHECK(lab::pick_gid(table) == 1u);
}

TEST_CASE("InfiniBand ports use their first entry, an empty table has none", "[gid]") {
    const std::vector<ibv_gid_entry> infiniband = {
        entry(0, "fe80::2:c903:a:1b2c", IBV_GID_TYPE_IB),
        entry(1, "fe80::2:c903:a:1b2d", IBV_GID_TYPE_IB),
    };
    CHECK(lab::pick_gid(infiniband) == 0u);
    CHECK_FALSE(lab::pick_gid({}).has_value());
}

TEST_CASE("IPv4-mapped addresses are recognised", "[gid]") {
    CHECK(lab::is_ipv4_mapped(entry(0, "::ffff:10.0.0.1", IBV_GID_TYPE_ROCE_V2).gid));
    CHECK_FALSE(lab::is_ipv4_mapped(entry(0, "fe80::ffff:a00:1", IBV_GID_TYPE_ROCE_V2).gid));
    CHECK(lab::gid_to_string(entry(0, "::ffff:10.77.0.1", IBV_GID_TYPE_ROCE_V2).gid) ==
          "::ffff:10.77.0.1");
}

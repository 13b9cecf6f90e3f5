// SPDX-License-Identifier: MIT
/**
 * @file device.hpp
 * @brief Steps 1 to 3: device, port and GID selection (taught in lesson 01).
 */
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "lab/resources.hpp"
#include "lab/verbs.hpp"

namespace lab {

struct Options;

/**
 * @brief Open a device by name, or the first one when @p name is empty.
 *
 * Throws a lab::Error that lists the devices present when @p name is unknown,
 * and one that points at `./lab doctor` when there is no device at all.
 */
Context open_device(std::string_view name);

/**
 * @brief ibv_query_port with the port number checked against the device first.
 * @throws lab::Error when @p port is not between 1 and phys_port_cnt.
 */
ibv_port_attr query_port(ibv_context* context, std::uint8_t port);

/// The GID a lesson will use: its index in the port's table and the entry itself.
struct GidChoice {
    int index;          ///< index in the port's GID table (what ibv_modify_qp wants)
    ibv_gid gid;        ///< the 16-byte GID
    ibv_gid_type type;  ///< IBV_GID_TYPE_IB, _ROCE_V1 or _ROCE_V2
};

/**
 * @brief Choose the best GID of a table without touching a device (pure, unit-tested).
 *
 * Preference: RoCE v2 with an IPv4-mapped address (routable, what rxe on an
 * IPv4 netdev offers), then any other RoCE v2 entry that is not link-local,
 * then any RoCE v2 entry, then the first entry (InfiniBand ports use index 0).
 * @return the position in @p table of the chosen entry, or nothing for an empty table.
 */
std::optional<std::size_t> pick_gid(std::span<const ibv_gid_entry> table);

/**
 * @brief The GID for a port: @p requested_index when it is set, else pick_gid() on the table.
 *
 * The table is read with ibv_query_gid_table, which reports each entry's type;
 * an index that is out of range or has no GID is refused with a lab::Error.
 */
GidChoice choose_gid(ibv_context* context, std::uint8_t port, std::optional<int> requested_index);

/// A GID as an IPv6 address (RoCE v2 IPv4 entries read \::ffff:a.b.c.d).
std::string gid_to_string(const ibv_gid& gid);

/// "IB", "RoCE v1" or "RoCE v2".
std::string_view gid_type_name(ibv_gid_type type);

/// True when @p gid is an IPv4-mapped IPv6 address (\::ffff:a.b.c.d).
bool is_ipv4_mapped(const ibv_gid& gid);

/// "256", "512", "1024", "2048" or "4096" for an ibv_mtu value.
std::string_view mtu_name(ibv_mtu mtu);

/// The device's atomic_cap as ibv_devinfo prints it, e.g. "ATOMIC_HCA (1)".
std::string_view atomic_cap_name(ibv_atomic_cap cap);

/// Steps 1 to 3 done (lesson 01): an open device, the port to use and its GID.
struct Port {
    Context context;          ///< the device, opened with ibv_open_device
    std::uint8_t number = 1;  ///< the port number (-i)
    ibv_port_attr attr{};     ///< ibv_query_port: state, lid, active_mtu, gid_tbl_len ...
    GidChoice gid{};          ///< the GID a QP on this port talks from (-g, or choose_gid())

    /// What move_to_rtr() needs of this side: port, GID index, and active_mtu as the path MTU.
    [[nodiscard]] LocalPort local() const noexcept { return {number, gid.index, attr.active_mtu}; }
    /// The same at the path MTU agreed with a peer whose port carries @p peer_mtu (lesson 05).
    [[nodiscard]] LocalPort local(ibv_mtu peer_mtu) const noexcept {
        return {number, gid.index, agreed_mtu(attr.active_mtu, peer_mtu)};
    }
};

/**
 * @brief Steps 1 to 3 in one call (lesson 01): open_device(), query_port()
 *        and choose_gid() with the -d, -i and -g of @p options.
 * @throws lab::Error as those do: an unknown device, a port or GID index out of range.
 */
Port open_port(const Options& options);

/**
 * @brief Refuse a message larger than the port carries (lesson 01 prints the
 *        port's max_msg_sz; lesson 04 checks its -s with it).
 * @throws lab::Error "message size N is above the port's max_msg_sz M (hint: a smaller -s)".
 */
void check_message_size(const Port& port, std::size_t size);

}  // namespace lab

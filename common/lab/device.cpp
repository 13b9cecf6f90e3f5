// SPDX-License-Identifier: MIT
#include "lab/device.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "lab/check.hpp"
#include "lab/options.hpp"

namespace lab {

Context open_device(std::string_view name) {
    const DeviceList list;
    const auto devices = list.devices();
    if (devices.empty()) {
        fail("finding an RDMA device", ENODEV,
             "no device is present: run './lab doctor', or './lab vm' for a Soft-RoCE micro-VM");
    }
    ibv_device* chosen = devices.front();
    if (!name.empty()) {
        const auto found = std::ranges::find_if(
            devices, [name](ibv_device* device) { return ibv_get_device_name(device) == name; });
        if (found == devices.end()) {
            std::string present;
            for (ibv_device* device : devices) {
                present += present.empty() ? "" : ", ";
                present += ibv_get_device_name(device);
            }
            throw Error("unknown RDMA device '" + std::string(name) +
                        "' (hint: the devices here are: " + present + ")");
        }
        chosen = *found;
    }
    return Context(check_ptr(ibv_open_device(chosen), "ibv_open_device",
                             "is /dev/infiniband readable, and the provider library installed?"));
}

ibv_port_attr query_port(ibv_context* context, std::uint8_t port) {
    ibv_device_attr device_attr{};
    check(ibv_query_device(context, &device_attr), "ibv_query_device");
    if (port < 1 || port > device_attr.phys_port_cnt) {
        throw Error("port " + std::to_string(port) +
                    " is out of range (hint: " + ibv_get_device_name(context->device) +
                    " has ports 1.." + std::to_string(device_attr.phys_port_cnt) + ")");
    }
    ibv_port_attr port_attr{};
    check(ibv_query_port(context, port, &port_attr), "ibv_query_port");
    return port_attr;
}

bool is_ipv4_mapped(const ibv_gid& gid) {
    static constexpr std::uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return std::equal(std::begin(kPrefix), std::end(kPrefix), gid.raw);
}

namespace {
bool is_link_local(const ibv_gid& gid) {
    return gid.raw[0] == 0xfe && (gid.raw[1] & 0xc0) == 0x80;
}
}  // namespace

std::optional<std::size_t> pick_gid(std::span<const ibv_gid_entry> table) {
    const auto first_where = [&](auto&& predicate) -> std::optional<std::size_t> {
        for (std::size_t i = 0; i < table.size(); ++i) {
            if (predicate(table[i])) {
                return i;
            }
        }
        return std::nullopt;
    };
    const auto is_v2 = [](const ibv_gid_entry& entry) {
        return entry.gid_type == IBV_GID_TYPE_ROCE_V2;
    };
    if (auto i = first_where([&](const auto& e) { return is_v2(e) && is_ipv4_mapped(e.gid); })) {
        return i;
    }
    if (auto i = first_where([&](const auto& e) { return is_v2(e) && !is_link_local(e.gid); })) {
        return i;
    }
    if (auto i = first_where(is_v2)) {
        return i;
    }
    return table.empty() ? std::nullopt : std::optional<std::size_t>{0};
}

GidChoice choose_gid(ibv_context* context, std::uint8_t port, std::optional<int> requested_index) {
    const ibv_port_attr port_attr = query_port(context, port);
    if (requested_index) {
        const int index = *requested_index;
        if (index < 0 || index >= port_attr.gid_tbl_len) {
            throw Error("GID index " + std::to_string(index) + " is out of range (hint: port " +
                        std::to_string(port) + " has GID indexes 0.." +
                        std::to_string(port_attr.gid_tbl_len - 1) +
                        "; leave -g out to choose automatically)");
        }
        ibv_gid_entry entry{};
        if (ibv_query_gid_ex(context, port, static_cast<std::uint32_t>(index), &entry, 0) != 0) {
            throw Error("GID index " + std::to_string(index) +
                        " has no GID (hint: list the valid ones with './lab run 01_devices')");
        }
        return {index, entry.gid, static_cast<ibv_gid_type>(entry.gid_type)};
    }
    // ibv_query_gid_table returns the valid entries of every port of the
    // device, so the buffer must hold all ports' tables, not just this one's.
    ibv_device_attr device_attr{};
    check(ibv_query_device(context, &device_attr), "ibv_query_device");
    std::size_t entries = 0;
    for (unsigned each = 1; each <= device_attr.phys_port_cnt; ++each) {
        entries += static_cast<std::size_t>(
            query_port(context, static_cast<std::uint8_t>(each)).gid_tbl_len);
    }
    std::vector<ibv_gid_entry> table(entries);
    const ssize_t valid = ibv_query_gid_table(context, table.data(), table.size(), 0);
    if (valid < 0) {
        fail("ibv_query_gid_table", static_cast<int>(-valid));
    }
    table.resize(static_cast<std::size_t>(valid));
    std::erase_if(table, [port](const ibv_gid_entry& entry) { return entry.port_num != port; });
    const auto picked = pick_gid(table);
    if (!picked) {
        throw Error(
            "port " + std::to_string(port) +
            " has no GID (hint: is the netdev under the rxe device up, with an IP address?)");
    }
    const ibv_gid_entry& entry = table[*picked];
    return {static_cast<int>(entry.gid_index), entry.gid,
            static_cast<ibv_gid_type>(entry.gid_type)};
}

std::string gid_to_string(const ibv_gid& gid) {
    char text[INET6_ADDRSTRLEN] = {};
    inet_ntop(AF_INET6, gid.raw, text, sizeof text);
    return text;
}

std::string_view gid_type_name(ibv_gid_type type) {
    switch (type) {
        case IBV_GID_TYPE_IB:
            return "IB";
        case IBV_GID_TYPE_ROCE_V1:
            return "RoCE v1";
        case IBV_GID_TYPE_ROCE_V2:
            return "RoCE v2";
    }
    return "unknown";
}

std::string_view mtu_name(ibv_mtu mtu) {
    switch (mtu) {
        case IBV_MTU_256:
            return "256";
        case IBV_MTU_512:
            return "512";
        case IBV_MTU_1024:
            return "1024";
        case IBV_MTU_2048:
            return "2048";
        case IBV_MTU_4096:
            return "4096";
    }
    return "unknown";
}

std::string_view atomic_cap_name(ibv_atomic_cap cap) {
    switch (cap) {
        case IBV_ATOMIC_NONE:
            return "ATOMIC_NONE (0)";
        case IBV_ATOMIC_HCA:
            return "ATOMIC_HCA (1)";
        case IBV_ATOMIC_GLOB:
            return "ATOMIC_GLOB (2)";
    }
    return "unknown";
}

Port open_port(const Options& options) {
    Port port;
    port.context = open_device(options.device);
    port.number = options.ib_port;
    port.attr = query_port(port.context.get(), options.ib_port);
    port.gid = choose_gid(port.context.get(), options.ib_port, options.gid_index);
    return port;
}

void check_message_size(const Port& port, std::size_t size) {
    if (size > port.attr.max_msg_sz) {
        throw Error("message size " + std::to_string(size) + " is above the port's max_msg_sz " +
                    std::to_string(port.attr.max_msg_sz) + " (hint: a smaller -s)");
    }
}

}  // namespace lab

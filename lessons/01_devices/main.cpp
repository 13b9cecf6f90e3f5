// SPDX-License-Identifier: MIT
// Lesson 01: devices — steps 1 to 3 of the verbs flow.
//
// Finds the RDMA devices of this machine, opens one, and asks it what it can
// do: the device limits every later lesson depends on (how many QPs, work
// requests, scatter/gather entries, CQ entries, atomics), the port's state and
// MTU, and the GID table, from which RoCE picks the address a QP talks from.
//
// Run:   ./lab run 01_devices            (the first device, port 1)
//        ./lab run 01_devices -d rxe0 -i 1 -g 1
//
// The ten steps: 1 device list, 2 open, 3 query, 4 PD, 5 MR, 6 CQ, 7 QP,
// 8 INIT/RTR/RTS, 9 post and poll, 10 clean up. This lesson does 1-3 and 10.

#include <infiniband/verbs.h>

#include <concepts>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lab/check.hpp"
#include "lab/device.hpp"
#include "lab/options.hpp"
#include "lab/resources.hpp"

namespace {

std::string_view port_state_name(ibv_port_state state) {
    switch (state) {
        case IBV_PORT_NOP:
            return "PORT_NOP";
        case IBV_PORT_DOWN:
            return "PORT_DOWN";
        case IBV_PORT_INIT:
            return "PORT_INIT";
        case IBV_PORT_ARMED:
            return "PORT_ARMED";
        case IBV_PORT_ACTIVE:
            return "PORT_ACTIVE";
        case IBV_PORT_ACTIVE_DEFER:
            return "PORT_ACTIVE_DEFER";
    }
    return "unknown";
}

std::string_view link_layer_name(std::uint8_t link_layer) {
    switch (link_layer) {
        case IBV_LINK_LAYER_INFINIBAND:
            return "InfiniBand";
        case IBV_LINK_LAYER_ETHERNET:
            return "Ethernet";
        default:
            return "Unknown";
    }
}

// The node GUID is kept in network byte order; print it as ibv_devinfo does.
std::string guid_text(__be64 guid) {
    const auto value = be64toh(guid);
    char text[24];
    std::snprintf(text, sizeof text, "%04x:%04x:%04x:%04x", unsigned(value >> 48) & 0xffff,
                  unsigned(value >> 32) & 0xffff, unsigned(value >> 16) & 0xffff,
                  unsigned(value) & 0xffff);
    return text;
}

// Field names and value formats follow `ibv_devinfo -v`, so the two can be
// compared line by line (the lesson's test does exactly that).
void print_field(std::string_view name, std::integral auto value) {
    std::printf("\t%-22s %s\n", (std::string(name) + ":").c_str(), std::to_string(value).c_str());
}
void print_field(std::string_view name, std::string_view value) {
    std::printf("\t%-22s %.*s\n", (std::string(name) + ":").c_str(), int(value.size()),
                value.data());
}

}  // namespace

int main(int argc, char** argv) {
    lab::CommandLine command_line("Lesson 01: list RDMA devices and query one", lab::kDevice);
    const lab::Options options = command_line.parse(argc, argv);

    return lab::run_main([&] {
        // Step 1: get the device list. libibverbs finds every RDMA device the
        // kernel exposes (here the Soft-RoCE device rxe0) through sysfs.
        // It fails with ENOSYS when the kernel has no RDMA support at all.
        int device_count = 0;
        ibv_device** raw_list = lab::check_ptr(
            ibv_get_device_list(&device_count), "ibv_get_device_list",
            "this kernel offers no RDMA device: run './lab doctor', or './lab run 01_devices'");
        // The list must be freed with ibv_free_device_list, even if a later step fails.
        const std::unique_ptr<ibv_device*, decltype(&ibv_free_device_list)> device_list(
            raw_list, &ibv_free_device_list);
        const std::span<ibv_device*> devices(raw_list, static_cast<std::size_t>(device_count));

        std::printf("Step 1: %d RDMA device(s) found\n", device_count);
        for (ibv_device* device : devices) {
            std::printf("\t%-16s node GUID %s\n", ibv_get_device_name(device),
                        guid_text(ibv_get_device_guid(device)).c_str());
        }
        if (devices.empty()) {
            throw lab::Error(
                "no RDMA device found (hint: run './lab doctor'; './lab run 01_devices' has one)");
        }

        // Step 2: open the device. The context is the handle every other verb
        // takes; opening it maps the provider (librxe) into this process.
        ibv_device* chosen = devices.front();
        if (!options.device.empty()) {
            chosen = nullptr;
            for (ibv_device* device : devices) {
                if (ibv_get_device_name(device) == options.device) {
                    chosen = device;
                }
            }
            if (chosen == nullptr) {
                throw lab::Error("unknown RDMA device '" + options.device +
                                 "' (hint: pick one of the devices listed above with -d)");
            }
        }
        lab::Context context(lab::check_ptr(ibv_open_device(chosen), "ibv_open_device",
                                            "is /dev/infiniband/uverbs0 readable by you?"));
        std::printf("Step 2: opened %s\n", ibv_get_device_name(chosen));

        // Step 3a: query the device: its limits bound every later request.
        ibv_device_attr device_attr{};
        lab::check(ibv_query_device(context.get(), &device_attr), "ibv_query_device");
        std::printf("Step 3: device capabilities (ibv_query_device)\n");
        char mr_size[24];
        std::snprintf(mr_size, sizeof mr_size, "0x%llx",
                      static_cast<unsigned long long>(device_attr.max_mr_size));
        print_field("max_mr_size", std::string_view(mr_size));
        print_field("phys_port_cnt", int(device_attr.phys_port_cnt));
        print_field("max_qp", device_attr.max_qp);
        print_field("max_qp_wr", device_attr.max_qp_wr);
        print_field("max_sge", device_attr.max_sge);
        print_field("max_cq", device_attr.max_cq);
        print_field("max_cqe", device_attr.max_cqe);
        print_field("max_mr", device_attr.max_mr);
        print_field("max_pd", device_attr.max_pd);
        print_field("max_qp_rd_atom", device_attr.max_qp_rd_atom);
        print_field("max_qp_init_rd_atom", device_attr.max_qp_init_rd_atom);
        print_field("max_srq", device_attr.max_srq);
        print_field("max_srq_wr", device_attr.max_srq_wr);
        print_field("max_srq_sge", device_attr.max_srq_sge);
        print_field("max_ah", device_attr.max_ah);
        print_field("max_mw", device_attr.max_mw);
        print_field("atomic_cap", lab::atomic_cap_name(device_attr.atomic_cap));

        // ibv_query_device_ex adds what newer kernels report: more capability bits
        // (docs/devices.md#flush-atomic-write) and on-demand paging (ODP: memory used
        // without pinning; docs/devices.md#odp).
        ibv_device_attr_ex device_attr_ex{};
        lab::check(ibv_query_device_ex(context.get(), nullptr, &device_attr_ex),
                   "ibv_query_device_ex");
        char flags_ex[24];
        std::snprintf(flags_ex, sizeof flags_ex, "0x%llX",
                      static_cast<unsigned long long>(device_attr_ex.device_cap_flags_ex));
        print_field("device_cap_flags_ex", std::string_view(flags_ex));
        const bool odp = (device_attr_ex.odp_caps.general_caps & IBV_ODP_SUPPORT) != 0;
        print_field("odp", odp ? "supported (general_caps has IBV_ODP_SUPPORT)" : "not reported");
        // XRC (extended reliable connected: one sending QP reaches the shared receive queues
        // of many processes on a remote node) is a bit of device_cap_flags; without it
        // ibv_open_xrcd fails (EOPNOTSUPP; docs/devices.md#xrc).
        const bool xrc = (device_attr.device_cap_flags & IBV_DEVICE_XRC) != 0;
        print_field("xrc",
                    xrc ? "supported (device_cap_flags has IBV_DEVICE_XRC)" : "not reported");

        // Step 3b: query the port. Only an ACTIVE port moves data; the active
        // MTU is the largest path MTU a QP on it may use (lesson 04).
        const std::uint8_t port = options.ib_port;
        if (port > device_attr.phys_port_cnt) {
            throw lab::Error("port " + std::to_string(port) +
                             " is out of range (hint: " + ibv_get_device_name(chosen) +
                             " has ports 1.." + std::to_string(device_attr.phys_port_cnt) + ")");
        }
        ibv_port_attr port_attr{};
        lab::check(ibv_query_port(context.get(), port, &port_attr), "ibv_query_port");
        std::printf("\tport %u (ibv_query_port)\n", unsigned(port));
        print_field("state", std::string(port_state_name(port_attr.state)) + " (" +
                                 std::to_string(port_attr.state) + ")");
        print_field("max_mtu", std::string(lab::mtu_name(port_attr.max_mtu)) + " (" +
                                   std::to_string(port_attr.max_mtu) + ")");
        print_field("active_mtu", std::string(lab::mtu_name(port_attr.active_mtu)) + " (" +
                                      std::to_string(port_attr.active_mtu) + ")");
        // The largest message one work request may carry: read it, never assume it
        // (docs/devices.md#max-msg-sz).
        char msg_sz[24];
        std::snprintf(msg_sz, sizeof msg_sz, "0x%x", port_attr.max_msg_sz);
        print_field("max_msg_sz", std::string_view(msg_sz));
        print_field("link_layer", link_layer_name(port_attr.link_layer));
        print_field("port_lid", port_attr.lid);
        print_field("gid_tbl_len", port_attr.gid_tbl_len);

        // Step 3c: the GID table. On RoCE a GID is an IP address; each entry
        // also has a type. ibv_query_gid_table returns the valid entries of
        // ALL ports of the device, so the buffer holds every port's table.
        std::size_t all_ports_entries = 0;
        for (unsigned each = 1; each <= device_attr.phys_port_cnt; ++each) {
            all_ports_entries += lab::query_port(context.get(), std::uint8_t(each)).gid_tbl_len;
        }
        std::vector<ibv_gid_entry> gid_table(all_ports_entries);
        const ssize_t valid =
            ibv_query_gid_table(context.get(), gid_table.data(), gid_table.size(), 0);
        if (valid < 0) {
            lab::fail("ibv_query_gid_table", static_cast<int>(-valid));
        }
        std::printf("\tGID table of port %u (ibv_query_gid_table)\n", unsigned(port));
        for (const ibv_gid_entry& entry : std::span(gid_table).first(std::size_t(valid))) {
            if (entry.port_num == port) {
                std::printf("\tGID[%3u]:\t\t%s, %s\n", entry.gid_index,
                            lab::gid_to_string(entry.gid).c_str(),
                            std::string(lab::gid_type_name(ibv_gid_type(entry.gid_type))).c_str());
            }
        }

        // Which GID later lessons use: the RoCE v2 entry with an IPv4 address,
        // chosen by type (never by a fixed index), unless -g says otherwise.
        const lab::GidChoice gid = lab::choose_gid(context.get(), port, options.gid_index);
        // ibv_query_gid is the older call: one entry, without its type
        // (ibv_query_gid_ex reads one entry with it; choose_gid uses it for -g).
        ibv_gid queried{};
        lab::check(ibv_query_gid(context.get(), port, gid.index, &queried), "ibv_query_gid");
        std::printf("\tchosen GID index: %d (%s, %s)%s\n", gid.index,
                    std::string(lab::gid_type_name(gid.type)).c_str(),
                    lab::gid_to_string(queried).c_str(),
                    options.gid_index ? " [from -g]" : " [automatic]");

        // Steps 4-9 come in lessons 02-06.

        // Step 10: clean up, in reverse order of creation: the context first,
        // then the device list (a context does not need the list to stay open).
        lab::check(ibv_close_device(context.release()), "ibv_close_device");
        std::printf("Step 10: closed the device; the device list is freed on return\n");
        return 0;
    });
}

// SPDX-License-Identifier: MIT
// roce-decode: list the RoCE v2 packets in a pcap file, one line each, and
// count them per opcode.
//
//   roce-decode [--limit N] FILE.pcap
//
// RoCE v2 carries InfiniBand transport packets in UDP datagrams to port 4791.
// Each begins with the 12-byte Base Transport Header (BTH):
//
//   byte 0      opcode (bits 7-5: transport RC/UC/RD/UD, bits 4-0: operation)
//   byte 1      solicited event, migration, pad count (bits 5-4), version
//   bytes 2-3   partition key
//   byte 4      reserved (FECN, BECN)
//   bytes 5-7   destination QP number (24 bits)
//   byte 8      bit 7: acknowledge request
//   bytes 9-11  packet sequence number, PSN (24 bits)
//
// Extended headers follow, depending on the opcode (RETH for RDMA, AETH on
// acknowledgements and read responses, AtomicETH, DETH for UD...), then the
// payload, then padding and the 4-byte invariant CRC. The payload length
// printed is what is left. Only Ethernet captures (what qemu's filter-dump
// writes) are read, IPv4 and IPv6.
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::uint16_t kRoceV2Port = 4791;
constexpr std::size_t kBthSize = 12;
constexpr std::size_t kIcrcSize = 4;

struct Operation {
    std::string_view name;
    std::size_t header_bytes;  // extended transport headers after the BTH
};

// Operation codes (bits 4-0) of the reliable and unreliable transports, with
// the size of the extended headers each carries (IBTA spec, table of opcodes).
std::optional<Operation> operation(std::uint8_t code) {
    constexpr std::size_t reth = 16, aeth = 4, imm = 4, ieth = 4, atomic_eth = 28,
                          atomic_ack_eth = 8;
    switch (code) {
        case 0x00:
            return Operation{"SEND FIRST", 0};
        case 0x01:
            return Operation{"SEND MIDDLE", 0};
        case 0x02:
            return Operation{"SEND LAST", 0};
        case 0x03:
            return Operation{"SEND LAST WITH IMMEDIATE", imm};
        case 0x04:
            return Operation{"SEND ONLY", 0};
        case 0x05:
            return Operation{"SEND ONLY WITH IMMEDIATE", imm};
        case 0x06:
            return Operation{"RDMA WRITE FIRST", reth};
        case 0x07:
            return Operation{"RDMA WRITE MIDDLE", 0};
        case 0x08:
            return Operation{"RDMA WRITE LAST", 0};
        case 0x09:
            return Operation{"RDMA WRITE LAST WITH IMMEDIATE", imm};
        case 0x0a:
            return Operation{"RDMA WRITE ONLY", reth};
        case 0x0b:
            return Operation{"RDMA WRITE ONLY WITH IMMEDIATE", reth + imm};
        case 0x0c:
            return Operation{"RDMA READ REQUEST", reth};
        case 0x0d:
            return Operation{"RDMA READ RESPONSE FIRST", aeth};
        case 0x0e:
            return Operation{"RDMA READ RESPONSE MIDDLE", 0};
        case 0x0f:
            return Operation{"RDMA READ RESPONSE LAST", aeth};
        case 0x10:
            return Operation{"RDMA READ RESPONSE ONLY", aeth};
        case 0x11:
            return Operation{"ACKNOWLEDGE", aeth};
        case 0x12:
            return Operation{"ATOMIC ACKNOWLEDGE", aeth + atomic_ack_eth};
        case 0x13:
            return Operation{"COMPARE SWAP", atomic_eth};
        case 0x14:
            return Operation{"FETCH ADD", atomic_eth};
        case 0x16:
            return Operation{"SEND LAST WITH INVALIDATE", ieth};
        case 0x17:
            return Operation{"SEND ONLY WITH INVALIDATE", ieth};
        default:
            return std::nullopt;
    }
}

struct Decoded {
    std::string opcode;  // "RC SEND ONLY"
    std::uint32_t dest_qp = 0;
    std::uint32_t psn = 0;
    bool ack_request = false;
    long payload = -1;   // bytes; -1 when the packet is too short for its headers
    std::string detail;  // the AETH syndrome of acknowledgements, the RETH length of requests
};

std::uint32_t be16(std::span<const std::uint8_t> b, std::size_t at) {
    return (std::uint32_t{b[at]} << 8) | b[at + 1];
}
std::uint32_t be24(std::span<const std::uint8_t> b, std::size_t at) {
    return (std::uint32_t{b[at]} << 16) | (std::uint32_t{b[at + 1]} << 8) | b[at + 2];
}
std::uint32_t be32(std::span<const std::uint8_t> b, std::size_t at) {
    return (be16(b, at) << 16) | be16(b, at + 2);
}

std::string aeth_syndrome(std::uint8_t syndrome) {
    switch (syndrome >> 5) {
        case 0:
            return "ACK";
        case 1:
            return "RNR NAK";
        case 3:
            switch (syndrome & 0x1f) {
                case 0:
                    return "NAK PSN sequence error";
                case 1:
                    return "NAK invalid request";
                case 2:
                    return "NAK remote access error";
                case 3:
                    return "NAK remote operational error";
                default:
                    return "NAK";
            }
        default:
            return "reserved syndrome";
    }
}

// @p udp_payload starts at the BTH.
Decoded decode_bth(std::span<const std::uint8_t> udp_payload) {
    Decoded d;
    const std::uint8_t code = udp_payload[0];
    static constexpr std::array<std::string_view, 8> transports{"RC",  "UC",  "RD", "UD",
                                                                "CNP", "XRC", "?",  "?"};
    const std::string_view transport = transports[code >> 5];
    std::optional<Operation> op = operation(code & 0x1f);
    std::size_t extra = op ? op->header_bytes : 0;
    if (transport == "UD" && op) {
        extra += 8;  // DETH
    }
    if (code == 0x81) {
        d.opcode = "CNP";
        op = Operation{"CNP", 16};
        extra = 16;
    } else if (op) {
        d.opcode = std::string(transport) + " " + std::string(op->name);
    } else {
        char text[32];
        std::snprintf(text, sizeof text, "opcode 0x%02x", code);
        d.opcode = text;
    }
    d.dest_qp = be24(udp_payload, 5);
    d.ack_request = (udp_payload[8] & 0x80) != 0;
    d.psn = be24(udp_payload, 9);
    const std::size_t pad = (udp_payload[1] >> 4) & 0x3;
    const std::size_t overhead = kBthSize + extra + pad + kIcrcSize;
    if (op && udp_payload.size() >= overhead) {
        d.payload = static_cast<long>(udp_payload.size() - overhead);
    }
    const std::size_t ext = kBthSize;
    const std::uint8_t operation_code = code & 0x1f;
    if (op && udp_payload.size() >= ext + extra) {
        const bool has_aeth = operation_code == 0x0d || operation_code == 0x0f ||
                              operation_code == 0x10 || operation_code == 0x11 ||
                              operation_code == 0x12;
        const bool has_reth = operation_code == 0x06 || operation_code == 0x0a ||
                              operation_code == 0x0b || operation_code == 0x0c;
        const bool has_atomic_eth = operation_code == 0x13 || operation_code == 0x14;
        if (has_atomic_eth) {
            const auto value =
                (std::uint64_t{be32(udp_payload, ext + 12)} << 32) | be32(udp_payload, ext + 16);
            char text[64];
            std::snprintf(text, sizeof text, "rkey %#010x %s %llu", be32(udp_payload, ext + 8),
                          operation_code == 0x14 ? "add" : "swap",
                          static_cast<unsigned long long>(value));
            d.detail = text;
        } else if (has_aeth) {
            d.detail = aeth_syndrome(udp_payload[ext]) + " msn " +
                       std::to_string(be24(udp_payload, ext + 1));
        } else if (has_reth) {
            char text[48];
            std::snprintf(text, sizeof text, "rkey %#010x length %u", be32(udp_payload, ext + 8),
                          be32(udp_payload, ext + 12));
            d.detail = text;
        }
    }
    return d;
}

std::string ipv4_text(std::span<const std::uint8_t> b, std::size_t at) {
    return std::to_string(b[at]) + "." + std::to_string(b[at + 1]) + "." +
           std::to_string(b[at + 2]) + "." + std::to_string(b[at + 3]);
}

std::string ipv6_text(std::span<const std::uint8_t> b, std::size_t at) {
    std::string text;
    for (std::size_t i = 0; i < 16; i += 2) {
        char group[8];
        std::snprintf(group, sizeof group, "%s%x", i ? ":" : "", be16(b, at + i));
        text += group;
    }
    return text;
}

struct Packet {
    std::string from, to;
    std::span<const std::uint8_t> udp_payload;
};

// The UDP payload of a frame sent to port 4791, if it is one.
std::optional<Packet> roce_packet(std::span<const std::uint8_t> frame) {
    if (frame.size() < 14) {
        return std::nullopt;
    }
    std::size_t at = 12;
    std::uint32_t ether_type = be16(frame, at);
    at += 2;
    if (ether_type == 0x8100 && frame.size() >= at + 4) {  // a VLAN tag
        ether_type = be16(frame, at + 2);
        at += 4;
    }
    Packet packet;
    std::size_t udp = 0;
    if (ether_type == 0x0800 && frame.size() >= at + 20) {
        const std::size_t header = (frame[at] & 0x0f) * 4u;
        if (frame[at + 9] != 17 || frame.size() < at + header + 8) {
            return std::nullopt;
        }
        packet.from = ipv4_text(frame, at + 12);
        packet.to = ipv4_text(frame, at + 16);
        udp = at + header;
    } else if (ether_type == 0x86dd && frame.size() >= at + 48) {
        if (frame[at + 6] != 17) {
            return std::nullopt;
        }
        packet.from = ipv6_text(frame, at + 8);
        packet.to = ipv6_text(frame, at + 24);
        udp = at + 40;
    } else {
        return std::nullopt;
    }
    if (be16(frame, udp + 2) != kRoceV2Port) {
        return std::nullopt;
    }
    const std::size_t udp_length = be16(frame, udp + 4);
    if (udp_length < 8 + kBthSize || frame.size() < udp + udp_length) {
        return std::nullopt;
    }
    packet.udp_payload = frame.subspan(udp + 8, udp_length - 8);
    return packet;
}

int usage() {
    std::cerr << "usage: roce-decode [--limit N] FILE.pcap\n";
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::size_t limit = 200;
    std::string path;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--limit" && i + 1 < argc) {
            char* end = nullptr;
            limit = std::strtoul(argv[++i], &end, 10);
            if (*end != '\0') {
                return usage();
            }
        } else if (arg.starts_with("-")) {
            return usage();
        } else {
            path = arg;
        }
    }
    if (path.empty()) {
        return usage();
    }
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        std::cerr << "error: cannot open " << path << ": " << std::strerror(errno) << "\n";
        return 1;
    }
    const std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(file), {}};
    const std::span<const std::uint8_t> data(bytes);
    if (data.size() < 24) {
        std::cerr << "error: " << path << " is not a pcap file (" << data.size()
                  << " bytes; did the capture record anything?)\n";
        return 1;
    }
    // The magic number says the byte order and the time unit of the records.
    const std::uint32_t magic_le =
        data[0] | (data[1] << 8) | (data[2] << 16) | (std::uint32_t{data[3]} << 24);
    bool swap = false;
    double tick = 1e-6;
    switch (magic_le) {
        case 0xa1b2c3d4:
            break;
        case 0xa1b23c4d:
            tick = 1e-9;
            break;
        case 0xd4c3b2a1:
            swap = true;
            break;
        case 0x4d3cb2a1:
            swap = true;
            tick = 1e-9;
            break;
        default:
            std::cerr << "error: " << path << " is not a pcap file (magic 0x" << std::hex
                      << magic_le << ")\n";
            return 1;
    }
    auto u32 = [&](std::size_t at) {
        return swap ? be32(data, at)
                    : data[at] | (data[at + 1] << 8) | (data[at + 2] << 16) |
                          (std::uint32_t{data[at + 3]} << 24);
    };
    if (u32(20) != 1) {
        std::cerr << "error: " << path << " does not hold Ethernet frames (link type " << u32(20)
                  << ")\n";
        return 1;
    }

    std::size_t frames = 0, roce = 0;
    std::optional<double> start;
    std::map<std::string, std::size_t> per_opcode;
    std::printf("%5s %10s  %-15s    %-15s  %-30s %8s %8s %7s\n", "#", "time/s", "from", "to",
                "opcode", "dest QP", "PSN", "payload");
    for (std::size_t at = 24; at + 16 <= data.size();) {
        const double time = u32(at) + u32(at + 4) * tick;
        const std::size_t captured = u32(at + 8);
        at += 16;
        if (at + captured > data.size()) {
            std::cerr
                << "warning: the last frame is cut short (the capture was still being written?)\n";
            break;
        }
        ++frames;
        const auto packet = roce_packet(data.subspan(at, captured));
        at += captured;
        if (!packet) {
            continue;
        }
        ++roce;
        if (!start) {
            start = time;
        }
        const Decoded d = decode_bth(packet->udp_payload);
        ++per_opcode[d.opcode];
        if (roce <= limit) {
            std::string notes = d.ack_request ? "ack-req" : "";
            if (!d.detail.empty()) {
                notes += (notes.empty() ? "" : " ") + d.detail;
            }
            std::printf("%5zu %10.6f  %-15s -> %-15s  %-30s %#8x %8u %7s%s%s\n", roce,
                        time - *start, packet->from.c_str(), packet->to.c_str(), d.opcode.c_str(),
                        d.dest_qp, d.psn, d.payload < 0 ? "?" : std::to_string(d.payload).c_str(),
                        notes.empty() ? "" : "  ", notes.c_str());
        }
    }
    if (roce > limit) {
        std::printf("  ... %zu more RoCE v2 packets (--limit to see them)\n", roce - limit);
    }
    std::printf("\n%zu frames on the wire, %zu RoCE v2 packets (UDP %u)\n", frames, roce,
                kRoceV2Port);
    std::printf("RoCE v2 packets per opcode:%s\n", per_opcode.empty() ? " none" : "");
    for (const auto& [name, count] : per_opcode) {
        std::printf("  %-34s %6zu\n", name.c_str(), count);
    }
    return 0;
}

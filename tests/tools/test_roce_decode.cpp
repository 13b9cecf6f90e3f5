// SPDX-License-Identifier: MIT
// The wire decoder of ./lab capture (tools/roce-decode/roce-decode.cpp): on a real
// capture of perftest and rdma-core tools between two micro-VMs, and on
// hand-made frames for what that capture does not contain.
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/process.hpp"

using lab::test::run;

namespace {

const std::string kFixture = LAB_SOURCE_DIR "/tests/tools/perftest-wire.pcap";

std::string decoder() {
    return lab::test::program("tools/roce-decode/roce-decode");
}

// "  RC SEND ONLY     6" lines of the per-opcode table.
int count_of(const std::string& out, const std::string& opcode) {
    std::smatch match;
    const std::regex line("\n  " + opcode + R"( +(\d+)\n)");
    return std::regex_search(out, match, line) ? std::stoi(match[1]) : 0;
}

using Bytes = std::vector<std::uint8_t>;

void put16(Bytes& b, unsigned v) {
    b.push_back(static_cast<std::uint8_t>(v >> 8));
    b.push_back(static_cast<std::uint8_t>(v));
}
void put32(Bytes& b, std::uint32_t v) {
    put16(b, v >> 16);
    put16(b, v & 0xffff);
}

// An Ethernet + IPv4 + UDP frame to port 4791 around @p roce (BTH onwards, ICRC included).
Bytes frame(const Bytes& roce) {
    Bytes b(12, 0x02);  // destination and source MAC
    put16(b, 0x0800);
    const unsigned udp_length = 8 + static_cast<unsigned>(roce.size());
    b.push_back(0x45);
    b.push_back(0);
    put16(b, 20 + udp_length);
    put32(b, 0);
    b.push_back(64);
    b.push_back(17);  // UDP
    put16(b, 0);
    for (std::uint8_t octet : {10, 77, 1, 2, 10, 77, 1, 1}) {
        b.push_back(octet);
    }
    put16(b, 49152);
    put16(b, 4791);
    put16(b, udp_length);
    put16(b, 0);
    b.insert(b.end(), roce.begin(), roce.end());
    return b;
}

Bytes bth(std::uint8_t opcode, std::uint8_t pad, std::uint32_t qp, std::uint32_t psn) {
    Bytes b{opcode, static_cast<std::uint8_t>(pad << 4)};
    put16(b, 0xffff);
    put32(b, qp & 0xffffff);
    put32(b, psn & 0xffffff);
    return b;
}

// A big-endian pcap file (the other byte order than qemu writes) holding @p frames.
std::string write_pcap(const std::vector<Bytes>& frames) {
    Bytes file;
    put32(file, 0xa1b2c3d4);
    put16(file, 2);
    put16(file, 4);
    put32(file, 0);
    put32(file, 0);
    put32(file, 65535);
    put32(file, 1);  // Ethernet
    for (const auto& f : frames) {
        put32(file, 1);
        put32(file, 0);
        put32(file, static_cast<std::uint32_t>(f.size()));
        put32(file, static_cast<std::uint32_t>(f.size()));
        file.insert(file.end(), f.begin(), f.end());
    }
    std::string path = "/tmp/roce-decode-test-" + std::to_string(::getpid()) + ".pcap";
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(file.data()),
               static_cast<std::streamsize>(file.size()));
    return path;
}

}  // namespace

TEST_CASE("roce-decode counts every opcode of a real two-VM capture", "[capture]") {
    const auto result = run({decoder(), kFixture});
    INFO(result.out << result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(result.out.find("183 frames on the wire, 52 RoCE v2 packets (UDP 4791)") !=
          std::string::npos);
    // ibv_rc_pingpong -n 3: three sends each way, each acknowledged.
    CHECK(count_of(result.out, "RC SEND ONLY") == 6);
    // ib_write_bw -s 3000 -n 5 at MTU 1024: first, middle and last of each message.
    CHECK(count_of(result.out, "RC RDMA WRITE FIRST") == 5);
    CHECK(count_of(result.out, "RC RDMA WRITE MIDDLE") == 5);
    CHECK(count_of(result.out, "RC RDMA WRITE LAST") == 5);
    CHECK(count_of(result.out, "RC ACKNOWLEDGE") == 11);
    // ib_read_lat and ib_atomic_lat -n 5.
    CHECK(count_of(result.out, "RC RDMA READ REQUEST") == 5);
    CHECK(count_of(result.out, "RC RDMA READ RESPONSE ONLY") == 5);
    CHECK(count_of(result.out, "RC FETCH ADD") == 5);
    CHECK(count_of(result.out, "RC ATOMIC ACKNOWLEDGE") == 5);
}

TEST_CASE("roce-decode prints QP, PSN, payload and the extended headers", "[capture]") {
    const auto result = run({decoder(), "--limit", "100", kFixture});
    REQUIRE(result.exit_code == 0);
    // A 3000-byte write: RETH carries the whole length; payloads are 1024 + 1024 + 952.
    const std::regex first(
        R"(RC RDMA WRITE FIRST +0x[0-9a-f]+ +(\d+) +1024 +rkey 0x[0-9a-f]{8} length 3000)");
    std::smatch match;
    REQUIRE(std::regex_search(result.out, match, first));
    const unsigned psn = std::stoul(match[1]);
    CHECK(std::regex_search(result.out, std::regex("RC RDMA WRITE MIDDLE +0x[0-9a-f]+ +" +
                                                   std::to_string(psn + 1) + " +1024")));
    CHECK(std::regex_search(result.out, std::regex("RC RDMA WRITE LAST +0x[0-9a-f]+ +" +
                                                   std::to_string(psn + 2) + " +952 +ack-req")));
    CHECK(std::regex_search(result.out, std::regex(R"(RC SEND ONLY +0x[0-9a-f]+ +\d+ +100 )")));
    CHECK(std::regex_search(
        result.out,
        std::regex(R"(RC RDMA READ RESPONSE ONLY +0x[0-9a-f]+ +\d+ +64 +ACK msn \d+)")));
    CHECK(std::regex_search(result.out, std::regex(R"(RC FETCH ADD .* add 1\n)")));
}

TEST_CASE("roce-decode --limit shortens the list, never the counts", "[capture]") {
    const auto result = run({decoder(), "--limit", "3", kFixture});
    REQUIRE(result.exit_code == 0);
    CHECK(result.out.find("... 49 more RoCE v2 packets") != std::string::npos);
    CHECK(std::regex_search(result.out, std::regex(R"(\n +3 +[0-9.]+ +10\.77)")));
    CHECK_FALSE(std::regex_search(result.out, std::regex(R"(\n +4 +[0-9.]+ +10\.77)")));
    CHECK(count_of(result.out, "RC SEND ONLY") == 6);
}

TEST_CASE("roce-decode reads NAKs, UD sends with padding and big-endian files", "[capture]") {
    Bytes rnr_nak = bth(0x11, 0, 0x1234, 77);
    rnr_nak.insert(rnr_nak.end(), {0x20 | 0x0e, 0, 0, 9});  // AETH: RNR NAK, MSN 9
    rnr_nak.insert(rnr_nak.end(), 4, 0);                    // ICRC
    Bytes ud_send = bth(0x64, 2, 0x42, 5);
    ud_send.insert(ud_send.end(), 8, 0);   // DETH
    ud_send.insert(ud_send.end(), 10, 7);  // 10 bytes of payload...
    ud_send.insert(ud_send.end(), 2, 0);   // ...padded to 12
    ud_send.insert(ud_send.end(), 4, 0);   // ICRC
    Bytes not_roce = frame(bth(0x04, 0, 1, 1));
    not_roce[37] = 0;  // UDP destination port 4791 (0x12b7) -> 4608
    const std::string path = write_pcap({frame(rnr_nak), frame(ud_send), not_roce});
    const auto result = run({decoder(), path});
    ::unlink(path.c_str());
    INFO(result.out << result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(result.out.find("3 frames on the wire, 2 RoCE v2 packets") != std::string::npos);
    CHECK(std::regex_search(result.out,
                            std::regex(R"(RC ACKNOWLEDGE +0x1234 +77 +0 +RNR NAK msn 9)")));
    CHECK(std::regex_search(result.out, std::regex(R"(UD SEND ONLY +0x42 +5 +10\n)")));
}

TEST_CASE("roce-decode refuses what is not a pcap file, in one line", "[capture][bad-input]") {
    const auto missing = run({decoder(), "/nonexistent/wire.pcap"});
    CHECK(missing.exit_code == 1);
    CHECK(missing.err.find("error: cannot open /nonexistent/wire.pcap") != std::string::npos);

    const auto text = run({decoder(), LAB_SOURCE_DIR "/tools/roce-decode/roce-decode.cpp"});
    CHECK(text.exit_code == 1);
    CHECK(text.err.find("is not a pcap file") != std::string::npos);

    const auto usage = run({decoder()});
    CHECK(usage.exit_code == 2);
    CHECK(usage.err.find("usage: roce-decode") != std::string::npos);

    const auto bad_limit = run({decoder(), "--limit", "many", kFixture});
    CHECK(bad_limit.exit_code == 2);
}

TEST_CASE("roce-decode warns about a capture cut short and decodes the rest",
          "[capture][bad-input]") {
    Bytes send = bth(0x04, 0, 0x11, 1);
    send.insert(send.end(), 16, 0);
    std::string path = write_pcap({frame(send), frame(send)});
    // Cut the second frame in half, as a capture stopped mid-write would.
    REQUIRE(::truncate(path.c_str(), 24 + 16 + static_cast<long>(frame(send).size()) + 16 + 20) ==
            0);
    const auto result = run({decoder(), path});
    ::unlink(path.c_str());
    CHECK(result.exit_code == 0);
    CHECK(result.err.find("warning: the last frame is cut short") != std::string::npos);
    CHECK(result.out.find("1 frames on the wire, 1 RoCE v2 packets") != std::string::npos);
}

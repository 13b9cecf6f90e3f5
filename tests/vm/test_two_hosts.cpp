// SPDX-License-Identifier: MIT
// Two hosts on a wire (vm/two-hosts.sh, ./lab run --two-hosts) and the wire view (vm/capture.sh).
// These tests boot two micro-VMs themselves, so they run on the build host,
// never inside the micro-VM: there they say so and pass without running.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/catch.hpp"
#include "support/process.hpp"

using lab::test::lesson;
using lab::test::run;
using namespace std::chrono_literals;

namespace {

const std::string kTwoHosts = LAB_SOURCE_DIR "/vm/two-hosts.sh";
const std::string kCapture = LAB_SOURCE_DIR "/vm/capture.sh";
const std::string kLab = LAB_SOURCE_DIR "/lab";
const std::string kDecoder = LAB_BUILD_DIR "/tools/roce-decode/roce-decode";

// vm-guest.sh names the micro-VM rdma-lab-vm.
bool inside_micro_vm() {
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    return std::string(name) == "rdma-lab-vm";
}

bool skipped_inside_vm() {
    if (inside_micro_vm()) {
        WARN(
            "SKIPPED: two-host tests boot their own VMs; run them on the build host: "
            "ctest -L two-hosts (outside ./lab vm)");
        return true;
    }
    return false;
}

// "  RC SEND ONLY     6" lines of the decoder's per-opcode table.
[[maybe_unused]] int count_of(const std::string& out, const std::string& opcode) {
    std::smatch match;
    const std::regex line("\n  " + opcode + R"( +(\d+)\n)");
    return std::regex_search(out, match, line) ? std::stoi(match[1]) : 0;
}

int roce_packets(const std::string& out) {
    std::smatch match;
    return std::regex_search(out, match, std::regex(R"((\d+) RoCE v2 packets \(UDP 4791\))"))
               ? std::stoi(match[1])
               : -1;
}

// What the VMs and their programs said, without the packet listing: the
// [server] and [client] lines and two-hosts' own verdict, so that a failure's
// message starts with its cause (the listing runs to thousands of lines).
[[maybe_unused]] std::string story(const lab::test::Result& result) {
    std::string said;
    std::istringstream lines(result.err + result.out);
    for (std::string line; std::getline(lines, line);) {
        if (line.starts_with("[server]") || line.starts_with("[client]") ||
            line.starts_with("two-hosts:") || line.starts_with("capture:")) {
            said += line + "\n";
        }
    }
    return said;
}

lab::test::Result capture(const std::string& name) {
    return run({kCapture, "--build-dir", LAB_BUILD_DIR, "--limit", "20", name}, 400s);
}

}  // namespace

// Through ./lab run, as a project runs a program of its own (docs/projects.md):
// named by its path, with the wire recorded. Lesson 01 only queries its
// device, so the VMs find each other (ARP, ping) and no RoCE packet crosses.
TEST_CASE("two hosts: each VM has its own rxe0 on its own card, with a GID of its own",
          "[two-hosts][capture]") {
    if (skipped_inside_vm()) {
        return;
    }
    const std::string pcap = LAB_BUILD_DIR "/two-hosts-01_devices.pcap";
    std::remove(pcap.c_str());
    const auto result =
        run({kLab, "run", "--two-hosts", "--capture", pcap, lesson("01_devices")}, 300s);
    const std::string all = result.out + result.err;  // the guests' console is the VMs' stdout
    INFO(all);
    REQUIRE(result.exit_code == 0);
    CHECK(all.find("[server] micro-VM: kernel") != std::string::npos);
    CHECK(all.find("device rxe0 on eth0 (10.77.1.1), wire to 10.77.1.2") != std::string::npos);
    CHECK(all.find("device rxe0 on eth0 (10.77.1.2), wire to 10.77.1.1") != std::string::npos);
    // 01_devices picks the RoCE v2 IPv4 GID: a different one on each side of the wire.
    CHECK(std::regex_search(
        result.out,
        std::regex(R"(\[server\] .*chosen GID index: \d+ \(RoCE v2, ::ffff:10\.77\.1\.1\))")));
    CHECK(std::regex_search(
        result.out,
        std::regex(R"(\[client\] .*chosen GID index: \d+ \(RoCE v2, ::ffff:10\.77\.1\.2\))")));
    CHECK(result.err.find("two-hosts: server and client both succeeded") != std::string::npos);

    const auto decoded = run({kDecoder, pcap}, 30s);
    INFO(decoded.out << decoded.err);
    CHECK(decoded.exit_code == 0);
    CHECK(std::regex_search(decoded.out, std::regex(R"(([1-9]\d*) frames on the wire)")));
    CHECK(roce_packets(decoded.out) == 0);
    CHECK(decoded.out.find("RoCE v2 packets per opcode: none") != std::string::npos);
    std::remove(pcap.c_str());
}

// Lesson 05's exchange carries each side's active_mtu, and both use the smaller
// (issue: without it, each side used its own). The client's card has an MTU of
// 4500, so its rxe0 reports 4096; the server's card has 1500, so 1024.
TEST_CASE("two hosts, different MTUs: 05_exchange connects at the smaller one on both sides",
          "[two-hosts]") {
    if (skipped_inside_vm()) {
        return;
    }
    const auto result = run({kTwoHosts, "--client-mtu", "4500", lesson("05_exchange")}, 300s);
    INFO(result.out << result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(result.out.find("[server] server: path MTU 1024, the smaller of ours (1024) and the "
                          "peer's (4096)") != std::string::npos);
    CHECK(result.out.find("[client] client: path MTU 1024, the smaller of ours (4096) and the "
                          "peer's (1024)") != std::string::npos);
    CHECK(result.out.find("[client] client: both sides are in RTS") != std::string::npos);
    CHECK(result.err.find("two-hosts: server and client both succeeded") != std::string::npos);
}

TEST_CASE("two hosts: a VM that does not boot stops the other, and is named",
          "[two-hosts][bad-input]") {
    if (skipped_inside_vm()) {
        return;
    }
    const auto started = std::chrono::steady_clock::now();
    const auto result = run({"/usr/bin/env", "RDMA_LAB_TWO_HOSTS_FAULT=server-boot",
                             "RDMA_LAB_TWO_HOSTS_GRACE=3", kTwoHosts, lesson("01_devices")},
                            200s);
    const auto took = std::chrono::steady_clock::now() - started;
    INFO(result.out << result.err);
    CHECK_FALSE(result.timed_out);
    CHECK(result.exit_code == 1);
    CHECK(result.err.find("the server side failed first") != std::string::npos);
    CHECK(result.err.find("the server's VM stopped before the program finished") !=
          std::string::npos);
    // The client waits for its peer on the wire; it must not be left waiting for two minutes.
    CHECK(took < 100s);
}

TEST_CASE("two hosts: a side that exits early stops the other, and is named",
          "[two-hosts][bad-input]") {
    if (skipped_inside_vm()) {
        return;
    }
#ifdef LAB_HAVE_06_SEND_RECV
    const std::string program = lesson("06_send_recv");  // its server waits for a client
#else
    const std::string program = lesson("01_devices");
#endif
    const auto result = run({"/usr/bin/env", "RDMA_LAB_TWO_HOSTS_FAULT=client-exit",
                             "RDMA_LAB_TWO_HOSTS_GRACE=3", kTwoHosts, program},
                            200s);
    INFO(result.out << result.err);
    CHECK_FALSE(result.timed_out);
    CHECK(result.exit_code == 1);
    CHECK((result.out + result.err).find("[client] error: the client fails on purpose") !=
          std::string::npos);
    CHECK(result.err.find("the client side failed first") != std::string::npos);
    CHECK(result.err.find("the client failed with exit status 3") != std::string::npos);
}

TEST_CASE("two hosts: bad input ends in one line", "[two-hosts][bad-input]") {
    if (skipped_inside_vm()) {
        return;
    }
    const auto missing = run({kTwoHosts, "/nonexistent/program"}, 30s);
    CHECK(missing.exit_code == 2);
    CHECK(missing.err.find("two-hosts: /nonexistent/program is not an executable program") !=
          std::string::npos);

    const auto timeout = run({kTwoHosts, "--timeout", "soon", lesson("01_devices")}, 30s);
    CHECK(timeout.exit_code == 2);
    CHECK(timeout.err.find("--timeout must be a whole number of seconds") != std::string::npos);

    const auto fault = run(
        {"/usr/bin/env", "RDMA_LAB_TWO_HOSTS_FAULT=everything", kTwoHosts, lesson("01_devices")},
        30s);
    CHECK(fault.exit_code == 2);
    CHECK(fault.err.find("RDMA_LAB_TWO_HOSTS_FAULT must be") != std::string::npos);

    const auto no_lesson = run({kCapture, "--build-dir", LAB_BUILD_DIR, "99_nothing"}, 30s);
    CHECK(no_lesson.exit_code == 2);
    CHECK(no_lesson.err.find("capture: no lesson '99_nothing'") != std::string::npos);

    const auto no_variant =
        run({kCapture, "--build-dir", LAB_BUILD_DIR, "06_send_recv/no_such_variant"}, 30s);
    CHECK(no_variant.exit_code == 2);
    CHECK(no_variant.err.find("capture: lesson 06_send_recv has no program 'no_such_variant'") !=
          std::string::npos);

    // ./lab run PATH: a program of one's own, inside this folder.
    const auto no_program = run({kLab, "run", "--two-hosts", "./no-such-program"}, 30s);
    CHECK(no_program.exit_code == 2);
    CHECK(no_program.err == "lab: no program ./no-such-program\n");
    const auto outside = run({kLab, "run", "--two-hosts", "/bin/true"}, 30s);
    CHECK(outside.exit_code == 2);
    CHECK(outside.err.find("lab: /bin/true is outside this repository") != std::string::npos);
    const auto not_a_program = run({kLab, "run", LAB_SOURCE_DIR "/README.md"}, 30s);
    CHECK(not_a_program.exit_code == 2);
    CHECK(not_a_program.err.find("README.md is not an executable program") != std::string::npos);
    const auto capture_alone = run({kLab, "run", "--two-hosts", "--capture"}, 30s);
    CHECK(capture_alone.exit_code == 2);
    CHECK(capture_alone.err.find("lab: --capture needs a value") != std::string::npos);

    const auto netem_alone = run({kTwoHosts, "--netem"}, 30s);
    CHECK(netem_alone.exit_code == 2);
    CHECK(netem_alone.err.find("--netem needs a tc-netem spec") != std::string::npos);

    for (const std::string mtu : {"65536", "100", "big"}) {
        const auto bad_mtu = run({kTwoHosts, "--client-mtu", mtu, lesson("01_devices")}, 30s);
        CHECK(bad_mtu.exit_code == 2);
        CHECK(bad_mtu.err.find("--client-mtu must be a number of bytes from 576 to 9000, not '" +
                               mtu + "'") != std::string::npos);
    }
}

#ifdef LAB_HAVE_06_SEND_RECV
TEST_CASE("two hosts: 06_send_recv crosses the wire as SEND packets, each acknowledged",
          "[two-hosts][capture]") {
    if (skipped_inside_vm()) {
        return;
    }
    const auto result = capture("06_send_recv");
    INFO(result.out << result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(result.err.find("two-hosts: server and client both succeeded") != std::string::npos);
    const int sends = count_of(result.out, "RC SEND ONLY") + count_of(result.out, "RC SEND FIRST");
    CHECK(sends > 0);
    CHECK(count_of(result.out, "RC ACKNOWLEDGE") > 0);
    CHECK(count_of(result.out, "RC RDMA WRITE ONLY") == 0);
    // Both directions of the wire, between the two VMs' own addresses.
    CHECK(std::regex_search(result.out, std::regex(R"(10\.77\.1\.2 +-> 10\.77\.1\.1 +RC SEND)")));
    CHECK(std::regex_search(result.out,
                            std::regex(R"(10\.77\.1\.[12] +-> 10\.77\.1\.[12] +RC ACKNOWLEDGE)")));
}
#endif

#ifdef LAB_HAVE_06_SEND_RECV
namespace {

// The variant of lesson 06 on a wire where the client's card drops 2 % of
// what it sends, every packet listed.
lab::test::Result capture_lossy(bool unreliable) {
    std::vector<std::string> command = {
        kCapture, "--build-dir", LAB_BUILD_DIR, "--limit",
        "100000", "--netem",     "loss 2%",     "06_send_recv/uc_vs_rc"};
    if (unreliable) {
        command.push_back("--uc");
    }
    return run(command, 400s);
}

// How often each PSN of the client's data packets (10.77.1.2 -> 10.77.1.1) is on the wire.
std::map<long, int> data_psns(const std::string& out, const std::string& transport) {
    std::map<long, int> seen;
    const std::regex packet(R"(10\.77\.1\.2 +-> 10\.77\.1\.1 +)" + transport +
                            R"( SEND [A-Z]+ +0x[0-9a-f]+ +(\d+))");
    for (auto it = std::sregex_iterator(out.begin(), out.end(), packet);
         it != std::sregex_iterator(); ++it) {
        ++seen[std::stol((*it)[1])];
    }
    return seen;
}

}  // namespace

TEST_CASE("two hosts, 2 % loss: RC sends lost packets again and delivers every message",
          "[two-hosts][capture]") {
    if (skipped_inside_vm()) {
        return;
    }
    const auto result = capture_lossy(false);
    INFO(story(result));
    REQUIRE(result.exit_code == 0);
    const std::string both = result.out + result.err;  // the programs' lines, the VMs' lines
    CHECK(both.find("micro-VM: eth0 sends through netem: loss 2%") != std::string::npos);
    CHECK(both.find("server: received 200 of 200 messages whole, 0 damaged; lost: none") !=
          std::string::npos);
    CHECK(both.find("client: 200 sends completed, every one IBV_WC_SUCCESS") != std::string::npos);
    // 200 messages of 4 KiB at MTU 1024: 800 PSNs, some of them sent again.
    const auto psns = data_psns(result.out, "RC");
    CHECK(psns.size() == 800);
    int resent = 0;
    for (const auto& [psn, times] : psns) {
        resent += times > 1 ? 1 : 0;
    }
    CHECK(resent > 0);
    CHECK(count_of(result.out, "RC ACKNOWLEDGE") > 0);
    CHECK(result.out.find("NAK PSN sequence error") != std::string::npos);
}

TEST_CASE("two hosts, 2 % loss: UC loses whole messages, and the sender never knows",
          "[two-hosts][capture]") {
    if (skipped_inside_vm()) {
        return;
    }
    const auto result = capture_lossy(true);
    INFO(story(result));
    REQUIRE(result.exit_code == 0);
    const std::string both = result.out + result.err;  // the programs' lines, the VMs' lines
    CHECK(both.find("client: 200 sends completed, every one IBV_WC_SUCCESS") != std::string::npos);
    std::smatch received;
    REQUIRE(std::regex_search(both, received,
                              std::regex(R"(server: received (\d+) of 200 messages whole)")));
    CHECK(std::stoi(received[1]) < 200);
    // No acknowledgement, no packet twice, and fewer than 800 reached the wire.
    CHECK(result.out.find("ACKNOWLEDGE") == std::string::npos);
    const auto psns = data_psns(result.out, "UC");
    CHECK(psns.size() < 800);
    CHECK(psns.size() > 600);
    for (const auto& [psn, times] : psns) {
        CHECK(times == 1);
    }
}
#endif

#ifdef LAB_HAVE_07_RDMA_WRITE
// The top README's recipe for two real machines: the server's command on
// machine A, the client's on machine B (the same, plus A's address).
std::pair<std::string, std::string> two_machine_recipe() {
    std::ifstream readme(LAB_SOURCE_DIR "/README.md");
    std::string server;
    std::string client;
    const std::regex line(R"(^(\S.*?)\s+# machine ([AB]):)");
    for (std::string text; std::getline(readme, text);) {
        std::smatch match;
        if (std::regex_search(text, match, line)) {
            (match[2] == "A" ? server : client) = match[1];
        }
    }
    return {server, client};
}

TEST_CASE(
    "two hosts: 07_rdma_write crosses the wire as RDMA WRITE packets, as the README's two-machine "
    "recipe runs it",
    "[two-hosts][capture]") {
    if (skipped_inside_vm()) {
        return;
    }
    // The recipe names lesson 07 with no flags; the client adds the server's
    // address, which is what the two VMs run (10.77.1.1 for machine A).
    const auto [server, client] = two_machine_recipe();
    CHECK(server == "build/default/lessons/07_rdma_write/07_rdma_write");
    CHECK(std::regex_match(
        client,
        std::regex(R"(build/default/lessons/07_rdma_write/07_rdma_write \d+\.\d+\.\d+\.\d+)")));
    const auto result = capture("07_rdma_write");
    INFO(result.out << result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(result.err.find("two-hosts: server and client both succeeded") != std::string::npos);
    const int writes = count_of(result.out, "RC RDMA WRITE ONLY") +
                       count_of(result.out, "RC RDMA WRITE FIRST") +
                       count_of(result.out, "RC RDMA WRITE ONLY WITH IMMEDIATE");
    CHECK(writes > 0);
    CHECK(count_of(result.out, "RC ACKNOWLEDGE") > 0);
}
#endif

TEST_CASE("the micro-VM carries the run's settings into the guest, and nothing else",
          "[two-hosts]") {
    if (skipped_inside_vm()) {
        return;
    }
    // ./lab bench's settings (BENCH_REPS, ...) reach the benchmark scripts,
    // which run in the guest; a variable of no concern to the course does not.
    const auto result = run({"/usr/bin/env", "BENCH_REPS=7", "RDMA_LAB_EXAMPLE=lab",
                             "UNRELATED_SETTING=other", LAB_SOURCE_DIR "/vm/microvm.sh", "sh", "-c",
                             "echo guest sees: reps=$BENCH_REPS lab=$RDMA_LAB_EXAMPLE "
                             "other=${UNRELATED_SETTING:-unset}"},
                            180s);
    INFO(result.out + result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(result.out.find("guest sees: reps=7 lab=lab other=unset") != std::string::npos);
}

TEST_CASE("the micro-VM without qemu names the package to install", "[two-hosts][bad-input]") {
    if (skipped_inside_vm()) {
        return;
    }
    // A PATH with the few tools microvm.sh needs before it looks for qemu, and no qemu.
    const std::string bin = "/tmp/lab-no-qemu-" + std::to_string(::getpid());
    REQUIRE(run({"/bin/mkdir", "-p", bin}).exit_code == 0);
    REQUIRE(run({"/bin/ln", "-sf", "/usr/bin/dirname", bin + "/dirname"}).exit_code == 0);
    const std::string microvm = LAB_SOURCE_DIR "/vm/microvm.sh";
    const std::vector<std::string> command = {"/usr/bin/env", "PATH=" + bin, "/bin/bash",
                                              microvm,        "--",          "true"};
    const auto result = run(command, 30s);
    run({"/bin/rm", "-rf", bin});
    INFO(result.out << result.err);
    CHECK(result.exit_code == 2);
    // The micro-VM is a machine of the host's architecture.
#if defined(__aarch64__)
    CHECK(
        result.err ==
        "microvm: qemu-system-aarch64 is missing: install qemu-system-arm (./lab setup does it)\n");
#else
    CHECK(
        result.err ==
        "microvm: qemu-system-x86_64 is missing: install qemu-system-x86 (./lab setup does it)\n");
#endif
}

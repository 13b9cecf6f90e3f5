// SPDX-License-Identifier: MIT
// Lesson 01 on the real device: what it prints must agree with ibv_devinfo -v,
// and bad input must end in one clear line and a non-zero exit.
#include <map>
#include <regex>
#include <string>

#include "support/catch.hpp"
#include "support/process.hpp"

using lab::test::lesson;
using lab::test::run;

namespace {

// "name:  value" lines of either program, keyed by name. GID lines keep their
// index in the key ("GID[  1]").
std::map<std::string, std::string> fields(const std::string& text) {
    static const std::regex field(R"(^\s*([A-Za-z_]+|GID\[\s*\d+\]):\s+(\S.*?)\s*$)");
    std::map<std::string, std::string> result;
    for (const auto& line : lab::test::lines(text)) {
        std::smatch match;
        if (std::regex_match(line, match, field)) {
            result.emplace(match[1], match[2]);  // first occurrence wins (port 1 comes first)
        }
    }
    return result;
}

std::string opened_device(const std::string& out) {
    std::smatch match;
    REQUIRE(std::regex_search(out, match, std::regex(R"(Step 2: opened (\S+))")));
    return match[1];
}

}  // namespace

TEST_CASE("01_devices agrees with ibv_devinfo -v on every field both print", "[lesson01]") {
    const auto lesson_run = run({lesson("01_devices")});
    INFO(lesson_run.out << lesson_run.err);
    REQUIRE(lesson_run.exit_code == 0);
    const std::string device = opened_device(lesson_run.out);

    const auto devinfo = run({"/usr/bin/ibv_devinfo", "-v", "-d", device, "-i", "1"});
    REQUIRE(devinfo.exit_code == 0);

    const auto ours = fields(lesson_run.out);
    const auto theirs = fields(devinfo.out);
    int compared = 0;
    for (const auto& [name, value] : ours) {
        if (const auto found = theirs.find(name); found != theirs.end()) {
            INFO("field " << name);
            CHECK(value == found->second);
            ++compared;
        }
    }
    // Everything later lessons depend on must be among the compared fields.
    for (const char* name : {"max_qp", "max_qp_wr", "max_sge", "max_cqe", "max_mr_size",
                             "atomic_cap", "max_qp_rd_atom", "state", "link_layer", "active_mtu",
                             "max_msg_sz", "device_cap_flags_ex", "GID[  0]"}) {
        INFO("field " << name);
        CHECK(ours.count(name) == 1);
        CHECK(theirs.count(name) == 1);
    }
    CHECK(compared >= 20);
}

TEST_CASE(
    "01_devices says whether the device reports on-demand paging and XRC, as ibv_devinfo does",
    "[lesson01]") {
    const auto lesson_run = run({lesson("01_devices")});
    INFO(lesson_run.out << lesson_run.err);
    REQUIRE(lesson_run.exit_code == 0);
    const auto devinfo =
        run({"/usr/bin/ibv_devinfo", "-v", "-d", opened_device(lesson_run.out), "-i", "1"});
    REQUIRE(devinfo.exit_code == 0);
    // ibv_devinfo lists ODP_SUPPORT under general_odp_caps when the device has it.
    const bool devinfo_odp = devinfo.out.find("ODP_SUPPORT") != std::string::npos;
    const auto ours = fields(lesson_run.out);
    REQUIRE(ours.count("odp") == 1);
    CHECK(ours.at("odp") ==
          (devinfo_odp ? "supported (general_caps has IBV_ODP_SUPPORT)" : "not reported"));
    // ... and XRC on a line of its own in the list of device_cap_flags.
    const bool devinfo_xrc = devinfo.out.find("\tXRC\n") != std::string::npos;
    REQUIRE(ours.count("xrc") == 1);
    CHECK(ours.at("xrc") ==
          (devinfo_xrc ? "supported (device_cap_flags has IBV_DEVICE_XRC)" : "not reported"));
}

TEST_CASE("01_devices chooses the RoCE v2 IPv4-mapped GID automatically", "[lesson01]") {
    const auto result = run({lesson("01_devices")});
    REQUIRE(result.exit_code == 0);
    std::smatch match;
    REQUIRE(std::regex_search(
        result.out, match,
        std::regex(R"(chosen GID index: (\d+) \(RoCE v2, ::ffff:[0-9.]+\) \[automatic\])")));
    // The same index must be listed in the table as that address.
    CHECK(result.out.find("GID[" + std::string(3 - match[1].length(), ' ') + match[1].str() +
                          "]") != std::string::npos);
}

TEST_CASE("01_devices honours -g and -d", "[lesson01]") {
    const auto first = run({lesson("01_devices")});
    REQUIRE(first.exit_code == 0);
    const auto result = run({lesson("01_devices"), "-d", opened_device(first.out), "-g", "0"});
    INFO(result.out << result.err);
    CHECK(result.exit_code == 0);
    CHECK(result.out.find("chosen GID index: 0 (") != std::string::npos);
    CHECK(result.out.find("[from -g]") != std::string::npos);
}

TEST_CASE("01_devices rejects bad input with one line and a non-zero exit",
          "[lesson01][bad-input]") {
    struct Case {
        std::vector<std::string> args;
        std::string expected;
    };
    const std::vector<Case> cases = {
        {{"-d", "no_such_dev0"}, "unknown RDMA device 'no_such_dev0'"},
        {{"-i", "7"}, "port 7 is out of range"},
        {{"-g", "100000"}, "GID index 100000 is out of range"},
        {{"-g", "900"}, "GID index 900 has no GID"},
        {{"-g", "minus-one"}, "--gid-idx"},
        {{"--no-such-flag"}, "--no-such-flag"},
    };
    for (const auto& test_case : cases) {
        std::vector<std::string> argv = {lesson("01_devices")};
        argv.insert(argv.end(), test_case.args.begin(), test_case.args.end());
        const auto result = run(argv, std::chrono::seconds(20));
        INFO("args: " << test_case.args.front() << " -> " << result.err);
        CHECK_FALSE(result.timed_out);
        CHECK(result.exit_code != 0);
        CHECK(result.err.find(test_case.expected) != std::string::npos);
        CHECK(result.err.rfind("error: ", 0) == 0);
        CHECK(lab::test::lines(result.err).size() == 1);
    }
}

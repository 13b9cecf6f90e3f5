// SPDX-License-Identifier: MIT
// ./lab doctor (setup/doctor.sh): it names the release and the versions of the
// tools that matter, and warns when the combination is not one CI verifies.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <string>

#include "support/catch.hpp"
#include "support/process.hpp"

using lab::test::run;

namespace {

const std::string kDoctor = LAB_SOURCE_DIR "/setup/doctor.sh";

// The value of KEY= in an os-release file, without quotes.
std::string os_release_value(const std::string& file, const std::string& key) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(key + "=", 0) == 0) {
            std::string value = line.substr(key.size() + 1);
            if (value.size() >= 2 && value.front() == '"') {
                value = value.substr(1, value.size() - 2);
            }
            return value;
        }
    }
    return "";
}

std::string first_line(const std::string& text) {
    return text.substr(0, text.find('\n'));
}

}  // namespace

TEST_CASE(
    "doctor prints the release, the architecture and the kernel, rdma-core, Catch2, g++ and "
    "qemu versions",
    "[unit]") {
    const auto result = run({kDoctor});
    INFO(result.out << result.err);
    const std::string pretty = os_release_value("/etc/os-release", "PRETTY_NAME");
    CHECK(first_line(result.out).rfind("Release: " + pretty, 0) == 0);
    const auto machine = run({"/bin/uname", "-m"});
    CHECK(result.out.find("  architecture  " + first_line(machine.out) + " (") !=
          std::string::npos);
    const auto kernel = run({"/bin/uname", "-r"});
    CHECK(result.out.find("  kernel        " + first_line(kernel.out) + "\n") != std::string::npos);
    const auto compiler = run({"/usr/bin/g++", "-dumpfullversion"});
    CHECK(result.out.find("  g++           " + first_line(compiler.out) + "\n") !=
          std::string::npos);
    CHECK(std::regex_search(result.out, std::regex("\n  VM kernel +[^ \n][^\n]*\n")));
    for (const char* tool : {"rdma-core", "Catch2", "qemu"}) {
        INFO(tool);
        CHECK(std::regex_search(result.out,
                                std::regex("\n  " + std::string(tool) + " +[0-9][^\n]*\n")));
    }
    const std::string id = os_release_value("/etc/os-release", "ID");
    const std::string version = os_release_value("/etc/os-release", "VERSION_ID");
    const bool verified_release = id == "debian" && (version == "12" || version == "13");
    CHECK((result.out.find("is not verified") == std::string::npos) == verified_release);
}

TEST_CASE("doctor warns on a release CI does not verify", "[unit]") {
    const std::string fake = "/tmp/lab-doctor-os-release-" + std::to_string(::getpid());
    std::ofstream(fake) << "PRETTY_NAME=\"Ubuntu 24.04 LTS\"\nID=ubuntu\nVERSION_ID=\"24.04\"\n";
    const auto result = run({"/usr/bin/env", "RDMA_LAB_OS_RELEASE=" + fake, kDoctor});
    std::remove(fake.c_str());
    INFO(result.out << result.err);
    CHECK(first_line(result.out) == "Release: Ubuntu 24.04 LTS (ubuntu-24.04)");
    CHECK(result.out.find("WARN  Ubuntu 24.04 LTS is not verified: CI runs Debian 12 and Debian 13 "
                          "only.") != std::string::npos);
}

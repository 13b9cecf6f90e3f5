// SPDX-License-Identifier: MIT
// The throwaway micro-VM (vm/microvm.sh) never waits silently: a guest that
// does not start, or does not power off, is stopped within its deadline and
// the run says so in one line. These tests boot VMs themselves, so they run on
// the build host (label lab-machine), never inside the micro-VM.
#include <unistd.h>

#include <chrono>
#include <string>

#include "support/catch.hpp"
#include "support/process.hpp"

using lab::test::run;
using namespace std::chrono_literals;

namespace {

const std::string kMicroVm = LAB_SOURCE_DIR "/vm/microvm.sh";

bool skipped_inside_vm() {
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    if (std::string(name) == "rdma-lab-vm") {
        WARN("SKIPPED: these tests boot their own VM; run them on the build host");
        return true;
    }
    return false;
}

// How many qemu processes carry this test's marker in their kernel command line.
int qemu_processes_with(const std::string& marker) {
    const auto result =
        run({"/bin/sh", "-c",
             "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f 2>/dev/null; echo; done "
             "| grep '^qemu-system' | grep -c -- '" +
                 marker + "' || true"},
            20s);
    return std::stoi("0" + result.out);
}

}  // namespace

TEST_CASE(
    "a micro-VM whose guest does not start in time is stopped, booted once more, and reported") {
    if (skipped_inside_vm()) {
        return;
    }
    const std::string marker = "lab.test=hang-boot-" + std::to_string(::getpid());
    const auto started = std::chrono::steady_clock::now();
    const auto result = run({"/usr/bin/env", "RDMA_LAB_VM_FAULT=hang-boot", "RDMA_LAB_VM_BOOT=20",
                             "RDMA_LAB_VM_APPEND=" + marker, kMicroVm, "--", "true"},
                            300s);
    INFO(result.err);
    CHECK(result.exit_code == 125);
    CHECK(result.err.find(
              "microvm: the VM did not start within 20s; stopping it and booting once more") !=
          std::string::npos);
    CHECK(result.err.find("microvm: the VM did not start within 20s twice; giving up") !=
          std::string::npos);
    CHECK(std::chrono::steady_clock::now() - started < 120s);
    CHECK(qemu_processes_with(marker) == 0);
}

TEST_CASE(
    "a micro-VM that does not power off after its command is stopped, and the command's status "
    "kept") {
    if (skipped_inside_vm()) {
        return;
    }
    const std::string marker = "lab.test=hang-poweroff-" + std::to_string(::getpid());
    const auto result =
        run({"/usr/bin/env", "RDMA_LAB_VM_FAULT=hang-poweroff", "RDMA_LAB_VM_APPEND=" + marker,
             kMicroVm, "--", "sh", "-c", "echo the command ran; exit 3"},
            300s);
    INFO(result.err);
    CHECK(result.exit_code == 3);
    CHECK(result.out.find("the command ran") != std::string::npos);
    CHECK(result.err.find(
              "microvm: the VM did not power off within 15s after its command ended; stopped it") !=
          std::string::npos);
    CHECK(qemu_processes_with(marker) == 0);
}

TEST_CASE("a bad fault name is refused before anything boots") {
    const auto result =
        run({"/usr/bin/env", "RDMA_LAB_VM_FAULT=nonsense", kMicroVm, "--", "true"}, 60s);
    CHECK(result.exit_code == 2);
    CHECK(result.err.find("RDMA_LAB_VM_FAULT must be hang-boot or hang-poweroff, not 'nonsense'") !=
          std::string::npos);
}

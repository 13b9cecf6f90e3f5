// SPDX-License-Identifier: MIT
// The sandbox a student's program runs in (grading/grade/sandbox.cpp), with
// a program that misbehaves on purpose (misbehave.cpp): whatever it does, it
// ends with one clear reason, and it cannot reach outside its scratch space.
// Runs where the checks run (the micro-VM, as root: strict isolation).
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "grade/student.hpp"
#include "support/catch.hpp"
#include "support/process.hpp"

using lab::grade::ProgramFailed;
using lab::grade::StudentProgram;

namespace {

const std::string kProgram = lab::test::program("tests/misbehave");

// The reason the program gives for failing @p scenario within a deadline of @p seconds.
std::string reason_of(const std::string& scenario, int seconds = 4) {
    ::setenv("RDMA_LAB_CHECK_TIMEOUT", std::to_string(seconds).c_str(), 1);
    try {
        StudentProgram program(scenario, kProgram);
        program.receive("never");
    } catch (const ProgramFailed& failure) {
        return failure.what();
    }
    return "no failure";
}

bool strict() {
    return lab::grade::isolation_from_environment() == lab::grade::Isolation::strict;
}

}  // namespace

TEST_CASE("a program that hangs or sleeps is stopped at the deadline", "[grading][bad-input]") {
    for (const std::string scenario : {"hang", "sleep"}) {
        const std::string reason = reason_of(scenario);
        INFO(scenario << ": " << reason);
        CHECK(reason.rfind("no result within 4 s: your code hangs or sleeps", 0) == 0);
    }
}

TEST_CASE("a program that crashes is reported with its signal", "[grading][bad-input]") {
    const std::string reason = reason_of("crash");
    INFO(reason);
    CHECK(reason.rfind("your program crashed: segmentation fault (SIGSEGV)", 0) == 0);
}

TEST_CASE("a program that leaves early is not believed", "[grading][bad-input]") {
    const std::string reason = reason_of("exit_early");
    INFO(reason);
    CHECK(reason.rfind("your program ended (exit status 0) during the check", 0) == 0);
    CHECK(reason.find("\n    its last output:\n      | All tests passed") != std::string::npos);
}

TEST_CASE("a program that prints megabytes is stopped", "[grading][bad-input]") {
    const std::string reason = reason_of("flood");
    INFO(reason);
    CHECK(reason == "your program printed more than 1 MiB and was stopped: print less");
}

TEST_CASE("a fork bomb and a memory hog are stopped by their limits", "[grading][bad-input]") {
    if (!strict()) {
        SUCCEED("plain isolation (not root): no cgroup to count processes and memory");
        return;
    }
    const std::string forks = reason_of("fork_bomb");
    INFO(forks);
    CHECK(forks.rfind("your program tried to start more than 64 processes", 0) == 0);
    // Emulated CPUs fill memory slowly: give it time to reach the limit.
    const std::string memory = reason_of("memory_hog", 60);
    INFO(memory);
    CHECK(memory.rfind("your program used more than 512 MiB of memory", 0) == 0);
}

TEST_CASE("the program cannot reach outside its scratch space", "[grading]") {
    if (!strict()) {
        SUCCEED("plain isolation (not root): the sandbox needs the micro-VM");
        return;
    }
    StudentProgram program("escape", kProgram);
    program.send({"paths", std::string(LAB_SOURCE_DIR) + "/solutions/README.md", LAB_SOURCE_DIR});
    const auto report = program.receive("escape");
    program.finish();
    std::string text;
    for (const auto& field : report.fields()) {
        text += field + "\n";
    }
    INFO(text);
    CHECK(report.text(1).rfind("uid=0", 0) != 0);  // not root
    for (const std::string denied :
         {"see-repo=", "read-repo-file=", "write-root=", "write-usr=", "read-shadow=", "kill-init=",
          "ptrace-init=", "setuid-root=", "mount=", "connect="}) {
        CHECK(text.find(denied + "yes") == std::string::npos);
    }
    CHECK(text.find("write-scratch=yes") != std::string::npos);
    // Its own PID namespace: the sandbox's init, the fork server and itself.
    CHECK(text.find("processes-seen=3\n") != std::string::npos);
}

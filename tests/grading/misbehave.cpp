// SPDX-License-Identifier: MIT
// A stand-in for a student's program that misbehaves on purpose, for
// test_sandbox: each scenario does one of the things a submission must not
// be able to get away with (hang, sleep, crash, fork, eat memory, flood its
// output, leave early) or tries to reach outside its sandbox and reports
// what happened.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "grade/subject_main.hpp"

namespace {

using lab::grade::Link;
using lab::grade::Message;

// "yes" when @p ok, else the errno text: how each attempt went.
std::string outcome(bool ok) {
    return ok ? "yes" : std::strerror(errno);
}

void escape(Link& link) {
    const Message order = link.expect("paths");  // a file of the repository, and its folder
    const std::string repo_file = order.text(1), repo_dir = order.text(2);
    Message report{"escape"};
    struct stat info = {};
    report.add("uid=" + std::to_string(::getuid()));
    report.add("see-repo=" + outcome(::stat(repo_dir.c_str(), &info) == 0));
    report.add("read-repo-file=" + outcome(::open(repo_file.c_str(), O_RDONLY) >= 0));
    report.add("write-root=" + outcome(::open("/escaped", O_CREAT | O_WRONLY, 0644) >= 0));
    report.add("write-usr=" + outcome(::open("/usr/escaped", O_CREAT | O_WRONLY, 0644) >= 0));
    report.add("write-scratch=" + outcome(::open("/tmp/mine", O_CREAT | O_WRONLY, 0644) >= 0));
    report.add("read-shadow=" + outcome(::open("/etc/shadow", O_RDONLY) >= 0));
    report.add("kill-init=" + outcome(::kill(1, SIGKILL) == 0));
    report.add("ptrace-init=" + outcome(::ptrace(PTRACE_ATTACH, 1, nullptr, nullptr) == 0));
    report.add("setuid-root=" + outcome(::setuid(0) == 0));
    report.add("mount=" + outcome(::mount("none", "/tmp", "tmpfs", 0, nullptr) == 0));
    const int sock = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(22);
    ::inet_pton(AF_INET, "10.77.0.1", &address.sin_addr);
    report.add("connect=" +
               outcome(sock >= 0 && ::connect(sock, reinterpret_cast<sockaddr*>(&address),
                                              sizeof address) == 0));
    int processes = 0;
    for (int pid = 1; pid < 4096; ++pid) {
        processes += ::kill(pid, 0) == 0 || errno == EPERM ? 1 : 0;
    }
    report.add("processes-seen=" + std::to_string(processes));
    link.send(report);
}

void hang(Link&) {
    volatile unsigned long spins = 0;
    for (;;) {
        spins = spins + 1;
    }
}

void sleep_long(Link&) {
    std::this_thread::sleep_for(std::chrono::hours(1));
}

void crash(Link&) {
    volatile int* nowhere = nullptr;
    *nowhere = 1;
}

void fork_bomb(Link&) {
    for (;;) {
        if (::fork() == 0) {
            ::pause();
        }
    }
}

void memory_hog(Link&) {
    std::vector<std::vector<char>> hoard;
    for (;;) {
        hoard.emplace_back(64 << 20, 'x');  // touched: really used
    }
}

void flood(Link&) {
    const std::string line(1000, 'y');
    for (;;) {
        std::fwrite(line.data(), 1, line.size(), stdout);
    }
}

void exit_early(Link&) {
    std::printf("All tests passed (42 assertions in 6 test cases)\n");
    std::exit(0);
}

}  // namespace

int main(int argc, char** argv) {
    return lab::grade::subject_main(argc, argv,
                                    {
                                        {"escape", escape},
                                        {"hang", hang},
                                        {"sleep", sleep_long},
                                        {"crash", crash},
                                        {"fork_bomb", fork_bomb},
                                        {"memory_hog", memory_hog},
                                        {"flood", flood},
                                        {"exit_early", exit_early},
                                    });
}

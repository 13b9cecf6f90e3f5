// SPDX-License-Identifier: MIT
#include "subject_main.hpp"

#include <infiniband/verbs.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>

#include "lab/check.hpp"
#include "lab/device.hpp"

namespace lab::grade {

namespace {

constexpr int kChannelFd = 3;
constexpr int kControlFd = 4;  // the fork server's line to the check program

// The scenario of this copy, when the fork server made it (else argv[1]). A
// plain array: it must not be re-initialized by the static initializers
// that run after the fork server's copy leaves it.
char forked_scenario[256];

// The fork server (LAB_ZYGOTE=1, control socket at fd 4). It runs before
// any of the student's code: constructors of priority 101 run before the
// default priority of the student's static initializers. So the dynamic
// loader's work is done once per check program, and each check gets a fresh
// copy of the program: the copy leaves this function and goes on with the
// student's static initializers and main(), like a program just started.
// The server itself never returns: it forks on request and reports how each
// copy ended.
__attribute__((constructor(101))) void fork_server() {
    const char* wanted = std::getenv("LAB_ZYGOTE");
    struct stat control_stat {};
    if (wanted == nullptr || std::string_view(wanted) != "1" ||
        ::fstat(kControlFd, &control_stat) != 0 || !S_ISSOCK(control_stat.st_mode)) {
        return;
    }
    // A process's first ibv_get_device_list loads every verbs provider
    // library rdma-core knows: 0.3 to 0.5 s in the micro-VM's emulated CPU,
    // for every check. Done here once, each copy inherits the loaded
    // libraries and lists the devices in milliseconds. Nothing is opened,
    // so nothing of the device crosses the fork.
    int devices_found = 0;
    if (ibv_device** devices = ::ibv_get_device_list(&devices_found); devices != nullptr) {
        ::ibv_free_device_list(devices);
    }
    Channel control(kControlFd);
    for (;;) {
        int channel = -1;
        std::optional<Message> order;
        try {
            order = control.receive(std::chrono::hours(24), nullptr, &channel);
        } catch (const ChannelClosed&) {
            ::_exit(0);  // the check program is gone
        } catch (...) {
            ::_exit(3);
        }
        if (!order) {
            continue;
        }
        if (order->name() != "fork" || order->size() < 3 || channel < 0) {
            ::_exit(3);
        }
        const pid_t copy = ::fork();
        if (copy == 0) {
            // The fresh copy: its own process group, the channel as fd 3, then
            // wait until the check has put it in the check's cgroup.
            ::setpgid(0, 0);
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (channel != kChannelFd) {
                ::dup2(channel, kChannelFd);
                ::close(channel);
            }
            ::close(control.release());
            std::snprintf(forked_scenario, sizeof forked_scenario, "%s", order->text(2).c_str());
            try {
                Channel line(::dup(kChannelFd));  // a duplicate: fd 3 stays open
                line.send({"born"});
                const auto go = line.receive(std::chrono::minutes(1));
                if (!go || go->name() != "go") {
                    ::_exit(3);
                }
            } catch (...) {
                ::_exit(3);
            }
            return;
        }
        ::close(channel);
        int status = 0;
        if (copy > 0) {
            while (::waitpid(copy, &status, 0) < 0 && errno == EINTR) {
            }
        }
        try {
            control.send(Message{"ended", order->text(1)}.add(static_cast<std::uint64_t>(
                copy > 0 ? static_cast<unsigned>(status) : 0xffffffffU)));
        } catch (...) {
            ::_exit(0);
        }
    }
}

std::string hex_of(const ibv_gid& gid) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string text;
    for (const std::uint8_t byte : gid.raw) {
        text += kDigits[byte >> 4];
        text += kDigits[byte & 15];
    }
    return text;
}

ibv_gid gid_of(const std::string& text) {
    if (text.size() != 32) {
        throw lab::Error("a GID field must have 32 hex digits");
    }
    ibv_gid gid{};
    for (std::size_t i = 0; i < 16; ++i) {
        gid.raw[i] = static_cast<std::uint8_t>(std::stoul(text.substr(2 * i, 2), nullptr, 16));
    }
    return gid;
}

}  // namespace

Message Link::receive() {
    auto message = channel_.receive(std::chrono::minutes(1));
    if (!message) {
        throw lab::Error("the check sent nothing for a minute");
    }
    return *message;
}

Message Link::expect(std::string_view name) {
    Message message = receive();
    if (message.name() != name) {
        throw lab::Error("the check sent '" + message.name() + "', expected '" + std::string(name) +
                         "'");
    }
    return message;
}

Message& add_address(Message& message, const lab::PeerAddress& address) {
    return message.add(address.qp_num).add(address.psn).add(address.lid).add(hex_of(address.gid));
}

lab::PeerAddress address_from(const Message& message, std::size_t first) {
    lab::PeerAddress address;
    address.qp_num = static_cast<std::uint32_t>(message.number(first));
    address.psn = static_cast<std::uint32_t>(message.number(first + 1));
    address.lid = static_cast<std::uint16_t>(message.number(first + 2));
    address.gid = gid_of(message.text(first + 3));
    return address;
}

void connect_to_check(Link& link, ibv_qp* qp, const lab::LocalPort& local, const ibv_gid& gid,
                      int access) {
    const lab::PeerAddress ours{qp->qp_num, lab::random_psn(), 0, gid};
    Message message{"address"};
    link.send(add_address(message, ours));
    const lab::PeerAddress theirs = address_from(link.expect("address"), 1);
    lab::move_to_init(qp, local.port, access);
    lab::move_to_rtr(qp, local, theirs);
    lab::move_to_rts(qp, ours.psn);
}

int subject_main(int argc, char** argv, const Scenarios& scenarios) {
    struct stat channel_stat {};
    const std::string name = forked_scenario[0] != '\0' ? forked_scenario
                             : argc == 2                ? argv[1]
                                                        : "";
    if (name.empty() || ::fstat(kChannelFd, &channel_stat) != 0 ||
        !S_ISSOCK(channel_stat.st_mode)) {
        std::fprintf(stderr,
                     "error: this program is your exercise built for grading; the checks start it "
                     "(./lab grade). Run your exercise with ./lab run instead.\n");
        return 2;
    }
    const auto scenario = scenarios.find(name);
    if (scenario == scenarios.end()) {
        std::fprintf(stderr, "error: no scenario '%s' in this program\n", name.c_str());
        return 2;
    }
    Link link(kChannelFd);
    const auto report_error = [&link](const std::string& text) {
        try {
            link.send({"error", text});
        } catch (...) {  // the check is gone: nobody to tell
        }
        return 1;
    };
    try {
        link.send({"hello", scenario->first});
        scenario->second(link);
        link.send({"done"});
        return 0;
    } catch (const ChannelClosed&) {
        return 3;  // the check is gone: nobody to tell
    } catch (const std::bad_alloc&) {
        return report_error("out of memory (std::bad_alloc)");
    } catch (const std::exception& error) {
        return report_error(error.what());
    } catch (...) {
        return report_error("an exception that is not a std::exception");
    }
}

}  // namespace lab::grade

#if defined(__SANITIZE_ADDRESS__)
// In a kit built with the sanitizers (the asan preset), a student's crash stays
// a crash: AddressSanitizer's own SEGV handler would end the program with exit
// status 1, and the report would then ask whether the code calls exit().
extern "C" const char* __asan_default_options() {
    return "handle_segv=0";
}
#endif

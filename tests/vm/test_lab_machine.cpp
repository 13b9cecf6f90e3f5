// SPDX-License-Identifier: MIT
// The lab machine (./lab up, shell, status, down; ./lab run through it): a
// micro-VM that stays up and serves any number of terminals. These tests boot
// it themselves, so they run on the build host (label lab-machine), never
// inside the micro-VM. Each uses a machine of its own name
// (RDMA_LAB_MACHINE_NAME), never the one a student may have up, and stops it.
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/catch.hpp"
#include "support/process.hpp"

using lab::test::Process;
using lab::test::Result;
using lab::test::run;
using namespace std::chrono_literals;

namespace {

const std::string kLab = LAB_SOURCE_DIR "/lab";
const std::string kBuild = LAB_BUILD_DIR;

bool inside_micro_vm() {
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    return std::string(name) == "rdma-lab-vm";
}

bool skipped_inside_vm() {
    if (inside_micro_vm()) {
        WARN("SKIPPED: the lab machine tests boot their own VM; run them on the build host");
        return true;
    }
    return false;
}

// ./lab ARGS for the machine called NAME, with further VARIABLES.
std::vector<std::string> lab_command(const std::string& name, std::vector<std::string> args,
                                     const std::vector<std::string>& variables = {}) {
    // (a boot deadline for a busy machine: the default, 120 s, suits an idle one)
    std::vector<std::string> argv{"/usr/bin/env", "RDMA_LAB_MACHINE_NAME=" + name,
                                  "RDMA_LAB_TARGET=vm", "RDMA_LAB_IDLE=5",
                                  "RDMA_LAB_MACHINE_BOOT=400"};
    argv.insert(argv.end(), variables.begin(), variables.end());
    argv.push_back(kLab);
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
}

// A shell command line, for stdin and pipes.
Result sh(const std::string& line, std::chrono::milliseconds timeout = 120s) {
    return run({"/bin/sh", "-c", line}, timeout);
}

// Stops the named machine whatever happened in the test.
struct MachineGuard {
    std::string name;
    std::vector<std::string> variables;
    ~MachineGuard() { run(lab_command(name, {"down"}, variables), 60s); }
};

// The qemu processes whose command line names this machine's state folder.
int qemu_processes_of(const std::string& state) {
    const auto result =
        sh("for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f 2>/dev/null; echo; done | "
           "grep -F '" +
               state + "' | grep -c '^qemu-system' || true",
           20s);
    return std::stoi("0" + result.out);
}

std::string state_folder(const std::string& status_out) {
    std::smatch match;
    REQUIRE(std::regex_search(status_out, match, std::regex(R"(state in (\S+))")));
    return match[1];
}

// A program on a pseudo-terminal, as in a student's terminal window.
class Terminal {
  public:
    Terminal(const std::vector<std::string>& argv, unsigned short rows, unsigned short columns) {
        winsize size{.ws_row = rows, .ws_col = columns, .ws_xpixel = 0, .ws_ypixel = 0};
        pid_ = ::forkpty(&master_, nullptr, nullptr, &size);
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {
            std::vector<char*> args;
            for (const auto& arg : argv) {
                args.push_back(const_cast<char*>(arg.c_str()));
            }
            args.push_back(nullptr);
            ::execv(args[0], args.data());
            ::_exit(127);
        }
    }
    ~Terminal() {
        if (pid_ > 0 && !reaped_) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        ::close(master_);
    }
    Terminal(const Terminal&) = delete;
    Terminal& operator=(const Terminal&) = delete;

    void type(const std::string& keys) {
        REQUIRE(::write(master_, keys.data(), keys.size()) == static_cast<ssize_t>(keys.size()));
    }
    // Read until the screen so far matches @p pattern; false at the deadline.
    bool wait_for(const std::regex& pattern, std::chrono::milliseconds timeout) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (!std::regex_search(screen_, pattern)) {
            if (std::chrono::steady_clock::now() >= deadline || !read_some(200ms)) {
                if (std::chrono::steady_clock::now() >= deadline) {
                    return false;
                }
            }
        }
        return true;
    }
    // The exit status, or -1 at the deadline.
    int wait_exit(std::chrono::milliseconds timeout) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (std::chrono::steady_clock::now() < deadline) {
            read_some(100ms);
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                reaped_ = true;
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
        }
        return -1;
    }
    [[nodiscard]] const std::string& screen() const { return screen_; }

  private:
    bool read_some(std::chrono::milliseconds timeout) {
        pollfd fd{master_, POLLIN, 0};
        if (::poll(&fd, 1, static_cast<int>(timeout.count())) <= 0) {
            return false;
        }
        char buffer[4096];
        const auto got = ::read(master_, buffer, sizeof buffer);
        if (got <= 0) {
            return false;
        }
        screen_.append(buffer, static_cast<std::size_t>(got));
        return true;
    }
    int master_ = -1;
    pid_t pid_ = -1;
    bool reaped_ = false;
    std::string screen_;
};

}  // namespace

TEST_CASE("./lab up, status, shell and down: one machine serves every terminal") {
    if (skipped_inside_vm()) {
        return;
    }
    // Catch2 runs this body once per section; the machine boots on the first
    // pass only, and stops when the test program ends.
    static const std::string name = "test-shell-" + std::to_string(::getpid());
    static const MachineGuard guard{name, {}};
    static const Result up = run(lab_command(name, {"up"}), 400s);
    INFO(up.out << up.err);
    REQUIRE(up.exit_code == 0);
    CHECK(up.err.find("starting the lab machine") != std::string::npos);
    CHECK(std::regex_search(up.err,
                            std::regex(R"(is up: Linux \S+, rxe0 on lab0 \(10\.77\.0\.1\))")));
    if (run(lab_command(name, {"status"}), 30s).exit_code != 0) {
        // (after the section that stops it)
        REQUIRE(run(lab_command(name, {"up"}), 400s).exit_code == 0);
    }

    const auto status = run(lab_command(name, {"status"}), 30s);
    REQUIRE(status.exit_code == 0);
    CHECK(std::regex_search(status.out,
                            std::regex(R"(is up: Linux \S+, rxe0 on lab0 \(10\.77\.0\.1\))")));
    CHECK(std::regex_search(status.out, std::regex(R"(SSH on 127\.0\.0\.1:\d+)")));

    SECTION("a second ./lab up finds it up and boots nothing") {
        const auto again = run(lab_command(name, {"up"}), 60s);
        CHECK(again.exit_code == 0);
        CHECK(again.err.find("starting") == std::string::npos);
        CHECK(again.err.find("microvm: booting") == std::string::npos);
    }
    SECTION(
        "a command runs there: its output, exit status, folder, variables and input come back") {
        const auto state = run(
            lab_command(name, {"shell", "cat", "/sys/class/infiniband/rxe0/ports/1/state"}), 60s);
        CHECK(state.exit_code == 0);
        CHECK(state.out == "4: ACTIVE\n");
        CHECK(run(lab_command(name, {"shell", "sh", "-c", "exit 7"}), 60s).exit_code == 7);
        const auto where = sh("cd " LAB_SOURCE_DIR "/lessons && env RDMA_LAB_MACHINE_NAME=" + name +
                              " RDMA_LAB_PROBE=passed " + kLab +
                              " shell sh -c 'pwd; echo $RDMA_LAB_PROBE; hostname'");
        CHECK(where.out == std::string(LAB_SOURCE_DIR) + "/lessons\npassed\nrdma-lab-vm\n");
        const auto piped = sh("printf 'one\\ntwo\\n' | env RDMA_LAB_MACHINE_NAME=" + name + " " +
                              kLab + " shell wc -l");
        CHECK(piped.out == "2\n");
    }
    SECTION("./lab run uses it: no VM boots, and two runs at once both work") {
        const auto devices = run(lab_command(name, {"run", "01_devices"}), 120s);
        INFO(devices.out << devices.err);
        CHECK(devices.exit_code == 0);
        CHECK(devices.out.find("Step 1: 1 RDMA device(s) found") != std::string::npos);
        CHECK(devices.err.find("microvm: booting") == std::string::npos);

        Process first(lab_command(name, {"run", "07_rdma_write"}));
        Process second(lab_command(name, {"run", "07_rdma_write"}));
        for (auto* pair : {&first, &second}) {
            const auto result = pair->wait(180s);
            INFO(result.out << result.err);
            CHECK(result.exit_code == 0);
            CHECK(result.out.find("[server] Step 9: the server's buffer holds: \"hello verbs\"") !=
                  std::string::npos);
            // The measuring program its "Things to try" run is built too.
            CHECK(result.err.find("building 07_rdma_write bench_07_rdma_write") !=
                  std::string::npos);
        }
    }
    SECTION("Ctrl-C on a terminal reaches the program; the shell and the machine go on") {
        Terminal terminal(lab_command(name, {"shell"}), 33, 111);
        REQUIRE(terminal.wait_for(std::regex("lab machine: Linux"), 60s));
        terminal.type("stty size; sleep 300\n");
        REQUIRE(terminal.wait_for(std::regex("33 111"), 30s));
        // A second for the shell to start sleep: a Ctrl-C that comes while the
        // shell has forked but sleep has not started yet is lost there (see
        // the command below), and emulation makes that window wide.
        std::this_thread::sleep_for(1s);
        terminal.type("\x03");
        terminal.type("echo after-$((40+2))\n");
        INFO(terminal.screen());
        CHECK(terminal.wait_for(std::regex("after-42"), 30s));
        terminal.type("exit 5\n");
        CHECK(terminal.wait_exit(30s) == 5);

        // A command on a terminal: Ctrl-C once it runs ends it as a shell would, 130.
        // exec: sh starts sleep without a fork, so the Ctrl-C typed the instant
        // "started" appears finds sleep running. With a fork in between, 5 of 30
        // such Ctrl-Cs were lost (each time a second one worked); with exec,
        // none of 30 (vm/README.md).
        Terminal command(lab_command(name, {"shell", "sh", "-c", "echo started; exec sleep 300"}),
                         24, 80);
        REQUIRE(command.wait_for(std::regex("started"), 120s));
        command.type("\x03");
        CHECK(command.wait_exit(30s) == 130);
    }
    SECTION("without a terminal, a Ctrl-C of ./lab shell stops the command in the machine") {
        Process sleeper(
            lab_command(name, {"shell", "sh", "-c", "echo started; sleep 271; echo finished"}));
        REQUIRE(sleeper.wait_for_output("started", 120s));
        sleeper.kill(SIGINT);
        const auto stopped = sleeper.wait(30s);
        CHECK_FALSE(stopped.timed_out);
        CHECK(stopped.out.find("finished") == std::string::npos);
        const auto left = run(
            lab_command(
                name, {"shell", "sh", "-c",
                       "cat /proc/[0-9]*/cmdline | tr '\\0' ' ' | grep -c 'sleep 27[1]' || true"}),
            60s);
        CHECK(left.out == "0\n");
    }
    SECTION("without a terminal, SIGINT or SIGTERM of ./lab run stops every program it started") {
        // An editor's run button, a script or timeout(1): no terminal carries
        // the signal into the machine, ./lab passes it on. The two-process
        // lesson is the case a student meets (a long ping-pong, both sides
        // busy polling); the one-process one waits for port events.
        struct Case {
            std::vector<std::string> run;
            std::string running;  ///< printed once every program is running
            int signal_number;
            std::string program;  ///< what must be gone from the machine
        };
        const std::vector<Case> cases{
            {{"run", "06_send_recv", "-n", "2000000"},
             "[client] client: ping-pong of",
             SIGINT,
             "06_send_recv"},
            {{"run", "10_events/async_events", "--port-events", "200"},
             "Event 4: waiting",
             SIGTERM,
             "10_async_events"},
        };
        for (const auto& c : cases) {
            Process lab(lab_command(name, c.run));
            REQUIRE(lab.wait_for_output(c.running, 180s));
            lab.kill(c.signal_number);
            const auto stopped = lab.wait(60s);
            INFO(c.run[1] << " stopped by signal " << c.signal_number << ":\n"
                          << stopped.out << stopped.err);
            CHECK_FALSE(stopped.timed_out);
            CHECK(stopped.exit_code == 128 + c.signal_number);
            std::this_thread::sleep_for(2s);
            // [x]: the pattern must not find the grep that carries it.
            const std::string pattern = "[" + c.program.substr(0, 1) + "]" + c.program.substr(1);
            const auto left =
                run(lab_command(name, {"shell", "sh", "-c",
                                       "cat /proc/[0-9]*/cmdline | tr '\\0' '\\n' | grep -c '" +
                                           pattern + "' || true"}),
                    60s);
            CHECK(left.out == "0\n");
        }
    }
    SECTION("./lab down stops it and leaves no process behind") {
        const auto folder = state_folder(status.out);
        const auto down = run(lab_command(name, {"down"}), 60s);
        CHECK(down.exit_code == 0);
        CHECK(down.err.find("is down") != std::string::npos);
        CHECK(qemu_processes_of(folder) == 0);
        const auto after = run(lab_command(name, {"status"}), 30s);
        CHECK(after.exit_code == 3);
        CHECK(after.out.find("is down") != std::string::npos);
    }
}

TEST_CASE("a lab machine killed from outside is noticed and cleaned up by the next command") {
    if (skipped_inside_vm()) {
        return;
    }
    const std::string name = "test-killed-" + std::to_string(::getpid());
    MachineGuard guard{name, {}};
    REQUIRE(run(lab_command(name, {"up"}), 400s).exit_code == 0);
    const auto status = run(lab_command(name, {"status"}), 30s);
    std::smatch pid;
    REQUIRE(std::regex_search(status.out, pid, std::regex(R"(qemu pid (\d+))")));
    REQUIRE(::kill(std::stoi(pid[1]), SIGKILL) == 0);
    std::this_thread::sleep_for(1s);

    const auto after = run(lab_command(name, {"status"}), 30s);
    CHECK(after.exit_code == 3);
    CHECK(after.err.find(
              "was no longer running (stopped from outside, or the host restarted); cleaned up") !=
          std::string::npos);
    const auto again =
        run(lab_command(name, {"shell", "cat", "/sys/class/infiniband/rxe0/ports/1/state"}), 400s);
    CHECK(again.err.find("starting the lab machine") != std::string::npos);
    CHECK(again.out == "4: ACTIVE\n");
}

TEST_CASE("a lab machine that misses its boot deadline is stopped, tried once more, and reported") {
    if (skipped_inside_vm()) {
        return;
    }
    const std::string name = "test-deadline-" + std::to_string(::getpid());
    MachineGuard guard{name, {}};
    const std::string marker = "lab.test=deadline-" + std::to_string(::getpid());
    const auto up =
        run(lab_command(name, {"up"}, {"RDMA_LAB_MACHINE_BOOT=1", "RDMA_LAB_VM_APPEND=" + marker}),
            120s);
    INFO(up.err);
    CHECK(up.exit_code == 2);
    CHECK(up.err.find("did not come up within 1s; stopping it and trying once more") !=
          std::string::npos);
    CHECK(up.err.find("did not come up twice") != std::string::npos);
    const auto status = run(lab_command(name, {"status"}), 30s);
    CHECK(status.exit_code == 3);
    CHECK(sh("ps -eo args | grep -F '" + marker + "' | grep -c '^qemu-system' || true", 20s).out ==
          "0\n");
}

TEST_CASE("an idle lab machine stops by itself") {
    if (skipped_inside_vm()) {
        return;
    }
    const std::string name = "test-idle-" + std::to_string(::getpid());
    MachineGuard guard{name, {}};
    REQUIRE(run(lab_command(name, {"up"}, {"RDMA_LAB_IDLE=10s"}), 400s).exit_code == 0);
    std::this_thread::sleep_for(25s);
    const auto status = run(lab_command(name, {"status"}), 30s);
    CHECK(status.exit_code == 3);
    CHECK(status.err.find("had no session for 10 seconds and stopped itself") != std::string::npos);
}

TEST_CASE("where lessons run on the host, ./lab up, shell and down say so and start nothing") {
    if (skipped_inside_vm()) {
        return;
    }
    const std::string name = "test-host-" + std::to_string(::getpid());
    const std::vector<std::string> on_host{"RDMA_LAB_TARGET=host"};
    for (const auto* action : {"up", "status"}) {
        const auto result = run(lab_command(name, {action}, on_host), 60s);
        CHECK(result.exit_code == 0);
        CHECK(result.err.find("lessons run on this host") != std::string::npos);
    }
    const auto here = run(lab_command(name, {"shell", "hostname"}, on_host), 60s);
    CHECK(here.exit_code == 0);
    CHECK(here.out.find("rdma-lab-vm") == std::string::npos);
    CHECK(sh("ps -eo args | grep -F 'test-host-' | grep -c '^qemu-system' || true", 20s).out ==
          "0\n");
}

namespace {

// A two-process lesson's by-hand recipe: its README's block of "./lab shell"
// lines marked "# terminal 1: the server", "# terminal 2: ...", and what each
// side prints when it worked.
struct ByHand {
    std::string readme;        // relative to the source folder
    std::string server_ready;  // the server's line once it waits for clients
    std::string server_done;   // in the server's output at the end
    std::string client_done;   // in every client's output at the end
};

// The commands of the README's by-hand block, in terminal order, with the
// build folder the README names (build/default) replaced by this tree's.
std::vector<std::string> by_hand_commands(const std::string& readme) {
    std::ifstream file(std::string(LAB_SOURCE_DIR) + "/" + readme);
    REQUIRE(file.good());
    std::vector<std::string> commands;
    const std::regex terminal_line(R"(^(\./lab shell [^#]*?)\s+# terminal (\d+):)");
    for (std::string line; std::getline(file, line);) {
        std::smatch match;
        if (std::regex_search(line, match, terminal_line)) {
            REQUIRE(std::stoul(match[2]) == commands.size() + 1);
            std::string command = match[1];
            const std::string readme_build = "build/default/";
            if (const auto at = command.find(readme_build); at != std::string::npos) {
                command.replace(at, readme_build.size(), kBuild + "/");
            }
            commands.push_back(command);
        }
    }
    return commands;
}

}  // namespace

TEST_CASE("every two-process lesson's by-hand recipe works as its README writes it") {
    if (skipped_inside_vm()) {
        return;
    }
    // One machine for every lesson's section (Catch2 runs the body once per section).
    static const std::string name = "test-by-hand-" + std::to_string(::getpid());
    static const MachineGuard guard{name, {}};
    REQUIRE(run(lab_command(name, {"up"}), 400s).exit_code == 0);

    const std::vector<ByHand> recipes{
        {"lessons/05_exchange/README.md", "waiting for a client", "server: both sides are in RTS",
         "client: both sides are in RTS"},
        {"lessons/06_send_recv/README.md", "waiting for a client", "100 iters in", "100 iters in"},
        {"lessons/07_rdma_write/README.md", "waiting for a client",
         "Step 9: the server's buffer holds: \"hello verbs\"", "Step 9: write completed: success"},
        {"lessons/08_write_with_imm/README.md", "waiting for a client",
         "the receive buffer holds \"and this came by send\"", "Step 9: completion IBV_WC_SEND"},
        {"lessons/09_rdma_read/README.md", "waiting for a client", "(it matches)",
         "Step 9: echo sent"},
        {"lessons/10_events/README.md", "waiting for a client", "500 of 500 messages arrived",
         "client: sent 500 messages"},
        {"lessons/11_rdma_cm/README.md", "listening on", "Step 9: the client's RDMA write left",
         "Step 10: disconnected"},
        // (lesson 12's server accepts its clients itself: its first line says it is up)
        {"lessons/12_atomics/README.md", "atomic_cap",
         "counter 1000, lock 0, protected word 400 (expected 1000, 0, 400): correct",
         "fetch-and-add: 500 operations"},
    };
    for (const auto& recipe : recipes) {
        DYNAMIC_SECTION(recipe.readme) {
            const auto commands = by_hand_commands(recipe.readme);
            REQUIRE(commands.size() >= 2);
            const std::string prefix =
                "cd " LAB_SOURCE_DIR " && exec env RDMA_LAB_MACHINE_NAME=" + name +
                " RDMA_LAB_TARGET=vm ";
            Process server({"/bin/sh", "-c", prefix + commands[0]});
            REQUIRE(server.wait_for_output(recipe.server_ready, 120s));
            std::vector<std::unique_ptr<Process>> clients;
            for (std::size_t i = 1; i < commands.size(); ++i) {
                clients.push_back(std::make_unique<Process>(
                    std::vector<std::string>{"/bin/sh", "-c", prefix + commands[i]}));
            }
            for (auto& client : clients) {
                const auto result = client->wait(180s);
                INFO(commands[0] << "\n" << result.out << result.err);
                CHECK(result.exit_code == 0);
                CHECK(result.out.find(recipe.client_done) != std::string::npos);
            }
            const auto served = server.wait(60s);
            INFO(served.out << served.err);
            CHECK(served.exit_code == 0);
            CHECK(served.out.find(recipe.server_done) != std::string::npos);
        }
    }
}

TEST_CASE("a user without root runs lessons after ./lab setup: first run, lab machine, shell") {
    if (skipped_inside_vm()) {
        return;
    }
    if (::geteuid() != 0) {
        WARN(
            "SKIPPED: this test makes an unprivileged student out of root; here it already runs as "
            "one");
        return;
    }
    // A student's fresh copy of the course in a home of their own, with the
    // PATH a normal user has (no /usr/sbin), nothing in their cache yet.
    const std::string home = "/tmp/lab-student-" + std::to_string(::getpid());
    const std::string copy = home + "/rdma-verbs-lab";
    const auto made =
        sh("mkdir -p " + copy +
           " && tar -C " LAB_SOURCE_DIR " --exclude=./build --exclude=./.git -cf - . | tar -C " +
           copy + " -xf - && chown -R 65534:65534 " + home);
    REQUIRE(made.exit_code == 0);
    struct Cleanup {
        std::string home;
        ~Cleanup() { sh("rm -rf " + home, 120s); }
    } cleanup{home};
    const auto student = [&](const std::string& command, std::chrono::seconds timeout) {
        return run(
            {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/env",
             "-i", "HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin", "RDMA_LAB_TARGET=vm",
             "RDMA_LAB_IDLE=5", "/bin/sh", "-c", "cd " + copy + " && " + command},
            timeout);
    };
    const auto first = student("./lab run 01_devices", 900s);
    INFO(first.out << first.err);
    REQUIRE(first.exit_code == 0);
    CHECK(first.out.find("Step 1: 1 RDMA device(s) found") != std::string::npos);
    CHECK(first.err.find("fetching the Debian kernel") != std::string::npos);

    const auto up =
        student("./lab up && ./lab shell cat /sys/class/infiniband/rxe0/ports/1/state", 400s);
    INFO(up.out << up.err);
    CHECK(up.exit_code == 0);
    CHECK(up.out == "4: ACTIVE\n");
    const auto warm = student("./lab run 01_devices", 300s);
    CHECK(warm.exit_code == 0);
    CHECK(warm.out.find("Step 1: 1 RDMA device(s) found") != std::string::npos);
    CHECK(warm.err.find("microvm: booting") == std::string::npos);
    const auto down = student("./lab down", 60s);
    CHECK(down.exit_code == 0);
    CHECK(down.err.find("is down") != std::string::npos);
}

TEST_CASE("the lab machine boots Debian 13 too: two terminals run ibv_rc_pingpong on its kernel") {
    if (skipped_inside_vm()) {
        return;
    }
    if (sh("test -f \"$(" LAB_SOURCE_DIR "/vm/userland.sh trixie --path)/ready\"", 30s).exit_code !=
        0) {
        WARN(
            "SKIPPED: no Debian 13 userland here (CI makes one; ./lab test --distro trixie makes "
            "it)");
        return;
    }
    const std::string name = "test-trixie-" + std::to_string(::getpid());
    const std::vector<std::string> trixie{"--distro", "trixie"};
    const auto with = [&](const std::vector<std::string>& args) {
        std::vector<std::string> all{args.front()};
        all.insert(all.end(), trixie.begin(), trixie.end());
        all.insert(all.end(), args.begin() + 1, args.end());
        return lab_command(name, all);
    };
    struct Down {
        std::vector<std::string> command;
        ~Down() { run(command, 60s); }
    } down{with({"down"})};

    const auto up = run(with({"up"}), 600s);
    INFO(up.out << up.err);
    REQUIRE(up.exit_code == 0);
    CHECK(up.err.find("the lab machine (Debian trixie) is up: Linux 6.12") != std::string::npos);
    const auto release = run(with({"shell", "cat", "/etc/debian_version"}), 60s);
    CHECK(release.out.rfind("13.", 0) == 0);

    Process server(with({"shell", "ibv_rc_pingpong", "-d", "rxe0", "-g", "1", "-n", "20"}));
    // ibv_rc_pingpong's client tries once: a client that came before the
    // server's session was listening (a busy host is slow to start one) is
    // refused, and tried again while the server still waits.
    lab::test::Result client;
    for (int attempt = 0; attempt < 10; ++attempt) {
        std::this_thread::sleep_for(3s);
        client = run(
            with({"shell", "ibv_rc_pingpong", "-d", "rxe0", "-g", "1", "-n", "20", "10.77.0.1"}),
            120s);
        if ((client.out + client.err).find("Couldn't connect to 10.77.0.1") == std::string::npos) {
            break;
        }
    }
    INFO(client.out << client.err);
    CHECK(client.exit_code == 0);
    CHECK(client.out.find("20 iters in") != std::string::npos);
    const auto served = server.wait(60s);
    CHECK(served.exit_code == 0);
    CHECK(served.out.find("20 iters in") != std::string::npos);
}

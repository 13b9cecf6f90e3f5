// SPDX-License-Identifier: MIT
#include "sandbox.hpp"

#include <fcntl.h>
#include <grp.h>
#include <linux/magic.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lab/check.hpp"

namespace lab::grade {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t kKeptOutput = 8 * 1024;  // bytes kept from the start and from the end
constexpr const char* kCgroupMount = "/sys/fs/cgroup";
constexpr const char* kCgroupParent = "/sys/fs/cgroup/rdma-lab-grade";

std::string signal_name(int signal_number) {
    switch (signal_number) {
        case SIGSEGV:
            return "segmentation fault (SIGSEGV): a bad pointer or an out-of-range index";
        case SIGABRT:
            return "aborted (SIGABRT): an uncaught exception, a failed assertion or abort()";
        case SIGFPE:
            return "arithmetic error (SIGFPE): a division by zero?";
        case SIGBUS:
            return "bus error (SIGBUS)";
        case SIGILL:
            return "illegal instruction (SIGILL)";
        case SIGKILL:
            return "killed (SIGKILL)";
        case SIGTERM:
            return "terminated (SIGTERM)";
        case SIGPIPE:
            return "broken pipe (SIGPIPE)";
        default:
            break;
    }
    const char* text = ::strsignal(signal_number);
    return std::string(text != nullptr ? text : "signal") + " (signal " +
           std::to_string(signal_number) + ")";
}

std::string mib(std::uint64_t bytes) {
    return std::to_string(bytes >> 20) + " MiB";
}

// --- cgroup v2 ------------------------------------------------------------------

bool write_file(const std::string& path, std::string_view text) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    return ok;
}

std::string read_file(const std::string& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

// The value of @p key in a "key value" file such as memory.events.
std::uint64_t event_count(const std::string& path, const std::string& key) {
    std::istringstream lines(read_file(path));
    std::string name;
    std::uint64_t value = 0;
    while (lines >> name >> value) {
        if (name == key) {
            return value;
        }
    }
    return 0;
}

bool is_cgroup2(const char* path) {
    struct statfs info {};
    return ::statfs(path, &info) == 0 && info.f_type == CGROUP2_SUPER_MAGIC;
}

// The parent cgroup of every run, with the memory and pids controllers, set
// up once per process; empty when cgroups cannot be used here.
const std::string& cgroup_parent() {
    static const std::string parent = [] {
        if (::geteuid() != 0) {
            return std::string();
        }
        if (!is_cgroup2(kCgroupMount)) {
            // The micro-VM mounts sysfs but no cgroup file system: mount it, but
            // only over an empty directory (never over a host's cgroup v1 tree).
            std::error_code error;
            if (!fs::is_directory(kCgroupMount, error) || !fs::is_empty(kCgroupMount, error) ||
                ::mount("cgroup2", kCgroupMount, "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                        nullptr) != 0) {
                return std::string();
            }
        }
        write_file(std::string(kCgroupMount) + "/cgroup.subtree_control", "+memory +pids");
        ::mkdir(kCgroupParent, 0755);
        write_file(std::string(kCgroupParent) + "/cgroup.subtree_control", "+memory +pids");
        const std::string controllers =
            read_file(std::string(kCgroupParent) + "/cgroup.subtree_control");
        if (controllers.find("memory") == std::string::npos ||
            controllers.find("pids") == std::string::npos) {
            return std::string();
        }
        return std::string(kCgroupParent);
    }();
    return parent;
}

// A cgroup @p name under @p parent with these limits; empty when it cannot be made.
std::string make_cgroup(const std::string& parent, const std::string& name, std::uint64_t memory,
                        unsigned processes, bool with_children) {
    if (parent.empty()) {
        return {};
    }
    const std::string path = parent + "/" + name;
    if (::mkdir(path.c_str(), 0755) != 0 ||
        !write_file(path + "/memory.max", std::to_string(memory)) ||
        !write_file(path + "/pids.max", std::to_string(processes)) ||
        (with_children && !write_file(path + "/cgroup.subtree_control", "+memory +pids"))) {
        ::rmdir(path.c_str());
        return {};
    }
    write_file(path + "/memory.swap.max", "0");  // absent without swap accounting: fine
    return path;
}

void remove_cgroup(const std::string& path) {
    if (path.empty()) {
        return;
    }
    write_file(path + "/cgroup.kill", "1");
    // A cgroup with a child cgroup cannot go (rmdir says EBUSY however long
    // one waits): the run's cgroup holds the fork server's, so the children first.
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(path, error)) {
        if (entry.is_directory(error)) {
            remove_cgroup(entry.path().string());
        }
    }
    for (int attempt = 0; attempt < 200; ++attempt) {
        if (::rmdir(path.c_str()) == 0 || errno == ENOENT) {
            return;
        }
        ::usleep(10'000);
    }
}

// --- the child's side: only system calls on prepared strings ----------------

// A mount or file operation of the strict set-up, prepared before fork.
struct Step {
    enum class Op { mkdir, touch, symlink, bind, bind_ro, tmpfs, proc } op;
    std::string source, target, data;
};

[[noreturn]] void child_fail(int report_fd, const char* what) {
    // The parent reads this text and turns it into its exception.
    char text[256];
    const int length = std::snprintf(text, sizeof text, "%s: %s", what, std::strerror(errno));
    if (length > 0) {
        [[maybe_unused]] auto ignored = ::write(report_fd, text, static_cast<std::size_t>(length));
    }
    ::_exit(121);
}

void set_limit(int resource, rlim_t value) {
    const rlimit limit{value, value};
    ::setrlimit(resource, &limit);
}

// True in a build with AddressSanitizer (the asan preset). Such a program
// reserves terabytes of address space for ASan's shadow memory as it starts
// (mapped without backing: nothing is used until touched), so it cannot start
// under RLIMIT_AS at all. The preset builds the checks and the student's
// program alike, so a check knows from its own build.
constexpr bool kAddressSanitizer =
#if defined(__SANITIZE_ADDRESS__)
    true;
#else
    false;
#endif

void apply_rlimits(const Limits& limits, bool count_processes) {
    set_limit(RLIMIT_CORE, 0);
    set_limit(RLIMIT_NOFILE, 256);
    set_limit(RLIMIT_FSIZE, limits.scratch_bytes);
    set_limit(RLIMIT_MEMLOCK, limits.locked_bytes);
    // In a sanitizer build, memory.max of the run's cgroup (strict isolation)
    // is the cap, as it is the cap on what a program really uses in any build.
    if (!kAddressSanitizer) {
        set_limit(RLIMIT_AS, limits.address_space_bytes);
    }
    const rlimit cpu{limits.cpu_seconds, limits.cpu_seconds + 5};
    ::setrlimit(RLIMIT_CPU, &cpu);
    if (count_processes) {
        set_limit(RLIMIT_NPROC, limits.processes + 16);  // the cgroup's pids.max bites first
    }
}

// Give the program its standard streams and the control socket as fd 4; close the rest.
void wire_descriptors(int output_fd, int control_fd, int null_fd) {
    // Move the two above 4 first, so that no dup2 overwrites the other.
    const int output = ::fcntl(output_fd, F_DUPFD, 10);
    const int control = ::fcntl(control_fd, F_DUPFD, 10);
    ::dup2(null_fd, STDIN_FILENO);
    ::dup2(output, STDOUT_FILENO);
    ::dup2(output, STDERR_FILENO);
    ::dup2(control, 4);
    for (int fd = 5; fd < 1024; ++fd) {
        ::close(fd);
    }
    ::close(3);
}

}  // namespace

Limits Limits::from_environment() {
    Limits limits;
    if (const char* seconds = std::getenv("RDMA_LAB_CHECK_TIMEOUT")) {
        const long value = std::strtol(seconds, nullptr, 10);
        if (value > 0) {
            limits.deadline = std::chrono::seconds(value);
        }
    }
    return limits;
}

Isolation isolation_from_environment() {
    const char* chosen = std::getenv("LAB_SANDBOX");
    if (chosen != nullptr && std::string_view(chosen) == "strict") {
        return Isolation::strict;
    }
    if (chosen != nullptr && std::string_view(chosen) == "plain") {
        return Isolation::plain;
    }
    return ::geteuid() == 0 ? Isolation::strict : Isolation::plain;
}

std::string Ending::describe(const Limits& limits) const {
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(limits.deadline).count();
    switch (kind) {
        case Kind::exited:
            return "your program ended (exit status " + std::to_string(value) +
                   ") before the check was over: does your code call exit()?";
        case Kind::signaled:
            return "your program crashed: " + signal_name(value);
        case Kind::deadline:
            return "no result within " + std::to_string(seconds) +
                   " s: your code hangs or sleeps (a loop that never ends, a wait without a "
                   "timeout?)";
        case Kind::output:
            return "your program printed more than " + mib(limits.output_bytes) +
                   " and was stopped: print less";
        case Kind::memory:
            return "your program used more than " + mib(limits.memory_bytes) +
                   " of memory and was stopped";
        case Kind::processes:
            return "your program tried to start more than " + std::to_string(limits.processes) +
                   " processes and was stopped";
        case Kind::cpu:
            return "your program used more than " + std::to_string(limits.cpu_seconds) +
                   " s of CPU time and was stopped";
        case Kind::lost:
            break;
    }
    return "your program vanished without an exit status";
}

// --- the fork server ------------------------------------------------------------

Sandbox::Sandbox(const std::string& program, const Limits& limits, Isolation isolation)
    : limits_(limits), isolation_(isolation) {
    int output_pipe[2];
    lab::check(::pipe2(output_pipe, O_CLOEXEC) == 0 ? 0 : -1, "pipe2");
    output_fd_ = output_pipe[0];
    const auto [ours, theirs] = channel_pair();
    control_ = std::make_unique<Channel>(ours);
    try {
        if (isolation == Isolation::strict) {
            start_strict(program, theirs, output_pipe[1]);
        } else {
            start_plain(program, theirs, output_pipe[1]);
        }
    } catch (...) {
        ::close(output_pipe[1]);
        ::close(theirs);
        release();
        throw;
    }
    ::close(output_pipe[1]);  // the program holds the only write end now
    ::close(theirs);
    output_reader_ = std::thread([this] { read_output(); });
}

void Sandbox::start_plain(const std::string& program, int control_fd, int output_write) {
    std::vector<std::string> argv_text = {program};
    std::vector<char*> argv;
    for (auto& arg : argv_text) {
        argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const std::string cannot_start = "error: cannot start " + program + "\n";
    child_ = ::fork();
    if (child_ < 0) {
        ::close(null_fd);
        lab::fail("fork", errno);
    }
    if (child_ == 0) {
        ::setpgid(0, 0);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        apply_rlimits(limits_, false);
        wire_descriptors(output_write, control_fd, null_fd);
        ::setenv("LAB_ZYGOTE", "1", 1);
        ::execv(argv[0], argv.data());
        [[maybe_unused]] auto ignored =
            ::write(STDERR_FILENO, cannot_start.data(), cannot_start.size());
        ::_exit(127);
    }
    ::close(null_fd);
}

void Sandbox::start_strict(const std::string& program, int control_fd, int output_write) {
    if (::geteuid() != 0) {
        throw lab::Error(
            "the sandbox needs root (it runs in the micro-VM); LAB_SANDBOX=plain runs without it");
    }
    // Everything the children need, prepared now: after fork they only make system calls.
    char root_template[] = "/tmp/rdma-lab-sandbox.XXXXXX";
    lab::check(::mkdtemp(root_template) != nullptr ? 0 : -1, "mkdtemp");
    root_dir_ = root_template;
    static std::atomic<unsigned> runs{0};
    const unsigned run_number = runs++;
    const uid_t uid = 200000 + static_cast<uid_t>((::getpid() * 64 + run_number) % 100000);

    std::vector<Step> steps;
    const std::string& root = root_dir_;
    steps.push_back({Step::Op::tmpfs, "", root, "mode=0755,size=1m"});
    for (const char* top : {"bin", "sbin", "lib", "lib64", "lib32", "libx32"}) {
        const fs::path host = fs::path("/") / top;
        std::error_code error;
        if (fs::is_symlink(host, error)) {
            steps.push_back(
                {Step::Op::symlink, fs::read_symlink(host, error).string(), root + "/" + top, ""});
        } else if (fs::is_directory(host, error)) {
            steps.push_back({Step::Op::mkdir, "", root + "/" + top, ""});
            steps.push_back({Step::Op::bind_ro, host.string(), root + "/" + top, ""});
        }
    }
    for (const char* dir : {"/usr", "/etc", "/sys", "/dev", "/proc", "/tmp"}) {
        steps.push_back({Step::Op::mkdir, "", root + dir, ""});
    }
    steps.push_back({Step::Op::bind_ro, "/usr", root + "/usr", ""});
    steps.push_back({Step::Op::bind_ro, "/sys", root + "/sys", ""});
    // /etc: only what the loader and rdma-core read.
    for (const char* file : {"/etc/ld.so.cache", "/etc/localtime"}) {
        if (fs::exists(file)) {
            steps.push_back({Step::Op::touch, "", root + file, ""});
            steps.push_back({Step::Op::bind_ro, file, root + file, ""});
        }
    }
    if (fs::is_directory("/etc/rdma")) {
        steps.push_back({Step::Op::mkdir, "", root + "/etc/rdma", ""});
        steps.push_back({Step::Op::bind_ro, "/etc/rdma", root + "/etc/rdma", ""});
    }
    // libibverbs loads every provider listed in /etc/libibverbs.d; the micro-VM
    // has only Soft-RoCE (or Soft-iWARP), and loading 17 libraries costs an
    // emulated CPU a good part of a second.
    steps.push_back({Step::Op::mkdir, "", root + "/etc/libibverbs.d", ""});
    for (const char* driver : {"/etc/libibverbs.d/rxe.driver", "/etc/libibverbs.d/siw.driver"}) {
        if (fs::exists(driver)) {
            steps.push_back({Step::Op::touch, "", root + driver, ""});
            steps.push_back({Step::Op::bind_ro, driver, root + driver, ""});
        }
    }
    steps.push_back({Step::Op::tmpfs, "", root + "/dev", "mode=0755,size=64k"});
    for (const char* node :
         {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}) {
        steps.push_back({Step::Op::touch, "", root + node, ""});
        steps.push_back({Step::Op::bind, node, root + node, ""});
    }
    if (fs::is_directory("/dev/infiniband")) {
        steps.push_back({Step::Op::mkdir, "", root + "/dev/infiniband", ""});
        steps.push_back({Step::Op::bind, "/dev/infiniband", root + "/dev/infiniband", ""});
    }
    steps.push_back({Step::Op::tmpfs, "", root + "/tmp",
                     "mode=0700,uid=" + std::to_string(uid) + ",gid=" + std::to_string(uid) +
                         ",size=" + std::to_string(limits_.scratch_bytes) + ",nr_inodes=4096"});
    steps.push_back({Step::Op::touch, "", root + "/program", ""});
    steps.push_back({Step::Op::bind_ro, program, root + "/program", ""});
    steps.push_back({Step::Op::proc, "", root + "/proc", ""});

    std::vector<std::string> argv_text = {"/program"};
    std::vector<char*> argv;
    for (auto& arg : argv_text) {
        argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    std::vector<std::string> env_text = {"PATH=/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp",
                                         "LANG=C.UTF-8", "LAB_ZYGOTE=1"};
    std::vector<char*> envp;
    for (auto& entry : env_text) {
        envp.push_back(entry.data());
    }
    envp.push_back(nullptr);

    // The run's cgroup: the fork server in a leaf of its own, each check's copy in another.
    cgroup_ = make_cgroup(cgroup_parent(),
                          "run-" + std::to_string(::getpid()) + "-" + std::to_string(run_number),
                          limits_.memory_bytes + (64ULL << 20), limits_.processes + 8, true);
    const std::string server_cgroup = make_cgroup(cgroup_, "server", 64ULL << 20, 8, false);
    const std::string server_procs = server_cgroup.empty() ? "" : server_cgroup + "/cgroup.procs";

    int report_pipe[2], go_pipe[2];
    lab::check(::pipe2(report_pipe, O_CLOEXEC) == 0 ? 0 : -1, "pipe2");
    lab::check(::pipe2(go_pipe, O_CLOEXEC) == 0 ? 0 : -1, "pipe2");
    const pid_t checker = ::getpid();
    const std::string cannot_start = "error: cannot start the program\n";

    child_ = ::fork();
    if (child_ < 0) {
        lab::fail("fork", errno);
    }
    if (child_ == 0) {
        // The relay: stays in this PID namespace so that the check program can wait for it.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != checker) {
            ::_exit(122);
        }
        // Nothing of the check program's stays open here (a channel of a check
        // would never see its end): only what the relay, the init and the
        // server need.
        for (int fd = 3; fd < 1024; ++fd) {
            if (fd != output_write && fd != control_fd && fd != report_pipe[1] &&
                fd != go_pipe[0]) {
                ::close(fd);
            }
        }
        char go = 0;
        if (::read(go_pipe[0], &go, 1) != 1) {  // the check program put it in the cgroup
            ::_exit(123);
        }
        if (::unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) !=
            0) {
            child_fail(report_pipe[1], "unshare");
        }
        const pid_t init = ::fork();
        if (init < 0) {
            child_fail(report_pipe[1], "fork");
        }
        if (init > 0) {
            for (const int fd : {output_write, control_fd, report_pipe[1]}) {
                ::close(fd);
            }
            int status = 0;
            while (::waitpid(init, &status, 0) < 0 && errno == EINTR) {
            }
            ::_exit(0);
        }
        // The namespace's init (PID 1): root, but only inside the new namespaces.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::mount("", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
            child_fail(report_pipe[1], "mount(private)");
        }
        for (const Step& step : steps) {
            const char* target = step.target.c_str();
            int result = 0;
            switch (step.op) {
                case Step::Op::mkdir:
                    result = ::mkdir(target, 0755) == 0 || errno == EEXIST ? 0 : -1;
                    break;
                case Step::Op::touch: {
                    const int fd = ::open(target, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
                    result = fd < 0 ? -1 : ::close(fd);
                    break;
                }
                case Step::Op::symlink:
                    result = ::symlink(step.source.c_str(), target);
                    break;
                case Step::Op::bind:
                    result =
                        ::mount(step.source.c_str(), target, nullptr, MS_BIND | MS_REC, nullptr);
                    break;
                case Step::Op::bind_ro:
                    result =
                        ::mount(step.source.c_str(), target, nullptr, MS_BIND | MS_REC, nullptr);
                    if (result == 0) {
                        result = ::mount("", target, nullptr,
                                         MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV,
                                         nullptr);
                    }
                    break;
                case Step::Op::tmpfs:
                    result =
                        ::mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, step.data.c_str());
                    break;
                case Step::Op::proc:
                    result =
                        ::mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
                    break;
            }
            if (result != 0) {
                child_fail(report_pipe[1], target);
            }
        }
        const pid_t server = ::fork();
        if (server < 0) {
            child_fail(report_pipe[1], "fork");
        }
        if (server == 0) {
            // The student's program: chrooted, unprivileged, limited.
            if (::chroot(root.c_str()) != 0 || ::chdir("/tmp") != 0) {
                child_fail(report_pipe[1], "chroot");
            }
            const int null_fd = ::open("/dev/null", O_RDONLY);
            apply_rlimits(limits_, true);
            ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
            if (::setgroups(0, nullptr) != 0 || ::setresgid(uid, uid, uid) != 0 ||
                ::setresuid(uid, uid, uid) != 0) {
                child_fail(report_pipe[1], "setuid");
            }
            ::close(report_pipe[1]);
            wire_descriptors(output_write, control_fd, null_fd);
            ::execve("/program", argv.data(), envp.data());
            [[maybe_unused]] auto ignored =
                ::write(STDERR_FILENO, cannot_start.data(), cannot_start.size());
            ::_exit(127);
        }
        // Reap every orphan until the fork server ends, then leave: the kernel
        // kills what is left in the namespace.
        for (const int fd : {output_write, control_fd, report_pipe[1]}) {
            ::close(fd);
        }
        for (;;) {
            int status = 0;
            const pid_t ended = ::waitpid(-1, &status, 0);
            if (ended == server || (ended < 0 && errno != EINTR)) {
                ::_exit(0);
            }
        }
    }
    ::close(report_pipe[1]);
    ::close(go_pipe[0]);
    if (!server_procs.empty() && !write_file(server_procs, std::to_string(child_))) {
        remove_cgroup(cgroup_);
        cgroup_.clear();
    }
    [[maybe_unused]] auto ignored = ::write(go_pipe[1], "g", 1);
    ::close(go_pipe[1]);
    // The set-up either fails (its text arrives) or reaches exec (the pipe closes).
    std::string failure;
    char buffer[256];
    for (;;) {
        const ssize_t got = ::read(report_pipe[0], buffer, sizeof buffer);
        if (got > 0) {
            failure.append(buffer, static_cast<std::size_t>(got));
        } else if (got == 0 || errno != EINTR) {
            break;
        }
    }
    ::close(report_pipe[0]);
    if (!failure.empty()) {
        throw lab::Error("the sandbox could not be set up: " + failure);
    }
}

void Sandbox::read_output() {
    char buffer[16384];
    for (;;) {
        const ssize_t got = ::read(output_fd_, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            return;
        }
        const auto size = static_cast<std::size_t>(got);
        std::lock_guard lock(output_mutex_);
        std::size_t used = 0;
        if (output_head_.size() < kKeptOutput) {
            used = std::min(size, kKeptOutput - output_head_.size());
            output_head_.append(buffer, used);
        }
        output_tail_.append(buffer + used, size - used);
        if (output_tail_.size() > kKeptOutput) {
            output_tail_.erase(0, output_tail_.size() - kKeptOutput);
        }
        output_total_ += size;
        if (output_total_ > limits_.output_bytes && current_ != nullptr) {
            current_->stop(Ending::Kind::output);
        }
    }
}

std::unique_ptr<Run> Sandbox::start(Channel& channel, int theirs, const std::string& scenario) {
    std::unique_ptr<Run> run(new Run(*this, next_token_++));
    limits_.deadline = Limits::from_environment().deadline;  // a check may have its own
    run->deadline_ = Clock::now() + limits_.deadline;
    {
        std::lock_guard lock(output_mutex_);
        output_head_.clear();
        output_tail_.clear();
        output_total_ = 0;
        current_ = nullptr;
    }
    try {
        control_->send_with_fd(Message{"fork"}.add(run->token_).add(scenario), theirs);
    } catch (const ChannelClosed&) {
        ::close(theirs);
        throw lab::Error("the student's program stopped serving copies of itself");
    }
    ::close(theirs);  // the copy holds the only other end: its death closes the channel
    // "born": the copy exists; the kernel says which process it is. The first
    // copy waits for the fork server's own start as well (the loader, the
    // verbs providers: seconds on a busy emulated CPU), which is not the
    // check's time: the check's deadline counts from the copy's birth.
    const auto born_by = Clock::now() + limits_.deadline + std::chrono::seconds(30);
    for (;;) {
        std::optional<Message> born;
        try {
            born = channel.receive(std::chrono::milliseconds(100), &run->pid_);
        } catch (const ChannelClosed&) {
            run->wait(std::chrono::seconds(5));
            return run;
        }
        if (born) {
            if (born->name() != "born") {
                throw lab::Error("a copy of the program said '" + born->name() + "' first");
            }
            break;
        }
        if (run->wait(std::chrono::milliseconds(0))) {
            return run;  // the copy died before it was born
        }
        if (Clock::now() >= born_by) {
            throw lab::Error("the student's program did not make a copy of itself in time");
        }
    }
    run->deadline_ = Clock::now() + limits_.deadline;
    run->cgroup_ = make_cgroup(cgroup_, "check-" + std::to_string(run->token_),
                               limits_.memory_bytes, limits_.processes, false);
    if (!run->cgroup_.empty() &&
        !write_file(run->cgroup_ + "/cgroup.procs", std::to_string(run->pid_))) {
        remove_cgroup(run->cgroup_);
        run->cgroup_.clear();
    }
    {
        std::lock_guard lock(output_mutex_);
        current_ = run.get();
    }
    try {
        channel.send({"go"});
    } catch (const ChannelClosed&) {
        run->wait(std::chrono::seconds(5));
    }
    return run;
}

std::optional<int> Sandbox::ended_status(std::uint64_t token, std::chrono::milliseconds timeout) {
    const auto until = Clock::now() + timeout;
    for (;;) {
        {
            std::lock_guard lock(reports_mutex_);
            if (const auto found = reports_.find(token); found != reports_.end()) {
                return found->second;
            }
        }
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
        std::optional<Message> report;
        try {
            report = control_->receive(std::max(left, std::chrono::milliseconds(0)));
        } catch (const ChannelClosed&) {
            return W_EXITCODE(0, SIGKILL);  // the server is gone, and its copies with it
        }
        if (report && report->name() == "ended" && report->size() >= 3) {
            std::lock_guard lock(reports_mutex_);
            reports_[report->number(1)] = static_cast<int>(report->number(2));
            continue;
        }
        if (!report && Clock::now() >= until) {
            return std::nullopt;
        }
    }
}

bool Sandbox::alive() {
    if (child_ <= 0) {
        return false;
    }
    int status = 0;
    if (::waitpid(child_, &status, WNOHANG) == child_) {
        child_ = -1;
        return false;
    }
    return true;
}

void Sandbox::release() {
    {
        std::lock_guard lock(output_mutex_);
        current_ = nullptr;
    }
    control_.reset();  // the server sees the end of its line and leaves
    if (child_ > 0) {
        ::kill(isolation_ == Isolation::strict ? child_ : -child_, SIGKILL);
        ::kill(child_, SIGKILL);
        ::waitpid(child_, nullptr, 0);
        child_ = -1;
    }
    remove_cgroup(cgroup_);
    cgroup_.clear();
    if (output_reader_.joinable()) {
        output_reader_.join();
    }
    if (output_fd_ >= 0) {
        ::close(output_fd_);
        output_fd_ = -1;
    }
    if (!root_dir_.empty()) {
        ::rmdir(root_dir_.c_str());
        root_dir_.clear();
    }
}

Sandbox::~Sandbox() {
    release();
}

// --- one copy -------------------------------------------------------------------

const Limits& Run::limits() const noexcept {
    return sandbox_.limits();
}

std::string Run::output() const {
    std::lock_guard lock(sandbox_.output_mutex_);
    const std::uint64_t total = sandbox_.output_total_;
    const std::string& head = sandbox_.output_head_;
    const std::string& tail = sandbox_.output_tail_;
    if (total <= head.size() + tail.size()) {
        return head + tail;
    }
    return head + "\n[... " + std::to_string(total - head.size() - tail.size()) +
           " bytes left out ...]\n" + tail;
}

void Run::stop(Ending::Kind why) {
    int expected = -1;
    stop_reason_.compare_exchange_strong(expected, static_cast<int>(why));
    if (!cgroup_.empty()) {
        write_file(cgroup_ + "/cgroup.kill", "1");
    } else if (pid_ > 0) {
        ::kill(-pid_, SIGKILL);  // its process group
        ::kill(pid_, SIGKILL);
    }
}

void Run::collect(int wait_status) {
    Ending ending;
    if (WIFEXITED(wait_status)) {
        ending = {Ending::Kind::exited, WEXITSTATUS(wait_status)};
    } else if (WIFSIGNALED(wait_status)) {
        const int signal_number = WTERMSIG(wait_status);
        ending = {signal_number == SIGXCPU ? Ending::Kind::cpu : Ending::Kind::signaled,
                  signal_number};
    }
    const int reason = stop_reason_.load();
    if (reason >= 0) {
        ending = {static_cast<Ending::Kind>(reason), 0};
    }
    if (!cgroup_.empty()) {
        // A limit that was hit explains the rest: say that.
        if (event_count(cgroup_ + "/memory.events", "oom_kill") > 0) {
            ending = {Ending::Kind::memory, 0};
        } else if (event_count(cgroup_ + "/pids.events", "max") > 0 &&
                   ending.kind != Ending::Kind::exited) {
            ending = {Ending::Kind::processes, 0};
        }
    }
    ending_ = ending;
}

std::optional<Ending> Run::wait(std::chrono::milliseconds timeout) {
    if (ending_) {
        return ending_;
    }
    const auto status = sandbox_.ended_status(token_, timeout);
    if (!status) {
        return std::nullopt;
    }
    collect(*status);
    return ending_;
}

Run::~Run() {
    {
        std::lock_guard lock(sandbox_.output_mutex_);
        if (sandbox_.current_ == this) {
            sandbox_.current_ = nullptr;
        }
    }
    if (!ending_) {
        stop(Ending::Kind::lost);
        wait(std::chrono::seconds(5));  // the server reports, and is ready for the next copy
    }
    remove_cgroup(cgroup_);  // and whatever the copy left behind
}

}  // namespace lab::grade

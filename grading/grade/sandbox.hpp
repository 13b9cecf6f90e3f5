// SPDX-License-Identifier: MIT
/**
 * @file sandbox.hpp
 * @brief Run a student's program where it can harm nothing but its own scratch space.
 *
 * Strict isolation (the micro-VM, where `./lab grade` runs every check as
 * root): the program gets new mount, PID, network, IPC and UTS namespaces, a
 * root of its own that holds only /usr, the few /etc files the loader and
 * rdma-core read, /sys, /dev/null and friends, the RDMA device files, its own
 * /proc and a small /tmp (its scratch space, the only place it can write);
 * it runs as an unprivileged user id of its own, with no new privileges,
 * under rlimits on CPU time, file size, open files and locked memory, and in
 * cgroups that cap its memory and its processes. Its output goes to the
 * check program, which keeps the first and last few KiB and stops the
 * program when it prints too much.
 *
 * The program is started once per check program, as a fork server: it stops
 * in course code that runs before any of the student's code (see
 * subject_main.cpp), and each check gets a fresh copy of it (a Run), which
 * goes on to the student's static initializers and main() as if it had just
 * been started, in a cgroup of its own: when the check ends, the copy and
 * everything it started die with that cgroup. Starting a program in the
 * micro-VM's emulated CPU is slow; copying one is not.
 *
 * Plain isolation (the course's own solutions checked by a user without
 * root, on a host's RDMA device): the same fork server as a child process
 * with rlimits, each copy in a process group of its own.
 */
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "channel.hpp"

namespace lab::grade {

/// What one run of a student's program (one check) may use.
struct Limits {
    std::chrono::milliseconds deadline = std::chrono::seconds(20);  ///< wall clock, per check
    std::uint64_t memory_bytes = 512ULL << 20;       ///< memory.max of the check's cgroup
    unsigned processes = 64;                         ///< pids.max of the check's cgroup
    unsigned cpu_seconds = 60;                       ///< RLIMIT_CPU
    std::uint64_t output_bytes = 1ULL << 20;         ///< stdout + stderr before it is stopped
    std::uint64_t scratch_bytes = 16ULL << 20;       ///< size of its /tmp (and RLIMIT_FSIZE)
    std::uint64_t locked_bytes = 256ULL << 20;       ///< RLIMIT_MEMLOCK: registered memory
    std::uint64_t address_space_bytes = 4ULL << 30;  ///< RLIMIT_AS (not set in an ASan build)

    /// The defaults, with the deadline from RDMA_LAB_CHECK_TIMEOUT (seconds) when set.
    static Limits from_environment();
};

/// How far a run is isolated (see the file comment).
enum class Isolation { strict, plain };

/// LAB_SANDBOX=strict|plain; unset: strict when running as root, plain otherwise.
Isolation isolation_from_environment();

/// How a run ended.
struct Ending {
    enum class Kind {
        exited,     ///< it returned from main or called exit: value is the status
        signaled,   ///< a signal ended it: value is the signal number
        deadline,   ///< still running at the deadline: stopped
        output,     ///< printed more than Limits::output_bytes: stopped
        memory,     ///< its memory limit was hit
        processes,  ///< it tried to start more processes than allowed
        cpu,        ///< it used its CPU time
        lost,       ///< it vanished without a status (the sandbox failed)
    };
    Kind kind = Kind::lost;
    int value = 0;

    /// One line for the student: what happened and, where it helps, why.
    [[nodiscard]] std::string describe(const Limits& limits) const;
};

class Sandbox;

/// One fresh copy of the program, for one check.
class Run {
  public:
    ~Run();
    Run(const Run&) = delete;
    Run& operator=(const Run&) = delete;

    /// Its process id, as the check program sees it.
    [[nodiscard]] pid_t pid() const noexcept { return pid_; }
    /// How it ended, once it has; waits up to @p timeout.
    std::optional<Ending> wait(std::chrono::milliseconds timeout);
    /// Stop it (and everything it started) now, recording @p why.
    void stop(Ending::Kind why);
    /// True once it ended or was stopped.
    [[nodiscard]] bool ended() { return wait(std::chrono::milliseconds(0)).has_value(); }
    /// What it printed: the start and the end when there was much.
    [[nodiscard]] std::string output() const;
    /// When it must be done.
    [[nodiscard]] std::chrono::steady_clock::time_point deadline() const { return deadline_; }
    [[nodiscard]] const Limits& limits() const noexcept;

  private:
    friend class Sandbox;
    Run(Sandbox& sandbox, std::uint64_t token) : sandbox_(sandbox), token_(token) {}
    void collect(int wait_status);
    Sandbox& sandbox_;
    std::uint64_t token_;
    pid_t pid_ = -1;
    std::string cgroup_;  // the check's cgroup; empty without cgroups
    std::chrono::steady_clock::time_point deadline_;
    std::atomic<int> stop_reason_{-1};
    std::optional<Ending> ending_;
};

/// The student's program in the sandbox, as a fork server (see the file comment).
class Sandbox {
  public:
    /// Start @p program as a fork server. Throws lab::Error when the sandbox cannot be
    /// set up (strict isolation needs root), or the program never becomes a fork server.
    Sandbox(const std::string& program, const Limits& limits, Isolation isolation);
    ~Sandbox();
    Sandbox(const Sandbox&) = delete;
    Sandbox& operator=(const Sandbox&) = delete;

    /**
     * @brief A fresh copy of the program for one check, running @p scenario.
     *
     * @p theirs (the program's end of @p channel, closed here) becomes the
     * copy's file descriptor 3. Returns once the copy said "born" on @p channel (the
     * kernel vouches for its process id), is in a cgroup of its own and has
     * been told to go on. Throws lab::Error when the server is gone, and
     * returns a Run that has ended when the copy died before it said "born".
     */
    std::unique_ptr<Run> start(Channel& channel, int theirs, const std::string& scenario);
    /// True while the fork server can still make copies.
    [[nodiscard]] bool alive();
    [[nodiscard]] const Limits& limits() const noexcept { return limits_; }

  private:
    friend class Run;
    void start_strict(const std::string& program, int control_fd, int output_write);
    void start_plain(const std::string& program, int control_fd, int output_write);
    void read_output();
    /// The "ended" report of copy @p token, waiting up to @p timeout.
    std::optional<int> ended_status(std::uint64_t token, std::chrono::milliseconds timeout);
    void release();

    Limits limits_;
    Isolation isolation_;
    pid_t child_ = -1;  // strict: the relay whose child is the namespace's init; plain: the server
    std::unique_ptr<Channel> control_;
    int output_fd_ = -1;
    std::string
        cgroup_;  // the run's cgroup (parent of the server's leaf and the checks'); may be empty
    std::string root_dir_;
    std::uint64_t next_token_ = 0;
    std::thread output_reader_;
    mutable std::mutex output_mutex_;
    std::string output_head_, output_tail_;
    std::uint64_t output_total_ = 0;  // of the current run
    Run* current_ = nullptr;          // the run the output belongs to (guarded by output_mutex_)
    std::mutex reports_mutex_;
    std::map<std::uint64_t, int> reports_;  // ended runs' wait statuses, by token
};

}  // namespace lab::grade

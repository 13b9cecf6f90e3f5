/**
 * @file sandbox.hpp
 * @brief Run a student's program where it can harm nothing but its own scratch space.
 *
 * Strict isolation (the micro-VM, where `./lab grade` runs every check as
 * root): the program gets new mount, PID, network, IPC and UTS namespaces, a
 * root of its own that holds only /usr, the few /etc files the loader and
 * rdma-core read, /sys, /dev/null and friends, the RDMA device files, its own
 * /proc and a small /tmp (its scratch space, the only place it can write);
 * it runs as an unprivileged user id of its own, with no new privileges, in
 * a cgroup that caps its memory and its processes, under rlimits on CPU time,
 * file size, open files and locked memory. Its output goes to the check,
 * which keeps the first and last few KiB and stops the program when it
 * prints too much. When the run ends, everything it started dies with it.
 *
 * Plain isolation (a check of the course's own solutions run by a user
 * without root, on a host's RDMA device): a child process with rlimits.
 */
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace lab::grade {

/// What one run of a student's program may use.
struct Limits {
    std::chrono::milliseconds deadline = std::chrono::seconds(20);  ///< wall clock, per check
    std::uint64_t memory_bytes = 512ULL << 20;                      ///< the cgroup's memory.max
    unsigned processes = 64;                         ///< the cgroup's pids.max (and RLIMIT_NPROC)
    unsigned cpu_seconds = 60;                       ///< RLIMIT_CPU
    std::uint64_t output_bytes = 1ULL << 20;         ///< stdout + stderr before it is stopped
    std::uint64_t scratch_bytes = 16ULL << 20;       ///< size of its /tmp (and RLIMIT_FSIZE)
    std::uint64_t locked_bytes = 256ULL << 20;       ///< RLIMIT_MEMLOCK: registered memory
    std::uint64_t address_space_bytes = 4ULL << 30;  ///< RLIMIT_AS

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
        memory,     ///< the cgroup's memory limit was hit
        processes,  ///< it tried to start more processes than allowed
        cpu,        ///< it used its CPU time
        lost,       ///< it vanished without a status (the sandbox failed)
    };
    Kind kind = Kind::lost;
    int value = 0;

    /// One line for the student: what happened and, where it helps, why.
    [[nodiscard]] std::string describe(const Limits& limits) const;
};

/// One run of a program in the sandbox.
class Sandbox {
  public:
    /**
     * @brief Start @p program with @p args; @p channel_fd becomes its file descriptor 3.
     * @throws lab::Error when the sandbox cannot be set up (strict isolation needs root).
     */
    Sandbox(const std::string& program, const std::vector<std::string>& args, int channel_fd,
            const Limits& limits, Isolation isolation);
    ~Sandbox();
    Sandbox(const Sandbox&) = delete;
    Sandbox& operator=(const Sandbox&) = delete;

    /// How it ended, once it has; waits up to @p timeout.
    std::optional<Ending> wait(std::chrono::milliseconds timeout);
    /// Stop it (and everything it started) now, recording @p why.
    void stop(Ending::Kind why);
    /// True once it ended or was stopped.
    [[nodiscard]] bool ended();

    /// What it printed: the start and the end when there was much.
    [[nodiscard]] std::string output() const;
    /// Bytes it printed in all.
    [[nodiscard]] std::uint64_t output_size() const { return output_total_.load(); }
    /// When the run must be over.
    [[nodiscard]] std::chrono::steady_clock::time_point deadline() const { return deadline_; }
    [[nodiscard]] const Limits& limits() const noexcept { return limits_; }

  private:
    void start_strict(const std::string& program, const std::vector<std::string>& args,
                      int channel_fd, int output_write);
    void start_plain(const std::string& program, const std::vector<std::string>& args,
                     int channel_fd, int output_write);
    void read_output();
    void collect(int wait_status);
    void release();

    Limits limits_;
    Isolation isolation_;
    pid_t child_ = -1;  // strict: the relay whose child is the namespace's init; plain: the program
    int status_fd_ = -1;  // strict: the init writes the program's wait status here
    int output_fd_ = -1;
    std::string cgroup_;    // empty: no cgroup
    std::string root_dir_;  // strict: the mount point of the program's root
    std::chrono::steady_clock::time_point deadline_;
    std::thread output_reader_;
    mutable std::mutex output_mutex_;
    std::string output_head_, output_tail_;
    std::atomic<std::uint64_t> output_total_{0};
    std::atomic<int> stop_reason_{-1};
    std::optional<Ending> ending_;
};

}  // namespace lab::grade

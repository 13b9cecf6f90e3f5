// SPDX-License-Identifier: MIT
/**
 * @file student.hpp
 * @brief A check's handle on the student's program: start it, talk to it, watch it.
 *
 * A check is course code only. For each check it takes a fresh copy of the
 * student's program (built from the student's edited files and the course's
 * objects; its path is in LAB_SUBJECT) from the sandbox (one per check
 * program, see sandbox.hpp), names the scenario to run, and then plays the
 * other side: it sends requests, connects its own
 * queue pairs to the program's, and observes. When the program cannot go
 * on — it threw, crashed, hung, printed too much, ran out of memory — every
 * call here throws ProgramFailed with one line that says so, which becomes
 * the check's reason.
 */
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "channel.hpp"
#include "sandbox.hpp"
#include "trace.hpp"

namespace lab::grade {

/// The student's program cannot continue the check; what() is the reason, for the student.
class ProgramFailed : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// One run of the student's program for one check.
class StudentProgram {
  public:
    /**
     * @brief Start the program for @p scenario and wait for it to say hello.
     *
     * The program is LAB_SUBJECT, or @p program when given; the isolation is
     * isolation_from_environment(), the limits Limits::from_environment().
     */
    explicit StudentProgram(std::string_view scenario, std::string program = {});
    ~StudentProgram();
    StudentProgram(const StudentProgram&) = delete;
    StudentProgram& operator=(const StudentProgram&) = delete;

    /// Send @p message to the scenario.
    void send(const Message& message);
    /// The scenario's next message, which must be @p name; throws ProgramFailed otherwise.
    Message receive(std::string_view name);
    /// Receive "ready" (the scenario opened the device), attach the tracer to watch
    /// @p what (lab::grade::Watch bits), call @p before_go with the "ready" message
    /// (scenarios put their QP numbers in it), answer "go"; returns that message.
    Message watch(unsigned what = kEverything,
                  const std::function<void(const Message&)>& before_go = {});
    /// The tracer started by watch().
    Tracer& tracer();
    /// Wait for "done" and for the program to end.
    void finish();

    /// The program's process id (as this process sees it).
    [[nodiscard]] pid_t pid() const noexcept { return pid_; }
    /// What it printed so far (start and end).
    [[nodiscard]] std::string output() const { return run_->output(); }

  private:
    [[noreturn]] void fail_with_ending(const std::string& context);
    std::unique_ptr<Channel> channel_;
    std::unique_ptr<Run> run_;
    std::unique_ptr<Tracer> tracer_;
    pid_t pid_ = -1;
};

/// The path of the student's program: LAB_SUBJECT, else (in the course's build) the
/// solution's program next to this check program.
std::string program_under_test();

}  // namespace lab::grade

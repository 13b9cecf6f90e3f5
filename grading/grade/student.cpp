// SPDX-License-Identifier: MIT
#include "student.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "lab/check.hpp"

namespace lab::grade {

namespace {

using Clock = std::chrono::steady_clock;
const std::string kBeforeStart = "before it started the check";

// The last few lines of @p output, for a reason: what the program said before it ended.
std::string last_lines(const std::string& output) {
    constexpr std::size_t kLines = 6, kChars = 600;
    std::size_t start = output.size();
    std::size_t lines = 0;
    while (start > 0 && lines <= kLines) {
        start = output.rfind('\n', start - 1);
        if (start == std::string::npos) {
            start = 0;
            break;
        }
        ++lines;
    }
    std::string tail = output.substr(start);
    while (!tail.empty() && (tail.front() == '\n' || tail.front() == ' ')) {
        tail.erase(0, 1);
    }
    while (!tail.empty() && tail.back() == '\n') {
        tail.pop_back();
    }
    if (tail.size() > kChars) {
        tail = "..." + tail.substr(tail.size() - kChars);
    }
    return tail;
}

// The checks of one check program run one after another. When the student's
// program failed twice in a row, the same way, before it even started a
// check's scenario (it hangs, crashes or forks in a static initializer), it
// will fail every check that way: say so at once instead of waiting for each
// deadline.
struct StartFailures {
    std::string reason;
    int count = 0;
};
StartFailures start_failures;

std::string headline(const std::string& reason) {
    return reason.substr(0, reason.find('\n'));
}

}  // namespace

std::string program_under_test() {
    if (const char* path = std::getenv("LAB_SUBJECT"); path != nullptr && *path != '\0') {
        return path;
    }
    // The course's own build: check_NN_name sits next to subject_solNN_name.
    std::error_code error;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
    const std::string name = self.filename().string();
    if (!error && name.rfind("check_", 0) == 0) {
        const auto solution = self.parent_path() / ("subject_sol" + name.substr(6));
        if (std::filesystem::exists(solution, error)) {
            return solution.string();
        }
    }
    throw lab::Error("LAB_SUBJECT names no program: set it to the student's program");
}

// The sandbox of this check program: one fork server per student's program,
// kept for the checks that follow while it lives.
Sandbox& sandbox_for(const std::string& program) {
    static std::string serving;
    static std::unique_ptr<Sandbox> sandbox;
    if (!sandbox || serving != program || !sandbox->alive()) {
        sandbox.reset();
        sandbox = std::make_unique<Sandbox>(program, Limits::from_environment(),
                                            isolation_from_environment());
        serving = program;
    }
    return *sandbox;
}

StudentProgram::StudentProgram(std::string_view scenario, std::string program) {
    if (program.empty()) {
        program = program_under_test();
    }
    if (start_failures.count >= 2) {
        throw ProgramFailed(start_failures.reason +
                            "\n    (not started again: it failed this way twice before any check "
                            "began)");
    }
    if (::access(program.c_str(), X_OK) != 0) {
        throw lab::Error("the student's program " + program + " does not exist");
    }
    const auto [ours, theirs] = channel_pair();
    channel_ = std::make_unique<Channel>(ours);
    channel_->enable_credentials();
    run_ = sandbox_for(program).start(*channel_, theirs, std::string(scenario));
    pid_ = run_->pid();
    // Its static initializers, then main(), which says hello.
    for (;;) {
        std::optional<Message> hello;
        try {
            hello = channel_->receive(std::chrono::milliseconds(100));
        } catch (const ChannelClosed&) {
            fail_with_ending(kBeforeStart);
        }
        if (hello) {
            if (hello->name() != "hello" || hello->size() < 2 || hello->text(1) != scenario) {
                throw ProgramFailed("your program did not start the check's scenario '" +
                                    std::string(scenario) + "'");
            }
            start_failures = {};
            return;
        }
        if (Clock::now() >= run_->deadline()) {
            run_->stop(Ending::Kind::deadline);
            fail_with_ending(kBeforeStart);
        }
        if (run_->ended()) {
            fail_with_ending(kBeforeStart);
        }
    }
}

StudentProgram::~StudentProgram() {
    if (run_) {
        run_->stop(Ending::Kind::lost);  // ignored when it already ended
    }
    tracer_.reset();  // its thread ends with the program
    run_.reset();
}

void StudentProgram::send(const Message& message) {
    try {
        channel_->send(message);
    } catch (const ChannelClosed&) {
        fail_with_ending("during the check");
    }
}

Message StudentProgram::receive(std::string_view name) {
    for (;;) {
        std::optional<Message> message;
        try {
            message = channel_->receive(std::chrono::milliseconds(100));
        } catch (const ChannelClosed&) {
            fail_with_ending("during the check");
        }
        if (message) {
            if (message->name() == "error") {
                throw ProgramFailed("your code stopped with an error: " +
                                    (message->size() > 1 ? message->text(1) : std::string("?")));
            }
            if (message->name() != name) {
                throw ProgramFailed("your program answered '" + message->name() +
                                    "' where the check expected '" + std::string(name) +
                                    "' (does your code write outside its buffers?)");
            }
            return *message;
        }
        if (Clock::now() >= run_->deadline()) {
            run_->stop(Ending::Kind::deadline);
            fail_with_ending("during the check");
        }
    }
}

Message StudentProgram::watch(unsigned what, const std::function<void(const Message&)>& before_go) {
    Message ready = receive("ready");
    try {
        tracer_ = std::make_unique<Tracer>(pid_, what);
    } catch (const lab::Error& error) {
        if (run_->ended()) {
            fail_with_ending("during the check");
        }
        throw;
    }
    if (before_go) {
        before_go(ready);
    }
    send({"go"});
    return ready;
}

Tracer& StudentProgram::tracer() {
    if (!tracer_) {
        throw lab::Error("the check did not watch the program (StudentProgram::watch)");
    }
    return *tracer_;
}

void StudentProgram::finish() {
    receive("done");
    const auto ending = run_->wait(std::chrono::seconds(10));
    if (!ending) {
        run_->stop(Ending::Kind::deadline);
        throw ProgramFailed("your program did not end after the check was done");
    }
}

void StudentProgram::fail_with_ending(const std::string& context) {
    auto ending = run_->wait(std::chrono::seconds(5));
    if (!ending) {
        run_->stop(Ending::Kind::lost);
        ending = run_->wait(std::chrono::seconds(5));
    }
    std::string reason =
        ending ? ending->describe(run_->limits()) : std::string("your program stopped answering");
    if (ending && ending->kind == Ending::Kind::exited) {
        reason = "your program ended (exit status " + std::to_string(ending->value) + ") " +
                 context + ": does your code call exit()?";
    }
    if (context == kBeforeStart) {
        if (headline(reason) == headline(start_failures.reason)) {
            ++start_failures.count;
        } else {
            start_failures = {reason, 1};
        }
    }
    const std::string said = last_lines(run_->output());
    if (!said.empty() && (!ending || ending->kind != Ending::Kind::output)) {
        reason += "\n    its last output:";
        std::size_t start = 0;
        while (start < said.size()) {
            const std::size_t end = std::min(said.find('\n', start), said.size());
            reason += "\n      | " + said.substr(start, end - start);
            start = end + 1;
        }
    }
    throw ProgramFailed(reason);
}

}  // namespace lab::grade

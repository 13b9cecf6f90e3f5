// SPDX-License-Identifier: MIT
#include "support/process.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace lab::test {

namespace {

using Clock = std::chrono::steady_clock;

void close_quietly(int& fd) {
    if (fd >= 0) {
        ::close(fd);
        fd = -1;
    }
}

}  // namespace

Process::Process(const std::vector<std::string>& argv, const std::optional<std::string>& input)
    : argv_(argv) {
    // The input waits in an anonymous file, whole, so that writing it can
    // never block on a program that does not read.
    int in_fd = -1;
    if (input) {
        in_fd = ::memfd_create("stdin", MFD_CLOEXEC);
        if (in_fd < 0 ||
            ::write(in_fd, input->data(), input->size()) != static_cast<ssize_t>(input->size()) ||
            ::lseek(in_fd, 0, SEEK_SET) != 0) {
            throw std::runtime_error(std::string("stdin for the program: ") + std::strerror(errno));
        }
    }
    int out_pipe[2];
    int err_pipe[2];
    if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
        throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
    }
    std::vector<char*> args;
    for (const auto& arg : argv) {
        args.push_back(const_cast<char*>(arg.c_str()));
    }
    args.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ < 0) {
        throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    }
    if (pid_ == 0) {
        ::dup2(out_pipe[1], STDOUT_FILENO);
        ::dup2(err_pipe[1], STDERR_FILENO);
        const int stdin_fd = in_fd >= 0 ? in_fd : ::open("/dev/null", O_RDONLY);
        ::dup2(stdin_fd, STDIN_FILENO);
        ::execv(args[0], args.data());
        const std::string message =
            std::string("exec ") + args[0] + ": " + std::strerror(errno) + "\n";
        [[maybe_unused]] auto ignored = ::write(STDERR_FILENO, message.data(), message.size());
        ::_exit(127);
    }
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    if (in_fd >= 0) {
        ::close(in_fd);
    }
    out_fd_ = out_pipe[0];
    err_fd_ = err_pipe[0];
}

Process::~Process() {
    if (!reaped_ && pid_ > 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
    close_quietly(out_fd_);
    close_quietly(err_fd_);
}

bool Process::pump(std::chrono::milliseconds timeout) {
    pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    if (out_fd_ < 0 && err_fd_ < 0) {
        return false;
    }
    const int ready = ::poll(fds, 2, static_cast<int>(timeout.count()));
    if (ready <= 0) {
        return true;
    }
    char buffer[4096];
    for (int i = 0; i < 2; ++i) {
        int& fd = i == 0 ? out_fd_ : err_fd_;
        if (fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
            const ssize_t got = ::read(fd, buffer, sizeof buffer);
            if (got > 0) {
                (i == 0 ? result_.out : result_.err).append(buffer, static_cast<std::size_t>(got));
            } else {
                close_quietly(fd);
            }
        }
    }
    return out_fd_ >= 0 || err_fd_ >= 0;
}

bool Process::wait_for_output(const std::string& text, std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
        if (result_.out.find(text) != std::string::npos ||
            result_.err.find(text) != std::string::npos) {
            return true;
        }
        if (!pump(std::chrono::milliseconds(50))) {
            break;
        }
    }
    return result_.out.find(text) != std::string::npos ||
           result_.err.find(text) != std::string::npos;
}

Result Process::wait(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline && pump(std::chrono::milliseconds(50))) {
    }
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) != pid_) {
        if (Clock::now() >= deadline) {
            result_.timed_out = true;
            ::kill(pid_, SIGKILL);  // cannot be ignored, so the blocking wait below returns
            ::waitpid(pid_, &status, 0);
            break;
        }
        ::usleep(10'000);
    }
    reaped_ = true;
    result_.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result_;
}

void Process::kill(int signal_number) {
    if (!reaped_) {
        ::kill(pid_, signal_number);
    }
}

Result run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
    Process process(argv);
    return process.wait(timeout);
}

Result run_with_input(const std::vector<std::string>& argv, const std::string& input,
                      std::chrono::milliseconds timeout) {
    Process process(argv, input);
    return process.wait(timeout);
}

std::string program(const std::string& relative_path) {
    return std::string(LAB_BUILD_DIR) + "/" + relative_path;
}

std::string lesson(const std::string& name) {
    if (name.starts_with("bench_")) {
        return program("bench/" + name);
    }
    if (const auto slash = name.find('/'); slash != std::string::npos) {  // NN_name/variant
        const std::string folder = name.substr(0, slash);
        return program("lessons/" + folder + "/" + folder.substr(0, 3) + name.substr(slash + 1));
    }
    return program("lessons/" + name + "/" + name);
}

bool listening(int port, std::chrono::milliseconds timeout) {
    char local[16];
    std::snprintf(local, sizeof local, ":%04X ", port);
    for (const auto end = std::chrono::steady_clock::now() + timeout;
         std::chrono::steady_clock::now() < end;
         std::this_thread::sleep_for(std::chrono::milliseconds(50))) {
        std::ifstream table("/proc/net/tcp");
        for (std::string line; std::getline(table, line);) {
            // "sl local_address rem_address st ...": state 0A is LISTEN.
            const auto at = line.find(local);
            if (at != std::string::npos && at < 20 && line.find(" 0A ") != std::string::npos) {
                return true;
            }
        }
    }
    return false;
}

int free_tcp_port() {
    // Ask the kernel for an unused port, then release it. Ports are spread by
    // process id so that tests running in parallel rarely collide.
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
        throw std::runtime_error(std::string("free_tcp_port: ") + std::strerror(errno));
    }
    const int port = ntohs(address.sin_port);
    ::close(fd);
    return port;
}

std::string squashed(const std::string& text) {
    std::string out;
    for (const char c : text) {
        if (c != ' ' && c != '\n' && c != '\t' && c != '\r') {
            out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
    }
    return out;
}

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> result;
    std::istringstream stream(text);
    for (std::string line; std::getline(stream, line);) {
        result.push_back(line);
    }
    return result;
}

}  // namespace lab::test

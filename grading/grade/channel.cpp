// SPDX-License-Identifier: MIT
#include "channel.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

#include "lab/check.hpp"

namespace lab::grade {

namespace {

[[noreturn]] void malformed(std::string_view why) {
    throw lab::Error("a malformed message between the check and the program: " + std::string(why));
}

}  // namespace

const std::string& Message::name() const {
    static const std::string empty;
    return fields_.empty() ? empty : fields_.front();
}

const std::string& Message::text(std::size_t index) const {
    if (index >= fields_.size()) {
        malformed("'" + name() + "' has no field " + std::to_string(index));
    }
    return fields_[index];
}

std::uint64_t Message::number(std::size_t index) const {
    const std::string& field = text(index);
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
    if (error != std::errc() || end != field.data() + field.size() || field.empty()) {
        malformed("field " + std::to_string(index) + " of '" + name() + "' is not a number");
    }
    return value;
}

std::int64_t Message::signed_number(std::size_t index) const {
    const std::string& field = text(index);
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
    if (error != std::errc() || end != field.data() + field.size() || field.empty()) {
        malformed("field " + std::to_string(index) + " of '" + name() + "' is not a number");
    }
    return value;
}

std::string Message::encode() const {
    std::string wire;
    for (const std::string& field : fields_) {
        wire += std::to_string(field.size());
        wire += ':';
        wire += field;
    }
    return wire;
}

Message Message::decode(std::string_view wire) {
    std::vector<std::string> fields;
    while (!wire.empty()) {
        const std::size_t colon = wire.find(':');
        if (colon == std::string_view::npos || colon == 0 || colon > 9) {
            malformed("no field length");
        }
        std::size_t length = 0;
        const auto [end, error] = std::from_chars(wire.data(), wire.data() + colon, length);
        if (error != std::errc() || end != wire.data() + colon ||
            length > wire.size() - colon - 1) {
            malformed("a bad field length");
        }
        fields.emplace_back(wire.substr(colon + 1, length));
        wire.remove_prefix(colon + 1 + length);
    }
    return Message(std::move(fields));
}

Channel::~Channel() {
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

void Channel::send(const Message& message) {
    send_with_fd(message, -1);
}

void Channel::send_with_fd(const Message& message, int fd) {
    std::string wire = message.encode();
    if (wire.size() > kMaxMessageBytes) {
        throw lab::Error("message '" + message.name() + "' is too long (" +
                         std::to_string(wire.size()) + " bytes)");
    }
    iovec data{wire.data(), wire.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr header{};
    header.msg_iov = &data;
    header.msg_iovlen = 1;
    if (fd >= 0) {
        header.msg_control = control;
        header.msg_controllen = sizeof control;
        cmsghdr* item = CMSG_FIRSTHDR(&header);
        item->cmsg_level = SOL_SOCKET;
        item->cmsg_type = SCM_RIGHTS;
        item->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(item), &fd, sizeof fd);
    }
    for (;;) {
        const ssize_t sent = ::sendmsg(fd_, &header, MSG_NOSIGNAL);
        if (sent == static_cast<ssize_t>(wire.size())) {
            return;
        }
        if (sent < 0 && errno == EINTR) {
            continue;
        }
        if (sent < 0 && (errno == EPIPE || errno == ECONNRESET)) {
            throw ChannelClosed{};
        }
        lab::fail("sendmsg(channel)", sent < 0 ? errno : EMSGSIZE);
    }
}

int Channel::release() noexcept {
    return std::exchange(fd_, -1);
}

void Channel::enable_credentials() {
    const int on = 1;
    lab::check(::setsockopt(fd_, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) == 0 ? 0 : -1,
               "setsockopt(SO_PASSCRED)");
}

std::optional<Message> Channel::receive(std::chrono::milliseconds timeout, pid_t* sender,
                                        int* passed_fd) {
    pollfd ready{fd_, POLLIN, 0};
    int found = 0;
    do {
        found = ::poll(&ready, 1, static_cast<int>(timeout.count()));
    } while (found < 0 && errno == EINTR);
    if (found < 0) {
        lab::fail("poll(channel)", errno);
    }
    if (found == 0) {
        return std::nullopt;
    }
    std::string buffer(kMaxMessageBytes + 1, '\0');
    iovec data{buffer.data(), buffer.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred)) + CMSG_SPACE(sizeof(int))];
    msghdr header{};
    header.msg_iov = &data;
    header.msg_iovlen = 1;
    header.msg_control = control;
    header.msg_controllen = sizeof control;
    ssize_t got = 0;
    do {
        got = ::recvmsg(fd_, &header, MSG_TRUNC | MSG_CMSG_CLOEXEC);
    } while (got < 0 && errno == EINTR);
    if (sender != nullptr) {
        *sender = -1;
    }
    if (passed_fd != nullptr) {
        *passed_fd = -1;
    }
    for (cmsghdr* item = got > 0 ? CMSG_FIRSTHDR(&header) : nullptr; item != nullptr;
         item = CMSG_NXTHDR(&header, item)) {
        if (item->cmsg_level != SOL_SOCKET) {
            continue;
        }
        if (item->cmsg_type == SCM_CREDENTIALS && sender != nullptr) {
            ucred credentials{};
            std::memcpy(&credentials, CMSG_DATA(item), sizeof credentials);
            *sender = credentials.pid;
        } else if (item->cmsg_type == SCM_RIGHTS) {
            int fd = -1;
            std::memcpy(&fd, CMSG_DATA(item), sizeof fd);
            if (passed_fd != nullptr) {
                *passed_fd = fd;
            } else {
                ::close(fd);  // not asked for: not kept
            }
        }
    }
    if (got == 0 || (got < 0 && errno == ECONNRESET)) {
        throw ChannelClosed{};
    }
    if (got < 0) {
        lab::fail("recv(channel)", errno);
    }
    if (static_cast<std::size_t>(got) > kMaxMessageBytes) {
        malformed("a message of " + std::to_string(got) + " bytes");
    }
    buffer.resize(static_cast<std::size_t>(got));
    return Message::decode(buffer);
}

std::pair<int, int> channel_pair() {
    int fds[2];
    lab::check(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) == 0 ? 0 : -1,
               "socketpair");
    return {fds[0], fds[1]};
}

}  // namespace lab::grade

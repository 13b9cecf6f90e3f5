// SPDX-License-Identifier: MIT
#include "lab/exchange.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "lab/check.hpp"
#include "lab/device.hpp"

namespace lab {

namespace {

using Clock = std::chrono::steady_clock;

// Byte offsets of the fields; the table in exchange.hpp is the specification.
constexpr std::size_t kMagicAt = 0;
constexpr std::size_t kVersionAt = 4;
constexpr std::size_t kLidAt = 6;
constexpr std::size_t kQpnAt = 8;
constexpr std::size_t kPsnAt = 12;
constexpr std::size_t kGidAt = 16;
constexpr std::size_t kAddrAt = 32;
constexpr std::size_t kRkeyAt = 40;
constexpr std::size_t kLengthAt = 44;
constexpr std::size_t kMtuAt = 48;

// Big-endian (network order) writing and reading, one byte at a time: this
// works on any host and needs no alignment.
template <typename Unsigned>
void put(std::span<std::byte> out, std::size_t at, Unsigned value) {
    for (std::size_t i = 0; i < sizeof(Unsigned); ++i) {
        out[at + i] = static_cast<std::byte>(value >> (8 * (sizeof(Unsigned) - 1 - i)));
    }
}

template <typename Unsigned>
Unsigned get(std::span<const std::byte> in, std::size_t at) {
    Unsigned value = 0;
    for (std::size_t i = 0; i < sizeof(Unsigned); ++i) {
        value = static_cast<Unsigned>((value << 8) | std::to_integer<Unsigned>(in[at + i]));
    }
    return value;
}

std::string hex(std::uint64_t value) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
    return text;
}

std::string seconds_text(std::chrono::milliseconds timeout) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(timeout.count()) / 1000.0);
    return text;
}

// What is left until @p deadline, as the timeout of the next wait; 0 once it has passed.
std::chrono::milliseconds left_until(Clock::time_point deadline) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
        std::max(Clock::duration::zero(), deadline - Clock::now()));
}

// Every socket is non-blocking (SOCK_NONBLOCK): each wait happens in
// Deadline::wait_until_ready (poll with a deadline), never inside accept,
// connect, send or recv.

// Owns a socket until it is handed to a Connection.
class Socket {
  public:
    explicit Socket(int fd) noexcept : fd_(fd) {}
    ~Socket() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }
    Socket(const Socket&) = delete;
    Socket& operator=(const Socket&) = delete;
    [[nodiscard]] int get() const noexcept { return fd_; }
    int release() noexcept { return std::exchange(fd_, -1); }

  private:
    int fd_;
};

// The exchange is a handful of small messages; without TCP_NODELAY each one
// could sit in Nagle's buffer waiting for an acknowledgement.
void disable_nagle(int fd) {
    const int on = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

}  // namespace

std::uint32_t wire_length(std::size_t bytes) {
    if (bytes > std::numeric_limits<std::uint32_t>::max()) {
        throw Error("a memory region of " + std::to_string(bytes) +
                    " bytes cannot be offered to the peer: the exchange carries a 32-bit "
                    "length (hint: offer less than 4 GiB, e.g. with PeerSetup::region_length)");
    }
    return static_cast<std::uint32_t>(bytes);
}

std::array<std::byte, kInfoWireSize> encode_info(const ConnectionInfo& info) {
    std::array<std::byte, kInfoWireSize> message{};
    put<std::uint32_t>(message, kMagicAt, kInfoMagic);
    put<std::uint16_t>(message, kVersionAt, kInfoVersion);
    put<std::uint16_t>(message, kLidAt, info.address.lid);
    put<std::uint32_t>(message, kQpnAt, info.address.qp_num);
    put<std::uint32_t>(message, kPsnAt, info.address.psn);
    // A GID is already a byte string in network order (an IPv6 address).
    for (std::size_t i = 0; i < sizeof info.address.gid.raw; ++i) {
        message[kGidAt + i] = static_cast<std::byte>(info.address.gid.raw[i]);
    }
    put<std::uint64_t>(message, kAddrAt, info.remote_addr);
    put<std::uint32_t>(message, kRkeyAt, info.rkey);
    put<std::uint32_t>(message, kLengthAt, info.length);
    put<std::uint32_t>(message, kMtuAt, static_cast<std::uint32_t>(info.mtu));
    return message;
}

ConnectionInfo decode_info(std::span<const std::byte> message) {
    if (message.size() != kInfoWireSize) {
        throw Error("bad connection message: " + std::to_string(message.size()) +
                    " bytes, expected " + std::to_string(kInfoWireSize) +
                    " (hint: is the peer a program of this course?)");
    }
    const auto magic = get<std::uint32_t>(message, kMagicAt);
    if (magic != kInfoMagic) {
        throw Error("bad connection message: magic " + hex(magic) + ", expected " +
                    hex(kInfoMagic) +
                    " (hint: something else answered on this TCP port; check -p)");
    }
    const auto version = get<std::uint16_t>(message, kVersionAt);
    if (version != kInfoVersion) {
        throw Error("bad connection message: version " + std::to_string(version) + ", expected " +
                    std::to_string(kInfoVersion) +
                    " (hint: build both sides from the same checkout)");
    }
    ConnectionInfo info;
    info.address.lid = get<std::uint16_t>(message, kLidAt);
    info.address.qp_num = get<std::uint32_t>(message, kQpnAt);
    info.address.psn = get<std::uint32_t>(message, kPsnAt);
    // QPNs and PSNs are 24-bit numbers on the wire of RDMA itself.
    if (info.address.qp_num > 0xffffff) {
        throw Error("bad connection message: QPN " + hex(info.address.qp_num) +
                    " does not fit in 24 bits");
    }
    if (info.address.psn > 0xffffff) {
        throw Error("bad connection message: PSN " + hex(info.address.psn) +
                    " does not fit in 24 bits");
    }
    for (std::size_t i = 0; i < sizeof info.address.gid.raw; ++i) {
        info.address.gid.raw[i] = std::to_integer<std::uint8_t>(message[kGidAt + i]);
    }
    info.remote_addr = get<std::uint64_t>(message, kAddrAt);
    info.rkey = get<std::uint32_t>(message, kRkeyAt);
    info.length = get<std::uint32_t>(message, kLengthAt);
    const auto mtu = get<std::uint32_t>(message, kMtuAt);
    if (mtu < IBV_MTU_256 || mtu > IBV_MTU_4096) {
        throw Error("bad connection message: MTU code " + std::to_string(mtu) +
                    " is not one of 1 (256 bytes) to 5 (4096 bytes)");
    }
    info.mtu = static_cast<ibv_mtu>(mtu);
    return info;
}

Listener::Listener(std::uint16_t tcp_port) : tcp_port_(tcp_port) {
    Socket listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (listener.get() < 0) {
        fail("socket", errno);
    }
    // A server restarted right after a run can bind again at once, instead of
    // waiting for the old connection's TIME_WAIT to end.
    const int on = 1;
    ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    address.sin_port = htons(tcp_port);
    if (::bind(listener.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
        const int error_number = errno;
        if (error_number == EADDRINUSE) {
            throw Error("TCP port " + std::to_string(tcp_port) +
                        " is already in use (hint: another server is running; stop it or "
                        "choose another port with -p on both sides)");
        }
        fail("bind(TCP port " + std::to_string(tcp_port) + ")", error_number);
    }
    // The queue holds clients that connected before accept() came to them.
    if (::listen(listener.get(), SOMAXCONN) != 0) {
        fail("listen", errno);
    }
    fd_ = listener.release();
}

Listener::~Listener() {
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

Connection Listener::accept(std::chrono::milliseconds timeout) {
    Deadline deadline(timeout);
    for (;;) {
        if (!deadline.wait_until_ready(fd_, POLLIN)) {
            throw Error("no client connected to TCP port " + std::to_string(tcp_port_) +
                        " within " + seconds_text(timeout) +
                        " (hint: start the client with this machine's address and the same -p)");
        }
        const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd >= 0) {
            disable_nagle(fd);
            return Connection(fd);
        }
        // A client that gave up between poll and accept is not an error; wait again.
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNABORTED && errno != EINTR) {
            fail("accept", errno);
        }
    }
}

Connection Connection::accept_one(std::uint16_t tcp_port, std::chrono::milliseconds timeout) {
    return Listener(tcp_port).accept(timeout);  // the listener closes here: one client only
}

Connection Connection::connect_to(const std::string& host, std::uint16_t tcp_port,
                                  std::chrono::milliseconds timeout) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int resolved =
        ::getaddrinfo(host.c_str(), std::to_string(tcp_port).c_str(), &hints, &found);
    if (resolved != 0) {
        throw Error("cannot resolve server address '" + host + "': " + ::gai_strerror(resolved) +
                    " (hint: give an IP address or a host name this machine knows)");
    }
    const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses(found, &::freeaddrinfo);

    const auto deadline = Clock::now() + timeout;
    int last_error = ETIMEDOUT;
    // The server may not be up yet: try every address, and start again after
    // a short pause until the deadline. "Connection refused" is expected here.
    for (;;) {
        for (const addrinfo* candidate = addresses.get(); candidate != nullptr;
             candidate = candidate->ai_next) {
            Socket socket_fd(::socket(candidate->ai_family,
                                      candidate->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                                      candidate->ai_protocol));
            if (socket_fd.get() < 0) {
                last_error = errno;
                continue;
            }
            int error_number = 0;
            if (::connect(socket_fd.get(), candidate->ai_addr, candidate->ai_addrlen) != 0) {
                error_number = errno;
                if (error_number == EINPROGRESS) {
                    error_number = ETIMEDOUT;
                    if (Deadline(left_until(deadline)).wait_until_ready(socket_fd.get(), POLLOUT)) {
                        socklen_t length = sizeof error_number;
                        ::getsockopt(socket_fd.get(), SOL_SOCKET, SO_ERROR, &error_number, &length);
                    }
                }
            }
            if (error_number == 0) {
                disable_nagle(socket_fd.get());
                return Connection(socket_fd.release());
            }
            last_error = error_number;
        }
        if (Clock::now() + std::chrono::milliseconds(100) >= deadline) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    throw Error("could not connect to " + host + ":" + std::to_string(tcp_port) + " within " +
                seconds_text(timeout) + ": " + std::strerror(last_error) +
                " (hint: is the server running? start it first, without SERVER, with the same -p)");
}

Connection::Connection(Connection&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

Connection& Connection::operator=(Connection&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) {
            ::close(fd_);
        }
        fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
}

Connection::~Connection() {
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

void Connection::send_bytes(std::span<const std::byte> bytes, std::chrono::milliseconds timeout) {
    Deadline deadline(timeout);
    std::size_t sent = 0;
    while (sent < bytes.size()) {
        // MSG_NOSIGNAL: a peer that died makes send fail with EPIPE instead
        // of killing this process with SIGPIPE.
        const ssize_t count = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (count > 0) {
            sent += static_cast<std::size_t>(count);
            continue;
        }
        const int error_number = errno;
        if (error_number == EPIPE || error_number == ECONNRESET) {
            throw Error(
                "the peer closed the connection (hint: did the other side exit or crash? "
                "its output says why)");
        }
        if (error_number != EAGAIN && error_number != EWOULDBLOCK && error_number != EINTR) {
            fail("send", error_number);
        }
        if (!deadline.wait_until_ready(fd_, POLLOUT)) {
            throw Error("the peer accepted no data within " + seconds_text(timeout) +
                        " (hint: is the other side stuck or stopped?)");
        }
    }
}

void Connection::receive_bytes(std::span<std::byte> bytes, std::chrono::milliseconds timeout) {
    receive_bytes(bytes, timeout, timeout);
}

void Connection::receive_bytes(std::span<std::byte> bytes, std::chrono::milliseconds left,
                               std::chrono::milliseconds timeout) {
    Deadline deadline(left);
    std::size_t received = 0;
    while (received < bytes.size()) {
        const ssize_t count = ::recv(fd_, bytes.data() + received, bytes.size() - received, 0);
        if (count > 0) {
            received += static_cast<std::size_t>(count);
            continue;
        }
        // A peer that is gone shows as an end of stream or, when our own
        // data reached its closed socket first, as a reset: the same story.
        const int error_number = count == 0 ? 0 : errno;
        if (count == 0 || error_number == ECONNRESET) {
            throw Error("the peer closed the connection after " + std::to_string(received) +
                        " of " + std::to_string(bytes.size()) + " bytes" +
                        (count == 0 ? "" : " (reset)") +
                        " (hint: did the other side exit or crash? its output says why)");
        }
        if (error_number != EAGAIN && error_number != EWOULDBLOCK && error_number != EINTR) {
            fail("recv", error_number);
        }
        if (!deadline.wait_until_ready(fd_, POLLIN)) {
            throw Error("the peer sent nothing within " + seconds_text(timeout) + " (got " +
                        std::to_string(received) + " of " + std::to_string(bytes.size()) +
                        " bytes; hint: is the other side stuck, or started with other options?)");
        }
    }
}

ConnectionInfo Connection::exchange(const ConnectionInfo& mine, std::chrono::milliseconds timeout) {
    // Both sides send first: 52 bytes (kInfoWireSize) fit in any socket buffer, so neither
    // blocks, and neither has to know whether it is server or client.
    const auto deadline = Clock::now() + timeout;
    send_bytes(encode_info(mine), timeout);
    std::array<std::byte, kInfoWireSize> theirs{};
    receive_bytes(theirs, left_until(deadline), timeout);
    return decode_info(theirs);
}

void Connection::barrier(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    const std::array<std::byte, 1> ready{std::byte{'R'}};
    send_bytes(ready, timeout);
    std::array<std::byte, 1> theirs{};
    receive_bytes(theirs, left_until(deadline), timeout);
    if (theirs[0] != ready[0]) {
        throw Error(
            "barrier: the peer sent an unexpected byte (hint: both sides must run the "
            "same program)");
    }
}

void print_address(std::string_view side, const PeerAddress& address) {
    const std::string label = std::string(side) + " address:";
    std::printf("  %-16sLID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n", label.c_str(),
                unsigned(address.lid), unsigned(address.qp_num), unsigned(address.psn),
                gid_to_string(address.gid).c_str());
}

}  // namespace lab

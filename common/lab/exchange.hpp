// SPDX-License-Identifier: MIT
/**
 * @file exchange.hpp
 * @brief The socket exchange of QP information between two processes (taught in lesson 05).
 *
 * Before two RC QPs can talk, each side must learn the other's QP number,
 * first PSN, LID and GID, and, for one-sided operations, the address, rkey and
 * length of the peer's memory region, and the largest payload its port carries
 * (active_mtu): both sides use the smaller of the two MTUs as the path MTU,
 * since a packet longer than the far port's link carries does not get through.
 * RDMA itself cannot carry this (the QPs
 * are not connected yet), so it travels over an ordinary TCP connection:
 * the server (started without SERVER) listens, the client connects, retrying
 * until the server is up or a timeout passes.
 *
 * The message has a fixed size and layout, every integer in network byte order:
 *
 * | offset | size | field                                   |
 * |--------|------|-----------------------------------------|
 * | 0      | 4    | magic "RVLX" (0x52564c58)               |
 * | 4      | 2    | version (2)                             |
 * | 6      | 2    | LID                                     |
 * | 8      | 4    | QP number (24 bits used)                |
 * | 12     | 4    | PSN (24 bits used)                      |
 * | 16     | 16   | GID                                     |
 * | 32     | 8    | remote address                          |
 * | 40     | 4    | rkey                                    |
 * | 44     | 4    | length                                  |
 * | 48     | 4    | active MTU (an ibv_mtu: 1 = 256 … 5 = 4096) |
 *
 * Received messages are untrusted input: decode_info() checks the magic, the
 * version, that QPN and PSN fit in 24 bits and that the MTU is one of the five.
 * Every blocking call has a deadline.
 */
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "lab/verbs.hpp"
#include "lab/wait.hpp"

namespace lab {

/// Everything one side tells the other: how to reach its QP and its memory region.
struct ConnectionInfo {
    PeerAddress address;            ///< QPN, PSN, LID, GID
    std::uint64_t remote_addr = 0;  ///< start of the memory region the peer may access
    std::uint32_t rkey = 0;         ///< that region's rkey
    std::uint32_t length = 0;       ///< that region's length in bytes (below 4 GiB: wire_length())
    ibv_mtu mtu = IBV_MTU_1024;     ///< the sender's active_mtu
};

/// Size of one message on the wire.
inline constexpr std::size_t kInfoWireSize = 52;
/// "RVLX".
inline constexpr std::uint32_t kInfoMagic = 0x52564c58;
/// The layout's version; a peer with another version is refused.
inline constexpr std::uint16_t kInfoVersion = 2;

/**
 * @brief @p bytes as the message's 32-bit length field.
 * @throws lab::Error for a region of 4 GiB or more, which the field cannot
 *         carry (it would reach the peer cut to its low 32 bits).
 */
std::uint32_t wire_length(std::size_t bytes);

/// Serialize @p info into the wire layout above.
std::array<std::byte, kInfoWireSize> encode_info(const ConnectionInfo& info);

/// Parse and validate a message; throws lab::Error naming what is wrong (size, magic, version,
/// range).
ConnectionInfo decode_info(std::span<const std::byte> message);

class Listener;

/// A connected TCP socket to the peer; closed on destruction.
class Connection {
  public:
    /// Server side: listen on @p tcp_port (all addresses), accept one client, stop listening.
    /// Throws when the port is in use or no client comes within @p timeout.
    /// A server with several clients keeps a Listener instead.
    static Connection accept_one(std::uint16_t tcp_port,
                                 std::chrono::milliseconds timeout = kDefaultTimeout);

    /// Client side: connect to @p host:@p tcp_port, retrying while the server is not up yet.
    /// Throws when no connection is made within @p timeout.
    static Connection connect_to(const std::string& host, std::uint16_t tcp_port,
                                 std::chrono::milliseconds timeout = kDefaultTimeout);

    /// Take over @p other's socket; @p other is left closed.
    Connection(Connection&& other) noexcept;
    /// Close this socket, then take over @p other's.
    Connection& operator=(Connection&& other) noexcept;
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;
    /// Close the socket; the peer sees the connection end.
    ~Connection();

    /// Send ours, receive theirs (both sides call it; neither waits for the other to go first).
    ConnectionInfo exchange(const ConnectionInfo& mine,
                            std::chrono::milliseconds timeout = kDefaultTimeout);

    /**
     * @brief Wait until the peer reaches the same point: both send one byte, both read one.
     * Throws when the peer closed the connection (e.g. it crashed) or the timeout passes.
     */
    void barrier(std::chrono::milliseconds timeout = kDefaultTimeout);

    /// Send raw bytes (all of them) within @p timeout.
    void send_bytes(std::span<const std::byte> bytes, std::chrono::milliseconds timeout);
    /// Receive exactly @p bytes.size() bytes within @p timeout; throws if the peer closes first.
    void receive_bytes(std::span<std::byte> bytes, std::chrono::milliseconds timeout);

    /**
     * @brief The watch that ends a wait as soon as the peer is gone (its socket
     *        reports POLLRDHUP), e.g.
     *        wait_for_completion(cq, what, timeout, connection.watch()).
     *
     * The watch holds this socket's number: the Connection must outlive the
     * waits that use it. Moving the Connection (into a vector, say) keeps the
     * number; a temporary Connection has no watch (the overload is deleted).
     */
    [[nodiscard]] PeerWatch watch() const& noexcept { return {fd_, POLLRDHUP}; }
    /// A temporary's socket closes at the end of the statement: nothing to watch.
    PeerWatch watch() const&& = delete;

  private:
    friend class Listener;
    explicit Connection(int fd) noexcept : fd_(fd) {}
    // receive_bytes() for a step of a larger operation: waits at most @p left,
    // and a timeout names the operation's whole @p timeout.
    void receive_bytes(std::span<std::byte> bytes, std::chrono::milliseconds left,
                       std::chrono::milliseconds timeout);
    int fd_ = -1;
};

/**
 * @brief A server's listening TCP socket, for a server that serves several clients
 * (lesson 12).
 *
 * It listens from construction to destruction, so clients that connect at the same
 * moment wait in the kernel's queue until accept() takes them, one after another.
 */
class Listener {
  public:
    /// Listen on @p tcp_port (all addresses); throws when the port is in use.
    explicit Listener(std::uint16_t tcp_port);
    Listener(const Listener&) = delete;
    Listener& operator=(const Listener&) = delete;
    /// Stop listening; clients still waiting in the queue are refused.
    ~Listener();

    /// The next client in the queue; throws when none connects within @p timeout.
    Connection accept(std::chrono::milliseconds timeout = kDefaultTimeout);

  private:
    int fd_ = -1;
    std::uint16_t tcp_port_ = 0;
};

/// Print "  local address:  LID 0x0000, QPN 0x000011, PSN 0x3c5d1e, GID ::ffff:10.77.0.1"
/// as ibv_rc_pingpong does; @p side is "local" or "remote".
void print_address(std::string_view side, const PeerAddress& address);

}  // namespace lab

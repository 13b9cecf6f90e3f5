// SPDX-License-Identifier: MIT
/**
 * @file channel.hpp
 * @brief The messages a check and the student's program exchange while a check runs.
 *
 * A check (course code) starts the student's program and talks to it over a
 * socket pair: it asks the course code inside that program to call one of the
 * student's functions, and learns where that program's queue pairs and
 * buffers are, so that it can connect to them over RDMA. A message is a list
 * of fields (text or bytes), each sent with its length, so no field can be
 * mistaken for the next.
 *
 * Nothing that arrives here decides a check: the checker compares what the
 * student's functions returned with its own answers, and judges RDMA by what
 * its own queue pairs and memory saw.
 */
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lab::grade {

/// One message: a word naming it, then its fields.
class Message {
  public:
    Message() = default;
    /// A message from its fields, the first being its name.
    Message(std::initializer_list<std::string> fields) : fields_(fields) {}
    explicit Message(std::vector<std::string> fields) : fields_(std::move(fields)) {}

    /// Append a field.
    Message& add(std::string field) {
        fields_.push_back(std::move(field));
        return *this;
    }
    /// Append a number as a field.
    Message& add(std::uint64_t number) { return add(std::to_string(number)); }

    /// The name: the first field ("" for an empty message).
    [[nodiscard]] const std::string& name() const;
    /// Field @p index (0 is the name); throws lab::Error naming @p what when it is missing.
    [[nodiscard]] const std::string& text(std::size_t index) const;
    /// Field @p index as an unsigned number; throws lab::Error when it is not one.
    [[nodiscard]] std::uint64_t number(std::size_t index) const;
    /// Field @p index as a signed number.
    [[nodiscard]] std::int64_t signed_number(std::size_t index) const;
    [[nodiscard]] std::size_t size() const noexcept { return fields_.size(); }
    [[nodiscard]] const std::vector<std::string>& fields() const noexcept { return fields_; }

    /// The bytes on the wire: each field as "<length>:<bytes>".
    [[nodiscard]] std::string encode() const;
    /// The inverse of encode(); throws lab::Error on anything malformed.
    static Message decode(std::string_view wire);

  private:
    std::vector<std::string> fields_;
};

/// The largest message either side accepts.
inline constexpr std::size_t kMaxMessageBytes = 256 * 1024;

/// One end of the socket pair (SOCK_SEQPACKET: one send is one message).
class Channel {
  public:
    /// Take ownership of @p fd.
    explicit Channel(int fd) noexcept : fd_(fd) {}
    ~Channel();
    Channel(const Channel&) = delete;
    Channel& operator=(const Channel&) = delete;
    Channel(Channel&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

    /// Send @p message; throws ChannelClosed when the other end is gone.
    void send(const Message& message);
    /// Send @p message with a copy of file descriptor @p fd (SCM_RIGHTS).
    void send_with_fd(const Message& message, int fd);
    /// The next message, or nullopt when none came within @p timeout; throws
    /// lab::Error on a malformed message, and ChannelClosed when the other end closed.
    /// With @p sender, after enable_credentials(): the sending process's id, as the kernel
    /// says. With @p passed_fd: the file descriptor sent along (-1 when none).
    std::optional<Message> receive(std::chrono::milliseconds timeout, pid_t* sender = nullptr,
                                   int* passed_fd = nullptr);
    /// Ask the kernel to attach the sender's credentials to every message (SO_PASSCRED).
    void enable_credentials();

    [[nodiscard]] int fd() const noexcept { return fd_; }
    /// Give up ownership of the socket: returns it, and the channel no longer closes it.
    int release() noexcept;

  private:
    int fd_ = -1;
};

/// The other end of a channel closed (its program ended).
struct ChannelClosed {};

/// A socket pair for a channel: [0] stays with the check, [1] goes to the program.
std::pair<int, int> channel_pair();

}  // namespace lab::grade

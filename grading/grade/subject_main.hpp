// SPDX-License-Identifier: MIT
/**
 * @file subject_main.hpp
 * @brief The course's side of a student's program built for grading.
 *
 * `./lab grade` links each student's edited files with course code only: the
 * exercise's given files, lab_common and a main() made of scenarios, one per
 * check. The check (a separate program that contains no student code) starts
 * the student's program with the name of a scenario; the scenario calls the
 * student's functions as the check asks over the channel (file descriptor 3)
 * and tells the check where its queue pairs and buffers are. The check then
 * judges what it sees: what arrived in its own memory, its own completions,
 * the work requests the program really posted, the values the student's
 * functions returned.
 */
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "channel.hpp"
#include "lab/verbs.hpp"

namespace lab::grade {

/// The course's end of the channel inside the student's program.
class Link {
  public:
    explicit Link(int fd) : channel_(fd) {}

    /// Send @p message to the check.
    void send(const Message& message) { channel_.send(message); }
    /// The check's next message (waits up to a minute; the check enforces the real deadline).
    Message receive();
    /// The check's next message, which must be called @p name.
    Message expect(std::string_view name);

  private:
    Channel channel_;
};

/// A scenario: course code that calls the student's functions as its check asks.
using Scenario = std::function<void(Link& link)>;

/// The scenarios of one exercise, by name.
using Scenarios = std::map<std::string, Scenario, std::less<>>;

/**
 * @brief main() of a student's program built for grading.
 *
 * Runs the scenario named by argv[1] on the channel at file descriptor 3:
 * says "hello", runs it, says "done". An exception ends the scenario with an
 * "error" message carrying its text (a TODO, a verb that failed), which the
 * check may show the student as the reason a check failed.
 */
int subject_main(int argc, char** argv, const Scenarios& scenarios);

/**
 * @brief Bring @p qp (in RESET) to RTS, connected to the check's QP.
 *
 * Sends "address" (ours), receives the check's "address", then INIT (with
 * @p access), RTR and RTS. The check's side is Peer::connect (peer.hpp).
 */
void connect_to_check(Link& link, ibv_qp* qp, const lab::LocalPort& local, const ibv_gid& gid,
                      int access);

/// @p address as message fields (QPN, PSN, LID, GID), appended to @p message.
Message& add_address(Message& message, const lab::PeerAddress& address);
/// The address in fields @p first.. of @p message (as add_address wrote them).
lab::PeerAddress address_from(const Message& message, std::size_t first);

}  // namespace lab::grade

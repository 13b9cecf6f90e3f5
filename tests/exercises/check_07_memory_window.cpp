// SPDX-License-Identifier: MIT
// The checks of exercise 07 (memory window): one per function the student
// writes.
//
// This program contains no student code. Each check starts the student's
// program (subject_07_memory_window.cpp linked with their window.cpp) in the
// sandbox and is its peer: its own QP, connected to the program's, writes
// into the program's region through the window's rkey and with the region's
// own, and sends with invalidate. It judges from what it sees: the statuses
// of its own completions, the bytes in the program's memory, the work
// requests the program posted (seen by the tracer), and the values the
// student's functions returned.
//
// A write the device refuses moves both QPs to ERR, so a check ends with its
// first refused write; every check starts a fresh program and connection.
#include <infiniband/verbs.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "grade/feedback.hpp"
#include "grade/peer.hpp"
#include "grade/student.hpp"
#include "lab/check.hpp"
#include "lab/verbs.hpp"
#include "support/catch.hpp"

using lab::grade::expect;
using lab::grade::Message;
using lab::grade::PostedRequest;
using lab::grade::ProgramFailed;
using lab::grade::StudentProgram;

namespace {

constexpr std::size_t kWindowLength = 1024;  // window.hpp's kWindowLength
// rxe's vendor_id (ibv_query_device): the software device checks an MW's rkey,
// PD, QP, access and state, then the bounds of the MR under it, not the
// window's (drivers/infiniband/sw/rxe: rxe_lookup_mw, check_rkey).
constexpr std::uint32_t kRxeVendorId = 0xffffff;

// Where the scenario's region and window are ("region" or "bound" messages).
struct Lent {
    std::uint64_t region_address = 0;
    std::uint32_t region_rkey = 0;
    std::uint64_t window_address = 0;
    std::uint32_t window_rkey = 0;
};

Lent lent_from(const Message& message) {
    return {message.number(1), static_cast<std::uint32_t>(message.number(2)), message.number(3),
            static_cast<std::uint32_t>(message.number(4))};
}

// The check's side: a QP connected to the program's and a buffer to write from.
class Writer {
  public:
    explicit Writer(StudentProgram& program)
        : qp_(peer_.create_rc_qp()),
          buffer_(256),
          mr_(peer_.register_memory(buffer_, IBV_ACCESS_LOCAL_WRITE)) {
        peer_.connect(program, qp_.get());
    }

    // RDMA write of @p text to @p address with @p rkey; the completion's status.
    ibv_wc_status write(std::uint64_t address, std::uint32_t rkey, const std::string& text) {
        std::copy_n(reinterpret_cast<const std::byte*>(text.data()), text.size(), buffer_.begin());
        lab::post_rdma(qp_.get(), IBV_WR_RDMA_WRITE, std::span(buffer_).first(text.size()),
                       mr_->lkey, address, rkey);
        return lab::grade::next_completion(peer_.cq(), std::chrono::seconds(10)).status;
    }

    // IBV_WR_SEND_WITH_INV of @p text, invalidating @p rkey at the program; the status.
    ibv_wc_status send_with_invalidate(std::uint32_t rkey, const std::string& text) {
        std::copy_n(reinterpret_cast<const std::byte*>(text.data()), text.size(), buffer_.begin());
        ibv_sge sge{reinterpret_cast<std::uint64_t>(buffer_.data()),
                    static_cast<std::uint32_t>(text.size()), mr_->lkey};
        ibv_send_wr wr{};
        wr.opcode = IBV_WR_SEND_WITH_INV;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.invalidate_rkey = rkey;
        ibv_send_wr* bad_wr = nullptr;
        lab::check(ibv_post_send(qp_.get(), &wr, &bad_wr), "ibv_post_send");
        return lab::grade::next_completion(peer_.cq(), std::chrono::seconds(10)).status;
    }

    [[nodiscard]] std::uint32_t vendor_id() const {
        ibv_device_attr attr{};
        lab::check(ibv_query_device(peer_.context(), &attr), "ibv_query_device");
        return attr.vendor_id;
    }

  private:
    lab::grade::Peer peer_;
    lab::QueuePair qp_;
    std::vector<std::byte> buffer_;
    lab::MemoryRegion mr_;
};

std::string status_text(ibv_wc_status status) {
    return std::string("\"") + ibv_wc_status_str(status) + "\"";
}

std::string hex(std::uint64_t value) {
    char text[32];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
    return text;
}

// The scenario's next message @p name; a failure of the program (a TODO, a
// failed verb) fails the check with @p expected and @p hint.
Message receive_or_fail(StudentProgram& program, std::string_view name, const std::string& expected,
                        const std::string& hint) {
    try {
        return program.receive(name);
    } catch (const ProgramFailed& failure) {
        lab::grade::require(false, {expected, failure.what(), hint});
        throw;
    }
}

// Whether @p text is in the program's memory at @p address.
bool landed(StudentProgram& program, std::uint64_t address, const std::string& text) {
    return lab::grade::read_program_memory(program.pid(), address, text.size()) == text;
}

}  // namespace

TEST_CASE("allocate_window: a type 2 window in the region's protection domain", "[ex07]") {
    StudentProgram program("allocate_window");
    const Message window = receive_or_fail(program, "window", "a window from ibv_alloc_mw", "");
    program.send({"checked"});
    program.finish();
    const auto type = window.number(1);
    expect(type == IBV_MW_TYPE_2 && window.number(2) == 1,
           {"a window of type IBV_MW_TYPE_2 (2) in the PD it was given",
            "type " + std::to_string(type) +
                (window.number(2) == 1 ? "" : ", in another protection domain"),
            "ibv_alloc_mw(pd, IBV_MW_TYPE_2): a type 1 window is bound by ibv_bind_mw and "
            "cannot be invalidated by the peer; a type 2 window is bound by a work request"});
}

TEST_CASE("register_region: the peer gets in through a window, never with the region's rkey",
          "[ex07]") {
    StudentProgram program("register_region");
    Writer writer(program);
    const Lent lent = lent_from(receive_or_fail(
        program, "region", "the region registered, and a window bound to part of it",
        "a window can be bound only to a region registered with "
        "IBV_ACCESS_MW_BIND (and IBV_ACCESS_LOCAL_WRITE, for a window "
        "that lets the peer write); otherwise the bind's completion says "
        "\"memory management operation error\" (rxe on kernel 6.12: \"Work Request Flushed "
        "Error\")"));
    const std::string through_window = "through the window";
    const ibv_wc_status inside =
        writer.write(lent.window_address, lent.window_rkey, through_window);
    expect(inside == IBV_WC_SUCCESS && landed(program, lent.window_address, through_window),
           {"the check's write through the window's rkey completes and lands",
            "it completed with " + status_text(inside),
            "register with IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND"});
    // With the region's own rkey, at the region's first byte (outside the window).
    const std::string direct = "with the region's rkey";
    const ibv_wc_status own = writer.write(lent.region_address, lent.region_rkey, direct);
    expect(own == IBV_WC_REM_ACCESS_ERR && !landed(program, lent.region_address, direct),
           {"the check's write with the region's own rkey " + hex(lent.region_rkey) +
                " refused: \"remote access error\"",
            "it completed with " + status_text(own),
            "the region itself grants no remote access: no IBV_ACCESS_REMOTE_WRITE (or _READ, "
            "_ATOMIC) in ibv_reg_mr's flags, or the peer can reach all of it"});
    program.send({"checked"});
    program.finish();
}

TEST_CASE("bind_window: IBV_WR_BIND_MW over exactly the window's bytes; writes inside land",
          "[ex07]") {
    StudentProgram program("bind_window");
    Writer writer(program);
    const Message ready = program.watch(lab::grade::kSends);
    const auto qp_num = static_cast<std::uint32_t>(ready.number(1));
    const Lent lent = lent_from(receive_or_fail(
        program, "bound", "the window bound, and its new rkey returned",
        "post one IBV_WR_BIND_MW on the QP and wait for its completion (IBV_WC_BIND_MW)"));
    const auto requests = program.tracer().take_requests();
    const auto bind = std::find_if(requests.begin(), requests.end(), [&](const PostedRequest& r) {
        return r.queue == PostedRequest::Queue::send && r.qp_num == qp_num &&
               r.opcode == IBV_WR_BIND_MW;
    });
    lab::grade::require(bind != requests.end(),
                        {"an IBV_WR_BIND_MW work request posted on the QP",
                         "none (" + std::to_string(requests.size()) + " work requests posted)",
                         "a type 2 window is bound by a work request: ibv_post_send with opcode "
                         "IBV_WR_BIND_MW and the bind_mw part of ibv_send_wr filled in"});
    expect(bind->bind_addr == lent.window_address && bind->bind_length == kWindowLength,
           {"bind_info.addr " + hex(lent.window_address) + ", bind_info.length " +
                std::to_string(kWindowLength) + " (the part asked for)",
            "addr " + hex(bind->bind_addr) + ", length " + std::to_string(bind->bind_length),
            "the window covers only the bytes you lend: bind_info.addr and .length are the "
            "part's, not the region's"});
    expect((bind->bind_access & IBV_ACCESS_REMOTE_WRITE) != 0 &&
               (bind->bind_access & (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)) == 0,
           {"mw_access_flags IBV_ACCESS_REMOTE_WRITE only",
            "mw_access_flags " + std::to_string(bind->bind_access),
            "grant what the peer needs: it writes, so IBV_ACCESS_REMOTE_WRITE"});
    expect(bind->bind_rkey == lent.window_rkey,
           {"the rkey returned is the one the bind gave the window",
            "bind_mw.rkey " + hex(bind->bind_rkey) + ", returned " + hex(lent.window_rkey),
            "return wr.bind_mw.rkey (ibv_inc_rkey of the window's rkey)"});

    const std::string first = "first bytes", last = "last";
    const ibv_wc_status at_start = writer.write(lent.window_address, lent.window_rkey, first);
    const ibv_wc_status at_end =
        at_start == IBV_WC_SUCCESS ? writer.write(lent.window_address + kWindowLength - last.size(),
                                                  lent.window_rkey, last)
                                   : at_start;
    expect(at_start == IBV_WC_SUCCESS && at_end == IBV_WC_SUCCESS &&
               landed(program, lent.window_address, first) &&
               landed(program, lent.window_address + kWindowLength - last.size(), last),
           {"the check's writes at the window's first and last bytes complete and land",
            "they completed with " + status_text(at_start) + " and " + status_text(at_end),
            "bind with mw_access_flags IBV_ACCESS_REMOTE_WRITE and give the peer the new rkey"});

    // Across the window's end: the standard refuses it (IBV_WC_REM_ACCESS_ERR);
    // rxe lets it through while it stays inside the region (measured on 6.1 and 6.12).
    if (at_end == IBV_WC_SUCCESS) {
        const std::string across = "across the end";
        const ibv_wc_status status =
            writer.write(lent.window_address + kWindowLength - 4, lent.window_rkey, across);
        const bool rxe = writer.vendor_id() == kRxeVendorId;
        expect(status == IBV_WC_REM_ACCESS_ERR || (rxe && status == IBV_WC_SUCCESS),
               {rxe ? "the write across the window's end refused, or (rxe) let through"
                    : "the write across the window's end refused: \"remote access error\"",
                "it completed with " + status_text(status),
                "the window's length bounds what the peer may touch"});
    }
    program.send({"checked"});
    program.finish();
}

TEST_CASE("invalidate_window: IBV_WR_LOCAL_INV of the window's rkey; the next write is refused",
          "[ex07]") {
    StudentProgram program("invalidate_window");
    Writer writer(program);
    const Lent lent = lent_from(program.receive("bound"));
    const std::string before = "before";
    const ibv_wc_status open = writer.write(lent.window_address, lent.window_rkey, before);
    lab::grade::require(open == IBV_WC_SUCCESS,
                        {"the check's write through the course's window completes",
                         "it completed with " + status_text(open), ""});
    program.send({"invalidate"});
    const Message ready = program.watch(lab::grade::kSends);
    const auto qp_num = static_cast<std::uint32_t>(ready.number(1));
    receive_or_fail(program, "invalidated", "the window invalidated",
                    "post one IBV_WR_LOCAL_INV with invalidate_rkey = the window's rkey and "
                    "wait for its completion");
    const auto requests = program.tracer().take_requests();
    const auto invalidate =
        std::find_if(requests.begin(), requests.end(), [&](const PostedRequest& r) {
            return r.queue == PostedRequest::Queue::send && r.qp_num == qp_num &&
                   r.opcode == IBV_WR_LOCAL_INV;
        });
    expect(invalidate != requests.end() && invalidate->invalidate_rkey == lent.window_rkey,
           {"an IBV_WR_LOCAL_INV of rkey " + hex(lent.window_rkey) + " on the QP",
            invalidate == requests.end()
                ? "none (" + std::to_string(requests.size()) + " work requests posted)"
                : "invalidate_rkey " + hex(invalidate->invalidate_rkey),
            "ibv_send_wr with opcode IBV_WR_LOCAL_INV and invalidate_rkey set"});
    const std::string after = "after";
    const ibv_wc_status status = writer.write(lent.window_address, lent.window_rkey, after);
    expect(
        status == IBV_WC_REM_ACCESS_ERR && !landed(program, lent.window_address, after),
        {"the check's next write through the window refused: \"remote access error\"",
         "it completed with " + status_text(status), "an invalidated window's rkey opens nothing"});
    program.send({"checked"});
    program.finish();
}

TEST_CASE(
    "wait_for_invalidation: the peer's send with invalidate revokes the window, and the "
    "receive reports its rkey",
    "[ex07]") {
    StudentProgram program("wait_for_invalidation");
    Writer writer(program);
    const Lent lent = lent_from(program.receive("bound"));
    const std::string before = "before";
    const ibv_wc_status open = writer.write(lent.window_address, lent.window_rkey, before);
    lab::grade::require(open == IBV_WC_SUCCESS,
                        {"the check's write through the course's window completes",
                         "it completed with " + status_text(open), ""});
    program.send({"sending"});
    // The program's own error (a TODO) explains a send that never completes, so
    // its answer is read before the send's status is judged.
    ibv_wc_status sent = IBV_WC_GENERAL_ERR;
    std::string send_error;
    try {
        sent = writer.send_with_invalidate(lent.window_rkey, "done with it");
    } catch (const lab::Error& error) {
        send_error = error.what();
    }
    const Message invalidated = receive_or_fail(
        program, "invalidated", "the receive's completion, naming rkey " + hex(lent.window_rkey),
        "wait for one completion; it is an IBV_WC_RECV whose wc_flags say an rkey was "
        "invalidated (IBV_WC_WITH_INV; on rxe the bit 1 << 2, window.hpp's invalidation_flags) "
        "and whose invalidated_rkey names it");
    lab::grade::require(
        sent == IBV_WC_SUCCESS,
        {"the check's IBV_WR_SEND_WITH_INV completes",
         send_error.empty() ? "it completed with " + status_text(sent) : send_error, ""});
    const auto rkey = static_cast<std::uint32_t>(invalidated.number(1));
    expect(rkey == lent.window_rkey, {"the rkey the send invalidated, " + hex(lent.window_rkey),
                                      hex(rkey), "return wc.invalidated_rkey"});
    const std::string after = "after";
    const ibv_wc_status status = writer.write(lent.window_address, lent.window_rkey, after);
    expect(status == IBV_WC_REM_ACCESS_ERR && !landed(program, lent.window_address, after),
           {"the check's next write through the window refused: \"remote access error\"",
            "it completed with " + status_text(status),
            "the send with invalidate revoked the window at the program's side"});
    program.send({"checked"});
    program.finish();
}

// The instructor's own checks (tests/exercises/hidden/07_memory_window.cpp), where this
// checkout has them: the student edition leaves them out (./lab export --student).
#ifdef LAB_HIDDEN_CHECKS
#include LAB_HIDDEN_CHECKS
#endif

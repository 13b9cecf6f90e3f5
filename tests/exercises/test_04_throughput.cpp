// The checks of exercise 04 (send bandwidth). Correctness only: every
// message arrives whole and in order, the send queue is never over-posted,
// inline, selective signaling and lists are used. Speed is measured by
// bench/ex04_throughput.sh against ib_send_bw, never asserted here.
#include <functional>
#include <string>

#include "lab/check.hpp"
#include "support/catch.hpp"
#include "throughput.hpp"

namespace {

std::string error_of(const std::function<void()>& action) {
    try {
        action();
    } catch (const lab::Error& error) {
        return error.what();
    }
    return {};
}

}  // namespace

TEST_CASE("granted_inline reports at least the inline data asked for", "[ex04]") {
    tp::Pair pair("", 128);
    CHECK(tp::granted_inline(pair.sender()) >= 128);
    tp::Pair none("", 0);
    CHECK(tp::granted_inline(none.sender()) < 128);
}

TEST_CASE("stream_sends: small messages, inline, one signaled in 16, lists of 16", "[ex04]") {
    tp::Pair pair("", 128);
    tp::counters() = {};
    tp::StreamOptions options;
    options.message_size = 64;
    options.count = 5000;
    tp::stream_sends(pair, options);
    INFO(pair.receive_error());
    CHECK(pair.receive_error().empty());
    CHECK(pair.received_messages() == 5000);
    CHECK(pair.received_bytes() == 5000 * 64);
    const tp::Counters c = tp::counters();
    CHECK(c.requests == 5000);
    CHECK(c.inline_requests == 5000);
    CHECK(c.signaled_requests == (5000 + 15) / 16);  // every 16th, and the last (5000 = 312×16 + 8)
    CHECK(c.longest_list == 16);
    CHECK(c.lists < 5000 / 4);  // lists, not one request per ibv_post_send
}

TEST_CASE("stream_sends: large messages are not inline; odd counts and batches", "[ex04]") {
    tp::Pair pair("", 128);
    tp::counters() = {};
    tp::StreamOptions options;
    options.message_size = 8192 + 5;
    options.count = 1000;
    options.signal_every = 7;
    options.batch = 5;
    tp::stream_sends(pair, options);
    INFO(pair.receive_error());
    CHECK(pair.receive_error().empty());
    CHECK(pair.received_messages() == 1000);
    CHECK(pair.received_bytes() == 1000 * (8192 + 5));
    const tp::Counters c = tp::counters();
    CHECK(c.inline_requests == 0);
    CHECK(c.signaled_requests == 1000 / 7 + 1);  // 142 multiples of 7, and the last
    CHECK(c.longest_list == 5);
}

TEST_CASE("stream_sends: one signaled completion per full send queue never over-posts", "[ex04]") {
    // Signal only every 128th: the queue fills completely between completions.
    tp::Pair pair("", 0);
    tp::counters() = {};
    tp::StreamOptions options;
    options.message_size = 256;
    options.count = 3000;
    options.signal_every = tp::Pair::kSendDepth;
    options.batch = 32;
    tp::stream_sends(pair, options);  // ibv_post_send fails if the queue is over-posted
    CHECK(pair.receive_error().empty());
    CHECK(pair.received_messages() == 3000);
    CHECK(tp::counters().inline_requests == 0);
}

TEST_CASE("stream_sends refuses options that cannot work, before posting", "[ex04][bad-input]") {
    tp::Pair pair("", 128);
    const auto refused = [&](std::size_t size, std::uint32_t signal_every, std::uint32_t batch) {
        tp::StreamOptions options;
        options.message_size = size;
        options.count = 10;
        options.signal_every = signal_every;
        options.batch = batch;
        tp::counters() = {};
        const std::string message = error_of([&] { tp::stream_sends(pair, options); });
        INFO(message);
        CHECK(tp::counters().requests == 0);
        // Refused by stream_sends itself, not by an unwritten function.
        return message.rfind("stream_sends: ", 0) == 0 && message.find("TODO") == std::string::npos;
    };
    CHECK(refused(4, 16, 16));
    CHECK(refused(tp::Pair::kMaxMessage + 1, 16, 16));
    CHECK(refused(64, 0, 16));
    CHECK(refused(64, 16, 0));
    CHECK(refused(64, 16, tp::Pair::kSendDepth + 1));
}

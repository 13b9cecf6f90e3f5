// SPDX-License-Identifier: MIT
// Exercise 04 built for grading: the course's main() around the student's
// throughput.cpp. Each scenario is the student's half of one check in
// check_04_throughput.cpp, which watches the work requests this program
// posts (tracer) and the packets its QPs sent and received (the kernel's
// packet sequence numbers). The Pair (given.cpp) sends from QP A to QP B.
#include <infiniband/verbs.h>

#include <string>

#include "grade/subject_main.hpp"
#include "lab/check.hpp"
#include "lab/device.hpp"
#include "throughput.hpp"

namespace {

using lab::grade::Link;
using lab::grade::Message;

void granted_inline(Link& link) {
    tp::Pair asked("", 128);
    tp::Pair none("", 0);
    link.send(Message{"granted"}
                  .add(std::to_string(tp::granted_inline(asked.sender())))
                  .add(std::to_string(tp::granted_inline(none.sender()))));
}

// The check sends the pair's inline size and the stream's options; the
// program streams, then reports what B (given.cpp) saw.
void stream(Link& link) {
    static_cast<void>(lab::open_device(""));  // loads the provider, for watching
    const Message setup = link.expect("stream");
    tp::Pair pair("", static_cast<std::uint32_t>(setup.number(1)));
    tp::StreamOptions options;
    options.message_size = setup.number(2);
    options.count = setup.number(3);
    options.signal_every = static_cast<std::uint32_t>(setup.number(4));
    options.batch = static_cast<std::uint32_t>(setup.number(5));
    link.send(Message{"ready"}.add(pair.sender()->qp_num));
    link.expect("go");
    tp::stream_sends(pair, options);
    link.send(Message{"streamed"}
                  .add(pair.received_messages())
                  .add(pair.received_bytes())
                  .add(pair.receive_error()));
    link.expect("checked");
}

// Every bad set of options the check sends ("options" SIZE SIGNAL_EVERY BATCH), on
// one pair: what stream_sends threw for each ("" when it threw nothing).
void refuse(Link& link) {
    tp::Pair pair("", 128);
    link.send(Message{"ready"}.add(pair.sender()->qp_num));
    link.expect("go");
    for (;;) {
        const Message order = link.receive();
        if (order.name() == "end") {
            break;
        }
        tp::StreamOptions options;
        options.message_size = order.number(1);
        options.count = 10;
        options.signal_every = static_cast<std::uint32_t>(order.number(2));
        options.batch = static_cast<std::uint32_t>(order.number(3));
        std::string refused;
        try {
            tp::stream_sends(pair, options);
        } catch (const lab::Error& error) {
            refused = error.what();
        }
        link.send({"refused", refused});
    }
    link.send({"ended"});
}

}  // namespace

int main(int argc, char** argv) {
    return lab::grade::subject_main(
        argc, argv, {{"granted_inline", granted_inline}, {"stream", stream}, {"refuse", refuse}});
}

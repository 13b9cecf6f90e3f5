// SPDX-License-Identifier: MIT
// Exercise 04, your part: send bandwidth. README.md explains the task.
// Every function ends in todo(...), which throws "TODO: <function> is not
// written yet"; replace it with your code.
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "lab/check.hpp"
#include "lab/completion.hpp"
#include "throughput.hpp"

namespace tp {

namespace {

// Marks an unwritten function; the arguments only silence "unused parameter".
template <typename... Unused>
[[noreturn]] void todo(std::string_view function, const Unused&... /*unused*/) {
    throw lab::Error("TODO: " + std::string(function) +
                     " is not written yet (exercise 04, throughput.cpp)");
}

}  // namespace

std::uint32_t granted_inline(ibv_qp* qp) {
    // TODO: ibv_query_qp(qp, &attr, IBV_QP_CAP, &init_attr); return init_attr.cap.max_inline_data.
    todo("granted_inline", qp);
}

void stream_sends(Pair& pair, const StreamOptions& options) {
    // TODO:
    // 1. Refuse options that cannot work (see throughput.hpp) with a lab::Error.
    // 2. pair.expect_size(options.message_size); inline if the size fits granted_inline().
    // 3. Loop until every send has completed:
    //    - post up to `batch` sends as ONE linked list with post_list(), but never
    //      more than Pair::kSendDepth outstanding (posted - completed);
    //    - message k lives in pair.send_slot(k % kSendDepth), stamped with k;
    //    - IBV_SEND_SIGNALED only on every signal_every-th send and the last one;
    //      a signaled completion with wr_id k means sends 0..k are all done;
    //    - poll the send CQ (ibv_poll_cq with an array), check each completion;
    //    - call pair.keep_receiving() every time round.
    // 4. Then call pair.keep_receiving() until B has all options.count messages.
    // Every loop needs a deadline (10 s): never hang.
    todo("stream_sends", pair, options);
}

}  // namespace tp

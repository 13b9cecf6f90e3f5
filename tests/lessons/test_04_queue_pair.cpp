// Lesson 04 on the real device: the granted QP caps, the states in order,
// the refused transitions, the message the QP sent itself, and bad input.
#include <infiniband/verbs.h>

#include <chrono>
#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/expect.hpp"
#include "support/process.hpp"

using lab::test::check_each_rejected;
using lab::test::check_one_error_line;
using lab::test::lesson;
using lab::test::run;
using namespace std::chrono_literals;

#ifndef LAB_BAD_INPUT_ONLY

namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("04_queue_pair prints the caps it asked for and the ones granted", "[lesson04]") {
    const auto result = run({lesson("04_queue_pair")});
    INFO(result.out << result.err);
    REQUIRE(result.exit_code == 0);
    for (const char* cap :
         {"max_send_wr", "max_recv_wr", "max_send_sge", "max_recv_sge", "max_inline_data"}) {
        std::smatch match;
        INFO("cap " << cap);
        REQUIRE(std::regex_search(result.out, match,
                                  std::regex(std::string("\\t") + cap + R"(\s+(\d+)\s+(\d+)\n)")));
        CHECK(std::stoul(match[2]) >= std::stoul(match[1]));  // never less than asked
    }
    CHECK(std::regex_search(result.out, std::regex(R"(max_inline_data\s+64\s+\d+)")));
}

TEST_CASE("04_queue_pair walks RESET, INIT, RTR, RTS in order and refuses shortcuts",
          "[lesson04]") {
    const auto result = run({lesson("04_queue_pair")});
    INFO(result.out << result.err);
    REQUIRE(result.exit_code == 0);
    std::vector<std::string> states;
    const std::regex state(R"(ibv_query_qp: state (\w+))");
    for (std::sregex_iterator it(result.out.begin(), result.out.end(), state), end; it != end;
         ++it) {
        states.push_back((*it)[1]);
    }
    CHECK(states == std::vector<std::string>{"RESET", "INIT", "RTR", "RTS"});

    const auto refused = result.out.find("RESET->RTR     ibv_modify_qp: refused: Invalid argument");
    const auto init = result.out.find("state INIT");
    REQUIRE(refused != std::string::npos);
    CHECK(refused < init);  // refused while still in RESET
    CHECK(
        contains(result.out,
                 "INIT->RTR      without IBV_QP_DEST_QPN in the mask: refused: Invalid argument"));
    CHECK(contains(result.out, "RESET->INIT    mask STATE|PKEY_INDEX|PORT|ACCESS_FLAGS"));
    CHECK(contains(
        result.out,
        "INIT->RTR      mask STATE|AV|PATH_MTU|DEST_QPN|RQ_PSN|MAX_DEST_RD_ATOMIC|MIN_RNR_TIMER"));
    CHECK(
        contains(result.out,
                 "RTR->RTS       mask STATE|SQ_PSN|TIMEOUT|RETRY_CNT|RNR_RETRY|MAX_QP_RD_ATOMIC"));

    // Connected to itself: the destination QPN is its own, and the PSN it
    // expects is the one it sends with.
    std::smatch match;
    REQUIRE(std::regex_search(result.out, match, std::regex(R"(RC QP number (0x[0-9a-f]+))")));
    const std::string qpn = match[1];
    REQUIRE(std::regex_search(
        result.out, match,
        std::regex(R"(dest_qp_num (0x[0-9a-f]+), path_mtu \d+, rq_psn (0x[0-9a-f]+))")));
    CHECK(match[1] == qpn);
    const std::string rq_psn = match[2];
    REQUIRE(std::regex_search(result.out, match, std::regex(R"(sq_psn (0x[0-9a-f]+))")));
    CHECK(match[1] == rq_psn);
}

TEST_CASE("04_queue_pair receives exactly the message it sent itself", "[lesson04]") {
    for (const char* size : {"32", "4096"}) {  // one packet, and four at MTU 1024
        const auto result = run({lesson("04_queue_pair"), "-s", size});
        INFO("-s " << size << "\n" << result.out << result.err);
        REQUIRE(result.exit_code == 0);
        std::smatch match;
        REQUIRE(std::regex_search(result.out, match, std::regex(R"(RC QP number (0x[0-9a-f]+))")));
        const std::string qpn = match[1];
        // Both completions, successful, on this QP, with the bytes sent.
        CHECK(contains(result.out,
                       "completion: wr_id 2, status success, opcode IBV_WC_RECV, byte_len " +
                           std::string(size) + ", qp_num " + qpn));
        CHECK(contains(result.out, "completion: wr_id 1, status success, opcode IBV_WC_SEND"));
        REQUIRE(std::regex_search(result.out, match, std::regex("received: \"([^\"]*)\"")));
        const std::string sent = "Hello from QP " + qpn + " to itself";
        const std::string received = match[1];
        CHECK(received.substr(0, sent.size()) == sent);
        CHECK(received.find_first_not_of('.', sent.size()) == std::string::npos);
        CHECK(contains(result.out,
                       "all " + std::string(size) + " received bytes equal the sent ones"));
    }
}

TEST_CASE("04_queue_pair --send-first: RNR NAKs, retried for ever, or fatal with --rnr-retry 0",
          "[lesson04]") {
    // The send goes out a second before any receive is posted.
    const auto patient = run({lesson("04_queue_pair"), "--send-first"});
    INFO(patient.out << patient.err);
    REQUIRE(patient.exit_code == 0);
    CHECK(contains(patient.out, "Step 9: --send-first: no receive yet, ibv_post_send IBV_WR_SEND"));
    CHECK(contains(patient.out, "rnr_retry 7)"));  // the RTS line of ibv_query_qp
    const auto late = patient.out.find("1 s later: ibv_post_recv (wr_id 2); rnr_retry is 7");
    const auto received =
        patient.out.find("completion: wr_id 2, status success, opcode IBV_WC_RECV");
    const auto sent = patient.out.find("completion: wr_id 1, status success, opcode IBV_WC_SEND");
    REQUIRE(late != std::string::npos);
    REQUIRE(received != std::string::npos);
    REQUIRE(sent != std::string::npos);
    CHECK(late < received);  // the send completed only after the receive was posted
    CHECK(late < sent);
    CHECK(contains(patient.out, "all 32 received bytes equal the sent ones"));

    const auto impatient = run({lesson("04_queue_pair"), "--send-first", "--rnr-retry", "0"});
    INFO(impatient.out << impatient.err);
    CHECK(contains(impatient.out, "rnr_retry 0)"));
    lab::test::check_one_error_line(
        impatient,
        "send to itself: work completion failed: RNR retry counter exceeded (status 13, wr_id 1");
    CHECK(contains(impatient.err, "hint: receiver not ready"));
    CHECK_FALSE(contains(impatient.out, "received bytes equal"));
}

TEST_CASE("04_queue_pair honours -g: the link-local GID works for a QP talking to itself",
          "[lesson04]") {
    const auto result = run({lesson("04_queue_pair"), "-g", "0"});
    INFO(result.out << result.err);
    REQUIRE(result.exit_code == 0);
    CHECK(contains(result.out, "GID index 0 (fe80::"));
    CHECK(contains(result.out, "all 32 received bytes equal the sent ones"));
}

#else

TEST_CASE("04_queue_pair rejects bad input with one line and a non-zero exit",
          "[lesson04][bad-input]") {
    check_each_rejected(lesson("04_queue_pair"),
                        {
                            {{"-d", "no_such_dev0"}, "unknown RDMA device 'no_such_dev0'"},
                            {{"-g", "100000"}, "GID index 100000 is out of range"},
                            {{"-g", "900"}, "GID index 900 has no GID"},
                            {{"-i", "7"}, "port 7 is out of range"},
                            {{"-s", "0"}, "--size"},
                            {{"-s", "huge"}, "--size"},
                            {{"--rnr-retry", "8"}, "--rnr-retry: Value 8 not in range 0 to 7"},
                            {{"--rnr-retry", "-1"}, "--rnr-retry"},
                            {{"--send-first", "now"}, "now"},
                        });
}

namespace {

// The largest message port 1 of the first device takes, read from the device
// itself (rxe: 8 MiB on Linux 6.1, 2 GiB on 6.12).
std::uint32_t first_port_max_msg_sz() {
    int count = 0;
    ibv_device** devices = ibv_get_device_list(&count);
    REQUIRE(devices != nullptr);
    REQUIRE(count > 0);
    ibv_context* context = ibv_open_device(devices[0]);
    ibv_free_device_list(devices);
    REQUIRE(context != nullptr);
    ibv_port_attr port_attr{};
    const int status = ibv_query_port(context, 1, &port_attr);
    ibv_close_device(context);
    REQUIRE(status == 0);
    return port_attr.max_msg_sz;
}

}  // namespace

TEST_CASE("04_queue_pair refuses a message one byte above the device's max_msg_sz",
          "[lesson04][bad-input]") {
    const std::uint64_t limit = first_port_max_msg_sz();
    const std::string too_big = std::to_string(limit + 1);
    INFO("max_msg_sz " << limit);
    constexpr std::uint64_t kLargestSize = std::uint64_t{1} << 30;  // the -s range (lab::Options)
    if (limit + 1 <= kLargestSize) {
        check_one_error_line(
            run({lesson("04_queue_pair"), "-s", too_big}, 20s),
            "message size " + too_big + " is above the port's max_msg_sz " + std::to_string(limit));
    } else {
        // Linux 6.12's rxe takes messages up to 2 GiB, more than -s allows:
        // the command line refuses the size before the device is asked.
        check_one_error_line(run({lesson("04_queue_pair"), "-s", too_big}, 20s), "--size");
    }
}

#endif

// SPDX-License-Identifier: MIT
// Unit tests of the socket exchange (lab::Connection, encode_info/decode_info)
// over loopback TCP: both ends run in this process, one on a thread. No RDMA
// device needed.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "lab/check.hpp"
#include "lab/exchange.hpp"
#include "support/catch.hpp"
#include "support/process.hpp"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

lab::ConnectionInfo sample_info() {
    lab::ConnectionInfo info;
    info.address.qp_num = 0x000011;
    info.address.psn = 0x3c5d1e;
    info.address.lid = 0x1234;
    REQUIRE(inet_pton(AF_INET6, "::ffff:10.77.0.1", info.address.gid.raw) == 1);
    info.remote_addr = 0x00007f0012345678;
    info.rkey = 0xdeadbeef;
    info.length = 4096;
    info.mtu = IBV_MTU_2048;
    return info;
}

bool same(const lab::ConnectionInfo& a, const lab::ConnectionInfo& b) {
    return a.address.qp_num == b.address.qp_num && a.address.psn == b.address.psn &&
           a.address.lid == b.address.lid &&
           std::memcmp(a.address.gid.raw, b.address.gid.raw, sizeof a.address.gid.raw) == 0 &&
           a.remote_addr == b.remote_addr && a.rkey == b.rkey && a.length == b.length &&
           a.mtu == b.mtu;
}

std::uint16_t port() {
    return static_cast<std::uint16_t>(lab::test::free_tcp_port());
}

// The message of the call, or "" when it did not throw a lab::Error.
template <typename Function>
std::string error_of(Function&& function) {
    try {
        function();
    } catch (const lab::Error& error) {
        return error.what();
    }
    return "";
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// A client that connects and sends @p bytes raw, then closes: a misbehaving peer.
void raw_peer(std::uint16_t tcp_port, std::span<const std::byte> bytes) {
    auto connection = lab::Connection::connect_to("127.0.0.1", tcp_port, 5s);
    connection.send_bytes(bytes, 5s);
}

}  // namespace

TEST_CASE("encode_info writes the documented layout in network byte order", "[exchange]") {
    const auto message = lab::encode_info(sample_info());
    REQUIRE(message.size() == 52);
    auto byte = [&](std::size_t at) { return std::to_integer<unsigned>(message[at]); };
    CHECK(std::string{char(byte(0)), char(byte(1)), char(byte(2)), char(byte(3))} == "RVLX");
    CHECK((byte(4) == 0 && byte(5) == 2));                                             // version 2
    CHECK((byte(6) == 0x12 && byte(7) == 0x34));                                       // LID
    CHECK((byte(8) == 0 && byte(9) == 0 && byte(11) == 0x11));                         // QPN
    CHECK((byte(13) == 0x3c && byte(14) == 0x5d && byte(15) == 0x1e));                 // PSN
    CHECK((byte(26) == 0xff && byte(27) == 0xff && byte(28) == 10 && byte(31) == 1));  // GID
    CHECK((byte(32) == 0 && byte(34) == 0x7f && byte(39) == 0x78));                    // address
    CHECK((byte(40) == 0xde && byte(43) == 0xef));                                     // rkey
    CHECK((byte(46) == 0x10 && byte(47) == 0x00));             // length 4096
    CHECK((byte(48) == 0 && byte(50) == 0 && byte(51) == 4));  // MTU 2048
}

TEST_CASE("the path MTU two sides agree on is the smaller of their active MTUs", "[exchange]") {
    CHECK(lab::agreed_mtu(IBV_MTU_1024, IBV_MTU_4096) == IBV_MTU_1024);
    CHECK(lab::agreed_mtu(IBV_MTU_4096, IBV_MTU_1024) == IBV_MTU_1024);
    CHECK(lab::agreed_mtu(IBV_MTU_2048, IBV_MTU_2048) == IBV_MTU_2048);
}

TEST_CASE("decode_info reverses encode_info", "[exchange]") {
    const auto info = sample_info();
    CHECK(same(lab::decode_info(lab::encode_info(info)), info));
}

TEST_CASE("a region length the 32-bit field cannot carry is refused, not cut", "[exchange]") {
    CHECK(lab::wire_length(0) == 0);
    CHECK(lab::wire_length(0xffffffffu) == 0xffffffffu);
    const std::size_t four_gib = std::size_t{1} << 32;
    CHECK(contains(error_of([&] { (void)lab::wire_length(four_gib); }),
                   "a memory region of 4294967296 bytes cannot be offered to the peer"));
    CHECK(contains(error_of([&] { (void)lab::wire_length(four_gib + 4096); }), "32-bit length"));
}

TEST_CASE("decode_info refuses malformed messages, naming what is wrong", "[exchange]") {
    const auto good = lab::encode_info(sample_info());

    SECTION("truncated") {
        CHECK(contains(error_of([&] { lab::decode_info(std::span(good).first(51)); }),
                       "51 bytes, expected 52"));
        CHECK(contains(error_of([&] { lab::decode_info(std::span(good).first(48)); }),
                       "48 bytes, expected 52"));  // a peer of version 1
        CHECK(contains(error_of([&] { lab::decode_info({}); }), "0 bytes"));
    }
    SECTION("wrong magic") {
        auto bad = good;
        bad[0] = std::byte{'X'};
        CHECK(contains(error_of([&] { lab::decode_info(bad); }), "magic 0x58564c58"));
    }
    SECTION("wrong version") {
        auto bad = good;
        bad[5] = std::byte{1};
        CHECK(contains(error_of([&] { lab::decode_info(bad); }), "version 1, expected 2"));
    }
    SECTION("QPN or PSN wider than 24 bits") {
        auto bad_qpn = good;
        bad_qpn[8] = std::byte{1};
        CHECK(contains(error_of([&] { lab::decode_info(bad_qpn); }), "QPN 0x1000011"));
        auto bad_psn = good;
        bad_psn[12] = std::byte{0x80};
        CHECK(contains(error_of([&] { lab::decode_info(bad_psn); }), "PSN"));
    }
    SECTION("an MTU code that is not one of the five") {
        for (const unsigned char code : {0, 6, 255}) {
            auto bad = good;
            bad[51] = std::byte{code};
            CHECK(contains(error_of([&] { lab::decode_info(bad); }),
                           "MTU code " + std::to_string(code) + " is not one of 1 (256 bytes)"));
        }
    }
}

TEST_CASE("server and client exchange their information and meet at a barrier", "[exchange]") {
    const auto tcp_port = port();
    auto server_info = sample_info();
    auto client_info = sample_info();
    client_info.address.qp_num = 0x22;
    client_info.rkey = 7;

    auto server = std::async(std::launch::async, [&] {
        auto connection = lab::Connection::accept_one(tcp_port, 10s);
        const auto theirs = connection.exchange(server_info, 10s);
        connection.barrier(10s);
        return theirs;
    });
    auto connection = lab::Connection::connect_to("127.0.0.1", tcp_port, 10s);
    const auto theirs = connection.exchange(client_info, 10s);
    connection.barrier(10s);

    CHECK(same(theirs, server_info));
    CHECK(same(server.get(), client_info));
}

TEST_CASE("a truncated or foreign message is refused by the receiver", "[exchange]") {
    const auto tcp_port = port();
    auto good = lab::encode_info(sample_info());

    SECTION("truncated: the peer closes after 20 bytes") {
        std::thread peer([&] { raw_peer(tcp_port, std::span(good).first(20)); });
        auto connection = lab::Connection::accept_one(tcp_port, 10s);
        const auto error = error_of([&] { connection.exchange(sample_info(), 10s); });
        peer.join();
        CHECK(contains(error, "closed the connection after 20 of 52 bytes"));
    }
    SECTION("wrong magic") {
        good[3] = std::byte{0};
        std::thread peer([&] { raw_peer(tcp_port, good); });
        auto connection = lab::Connection::accept_one(tcp_port, 10s);
        const auto error = error_of([&] { connection.exchange(sample_info(), 10s); });
        peer.join();
        CHECK(contains(error, "bad connection message: magic"));
    }
    SECTION("wrong version") {
        good[4] = std::byte{0x7f};
        std::thread peer([&] { raw_peer(tcp_port, good); });
        auto connection = lab::Connection::accept_one(tcp_port, 10s);
        const auto error = error_of([&] { connection.exchange(sample_info(), 10s); });
        peer.join();
        CHECK(contains(error, "version 32514"));
    }
}

TEST_CASE("a peer that closes early makes the barrier fail at once", "[exchange]") {
    const auto tcp_port = port();
    std::thread peer([&] {
        auto connection = lab::Connection::connect_to("127.0.0.1", tcp_port, 5s);
        // closes without taking part in the barrier
    });
    auto connection = lab::Connection::accept_one(tcp_port, 10s);
    peer.join();
    const auto start = Clock::now();
    const auto error = error_of([&] { connection.barrier(10s); });
    CHECK(contains(error, "the peer"));
    CHECK((contains(error, "closed") || contains(error, "reset")));
    CHECK(Clock::now() - start < 5s);  // noticed at once, not at the deadline
}

TEST_CASE("Connection::watch tells a peer that is gone from one that is quiet", "[exchange]") {
    const auto tcp_port = port();
    SECTION("a quiet peer is still there") {
        std::promise<void> checked;
        std::thread peer([&] {
            auto connection = lab::Connection::connect_to("127.0.0.1", tcp_port, 5s);
            checked.get_future().wait();  // keeps its socket open meanwhile
        });
        auto connection = lab::Connection::accept_one(tcp_port, 10s);
        CHECK(error_of([&] { connection.watch().throw_if_gone(); }).empty());
        checked.set_value();
        peer.join();
    }
    SECTION("a peer that sent a byte, then died: gone, and its byte can still be read") {
        // As a peer that died waiting at a barrier: its byte arrived first.
        const std::array<std::byte, 1> one_byte{std::byte{1}};
        std::thread peer([&] { raw_peer(tcp_port, one_byte); });
        auto connection = lab::Connection::accept_one(tcp_port, 10s);
        peer.join();
        CHECK(contains(error_of([&] { connection.watch().throw_if_gone(); }),
                       "the peer closed the connection"));
        std::array<std::byte, 1> received{};
        connection.receive_bytes(received, 5s);
        CHECK(received[0] == std::byte{1});
    }
    SECTION("the watch survives a move of its Connection, as into a vector") {
        std::thread peer(
            [&] { auto connection = lab::Connection::connect_to("127.0.0.1", tcp_port, 5s); });
        std::vector<lab::Connection> connections;
        connections.push_back(lab::Connection::accept_one(tcp_port, 10s));
        const lab::PeerWatch watch = connections.front().watch();
        connections.reserve(
            16);  // moves the Connection; the watch holds its socket, not its address
        peer.join();
        CHECK(contains(error_of([&] { watch.throw_if_gone(); }), "the peer closed the connection"));
    }
}

TEST_CASE("the client retries a refused connection until the server starts", "[exchange]") {
    const auto tcp_port = port();
    auto client = std::async(std::launch::async, [&] {
        auto connection = lab::Connection::connect_to("127.0.0.1", tcp_port, 10s);
        return connection.exchange(sample_info(), 10s);
    });
    // Nobody listens yet: the client's first attempts are refused.
    std::this_thread::sleep_for(700ms);
    REQUIRE(client.wait_for(0s) == std::future_status::timeout);
    auto connection = lab::Connection::accept_one(tcp_port, 10s);
    const auto theirs = connection.exchange(sample_info(), 10s);
    CHECK(same(theirs, sample_info()));
    CHECK(same(client.get(), sample_info()));
}

TEST_CASE("every blocking call gives up at its timeout", "[exchange]") {
    const auto tcp_port = port();

    SECTION("connect: nobody listens") {
        const auto start = Clock::now();
        const auto error =
            error_of([&] { lab::Connection::connect_to("127.0.0.1", tcp_port, 400ms); });
        const auto took = Clock::now() - start;
        CHECK(contains(
            error, "could not connect to 127.0.0.1:" + std::to_string(tcp_port) + " within 0.4 s"));
        CHECK(contains(error, "Connection refused"));
        CHECK(took >= 300ms);
        CHECK(took < 3s);
    }
    SECTION("accept: no client comes") {
        const auto start = Clock::now();
        const auto error = error_of([&] { lab::Connection::accept_one(tcp_port, 300ms); });
        CHECK(contains(error, "no client connected to TCP port"));
        CHECK(Clock::now() - start < 3s);
    }
    SECTION("exchange and barrier: the peer is connected but silent") {
        std::promise<void> done;
        std::thread peer([&] {
            auto connection = lab::Connection::connect_to("127.0.0.1", tcp_port, 5s);
            done.get_future().wait();  // keeps the connection open, sends nothing
        });
        auto connection = lab::Connection::accept_one(tcp_port, 10s);
        const auto start = Clock::now();
        const auto exchange_error = error_of([&] { connection.exchange(sample_info(), 300ms); });
        const auto barrier_error = error_of([&] { connection.barrier(300ms); });
        const auto took = Clock::now() - start;
        done.set_value();
        peer.join();
        CHECK(contains(exchange_error, "the peer sent nothing within 0.3 s"));
        CHECK(contains(barrier_error, "the peer sent nothing within 0.3 s"));
        CHECK(took < 3s);
    }
}

TEST_CASE("a TCP port in use is reported as such", "[exchange]") {
    const auto tcp_port = port();
    // Another program holds the port: a plain listening socket.
    const int holder = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    address.sin_port = htons(tcp_port);
    REQUIRE(holder >= 0);
    REQUIRE(::bind(holder, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(holder, 1) == 0);
    const auto error = error_of([&] { lab::Connection::accept_one(tcp_port, 1s); });
    ::close(holder);
    CHECK(contains(error, "TCP port " + std::to_string(tcp_port) + " is already in use"));
}

TEST_CASE("an unknown server name is refused at once", "[exchange]") {
    const auto error =
        error_of([&] { lab::Connection::connect_to("no-such-host.invalid", 18515, 5s); });
    CHECK(contains(error, "cannot resolve server address 'no-such-host.invalid'"));
}

TEST_CASE("a listener serves clients that connect at the same moment, one after another",
          "[exchange]") {
    const auto tcp_port = port();
    lab::Listener listener(tcp_port);
    constexpr std::uint32_t kClients = 4;
    std::vector<std::future<lab::ConnectionInfo>> clients;
    for (std::uint32_t client = 1; client <= kClients; ++client) {
        clients.push_back(std::async(std::launch::async, [tcp_port, client] {
            auto info = sample_info();
            info.rkey = client;  // each client says who it is
            auto connection = lab::Connection::connect_to("127.0.0.1", tcp_port, 10s);
            return connection.exchange(info, 10s);
        }));
    }
    // All four are queued before the first accept: none may be refused or reset.
    std::this_thread::sleep_for(300ms);
    std::vector<std::uint32_t> seen;
    for (std::uint32_t served = 1; served <= kClients; ++served) {
        auto connection = listener.accept(10s);
        auto mine = sample_info();
        mine.rkey = 100 + served;
        seen.push_back(connection.exchange(mine, 10s).rkey);
    }
    std::ranges::sort(seen);
    CHECK(seen == std::vector<std::uint32_t>{1, 2, 3, 4});
    std::vector<std::uint32_t> answers;
    for (auto& client : clients) {
        answers.push_back(client.get().rkey);
    }
    std::ranges::sort(answers);
    CHECK(answers == std::vector<std::uint32_t>{101, 102, 103, 104});
}

TEST_CASE("a listener on a port in use, and one nobody calls, fail with one clear line",
          "[exchange]") {
    const auto tcp_port = port();
    lab::Listener first(tcp_port);
    CHECK(contains(error_of([&] { lab::Listener second(tcp_port); }), "is already in use"));
    const auto start = Clock::now();
    CHECK(contains(error_of([&] { first.accept(300ms); }), "no client connected to TCP port"));
    CHECK(Clock::now() - start < 5s);
}

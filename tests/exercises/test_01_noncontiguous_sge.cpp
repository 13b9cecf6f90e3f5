// The checks of exercise 01 (non-contiguous data with scatter/gather entries).
//
// Built twice: against exercises/01_noncontiguous_sge (the student's code;
// on the untouched skeleton checks must fail) and against
// solutions/01_noncontiguous_sge (every check must pass). `./lab grade` runs
// them one by one and prints a score.
//
// Each check moves real bytes through the RDMA device between two QPs of
// this process and compares every byte: the blocks that should arrive, and
// the bytes around them that must stay untouched.
#include <infiniband/verbs.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "lab/check.hpp"
#include "sge.hpp"
#include "support/catch.hpp"

namespace {

using sge::Layout;

constexpr std::byte kUntouched{0xEE};  // what buffers hold where nothing may be written
constexpr std::size_t kGuard = 64;     // untouched bytes checked after each result

// Byte i of the source data: never kUntouched, and every block different.
std::byte pattern(std::size_t i) {
    return static_cast<std::byte>((i * 131 + i / 97 + 1) % 233);
}

// The layouts every operation must move byte-exactly.
const std::vector<Layout> kLayouts = {
    {64, 1, 64},           // a single block
    {64, 16, 64},          // stride equal to block_size: the data is contiguous
    {64, 16, 128},         // the plain case
    {7, 45, 13},           // odd sizes: nothing is aligned
    {1, 100, 3},           // one-byte blocks, more than max_sge of them
    {100, 33, 256},        // max_sge + 1 on rxe: two work requests
    {32, 64, 48},          // exactly 2 × max_sge on rxe
    {3, 1000, 5},          // many work requests
    {4096, 40, 5000},      // page-sized blocks, unaligned stride
    {65536 + 3, 3, 70001}  // blocks larger than the path MTU
};

// A registered buffer whose bytes the checks control.
struct Memory {
    std::vector<std::byte> bytes;
    lab::MemoryRegion mr;

    Memory(sge::Loopback& pair, std::size_t size)
        : bytes(size + kGuard, kUntouched), mr(pair.register_buffer(bytes)) {}

    // The buffer as the functions see it: without the guard bytes at its end.
    [[nodiscard]] sge::LocalBuffer local() const {
        return {{static_cast<std::byte*>(mr->addr), bytes.size() - kGuard}, mr->lkey};
    }
    [[nodiscard]] sge::RemoteBuffer remote() const {
        return {reinterpret_cast<std::uint64_t>(mr->addr), mr->rkey, bytes.size() - kGuard};
    }
};

void fill_strided(Memory& memory) {
    for (std::size_t i = 0; i + kGuard < memory.bytes.size(); ++i) {
        memory.bytes[i] = pattern(i);
    }
}

void fill_packed(const Layout& layout, Memory& memory) {
    for (std::size_t block = 0; block < layout.block_num; ++block) {
        for (std::size_t offset = 0; offset < layout.block_size; ++offset) {
            memory.bytes[block * layout.block_size + offset] =
                pattern(block * layout.stride + offset);
        }
    }
}

// The first position where @p memory differs from the packed form of the
// pattern, or from kUntouched after it; npos when all is right.
std::size_t first_wrong_packed(const Layout& layout, const Memory& memory) {
    for (std::size_t i = 0; i < memory.bytes.size(); ++i) {
        const std::size_t block = i / layout.block_size;
        const std::byte expected = i < layout.payload_bytes()
                                       ? pattern(block * layout.stride + i % layout.block_size)
                                       : kUntouched;
        if (memory.bytes[i] != expected) {
            return i;
        }
    }
    return std::string::npos;
}

// The first position where @p memory differs from the pattern inside the
// blocks, or from kUntouched in the gaps and after the last block.
std::size_t first_wrong_strided(const Layout& layout, const Memory& memory) {
    for (std::size_t i = 0; i < memory.bytes.size(); ++i) {
        const bool in_block = i < layout.extent_bytes() && i % layout.stride < layout.block_size;
        if (memory.bytes[i] != (in_block ? pattern(i) : kUntouched)) {
            return i;
        }
    }
    return std::string::npos;
}

std::size_t completions_waiting(ibv_cq* cq) {
    std::size_t found = 0;
    ibv_wc wc{};
    while (ibv_poll_cq(cq, 1, &wc) == 1) {
        ++found;
    }
    return found;
}

std::size_t work_requests_for(std::size_t blocks, std::size_t max_sge) {
    return (blocks + max_sge - 1) / max_sge;
}

// The message of the lab::Error @p action throws; empty when it throws none.
std::string error_of(const std::function<void()>& action) {
    try {
        action();
    } catch (const lab::Error& error) {
        return error.what();
    }
    return {};
}

// The two pairs every data check runs on: the device's own max_sge (32 on
// rxe), and a pair with 4 SGEs and 2 outstanding requests, where even small
// layouts need many work requests and several rounds of posting.
std::vector<sge::LoopbackOptions> pairs_to_try() {
    sge::LoopbackOptions small;
    small.sge_count = 4;
    small.queue_depth = 2;
    return {sge::LoopbackOptions{}, small};
}

}  // namespace

TEST_CASE("validate_layout rejects layouts that cannot work", "[ex01][bad-input]") {
    struct Case {
        Layout layout;
        std::size_t strided_bytes, packed_bytes;
        std::string expected;
    };
    const std::vector<Case> cases = {
        {{0, 4, 64}, 1024, 1024, "block_size is 0"},
        {{64, 0, 64}, 1024, 1024, "block_num is 0"},
        {{64, 4, 32}, 1024, 1024, "stride 32 is smaller than block_size 64"},
        {{64, 4, 128}, 400, 1024, "the blocks span 448 bytes but the strided buffer has 400"},
        {{64, 4, 128}, 1024, 200, "the payload is 256 bytes but the packed buffer has 200"},
        {{64, std::numeric_limits<std::size_t>::max() / 8, 128}, 1024, 1024, "overflow"},
    };
    for (const auto& test_case : cases) {
        const auto message = error_of([&] {
            sge::validate_layout(test_case.layout, test_case.strided_bytes, test_case.packed_bytes,
                                 "gather_write");
        });
        INFO(message);
        CHECK(message.rfind("gather_write: bad layout", 0) == 0);
        CHECK(message.find(test_case.expected) != std::string::npos);
    }
    CHECK(error_of([] { sge::validate_layout({64, 4, 64}, 256, 256, "x"); }).empty());
}

TEST_CASE("block_sges: one SGE per block, at the block's address", "[ex01]") {
    for (const Layout& layout : kLayouts) {
        INFO(sge::describe(layout));
        std::vector<std::byte> bytes(layout.extent_bytes());
        const sge::LocalBuffer buffer{bytes, 0x1234};
        const auto sges = sge::block_sges(layout, buffer);
        REQUIRE(sges.size() == layout.block_num);
        for (std::size_t i = 0; i < sges.size(); ++i) {
            CHECK(sges[i].addr ==
                  reinterpret_cast<std::uint64_t>(bytes.data() + i * layout.stride));
            CHECK(sges[i].length == layout.block_size);
            CHECK(sges[i].lkey == 0x1234u);
        }
    }
    std::vector<std::byte> small(100);
    const auto too_small = [&] { sge::block_sges({64, 2, 64}, {small, 1}); };
    CHECK(error_of(too_small).find("the blocks span 128") != std::string::npos);
}

TEST_CASE("pack copies every block, back to back, and nothing else", "[ex01]") {
    for (const Layout& layout : kLayouts) {
        INFO(sge::describe(layout));
        std::vector<std::byte> strided(layout.extent_bytes());
        for (std::size_t i = 0; i < strided.size(); ++i) {
            strided[i] = pattern(i);
        }
        std::vector<std::byte> packed(layout.payload_bytes() + kGuard, kUntouched);
        sge::pack(layout, strided, std::span(packed).first(layout.payload_bytes()));
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < packed.size(); ++i) {
            const std::byte expected =
                i < layout.payload_bytes()
                    ? pattern((i / layout.block_size) * layout.stride + i % layout.block_size)
                    : kUntouched;
            wrong += packed[i] != expected ? 1 : 0;
        }
        CHECK(wrong == 0);
    }
    std::vector<std::byte> buffer(1024);
    const auto overlapping_blocks = [&] { sge::pack({64, 4, 32}, buffer, buffer); };
    CHECK(error_of(overlapping_blocks).find("stride 32") != std::string::npos);
}

TEST_CASE("unpack puts every block in its place and leaves the gaps alone", "[ex01]") {
    for (const Layout& layout : kLayouts) {
        INFO(sge::describe(layout));
        std::vector<std::byte> packed(layout.payload_bytes());
        for (std::size_t i = 0; i < packed.size(); ++i) {
            packed[i] = pattern((i / layout.block_size) * layout.stride + i % layout.block_size);
        }
        std::vector<std::byte> strided(layout.extent_bytes() + kGuard, kUntouched);
        sge::unpack(layout, packed, std::span(strided).first(layout.extent_bytes()));
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < strided.size(); ++i) {
            const bool in_block =
                i < layout.extent_bytes() && i % layout.stride < layout.block_size;
            wrong += strided[i] != (in_block ? pattern(i) : kUntouched) ? 1 : 0;
        }
        CHECK(wrong == 0);
    }
    std::vector<std::byte> buffer(1024);
    CHECK(error_of([&] {
              sge::unpack({64, 4, 64}, std::span(buffer).first(100), buffer);
          }).find("packed buffer has 100") != std::string::npos);
}

TEST_CASE("query_limits reports what the QP was given", "[ex01][rxe]") {
    for (const auto& options : pairs_to_try()) {
        sge::Loopback pair(options);
        const sge::QueueLimits asked = pair.a().limits;
        const sge::QueueLimits got = sge::query_limits(pair.a().qp);
        INFO("asked for max_send_sge " << asked.max_send_sge << ", max_send_wr "
                                       << asked.max_send_wr);
        CHECK(got.max_send_sge >= asked.max_send_sge);
        CHECK(got.max_recv_sge >= asked.max_recv_sge);
        CHECK(got.max_send_wr >= asked.max_send_wr);
        CHECK(got.max_recv_wr >= asked.max_recv_wr);
        CHECK(got.max_send_sge <= static_cast<std::uint32_t>(pair.device_attr().max_sge));
        CHECK(got.max_send_wr <= static_cast<std::uint32_t>(pair.device_attr().max_qp_wr));
    }
}

TEST_CASE("gather_write: zero-copy, every layout byte-exact", "[ex01][rxe]") {
    for (const auto& options : pairs_to_try()) {
        sge::Loopback pair(options);
        const std::size_t max_sge = pair.a().limits.max_send_sge;
        for (const Layout& layout : kLayouts) {
            INFO(sge::describe(layout) << ", max_send_sge " << max_sge);
            Memory source(pair, layout.extent_bytes());
            Memory target(pair, layout.payload_bytes());
            fill_strided(source);
            sge::post_counters() = {};
            sge::gather_write(pair.a(), layout, source.local(), target.remote());
            CHECK(first_wrong_packed(layout, target) == std::string::npos);
            CHECK(first_wrong_strided(Layout{1, layout.extent_bytes(), 1}, source) ==
                  std::string::npos);  // the source is unchanged
            // Zero copy: the blocks themselves are the SGEs, max_sge per request.
            CHECK(sge::post_counters().send_sges == layout.block_num);
            CHECK(sge::post_counters().send_requests ==
                  work_requests_for(layout.block_num, max_sge));
            CHECK(completions_waiting(pair.a().cq) == 0);
            CHECK(completions_waiting(pair.b().cq) == 0);
        }
    }
}

TEST_CASE("scatter_read: zero-copy, every layout byte-exact", "[ex01][rxe]") {
    for (const auto& options : pairs_to_try()) {
        sge::Loopback pair(options);
        const std::size_t max_sge = pair.a().limits.max_send_sge;
        for (const Layout& layout : kLayouts) {
            INFO(sge::describe(layout) << ", max_send_sge " << max_sge);
            Memory source(pair, layout.payload_bytes());
            Memory destination(pair, layout.extent_bytes());
            fill_packed(layout, source);
            sge::post_counters() = {};
            sge::scatter_read(pair.a(), layout, destination.local(), source.remote());
            CHECK(first_wrong_strided(layout, destination) == std::string::npos);
            CHECK(sge::post_counters().send_sges == layout.block_num);
            CHECK(sge::post_counters().send_requests ==
                  work_requests_for(layout.block_num, max_sge));
            CHECK(completions_waiting(pair.a().cq) == 0);
        }
    }
}

TEST_CASE("gather_send_scatter_recv: zero-copy, every layout byte-exact", "[ex01][rxe]") {
    for (const auto& options : pairs_to_try()) {
        sge::Loopback pair(options);
        const std::size_t max_sge =
            std::min(pair.a().limits.max_send_sge, pair.b().limits.max_recv_sge);
        for (const Layout& layout : kLayouts) {
            INFO(sge::describe(layout) << ", max_sge " << max_sge);
            Memory source(pair, layout.extent_bytes());
            Memory destination(pair, layout.extent_bytes());
            fill_strided(source);
            sge::post_counters() = {};
            sge::gather_send_scatter_recv(pair.a(), source.local(), pair.b(), destination.local(),
                                          layout);
            CHECK(first_wrong_strided(layout, destination) == std::string::npos);
            CHECK(sge::post_counters().send_sges == layout.block_num);
            CHECK(sge::post_counters().receive_sges == layout.block_num);
            CHECK(sge::post_counters().send_requests ==
                  work_requests_for(layout.block_num, max_sge));
            CHECK(completions_waiting(pair.a().cq) == 0);
            CHECK(completions_waiting(pair.b().cq) == 0);
        }
    }
}

TEST_CASE("copy_write: pack, then one RDMA write of one SGE, byte-exact", "[ex01][rxe]") {
    sge::Loopback pair;
    for (const Layout& layout : kLayouts) {
        INFO(sge::describe(layout));
        Memory source(pair, layout.extent_bytes());
        Memory staging(pair, layout.payload_bytes());
        Memory target(pair, layout.payload_bytes());
        fill_strided(source);
        sge::post_counters() = {};
        sge::copy_write(pair.a(), layout, source.local(), staging.local(), target.remote());
        CHECK(first_wrong_packed(layout, target) == std::string::npos);
        CHECK(sge::post_counters().send_requests == 1);
        CHECK(sge::post_counters().send_sges == 1);
        CHECK(completions_waiting(pair.a().cq) == 0);
    }
}

TEST_CASE("read_copy: one RDMA read of one SGE, then unpack, byte-exact", "[ex01][rxe]") {
    sge::Loopback pair;
    for (const Layout& layout : kLayouts) {
        INFO(sge::describe(layout));
        Memory source(pair, layout.payload_bytes());
        Memory staging(pair, layout.payload_bytes());
        Memory destination(pair, layout.extent_bytes());
        fill_packed(layout, source);
        sge::post_counters() = {};
        sge::read_copy(pair.a(), layout, destination.local(), staging.local(), source.remote());
        CHECK(first_wrong_strided(layout, destination) == std::string::npos);
        CHECK(sge::post_counters().send_requests == 1);
        CHECK(sge::post_counters().send_sges == 1);
        CHECK(completions_waiting(pair.a().cq) == 0);
    }
}

TEST_CASE("copy_send_recv: pack, one send into one receive, unpack, byte-exact", "[ex01][rxe]") {
    sge::Loopback pair;
    for (const Layout& layout : kLayouts) {
        INFO(sge::describe(layout));
        Memory source(pair, layout.extent_bytes());
        Memory send_staging(pair, layout.payload_bytes());
        Memory receive_staging(pair, layout.payload_bytes());
        Memory destination(pair, layout.extent_bytes());
        fill_strided(source);
        sge::post_counters() = {};
        sge::copy_send_recv(pair.a(), source.local(), send_staging.local(), pair.b(),
                            receive_staging.local(), destination.local(), layout);
        CHECK(first_wrong_strided(layout, destination) == std::string::npos);
        CHECK(sge::post_counters().send_requests == 1);
        CHECK(sge::post_counters().send_sges == 1);
        CHECK(sge::post_counters().receive_sges == 1);
        CHECK(completions_waiting(pair.a().cq) == 0);
        CHECK(completions_waiting(pair.b().cq) == 0);
    }
}

TEST_CASE("bad layouts are refused before anything is posted", "[ex01][rxe][bad-input]") {
    sge::Loopback pair;
    Memory strided(pair, 4096);
    Memory packed(pair, 1024);
    Memory staging(pair, 1024);
    Memory receive_staging(pair, 1024);
    Memory destination(pair, 4096);
    fill_strided(strided);
    struct Case {
        Layout layout;
        std::string expected;
    };
    const std::vector<Case> cases = {
        {{0, 8, 64}, "block_size is 0"},
        {{64, 0, 64}, "block_num is 0"},
        {{64, 8, 32}, "stride 32 is smaller than block_size 64"},
        {{64, 40, 128}, "the strided buffer has 4096"},  // 40 blocks span 5056 bytes
        {{64, 17, 64}, "the packed buffer has 1024"},    // 1088 bytes of payload
    };
    const std::vector<std::pair<std::string, std::function<void(const Layout&)>>> functions = {
        {"gather_write",
         [&](const Layout& l) {
             sge::gather_write(pair.a(), l, strided.local(), packed.remote());
         }},
        {"scatter_read",
         [&](const Layout& l) {
             sge::scatter_read(pair.a(), l, destination.local(), packed.remote());
         }},
        {"copy_write",
         [&](const Layout& l) {
             sge::copy_write(pair.a(), l, strided.local(), staging.local(), packed.remote());
         }},
        {"read_copy",
         [&](const Layout& l) {
             sge::read_copy(pair.a(), l, destination.local(), staging.local(), packed.remote());
         }},
        {"copy_send_recv",
         [&](const Layout& l) {
             sge::copy_send_recv(pair.a(), strided.local(), staging.local(), pair.b(),
                                 receive_staging.local(), destination.local(), l);
         }},
    };
    for (const auto& [name, function] : functions) {
        for (const auto& test_case : cases) {
            INFO(name << " with " << sge::describe(test_case.layout));
            sge::post_counters() = {};
            const std::string message = error_of([&] { function(test_case.layout); });
            INFO("error: " << message);
            CHECK(message.find("bad layout") != std::string::npos);
            CHECK(message.find(test_case.expected) != std::string::npos);
            CHECK(sge::post_counters().send_requests == 0);
            CHECK(sge::post_counters().receive_requests == 0);
        }
    }
    // SEND/RECV has no packed buffer; its layouts fail on the strided side.
    for (const auto& test_case : std::vector<Case>(cases.begin(), cases.end() - 1)) {
        INFO("gather_send_scatter_recv with " << sge::describe(test_case.layout));
        sge::post_counters() = {};
        const std::string message = error_of([&] {
            sge::gather_send_scatter_recv(pair.a(), strided.local(), pair.b(), destination.local(),
                                          test_case.layout);
        });
        INFO("error: " << message);
        CHECK(message.find(test_case.expected) != std::string::npos);
        CHECK(sge::post_counters().send_requests == 0);
        CHECK(sge::post_counters().receive_requests == 0);
    }
    // Nothing reached the device: no completions, no bytes, and the QPs still work.
    CHECK(completions_waiting(pair.a().cq) == 0);
    CHECK(completions_waiting(pair.b().cq) == 0);
    CHECK(std::all_of(packed.bytes.begin(), packed.bytes.end(),
                      [](std::byte b) { return b == kUntouched; }));
    const Layout good{64, 8, 128};
    sge::gather_write(pair.a(), good, strided.local(), packed.remote());
    CHECK(first_wrong_packed(good, packed) == std::string::npos);
}

// SPDX-License-Identifier: MIT
// libFuzzer target for lab::decode_info, the parser of the one message a
// peer sends over the network (lesson 05). Whatever the bytes, it must either
// return a ConnectionInfo or throw lab::Error: no crash, no other exception,
// no read outside the input (AddressSanitizer watches). What it accepts must
// encode back to the very same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "lab/check.hpp"
#include "lab/exchange.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::byte> message(reinterpret_cast<const std::byte*>(data), size);
    try {
        const lab::ConnectionInfo info = lab::decode_info(message);
        const auto again = lab::encode_info(info);
        if (size != again.size() || std::memcmp(again.data(), data, size) != 0) {
            std::abort();  // accepted, but not what encode_info would have sent
        }
    } catch (const lab::Error&) {
        // refused with a message: the expected outcome for most inputs
    }
    return 0;
}

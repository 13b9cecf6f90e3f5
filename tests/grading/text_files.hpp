// SPDX-License-Identifier: MIT
/**
 * @file text_files.hpp
 * @brief What the grading tests do with files: read one, write one, decode base64.
 */
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace lab::test {

/// The whole of @p path ("" when it cannot be read).
inline std::string read_text(const std::filesystem::path& path) {
    std::ifstream file(path, std::ios::binary);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

/// Write @p text to @p path, making its folder first.
inline void write_text(const std::filesystem::path& path, const std::string& text) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

/// @p text (RFC 4648 base64, padded) decoded.
inline std::string decode_base64(const std::string& text) {
    static const std::string alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    unsigned buffer = 0;
    int bits = 0;
    for (const char c : text) {
        if (c == '=') {
            break;
        }
        buffer = (buffer << 6) | static_cast<unsigned>(alphabet.find(c));
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((buffer >> bits) & 0xff);
        }
    }
    return out;
}

}  // namespace lab::test

// SPDX-License-Identifier: Apache-2.0
#include "common/base64.hpp"

#include <openssl/evp.h>

#include <algorithm>

namespace iss {

namespace {

/// EVP_EncodeBlock takes an int length: whole groups of 3 bytes, well below INT_MAX, a call.
constexpr std::size_t max_chunk = std::size_t{3} << 28;

bool in_alphabet(char c) noexcept {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
}

}  // namespace

void append_base64(std::string& out, std::span<const std::byte> bytes) {
    const std::size_t start = out.size();
    // One byte more than the text: EVP_EncodeBlock writes a terminating NUL.
    out.resize(start + (bytes.size() + 2) / 3 * 4 + 1);
    auto* o = reinterpret_cast<unsigned char*>(out.data() + start);
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    for (std::size_t left = bytes.size(); left > 0;) {
        const std::size_t n = std::min(left, max_chunk);
        o += EVP_EncodeBlock(o, p, static_cast<int>(n));
        p += n;
        left -= n;
    }
    out.resize(out.size() - 1);
}

std::string base64_encode(std::span<const std::uint8_t> bytes) {
    std::string out;
    append_base64(out, std::as_bytes(bytes));
    return out;
}

std::string base64_encode(std::string_view text) {
    std::string out;
    append_base64(out, std::as_bytes(std::span{text.data(), text.size()}));
    return out;
}

std::optional<std::string> base64_decode(std::string_view b64) {
    if (b64.size() % 4 != 0) return std::nullopt;
    // EVP_DecodeBlock skips leading and trailing white space and reads '=' as a digit: check
    // the canonical form here, and count the padding it decodes as zero bytes.
    const std::size_t pad = b64.ends_with("==") ? 2 : b64.ends_with('=') ? 1 : 0;
    if (!std::all_of(b64.begin(), b64.end() - static_cast<std::ptrdiff_t>(pad), in_alphabet)) return std::nullopt;
    std::string out(b64.size() / 4 * 3, '\0');
    if (b64.empty()) return out;
    if (b64.size() > max_chunk) return std::nullopt;  // beyond EVP_DecodeBlock's int; nothing here is that large
    const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                  reinterpret_cast<const unsigned char*>(b64.data()), static_cast<int>(b64.size()));
    if (n < 0) return std::nullopt;
    out.resize(static_cast<std::size_t>(n) - pad);
    return out;
}

}  // namespace iss

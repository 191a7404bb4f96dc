// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// SHA-256 and HMAC-SHA256 over OpenSSL 3 (one-shot EVP/HMAC APIs, docs/architecture.md §8.0), and hex.
/// Pure functions; no allocation besides the returned strings.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace iss::sigv4 {

/// A SHA-256 digest or HMAC-SHA256 output: 32 bytes.
using digest = std::array<std::uint8_t, 32>;

/// Hex SHA-256 of the empty string, the payload hash of a request without a body.
inline constexpr std::string_view empty_payload_sha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// SHA-256 of `data`.
[[nodiscard]] digest sha256(std::string_view data) noexcept;
/// SHA-256 of `data` as 64 lower-case hex digits (the form used in `x-amz-content-sha256`).
[[nodiscard]] std::string sha256_hex(std::string_view data);
/// HMAC-SHA256(key, data).
[[nodiscard]] digest hmac_sha256(std::span<const std::uint8_t> key, std::string_view data) noexcept;
/// Lower-case hex of `bytes` (2 digits per byte).
[[nodiscard]] std::string to_hex(std::span<const std::uint8_t> bytes);
/// True when `s` is exactly 64 lower-case hex digits.
[[nodiscard]] bool is_sha256_hex(std::string_view s) noexcept;

/// Incremental SHA-256 (EVP_MD_CTX), for hashing a payload while it is being buffered.
/// Not copyable; movable. `finish_hex()` ends the computation; `reset()` starts a new one.
class sha256_hasher {
public:
    sha256_hasher();
    ~sha256_hasher();
    sha256_hasher(sha256_hasher&&) noexcept;
    sha256_hasher& operator=(sha256_hasher&&) noexcept;
    sha256_hasher(const sha256_hasher&) = delete;
    sha256_hasher& operator=(const sha256_hasher&) = delete;

    /// Adds `data` to the hash.
    void update(std::string_view data) noexcept;
    /// The digest of everything added since construction or `reset()`; then resets.
    [[nodiscard]] digest finish() noexcept;
    /// `finish()` as 64 lower-case hex digits.
    [[nodiscard]] std::string finish_hex();
    /// Discards what was added.
    void reset() noexcept;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace iss::sigv4

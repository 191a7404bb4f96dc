// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Body checksums, exactly one per request (chosen by `s3::checksum_kind`):
/// - `Content-MD5`: base64 of the MD5 digest (RFC 1864); RGW and AWS verify it (400 BadDigest).
/// - `x-amz-checksum-crc32c`: base64 of the big-endian CRC-32C (Castagnoli) of the body
///   (https://docs.aws.amazon.com/AmazonS3/latest/userguide/checking-object-integrity.html).
///   AWS verifies it; whether another store does is probed (`probe_crc32c`, s3/probe.hpp).
/// Both work over a body given as several views, without joining them. CRC-32C is ISA-L's
/// `crc32_iscsi` (libisal), which uses the CPU's CRC32 instruction where there is one (x86-64
/// SSE4.2, AArch64's CRC extension), else its tables.
/// `body_digester` computes any of them (and the SHA-256 of a signed payload) in one pass
/// while a body is produced in pieces.

#include "common/digests.hpp"
#include "sigv4/hash.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace iss::s3 {

/// Which checksum requests carry.
enum class checksum_kind : std::uint8_t { md5, crc32c, none };

/// Base64 of MD5 over the concatenation of `parts`.
[[nodiscard]] std::string content_md5(std::span<const std::string_view> parts);
/// CRC-32C of `data`, continuing from `crc` (0 to start): `crc32c(b, crc32c(a)) == crc32c(a + b)`.
[[nodiscard]] std::uint32_t crc32c(std::string_view data, std::uint32_t crc = 0) noexcept;
/// The same through ISA-L's table version only (`crc32_iscsi_base`: the fallback; for tests
/// and benchmarks).
[[nodiscard]] std::uint32_t crc32c_portable(std::string_view data, std::uint32_t crc = 0) noexcept;
/// True when the CPU has a CRC32 instruction (x86-64 SSE4.2, AArch64 CRC), which ISA-L's
/// `crc32c` then runs on.
[[nodiscard]] bool crc32c_hardware() noexcept;
/// Base64 of the big-endian bytes of a CRC-32C value (the `x-amz-checksum-crc32c` header value).
[[nodiscard]] std::string crc32c_header_value(std::uint32_t crc);
/// Base64 of the big-endian CRC-32C over the concatenation of `parts` (the header value).
[[nodiscard]] std::string crc32c_base64(std::span<const std::string_view> parts);

/// Which digests a `body_digester` computes.
struct digest_set {
    bool crc32c = false;
    bool md5 = false;
    bool sha256 = false;
    [[nodiscard]] bool any() const noexcept { return crc32c || md5 || sha256; }
};

/// Incremental CRC-32C, MD5 (EVP_md5) and SHA-256 (`sigv4::sha256_hasher`) over a body given
/// in pieces, each piece read once for all of them. Not copyable; movable; one thread at a
/// time (any thread). Construction allocates the EVP contexts asked for.
class body_digester {
public:
    explicit body_digester(digest_set which);
    ~body_digester();
    body_digester(body_digester&&) noexcept;
    body_digester& operator=(body_digester&&) noexcept;
    body_digester(const body_digester&) = delete;
    body_digester& operator=(const body_digester&) = delete;

    /// Adds `data` to every digest asked for.
    void update(std::string_view data) noexcept;
    /// The digests of everything added since construction or the last `finish()` (those
    /// asked for; the others empty); then starts over.
    [[nodiscard]] body_digests finish() noexcept;

private:
    digest_set which_;
    std::uint32_t crc_ = 0;
    struct md5_ctx;
    std::unique_ptr<md5_ctx> md5_;
    std::optional<sigv4::sha256_hasher> sha256_;
};

/// Base64 of an MD5 digest (the `Content-MD5` header value).
[[nodiscard]] std::string content_md5_value(const std::array<std::uint8_t, 16>& md5);

}  // namespace iss::s3

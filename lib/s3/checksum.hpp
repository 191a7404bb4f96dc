#pragma once
/// \file
/// Body checksums, exactly one per request (chosen by `s3::checksum_kind`):
/// - `Content-MD5`: base64 of the MD5 digest (RFC 1864); RGW and AWS verify it (400 BadDigest).
/// - `x-amz-checksum-crc32c`: base64 of the big-endian CRC-32C (Castagnoli) of the body
///   (https://docs.aws.amazon.com/AmazonS3/latest/userguide/checking-object-integrity.html).
///   RGW 16 does not verify it; AWS does.
/// Both work over a body given as several views, without joining them.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace iss::s3 {

/// Which checksum requests carry.
enum class checksum_kind : std::uint8_t { md5, crc32c, none };

/// Base64 (RFC 4648, with padding).
[[nodiscard]] std::string base64_encode(std::span<const std::uint8_t> bytes);
/// Base64 of MD5 over the concatenation of `parts`.
[[nodiscard]] std::string content_md5(std::span<const std::string_view> parts);
/// CRC-32C of `data`, continuing from `crc` (0 to start).
[[nodiscard]] std::uint32_t crc32c(std::string_view data, std::uint32_t crc = 0) noexcept;
/// Base64 of the big-endian CRC-32C over the concatenation of `parts` (the header value).
[[nodiscard]] std::string crc32c_base64(std::span<const std::string_view> parts);

}  // namespace iss::s3

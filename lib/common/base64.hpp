// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Base64 (RFC 4648 §4: the standard alphabet, `=` padding, no line breaks) through OpenSSL's
/// EVP_EncodeBlock / EVP_DecodeBlock. Callers: the JSON and CSV writers (binary payloads and
/// cells, format/), the S3 headers (Content-MD5, x-amz-checksum-crc32c, SSE-C keys, the KMS
/// context, RFC 2047 metadata, lib/s3), HTTP basic authentication (lib/http), and the SSE-C
/// key check of the configuration (lib/config).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace iss {

/// Appends the base64 of `bytes` (4 * ceil(n / 3) characters) to `out`.
void append_base64(std::string& out, std::span<const std::byte> bytes);

/// The base64 of `bytes`.
[[nodiscard]] std::string base64_encode(std::span<const std::uint8_t> bytes);
/// The base64 of the bytes of `text`.
[[nodiscard]] std::string base64_encode(std::string_view text);

/// The bytes `b64` encodes; nullopt unless it is canonical RFC 4648 §4 base64: a multiple of 4
/// characters of the alphabet, with `=` only as the last one or two (no white space, no line
/// breaks, no URL-safe alphabet). The empty text decodes to no bytes.
[[nodiscard]] std::optional<std::string> base64_decode(std::string_view b64);

}  // namespace iss

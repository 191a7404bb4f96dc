// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// aws-chunked streaming upload signing (`STREAMING-AWS4-HMAC-SHA256-PAYLOAD`), sans-io.
///
/// Spec: https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-streaming.html
///
/// 1. Sign the request headers with `payload_mode::streaming` (the *seed*). The request must
///    carry `Content-Encoding: aws-chunked`, `x-amz-decoded-content-length: <body bytes>` and
///    `Content-Length: aws_chunked_content_length(body bytes, chunk size)`.
/// 2. For every chunk, in order, write `chunk_signer::chunk_header(data)`, then the data, then
///    "\r\n". The last chunk is empty: `chunk_header("")` then "\r\n".
///
/// Each chunk's signature chains on the previous one; its string to sign is:
///
///     "AWS4-HMAC-SHA256-PAYLOAD" + "\n" + timestamp + "\n" + scope + "\n"
///     + previous-signature + "\n" + Hex(SHA256("")) + "\n" + Hex(SHA256(chunk-data))
///
/// and the chunk on the wire is `hex(size) + ";chunk-signature=" + signature + "\r\n" + data
/// + "\r\n"`.

#include "sigv4/signer.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace iss::sigv4 {

/// Algorithm line of a chunk's string to sign.
inline constexpr std::string_view chunk_algorithm = "AWS4-HMAC-SHA256-PAYLOAD";

/// Bytes on the wire of one chunk of `size` data bytes (header line, data, CRLF).
[[nodiscard]] std::uint64_t aws_chunk_wire_size(std::uint64_t size) noexcept;
/// `Content-Length` of an aws-chunked body of `decoded_length` bytes cut into chunks of
/// `chunk_size` bytes (the last one shorter), plus the final empty chunk.
/// \pre chunk_size > 0
[[nodiscard]] std::uint64_t aws_chunked_content_length(std::uint64_t decoded_length, std::uint64_t chunk_size) noexcept;

/// Signs the chunks of one aws-chunked upload, chaining from the seed signature. A plain
/// value type (no I/O); one per upload; not thread-safe.
class chunk_signer {
public:
    /// Starts after the seed: `seed` is the `sign()` result of the request headers (with
    /// `payload_mode::streaming`).
    explicit chunk_signer(const signed_headers& seed);

    /// The string to sign of the next chunk, whose data hash is `data_sha256_hex`.
    [[nodiscard]] std::string string_to_sign(std::string_view data_sha256_hex) const;
    /// Signs the next chunk (`data` empty = the final chunk) and advances the chain.
    /// \return the chunk signature, or `chunk_after_final` once the final chunk was signed.
    [[nodiscard]] result<std::string> sign_chunk(std::string_view data);
    /// Signs the next chunk and returns its wire header line:
    /// `hex(size) + ";chunk-signature=" + sig + "\r\n"`. Write the data and "\r\n" after it.
    [[nodiscard]] result<std::string> chunk_header(std::string_view data);
    /// The signature of the last signed chunk (the seed before any chunk).
    [[nodiscard]] const std::string& previous_signature() const noexcept { return previous_; }
    /// True once the final (empty) chunk was signed.
    [[nodiscard]] bool finished() const noexcept { return finished_; }

private:
    signing_key key_;
    std::string amz_date_;
    std::string scope_;
    std::string previous_;
    bool finished_ = false;
};

}  // namespace iss::sigv4

// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Checksums of a body that its producer computed while it wrote the bytes, handed along
/// with them so that nobody reads the body a second time to compute them (the pipeline's
/// writer fills them per part, lib/pipeline/delivery.hpp `writer_ports::part_hashers`; the
/// S3 client sends them, lib/s3/request.hpp `put_options::known`). Each is present only
/// when it was computed over exactly the bytes it goes with.

#include <array>
#include <cstdint>
#include <optional>

namespace iss {

/// The digests a body may come with (all optional; none: the consumer computes its own).
struct body_digests {
    std::optional<std::uint32_t> crc32c;                 ///< CRC-32C (Castagnoli, RFC 3720 B.4)
    std::optional<std::array<std::uint8_t, 16>> md5;     ///< MD5 (RFC 1321): `Content-MD5`
    std::optional<std::array<std::uint8_t, 32>> sha256;  ///< SHA-256 (FIPS 180-4): a signed payload's hash
    [[nodiscard]] bool empty() const noexcept { return !crc32c && !md5 && !sha256; }
};

}  // namespace iss

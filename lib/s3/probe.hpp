// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The capability probe (docs/architecture.md §3.4: store capabilities are probed, not assumed). Run at
/// start by the daemon and by `iggy-s3-sink probe`. It answers, one fact each:
/// reachability, authentication, bucket access (write, read, delete), and whether the store
/// honours `If-None-Match: *` on PutObject and on CompleteMultipartUpload (Ceph RGW 16:
/// yes and NO), and whether it verifies `x-amz-checksum-crc32c` (`probe_crc32c`). It writes under `{prefix}/.iggy-s3-sink/probe-<random>` and deletes what it
/// wrote; a refused delete is reported, not fatal.

#include "s3/client.hpp"

#include <optional>
#include <string>

namespace iss::s3 {

/// Tri-state answer of one probe step.
enum class capability : std::uint8_t { yes, no, unknown };
[[nodiscard]] std::string_view to_string(capability c) noexcept;

struct probe_report {
    /// Set when the first request could not even be built (a bucket name or endpoint the
    /// client refuses, errc::invalid_argument): nothing was sent, so nothing below was measured.
    std::string not_sent_detail;
    bool reachable = false;  ///< an HTTP answer came back from the endpoint
    /// Not reachable because the endpoint's TLS certificate was refused (an unknown CA, a
    /// name it does not carry, expired) or the CA file could not be used: asking again gives
    /// the same answer until s3.tls or the certificate changes.
    bool certificate_rejected = false;
    bool authenticated = false;                             ///< the credentials were accepted
    bool bucket_access = false;                             ///< the probe object was written and read back
    capability conditional_put = capability::unknown;       ///< 412 on PutObject over an existing key
    capability conditional_complete = capability::unknown;  ///< 412 on Complete over an existing key
    capability crc32c_verified = capability::unknown;       ///< a wrong x-amz-checksum-crc32c is refused (probe_crc32c)
    bool cleaned_up = false;                                ///< the probe object was deleted
    /// A write, read or capability step (bucket access, conditional Put, conditional Complete)
    /// got no answer within the client's retries (resets, connections refused or timed out,
    /// the deadline): what the report says about that step is not the store's answer. Probe
    /// again later rather than act on it. (An HTTP answer, 5xx included, is an answer.)
    bool interrupted = false;
    std::string probe_key;
    /// One explanation per step that did not succeed (what failed and what to check).
    std::string reachability_detail, auth_detail, bucket_detail, put_detail, complete_detail, cleanup_detail,
        crc32c_detail;
    /// The code of the failure behind auth_detail and bucket_detail (e.g. s3::errc::access_denied,
    /// no_such_bucket); empty when that step succeeded.
    error_code auth_code, bucket_code;

    /// Usable: reachable, authenticated, bucket accessible.
    [[nodiscard]] bool usable() const noexcept { return reachable && authenticated && bucket_access; }
};

/// The probe key under `prefix` ("" = the bucket root) with a random suffix from `rng_seed`.
[[nodiscard]] std::string probe_key(std::string_view prefix, std::uint64_t rng_seed);

/// What `probe_crc32c` found.
struct crc32c_probe {
    capability verified = capability::unknown;
    std::string detail;  ///< what the store answered, when not `yes`
};

/// Whether the store verifies `x-amz-checksum-crc32c`: PutObject of `key` with a deliberately
/// wrong value must be refused as a bad digest (400 BadDigest / InvalidChecksum), and the
/// same body with the right value accepted: `yes`. The wrong value accepted (the store
/// ignores the header, as Ceph RGW 16 does): `no`. Anything else: `unknown`. Deletes what
/// it wrote. `s3.checksum: auto` uses CRC-32C on `yes` only (`automatic_checksum`).
task<crc32c_probe> probe_crc32c(client& c, std::string bucket, std::string key);

/// `s3.checksum: auto`: CRC-32C where the store verifies it, else Content-MD5 (which every
/// store verifies).
[[nodiscard]] checksum_kind automatic_checksum(capability crc32c_verified) noexcept;

/// Runs every step against `bucket`. Each S3 call uses the client's retry policy.
task<probe_report> probe_store(client& c, std::string bucket, std::string key);

}  // namespace iss::s3

#pragma once
/// \file
/// The capability probe (docs/architecture.md §3.4: store capabilities are probed, not assumed). Run at
/// start by the daemon and by `iggy-s3-sink probe`. It answers, one fact each:
/// reachability, authentication, bucket access (write, read, delete), and whether the store
/// honours `If-None-Match: *` on PutObject and on CompleteMultipartUpload (Ceph RGW 16:
/// yes and NO). It writes under `{prefix}/.iggy-s3-sink/probe-<random>` and deletes what it
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
    bool reachable = false;       ///< an HTTP answer came back from the endpoint
    bool authenticated = false;   ///< the credentials were accepted
    bool bucket_access = false;   ///< the probe object was written and read back
    capability conditional_put = capability::unknown;       ///< 412 on PutObject over an existing key
    capability conditional_complete = capability::unknown;  ///< 412 on Complete over an existing key
    bool cleaned_up = false;      ///< the probe object was deleted
    std::string probe_key;
    /// One explanation per step that did not succeed (what failed and what to check).
    std::string reachability_detail, auth_detail, bucket_detail, put_detail, complete_detail, cleanup_detail;

    /// Usable: reachable, authenticated, bucket accessible.
    [[nodiscard]] bool usable() const noexcept { return reachable && authenticated && bucket_access; }
};

/// The probe key under `prefix` ("" = the bucket root) with a random suffix from `rng_seed`.
[[nodiscard]] std::string probe_key(std::string_view prefix, std::uint64_t rng_seed);

/// Runs every step against `bucket`. Each S3 call uses the client's retry policy.
task<probe_report> probe_store(client& c, std::string bucket, std::string key);

}  // namespace iss::s3

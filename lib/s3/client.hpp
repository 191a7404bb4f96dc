// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The awaitable S3 client: every operation the sink needs, each with the same retry loop.
///
/// Retry budget, the naive version first: "on error, sleep 1 s and try again" turns a
/// throttled store into a retry storm and never gives up. Here every operation has an
/// attempt budget (`retry.attempts`) AND an overall deadline (`retry.deadline`, which also
/// caps every network step through the HTTP client), sleeps a full-jitter delay
/// U(0, min(cap, base * 2^n)) (common/backoff.hpp) between attempts, never sleeps past the
/// deadline, and only retries what `classify()` (s3/error.hpp) calls transient. A
/// RequestTimeTooSkewed answer re-signs once with the clock offset taken from the response's
/// Date header. Every attempt and wait is logged (warn) and counted (`stats()`).
///
/// The waits between attempts are on `client_options::sleeper` (else the client's own), and
/// the deadline on the injected clock: tests drive both with a manual clock.
///
/// Results: `result<T>`; a final error's `status_of()` tells the caller exists (412),
/// not_found, retryable or fatal. Cancellation (`operation_aborted`) is never retried nor
/// returned: it throws (docs/architecture.md §8.4.5).
///
/// Arguments are taken by value (strings, options); body views must stay valid until the
/// call completes. The option structs have constructors because GCC 12 miscompiles
/// brace-initialised aggregates passed by value to coroutines (lib/http/README.md).
///
/// Threading: one io_context thread (docs/architecture.md §8.3.1); not thread-safe.

#include "common/clock.hpp"
#include "common/stats.hpp"
#include "s3/error.hpp"
#include "s3/request.hpp"
#include "s3/xml.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>

namespace iss::s3 {

template <class T>
using task = boost::asio::awaitable<T>;

/// PutObject's answer.
struct put_result {
    std::string etag;  ///< quotes kept
};

/// HeadObject's answer.
struct head_result {
    std::uint64_t size = 0;
    std::string etag;
    std::string content_type;
    std::string last_modified;
    user_metadata metadata;  ///< names lower-case without `x-amz-meta-`, values decoded
};

/// GetObject's answer.
struct get_result {
    std::string body;
    std::string etag;
    user_metadata metadata;
};

/// CompleteMultipartUpload's answer.
struct complete_result {
    std::string etag;                ///< may be empty (RGW 16 sends an empty ETag); HEAD gives the real one
    bool confirmed_by_head = false;  ///< a retried Complete answered NoSuchUpload and HEAD found the object
};

/// Per S3 operation (`PutObject`, `HeadObject`, ...): every HTTP request sent, by outcome.
struct operation_stats {
    /// Requests by answer: the HTTP status ("200", "412", "503") or "error" when no response
    /// came (connection refused, reset, timeout).
    std::map<std::string, std::uint64_t, std::less<>> requests;
    std::uint64_t retries = 0;       ///< attempts after the first (backoff waits)
    iss::stats::histogram duration;  ///< seconds per HTTP request (one attempt)
};

/// Counters (tests, benchmark, logs, the admin server's `s3_*` metrics).
struct client_stats {
    /// By operation name as in the log lines (`PutObject`, `CompleteMultipartUpload`, ...).
    std::map<std::string, operation_stats, std::less<>> by_operation;
    std::uint64_t operations = 0;
    std::uint64_t attempts = 0;
    std::uint64_t retries = 0;
    std::uint64_t resigns = 0;  ///< requests signed again after RequestTimeTooSkewed
    /// The clock offset learnt from the last RequestTimeTooSkewed (server `Date` - local wall
    /// clock), applied to every later signature.
    std::chrono::milliseconds clock_offset{0};
    std::chrono::milliseconds waited{0};
    std::vector<std::chrono::milliseconds> recent_waits;  ///< the last 64 backoff waits
    std::uint64_t bytes_sent = 0;
    /// Requests that got no answer, by `connection_error_reason` (`resolve`, `timeout`,
    /// `tls_certificate` ...).
    std::map<std::string, std::uint64_t, std::less<>> connection_errors;
    /// The store cannot be reached: the last request sent got no answer (any answer, even an
    /// error status, clears it). Its reason and the request's detail (operation, key, error).
    struct unreachable_state {
        std::string reason;
        std::string detail;
    };
    std::optional<unreachable_state> unreachable;
};

/// The S3 client. One per store; buckets are per call.
class client {
public:
    /// \param clk the wall clock used for signing (tests inject a manual clock)
    /// \param seed seed of the jitter generator (tests fix it)
    client(boost::asio::any_io_executor ex, client_options opts, const iss::clock& clk = real_clock::instance(),
           std::uint64_t seed = std::random_device{}());
    ~client();
    client(const client&) = delete;
    client& operator=(const client&) = delete;

    task<result<void>> create_bucket(std::string bucket);
    task<result<void>> head_bucket(std::string bucket);
    /// ListBuckets; the names. (Reachability and authentication check of the probe.)
    task<result<std::vector<std::string>>> list_buckets();

    /// PutObject of the concatenation of `body` (no copy), with metadata, content type and
    /// `If-None-Match: *` as asked; 412 gives errc::precondition_failed (status exists).
    task<result<put_result>> put_object(std::string bucket, std::string key, std::vector<std::string_view> body,
                                        put_options o);
    task<result<head_result>> head_object(std::string bucket, std::string key);
    task<result<get_result>> get_object(std::string bucket, std::string key);
    task<result<void>> delete_object(std::string bucket, std::string key);

    /// CreateMultipartUpload (metadata and content type of the final object) -> upload id.
    task<result<std::string>> create_multipart(std::string bucket, std::string key, put_options o);
    /// UploadPart -> ETag (quotes kept). Every part but the last must be >= 5 MiB.
    /// `known`: the body's digests the caller computed while producing it (as `put_options::known`).
    /// `sent`: optional, as http::request::body_sent (each attempt calls it).
    task<result<completed_part>> upload_part(std::string bucket, std::string key, std::string upload_id,
                                             int part_number, std::vector<std::string_view> body,
                                             iss::body_digests known = {},
                                             std::function<void(std::string_view)> sent = {});
    /// CompleteMultipartUpload with the parts in order (`If-None-Match: *` when asked). A
    /// retried Complete that answers NoSuchUpload is checked with HeadObject: the earlier
    /// attempt's response was lost, the object exists.
    task<result<complete_result>> complete_multipart(std::string bucket, std::string key, std::string upload_id,
                                                     std::vector<completed_part> parts, bool if_none_match);
    task<result<void>> abort_multipart(std::string bucket, std::string key, std::string upload_id);
    /// ListParts, all pages.
    task<result<std::vector<part_info>>> list_parts(std::string bucket, std::string key, std::string upload_id);
    /// ListMultipartUploads under `prefix`, all pages.
    task<result<std::vector<upload_info>>> list_uploads(std::string bucket, std::string prefix);
    /// ListObjectsV2, one page.
    task<result<list_objects_page>> list_objects_v2(std::string bucket, list_options o);

    /// One part's bytes, and their CRC-32C when the caller computed it while producing them
    /// (sent instead of computing it, when the client's checksum is CRC-32C).
    struct part_body {
        part_body(std::string_view b, iss::body_digests d = {}) : bytes{b}, digests{d} {}  // NOLINT
        std::string_view bytes;
        iss::body_digests digests;  ///< computed while the part was produced (as `put_options::known`)
        /// Optional: told each stretch of `bytes` an attempt has sent (http::request::body_sent),
        /// e.g. to let a mapped part's pages go while it goes up.
        std::function<void(std::string_view)> sent;
    };
    /// Gives the multipart sequence one part's bytes: `(offset, length)` within the object ->
    /// a view of exactly `length` bytes, valid until the next call. An error ends the upload
    /// (it is aborted and the error returned as the upload's).
    using part_reader = std::function<result<part_body>(std::uint64_t offset, std::size_t length)>;

    /// The multipart sequence, the one in the project: CreateMultipartUpload with `o`'s
    /// metadata and content type, one UploadPart per `part_size` bytes of the `size`-byte
    /// object in order (the last part may be smaller), read through `read`, then
    /// CompleteMultipartUpload (`If-None-Match: *` when `o.if_none_match`). On any failure
    /// the upload is aborted (a failed abort is logged) and the first error returned.
    /// \pre `part_size` >= 5 MiB unless the object is one part; `size` > 0.
    task<result<complete_result>> upload_multipart(std::string bucket, std::string key, std::uint64_t size,
                                                   std::uint64_t part_size, part_reader read, put_options o);

    /// Uploads an object: PutObject up to `part_size`, else `upload_multipart` in `part_size`
    /// parts. `If-None-Match: *` on Put or Complete.
    task<result<complete_result>> upload(std::string bucket, std::string key, std::string_view body, put_options o);

    [[nodiscard]] const client_stats& stats() const noexcept;
    [[nodiscard]] const client_options& options() const noexcept;
    /// Changes the checksum of the requests built from now on (`s3.checksum: auto` after the
    /// probe decided). Call it before uploads start: a multipart upload keeps one checksum.
    void use_checksum(checksum_kind k) noexcept;
    /// The checksum requests carry now.
    [[nodiscard]] checksum_kind checksum() const noexcept;
    /// The digests a caller producing a body should compute for its requests (`put_options::known`,
    /// `part_body::digests`) so that none is read again: the checksum (CRC-32C or MD5) and, for a
    /// signed payload, its SHA-256. Valid until `use_checksum`.
    [[nodiscard]] digest_set digests_needed() const noexcept;
    /// The clock offset learnt from a RequestTimeTooSkewed answer (server - local).
    [[nodiscard]] std::chrono::milliseconds clock_offset() const noexcept;
    [[nodiscard]] http::client_stats http_stats() const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace iss::s3

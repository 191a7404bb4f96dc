// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The S3 (and Iceberg REST catalog) fault-injecting front (test double, docs/architecture.md §5): a small HTTP/1.1 server on
/// 127.0.0.1:0 that sits between a client and a real S3 server (RGW) and forwards each
/// request unchanged (Host, headers and body, so SigV4 signatures stay valid), unless a
/// scripted rule says otherwise: 503 SlowDown, 500 with an empty body, a reset before the
/// response or in the middle of the request body, a truncated response, a slow answer, a
/// lower-case `etag`, a lost response (forwarded, then the connection is dropped), a
/// corrupted request body, a CRC-32C check the upstream does not make, or a refusal (403
/// AccessDenied; the SSE-KMS errors of a disabled key or a key the credentials may not use). It serves plain
/// http, or https with a given certificate (to see what a client sends inside TLS). Without
/// an upstream it answers every request with a fixed response, which makes it a scriptable
/// server for transport tests.
///
/// It records every request it saw (method, target, headers, body size, the fault applied).
/// Runs on the executor given (the test's own `io_context`); not thread-safe beyond that.

#include "http/types.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace iss::test {

/// What the front does to a matching request.
enum class fault {
    none,                   ///< forward unchanged
    slow_down_503,          ///< answer 503 with an S3 `SlowDown` error body, do not forward
    internal_500_empty,     ///< answer 500 with an empty body, do not forward
    reset_before_response,  ///< read the request, then reset the connection (not forwarded)
    reset_mid_request,      ///< read the headers and part of the body, then reset
    truncate_response,      ///< forward, then send the response with half its body and close
    delay,                  ///< wait `delay`, then forward
    /// read the headers, cut the connection's receive buffer to 64 KiB and wait `delay`
    /// before reading the body (the client's socket buffers fill: its writes wait for room),
    /// then read it and forward
    stall_body,
    lowercase_headers,  ///< forward; write response header names in lower case (`etag`)
    drop_response,      ///< forward, then close without answering (a lost response)
    corrupt_body,       ///< flip one byte of the body, then forward
    /// Verify `x-amz-checksum-crc32c` as AWS does: a value that does not match the body is
    /// answered 400 BadDigest (not forwarded); a matching one, or none, is forwarded.
    /// (A store that checks CRC-32C, in front of one that does not.)
    verify_crc32c,
    /// answer 403 AccessDenied, do not forward (an IAM policy that no longer allows the
    /// request, e.g. s3:PutObject revoked)
    access_denied_403,
    /// answer 400 KMS.DisabledException, do not forward: what S3 answers a write to an
    /// SSE-KMS bucket whose key is disabled (KMS's DisabledException, with S3's `KMS.` prefix)
    kms_disabled_400,
    /// answer 403 AccessDenied naming kms:GenerateDataKey, do not forward: an SSE-KMS write
    /// whose credentials may no longer use the bucket's key
    kms_access_denied_403,
    /// answer 409 with an Iceberg REST `CommitFailedException` body, do not forward (a
    /// concurrent commit won: the Iceberg catalog tests)
    conflict_409,
    /// forward (the upstream applies it), then answer 500 with an Iceberg REST
    /// `CommitStateUnknownException` body instead of the upstream's answer
    internal_500_after_forward,
    /// answer 401 with an Iceberg REST `NotAuthorizedException` body, do not forward
    unauthorized_401,
};

/// A scripted rule. A request matches when the method matches (empty: any) and the target
/// contains `target_contains`. The first `skip` matches pass untouched; of the matches after
/// them, every `every`-th one gets the fault (the 1st, the (every+1)-th, ...), `times` times
/// in all; then the rule is spent. A request that a rule lets pass goes on to the next rule.
struct fault_rule {
    std::string method;
    std::string target_contains;
    fault action = fault::none;
    unsigned skip = 0;
    unsigned times = 1;
    std::chrono::milliseconds delay{0};  ///< for `fault::delay`
    unsigned every = 1;                  ///< 1: consecutive matches; 10: one match in ten (0 counts as 1)
};

/// One request as the front saw it.
struct recorded_request {
    std::string method;
    std::string target;
    http::header_list headers;
    std::size_t body_size = 0;
    fault applied = fault::none;
    std::chrono::steady_clock::time_point at;
};

/// PEM files of a server certificate (with its chain) and its private key.
struct tls_files {
    std::string certificate_file;
    std::string private_key_file;
};

/// The front. Listens from construction until destruction or `stop()`.
class fault_front {
public:
    /// \param upstream where to forward; nullopt: answer with the fixed response
    /// \param tls set: clients talk https to the front (it records what came inside TLS) and
    ///        it forwards over the upstream's own scheme; nullopt: plain http. Unreadable
    ///        files throw (boost::system::system_error).
    fault_front(boost::asio::any_io_executor ex, std::optional<http::endpoint> upstream,
                std::optional<tls_files> tls = std::nullopt);
    ~fault_front();
    fault_front(const fault_front&) = delete;
    fault_front& operator=(const fault_front&) = delete;

    /// The port it listens on (127.0.0.1).
    [[nodiscard]] std::uint16_t port() const;
    /// `http://127.0.0.1:PORT`, or `https://` with `tls`.
    [[nodiscard]] std::string url() const;
    void add_rule(fault_rule r);
    void clear_rules();
    /// The fixed response used when there is no upstream (default: 200, empty body).
    void set_fixed_response(unsigned status, http::header_list headers, std::string body);
    /// Every request seen so far, in arrival order.
    [[nodiscard]] const std::vector<recorded_request>& requests() const;
    void clear_requests();
    /// Closes the listener and every open connection.
    void stop();

private:
    struct impl;
    std::shared_ptr<impl> impl_;
};

}  // namespace iss::test

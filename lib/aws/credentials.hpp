// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Credentials as the providers hand them out, the awaitable provider interface, and the
/// source the S3 client signs with.
///
/// A `provider` fetches once: `fetch()` asks its origin (configuration, environment, a file,
/// STS, the container endpoint, the instance metadata service) and returns an `identity`:
/// `{access key id, secret, session token, expiry}` plus a description for logs that never
/// holds a secret. A `credentials_source` is what a client holds: `current()` answers at once
/// from memory while the credentials are valid, and `refresh_rejected()` renews them when the
/// store said they expired. `refreshing_source` (refresh.hpp) turns a provider into a source.

#include "common/error.hpp"
#include "sigv4/signer.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace iss::aws {

template <class T>
using task = boost::asio::awaitable<T>;

using system_time = std::chrono::system_clock::time_point;

/// Looks up an environment variable (injected: modules never read the process environment
/// themselves). nullopt: unset.
using env_lookup = std::function<std::optional<std::string>(std::string_view)>;

/// What a provider found.
struct identity {
    sigv4::credentials keys;            ///< the secret and the token format as `****`
    std::optional<system_time> expiry;  ///< nullopt: long-lived (static keys)
    std::string source;  ///< "static", "env", "web identity", "profile", "container", "imds", "assume role"
    std::string detail;  ///< e.g. "role arn:aws:iam::123:role/sink"; never a secret

    /// "web identity, role arn:aws:iam::123:role/sink, expires 2026-12-01T15:04:05Z" (no secret).
    [[nodiscard]] std::string describe() const;
};

/// A credential origin. `fetch()` may do I/O and is called by one refresher at a time.
class provider {
public:
    virtual ~provider() = default;
    /// Obtains credentials. Errors: `errc::not_configured` when this origin has nothing here
    /// (a chain moves on), other `aws::errc` values when it is set up but failed.
    virtual task<result<identity>> fetch() = 0;
    /// The source's name as the chain reports it ("web identity").
    [[nodiscard]] virtual std::string name() const = 0;
};

/// Credentials to sign with, and the generation they belong to (it grows with each new set,
/// so a client knows when to drop its derived signing keys).
struct signing_credentials {
    sigv4::credentials keys;
    std::uint64_t generation = 0;
};

/// What the S3 client signs with.
class credentials_source {
public:
    virtual ~credentials_source() = default;
    /// Valid credentials. Answers from memory unless none are valid (first use, or expired
    /// while refreshes failed); then waits for the one refresh in flight.
    virtual task<result<signing_credentials>> current() = 0;
    /// The store rejected credentials of `generation` (ExpiredToken, TokenRefreshRequired):
    /// renew them unless a newer generation already exists, and answer the new set. Many
    /// callers share one refresh.
    virtual task<result<signing_credentials>> refresh_rejected(std::uint64_t generation) = 0;
    /// Whether the credentials can ever change (false for static keys: no refresh to try).
    [[nodiscard]] virtual bool refreshable() const noexcept = 0;
};

/// A source that always answers the same keys (static configuration, tests).
class fixed_source final : public credentials_source {
public:
    explicit fixed_source(sigv4::credentials keys) : keys_{std::move(keys)} {}
    task<result<signing_credentials>> current() override;
    task<result<signing_credentials>> refresh_rejected(std::uint64_t generation) override;
    [[nodiscard]] bool refreshable() const noexcept override { return false; }

private:
    sigv4::credentials keys_;
};

/// "2026-12-01T15:04:05Z" (UTC, seconds).
[[nodiscard]] std::string format_iso8601(system_time t);
/// Parses ISO 8601 UTC timestamps as AWS writes them: "2026-12-01T15:04:05Z",
/// "2026-12-01T15:04:05.123Z", "2026-12-01T15:04:05+00:00" (RFC 3339 with a zero offset, by
/// `iss::parse_rfc3339`), to the second (a fraction is dropped). Errors: `errc::bad_response`.
[[nodiscard]] result<system_time> parse_iso8601(std::string_view s);

}  // namespace iss::aws

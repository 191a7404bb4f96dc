// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Strong types for domain strings (docs/architecture.md §8.2.4). `named_type` prints its value;
/// `secret` prints `****` everywhere (fmt, ostream), so a secret passed to a log line by
/// mistake is still redacted. Only `reveal()` gives the value, for signing and login.

#include <fmt/format.h>

#include <compare>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

namespace iss {

/// A value of type T that is not interchangeable with other T's (Tag tells them apart).
template <class T, class Tag>
class named_type {
public:
    using value_type = T;
    named_type() = default;
    explicit named_type(T v) : v_{std::move(v)} {}
    [[nodiscard]] const T& operator()() const noexcept { return v_; }
    [[nodiscard]] const T& get() const noexcept { return v_; }
    [[nodiscard]] T& get() noexcept { return v_; }
    friend auto operator<=>(const named_type&, const named_type&) = default;
    friend bool operator==(const named_type&, const named_type&) = default;
    friend std::ostream& operator<<(std::ostream& os, const named_type& n) { return os << n.v_; }

private:
    T v_{};
};

/// The text printed in place of every secret.
inline constexpr std::string_view redacted = "****";

/// A secret string (password, secret access key, session token, personal access token).
/// Formats as `****`; an empty secret formats as the empty string so "not set" stays visible.
template <class Tag>
class secret {
public:
    secret() = default;
    explicit secret(std::string v) : v_{std::move(v)} {}
    /// The value itself: call only where it is used (signing, login), never to print it.
    [[nodiscard]] const std::string& reveal() const noexcept { return v_; }
    [[nodiscard]] bool empty() const noexcept { return v_.empty(); }
    friend bool operator==(const secret&, const secret&) = default;
    [[nodiscard]] std::string_view printable() const noexcept { return v_.empty() ? std::string_view{} : redacted; }
    friend std::ostream& operator<<(std::ostream& os, const secret& s) { return os << s.printable(); }

private:
    std::string v_;
};

using bucket_name = named_type<std::string, struct bucket_name_tag>;
using object_key = named_type<std::string, struct object_key_tag>;
using region_name = named_type<std::string, struct region_name_tag>;
using access_key_id = named_type<std::string, struct access_key_id_tag>;
using secret_access_key = secret<struct secret_access_key_tag>;
using session_token = secret<struct session_token_tag>;
using iggy_password = secret<struct iggy_password_tag>;
using iggy_token = secret<struct iggy_token_tag>;
using sse_customer_key = secret<struct sse_customer_key_tag>;          ///< SSE-C key (base64)
using proxy_url = secret<struct proxy_url_tag>;                        ///< a proxy URL that may hold user:password
using catalog_token = secret<struct catalog_token_tag>;                ///< an Iceberg REST catalog bearer token
using oauth2_client_secret = secret<struct oauth2_client_secret_tag>;  ///< an OAuth2 client secret (catalog)

}  // namespace iss

template <class T, class Tag>
struct fmt::formatter<iss::named_type<T, Tag>> : fmt::formatter<T> {
    auto format(const iss::named_type<T, Tag>& n, fmt::format_context& ctx) const {
        return fmt::formatter<T>::format(n.get(), ctx);
    }
};

template <class Tag>
struct fmt::formatter<iss::secret<Tag>> : fmt::formatter<std::string_view> {
    auto format(const iss::secret<Tag>& s, fmt::format_context& ctx) const {
        return fmt::formatter<std::string_view>::format(s.printable(), ctx);
    }
};

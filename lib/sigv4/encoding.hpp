// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// URI encoding for SigV4 and for the wire, so that the path and query that are signed are
/// byte for byte the ones that are sent.
///
/// AWS UriEncode (https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html):
/// "URI encode every byte. UriEncode() must enforce the following rules: URI encode every byte
/// except the unreserved characters: 'A'-'Z', 'a'-'z', '0'-'9', '-', '.', '_', and '~'. The
/// space character is a reserved character and must be encoded as "%20" (and not as "+").
/// Each URI encoded byte is formed by a '%' and the two-digit hexadecimal value of the byte.
/// Letters in the hexadecimal value must be uppercase [...]. Encode the forward slash character,
/// '/', everywhere except in the object key name."
///
/// S3 rule (what the HTTP layer must do): the wire path is `encode_path(raw_key_path)`, the
/// wire query is `encode_query(params)`; the signer computes the same strings for the canonical
/// request when `signing_params::double_encode_path` is false (S3's default). `+` is never
/// turned into a space and `=`/`&`/`$`/`+` inside a key are always percent-encoded.

#include "common/error.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace iss::sigv4 {

/// One query parameter, NOT percent-encoded (the signer encodes it).
struct query_param {
    std::string_view name;
    std::string_view value;  ///< empty for `?lifecycle`, which signs as `lifecycle=`
};

/// An owned query parameter (decoded), e.g. from `parse_query`.
struct owned_query_param {
    std::string name;
    std::string value;
    [[nodiscard]] query_param view() const noexcept { return {name, value}; }
};

/// True for A-Z a-z 0-9 - . _ ~ (RFC 3986 unreserved), the bytes UriEncode never encodes.
[[nodiscard]] constexpr bool is_unreserved(unsigned char c) noexcept {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_' || c == '~';
}

/// Appends UriEncode(`s`) to `out`: every byte other than unreserved (and '/' when
/// `keep_slash`) as `%XY` with upper-case hex.
void uri_encode_to(std::string& out, std::string_view s, bool keep_slash);
/// UriEncode(`s`); `keep_slash` keeps '/' (paths), otherwise '/' becomes `%2F` (query parts).
[[nodiscard]] std::string uri_encode(std::string_view s, bool keep_slash);
/// The wire (and S3 canonical) form of a raw, unencoded path: `uri_encode(raw, true)`.
/// "/test$file.text" -> "/test%24file.text"; "/a b/c+d" -> "/a%20b/c%2Bd".
[[nodiscard]] std::string encode_path(std::string_view raw_path);

/// The canonical query string: each name and value UriEncode'd ('/' too), sorted by encoded
/// name then encoded value, joined as `n=v&n=v` (a parameter without value gives `n=`). It is
/// also a valid wire query (S3 accepts any order), so the HTTP layer sends exactly this.
[[nodiscard]] std::string encode_query(std::span<const query_param> params);

/// Decodes `%XY` escapes (either hex case). '+' stays '+' (it is NOT a space in SigV4).
/// \return the decoded bytes, or `errc::bad_percent_encoding` naming the offending text.
[[nodiscard]] result<std::string> percent_decode(std::string_view s);

/// Splits a wire query (without the leading '?') at '&' and the first '=' of each part, and
/// percent-decodes names and values. Empty parts (`a=1&&b=2`) are skipped.
[[nodiscard]] result<std::vector<owned_query_param>> parse_query(std::string_view query);

/// RFC 3986 dot-segment removal plus collapsing of empty segments ('//'), as the generic
/// services expect (`normalize_path = true`); S3 never normalises. A trailing '/' is kept;
/// the result always starts with '/'. "/example/.." -> "/", "//example//" -> "/example/".
[[nodiscard]] std::string normalize_path(std::string_view path);

}  // namespace iss::sigv4

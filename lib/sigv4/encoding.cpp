// SPDX-License-Identifier: Apache-2.0
#include "sigv4/encoding.hpp"

#include "sigv4/error.hpp"

#include <algorithm>

namespace iss::sigv4 {

void uri_encode_to(std::string& out, std::string_view s, bool keep_slash) {
    static constexpr char hex[] = "0123456789ABCDEF";
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (is_unreserved(c) || (keep_slash && c == '/')) {
            out.push_back(ch);
        } else {
            out.push_back('%');
            out.push_back(hex[c >> 4]);
            out.push_back(hex[c & 0x0f]);
        }
    }
}

std::string uri_encode(std::string_view s, bool keep_slash) {
    std::string out;
    out.reserve(s.size() + s.size() / 2);
    uri_encode_to(out, s, keep_slash);
    return out;
}

std::string encode_path(std::string_view raw_path) { return uri_encode(raw_path, true); }

std::string encode_query(std::span<const query_param> params) {
    // "Sort the parameter names by character code point in ascending order. Parameters with
    // duplicate names should be sorted by value." The sort is on the ENCODED names (the suite's
    // get-vanilla-query-order-encoded: %E1%88%B4 sorts before 'P').
    std::vector<std::pair<std::string, std::string>> encoded;
    encoded.reserve(params.size());
    for (const auto& p : params) encoded.emplace_back(uri_encode(p.name, false), uri_encode(p.value, false));
    std::sort(encoded.begin(), encoded.end());
    std::string out;
    for (const auto& [n, v] : encoded) {
        if (!out.empty()) out.push_back('&');
        out += n;
        out.push_back('=');
        out += v;
    }
    return out;
}

namespace {
int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}
}  // namespace

result<std::string> percent_decode(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '%') {
            out.push_back(s[i]);
            continue;
        }
        if (i + 2 >= s.size()) return error{errc::bad_percent_encoding, std::string{s}};
        const int hi = hex_value(s[i + 1]);
        const int lo = hex_value(s[i + 2]);
        if (hi < 0 || lo < 0) return error{errc::bad_percent_encoding, std::string{s}};
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
    }
    return out;
}

result<std::vector<owned_query_param>> parse_query(std::string_view query) {
    std::vector<owned_query_param> out;
    while (!query.empty()) {
        const auto amp = query.find('&');
        const std::string_view part = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
        if (part.empty()) continue;
        const auto eq = part.find('=');
        auto name = percent_decode(part.substr(0, eq));
        if (!name) return name.error();
        auto value = percent_decode(eq == std::string_view::npos ? std::string_view{} : part.substr(eq + 1));
        if (!value) return value.error();
        out.push_back({std::move(*name), std::move(*value)});
    }
    return out;
}

std::string normalize_path(std::string_view path) {
    std::vector<std::string_view> segments;
    // RFC 3986 5.2.4: a path ending in '/', '/.' or '/..' keeps a trailing '/'.
    const bool trailing_slash = path.ends_with('/') || path.ends_with("/.") || path.ends_with("/..");
    std::size_t pos = 0;
    while (pos <= path.size()) {
        const auto slash = path.find('/', pos);
        const std::string_view seg =
            path.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos);
        if (seg == "..") {
            if (!segments.empty()) segments.pop_back();
        } else if (!seg.empty() && seg != ".") {
            segments.push_back(seg);
        }
        if (slash == std::string_view::npos) break;
        pos = slash + 1;
    }
    std::string out;
    for (const auto seg : segments) {
        out.push_back('/');
        out += seg;
    }
    if (out.empty() || trailing_slash) out.push_back('/');
    return out;
}

}  // namespace iss::sigv4

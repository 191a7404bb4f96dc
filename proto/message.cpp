// SPDX-License-Identifier: Apache-2.0
#include "proto/message.hpp"

#include "proto/message_header.hpp"

#include <xxhash.h>

#include <string>

namespace iss::proto {

namespace {

iss::error field_error(errc e, std::string_view prefix, std::size_t index, std::string_view field) {
    std::string d{prefix};
    d += '[';
    d += std::to_string(index);
    d += "].";
    d += field;
    return iss::error{e, std::move(d)};
}

iss::error named(errc e, std::string_view prefix, std::string_view field) {
    std::string d{prefix};
    d += '.';
    d += field;
    return iss::error{e, std::move(d)};
}

template <class T>
T load(bytes_view b) noexcept {
    return load_le<T>(b.data());
}

}  // namespace

bool is_valid_utf8(std::string_view s) noexcept {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    std::size_t i = 0;
    while (i < n) {
        const unsigned c = p[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        std::size_t len;
        unsigned lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            if (c == 0xE0) lo = 0xA0;
            if (c == 0xED) hi = 0x9F;  // no surrogates
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            if (c == 0xF0) lo = 0x90;
            if (c == 0xF4) hi = 0x8F;  // at most U+10FFFF
        } else {
            return false;
        }
        if (n - i < len) return false;
        if (p[i + 1] < lo || p[i + 1] > hi) return false;
        for (std::size_t k = 2; k < len; ++k)
            if (p[i + k] < 0x80 || p[i + k] > 0xBF) return false;
        i += len;
    }
    return true;
}

result<std::string_view> reader::name(std::string_view field) noexcept {
    auto len = u8(field);
    if (!len) return len.error();
    if (*len == 0) return iss::error{errc::invalid_length, std::string{field}};
    auto b = bytes(*len, field);
    if (!b) return b.error();
    if (!is_valid_utf8(as_text(*b))) return iss::error{errc::invalid_utf8, std::string{field}};
    return as_text(*b);
}

result<std::string_view> reader::u8_text(std::string_view field) noexcept {
    auto len = u8(field);
    if (!len) return len.error();
    auto b = bytes(*len, field);
    if (!b) return b.error();
    if (!is_valid_utf8(as_text(*b))) return iss::error{errc::invalid_utf8, std::string{field}};
    return as_text(*b);
}

result<std::string_view> reader::u32_text(std::string_view field, std::size_t max_len) noexcept {
    auto len = u32(field);
    if (!len) return len.error();
    if (*len > max_len) return iss::error{errc::limit_exceeded, std::string{field}};
    auto b = bytes(*len, field);
    if (!b) return b.error();
    if (!is_valid_utf8(as_text(*b))) return iss::error{errc::invalid_utf8, std::string{field}};
    return as_text(*b);
}

std::size_t header_kind_size(header_kind k) noexcept {
    switch (k) {
        case header_kind::raw:
        case header_kind::string: return 0;
        case header_kind::boolean:
        case header_kind::int8:
        case header_kind::uint8: return 1;
        case header_kind::int16:
        case header_kind::uint16: return 2;
        case header_kind::int32:
        case header_kind::uint32:
        case header_kind::float32: return 4;
        case header_kind::int64:
        case header_kind::uint64:
        case header_kind::float64: return 8;
        case header_kind::int128:
        case header_kind::uint128: return 16;
    }
    return 0;
}

std::string_view header_kind_name(header_kind k) noexcept {
    switch (k) {
        case header_kind::raw: return "raw";
        case header_kind::string: return "string";
        case header_kind::boolean: return "bool";
        case header_kind::int8: return "int8";
        case header_kind::int16: return "int16";
        case header_kind::int32: return "int32";
        case header_kind::int64: return "int64";
        case header_kind::int128: return "int128";
        case header_kind::uint8: return "uint8";
        case header_kind::uint16: return "uint16";
        case header_kind::uint32: return "uint32";
        case header_kind::uint64: return "uint64";
        case header_kind::uint128: return "uint128";
        case header_kind::float32: return "float32";
        case header_kind::float64: return "float64";
    }
    return "invalid";
}

result<header_value> decode_header_value(header_kind kind, bytes_view b) {
    const std::size_t want = header_kind_size(kind);
    if (want != 0 && b.size() != want) return iss::error{errc::invalid_length, std::string{header_kind_name(kind)}};
    switch (kind) {
        case header_kind::raw: return header_value{b};
        case header_kind::string:
            if (!is_valid_utf8(as_text(b))) return iss::error{errc::invalid_utf8, "string"};
            return header_value{as_text(b)};
        case header_kind::boolean: {
            const auto v = load<std::uint8_t>(b);
            if (v > 1) return iss::error{errc::invalid_value, "bool"};
            return header_value{v == 1};
        }
        case header_kind::int8: return header_value{load<std::int8_t>(b)};
        case header_kind::int16: return header_value{load<std::int16_t>(b)};
        case header_kind::int32: return header_value{load<std::int32_t>(b)};
        case header_kind::int64: return header_value{load<std::int64_t>(b)};
        case header_kind::int128: return header_value{load<i128>(b)};
        case header_kind::uint8: return header_value{load<std::uint8_t>(b)};
        case header_kind::uint16: return header_value{load<std::uint16_t>(b)};
        case header_kind::uint32: return header_value{load<std::uint32_t>(b)};
        case header_kind::uint64: return header_value{load<std::uint64_t>(b)};
        case header_kind::uint128: return header_value{load<u128>(b)};
        case header_kind::float32: return header_value{load<float>(b)};
        case header_kind::float64: return header_value{load<double>(b)};
    }
    return iss::error{errc::unknown_kind, "header_kind"};
}

header_kind header_value_kind(const header_value& v) noexcept {
    // The variant's alternatives are in kind order: index 0 = raw (1) ... 14 = float64 (15).
    return static_cast<header_kind>(v.index() + 1);
}

void append_header_value_bytes(byte_buffer& out, const header_value& v) {
    std::visit(
        [&out](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, bytes_view>) {
                out.insert(out.end(), x.begin(), x.end());
            } else if constexpr (std::is_same_v<T, std::string_view>) {
                const auto b = as_bytes(x);
                out.insert(out.end(), b.begin(), b.end());
            } else if constexpr (std::is_same_v<T, bool>) {
                out.push_back(static_cast<std::byte>(x ? 1 : 0));
            } else {
                const std::size_t at = out.size();
                out.resize(at + sizeof(T));
                store_le(out.data() + at, x);
            }
        },
        v);
}

result<std::optional<header_view>> header_reader::next() {
    if (rest_.empty()) return std::optional<header_view>{};
    static constexpr std::string_view prefix = "user_headers";
    header_view h{};
    auto read_part = [&](bool is_key, header_kind& kind, bytes_view& bytes) -> result<void> {
        const std::string_view kind_f = is_key ? "key_kind" : "value_kind";
        const std::string_view len_f = is_key ? "key_length" : "value_length";
        const std::string_view data_f = is_key ? "key" : "value";
        if (rest_.size() < 5) return field_error(errc::truncated, prefix, index_, rest_.empty() ? kind_f : len_f);
        const auto k = load<std::uint8_t>(rest_);
        if (!is_valid_header_kind(k)) return field_error(errc::unknown_kind, prefix, index_, kind_f);
        const auto len = load_le<std::uint32_t>(rest_.data() + 1);
        if (rest_.size() - 5 < len) return field_error(errc::truncated, prefix, index_, data_f);
        kind = static_cast<header_kind>(k);
        const std::size_t want = header_kind_size(kind);
        if (want != 0 && len != want) return field_error(errc::invalid_length, prefix, index_, len_f);
        bytes = rest_.subspan(5, len);
        rest_ = rest_.subspan(5 + len);
        return {};
    };
    if (auto r = read_part(true, h.key_kind, h.key); !r) {
        rest_ = {};
        return r.error();
    }
    if (auto r = read_part(false, h.value_kind, h.value); !r) {
        rest_ = {};
        return r.error();
    }
    ++index_;
    return std::optional<header_view>{h};
}

result<void> decode_user_headers(bytes_view block, std::vector<header_view>& out) {
    out.clear();
    header_reader r{block};
    for (;;) {
        auto h = r.next();
        if (!h) return h.error();
        if (!*h) return {};
        out.push_back(**h);
    }
}

result<std::size_t> validate_user_headers(bytes_view block) {
    header_reader r{block};
    std::size_t n = 0;
    for (;;) {
        auto h = r.next();
        if (!h) return h.error();
        if (!*h) return n;
        ++n;
    }
}

result<void> append_user_header(byte_buffer& block, header_kind key_kind, bytes_view key, header_kind value_kind,
                                bytes_view value) {
    auto check = [](header_kind k, bytes_view b, std::string_view what) -> result<void> {
        if (!is_valid_header_kind(static_cast<std::uint8_t>(k)))
            return iss::error{errc::unknown_kind, std::string{what} + "_kind"};
        if (b.empty() || b.size() > max_header_field_size)
            return iss::error{errc::invalid_length, std::string{what} + " (1..255 bytes)"};
        const std::size_t want = header_kind_size(k);
        if (want != 0 && b.size() != want)
            return iss::error{errc::invalid_length,
                              std::string{what} + " (" + std::string{header_kind_name(k)} + " size)"};
        if (k == header_kind::string && !is_valid_utf8(as_text(b)))
            return iss::error{errc::invalid_utf8, std::string{what}};
        return {};
    };
    if (auto r = check(key_kind, key, "header key"); !r) return r;
    if (auto r = check(value_kind, value, "header value"); !r) return r;
    writer w{block};
    w.u8(static_cast<std::uint8_t>(key_kind));
    w.u32(static_cast<std::uint32_t>(key.size()));
    w.bytes(key);
    w.u8(static_cast<std::uint8_t>(value_kind));
    w.u32(static_cast<std::uint32_t>(value.size()));
    w.bytes(value);
    return {};
}

std::uint64_t message_checksum(bytes_view message) noexcept {
    if (message.size() < 8) return 0;
    return XXH3_64bits(message.data() + 8, message.size() - 8);
}

std::uint64_t message_view::compute_checksum() const noexcept { return message_checksum(raw); }

result<message_view> decode_message(bytes_view in, std::string_view field, const message_limits& limits) {
    if (in.size() < message_header_size) return named(errc::truncated, field, "header");
    message_view m;
    const auto [h, pl] = message_header::read(in.data(), m);
    if (pl > limits.max_payload) return named(errc::limit_exceeded, field, "payload_length");
    if (h > limits.max_user_headers) return named(errc::limit_exceeded, field, "user_headers_length");
    const std::size_t rest = in.size() - message_header_size;
    if (rest < pl) return named(errc::truncated, field, "payload");
    if (rest - pl < h) return named(errc::truncated, field, "user_headers");
    m.payload = in.subspan(message_header_size, pl);
    m.user_headers = in.subspan(message_header_size + pl, h);
    m.raw = in.first(message_header_size + pl + h);
    return m;
}

result<void> append_message(byte_buffer& out, const message_fields& m, bool with_checksum,
                            const message_limits& limits) {
    if (m.payload.size() > limits.max_payload) return iss::error{errc::limit_exceeded, "message.payload"};
    if (m.user_headers.size() > limits.max_user_headers)
        return iss::error{errc::limit_exceeded, "message.user_headers"};
    const std::size_t at = out.size();
    const std::size_t total = message_header_size + m.payload.size() + m.user_headers.size();
    out.resize(at + total);
    std::byte* p = out.data() + at;
    message_header::write(p, m);
    if (!m.payload.empty()) std::memcpy(p + message_header_size, m.payload.data(), m.payload.size());
    if (!m.user_headers.empty())
        std::memcpy(p + message_header_size + m.payload.size(), m.user_headers.data(), m.user_headers.size());
    if (with_checksum) store_le<std::uint64_t>(p + message_header::checksum, message_checksum(bytes_view{p, total}));
    return {};
}

}  // namespace iss::proto

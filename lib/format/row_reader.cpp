// SPDX-License-Identifier: Apache-2.0
// row_reader: a message -> one row of cells by the column schema (lib/format/schema.hpp):
// header fields, user headers, and JSON payload paths parsed once per message (simdjson DOM),
// converted by the rules in schema.hpp.
#include "common/rfc3339.hpp"
#include "format/error.hpp"
#include "format/json.hpp"
#include "format/schema.hpp"

#include <fmt/format.h>
#include <simdjson.h>

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <deque>
#include <iterator>
#include <limits>

namespace iss::format {

namespace {

bool is_integer_type(column_type t) {
    return t == column_type::int32 || t == column_type::int64 || t == column_type::timestamp_ms ||
           t == column_type::timestamp_us || t == column_type::date;
}

template <class T>
T load(proto::bytes_view b) {
    T v{};
    std::memcpy(&v, b.data(), sizeof v);  // little-endian hosts only (as proto/)
    return v;
}

/// Parses `[+-]digits` fully.
std::optional<std::int64_t> parse_int(std::string_view s) {
    std::int64_t v = 0;
    const char* b = s.data();
    const char* e = b + s.size();
    if (b != e && *b == '+') ++b;
    auto [p, ec] = std::from_chars(b, e, v);
    if (ec != std::errc{} || p != e || b == e) return std::nullopt;
    return v;
}

std::string_view kind_text(simdjson::dom::element_type t) {
    switch (t) {
        case simdjson::dom::element_type::ARRAY: return "an array";
        case simdjson::dom::element_type::OBJECT: return "an object";
        case simdjson::dom::element_type::INT64:
        case simdjson::dom::element_type::UINT64: return "an integer";
        case simdjson::dom::element_type::DOUBLE: return "a number";
        case simdjson::dom::element_type::STRING: return "a string";
        case simdjson::dom::element_type::BOOL: return "a boolean";
        case simdjson::dom::element_type::NULL_VALUE: return "null";
    }
    return "a value";
}

}  // namespace

// ---------------------------------------------------------------------------------------
// row_reader

namespace {

/// The texts made for one row (stable addresses: cells point into them), reused row by row.
struct text_pool {
    std::deque<std::string> scratch;
    std::size_t used = 0;

    std::string& next() {
        if (used == scratch.size()) scratch.emplace_back();
        std::string& s = scratch[used++];
        s.clear();
        return s;
    }
};

}  // namespace

struct row_reader::impl {
    simdjson::dom::parser parser;
    std::vector<std::vector<std::string>> paths;  ///< per column: the dotted path's names
    bool needs_json = false;
    bool needs_headers = false;
    std::vector<cell> row;
    text_pool texts;
    std::vector<std::pair<std::string_view, std::string_view>> entries;
    std::vector<proto::header_view> hdrs;
};

row_reader::row_reader(std::vector<column> cols) : cols_{std::move(cols)}, impl_{std::make_unique<impl>()} {
    impl_->paths.resize(cols_.size());
    for (std::size_t i = 0; i < cols_.size(); ++i) {
        const column& c = cols_[i];
        if (c.source == column_source::payload_path || c.source == column_source::payload_root)
            impl_->needs_json = true;
        if (c.source == column_source::header || c.source == column_source::headers) impl_->needs_headers = true;
        if (c.source == column_source::payload_path) {
            std::string_view p = c.path;
            for (;;) {
                const auto dot = p.find('.');
                impl_->paths[i].emplace_back(p.substr(0, dot));
                if (dot == std::string_view::npos) break;
                p.remove_prefix(dot + 1);
            }
        }
    }
    impl_->row.resize(cols_.size());
}
row_reader::~row_reader() = default;
row_reader::row_reader(row_reader&&) noexcept = default;
row_reader& row_reader::operator=(row_reader&&) noexcept = default;

namespace {

struct filler {
    const column& c;
    const proto::message_view& m;
    cell& out;
    text_pool& texts;

    error wrong(std::string_view what) const {
        return error{errc::bad_value, fmt::format("offset {}: column {:?} ({}, from {}): {}", m.offset, c.name,
                                                  to_string(c.type), from_text(c), what)};
    }

    /// An integer value for an integer-like or real column.
    result<void> integer(std::int64_t v) {
        switch (c.type) {
            case column_type::int32:
            case column_type::date:  // days, stored as INT32 (Parquet DATE, Avro date)
                if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())
                    return wrong(fmt::format("{} is outside the int32 range", v));
                [[fallthrough]];
            case column_type::int64:
            case column_type::timestamp_ms:
            case column_type::timestamp_us:
                out.k = cell::kind::integer;
                out.i = v;
                return {};
            case column_type::float32:
            case column_type::float64:
                out.k = cell::kind::real;
                out.d = c.type == column_type::float32 ? static_cast<double>(static_cast<float>(v))
                                                       : static_cast<double>(v);
                return {};
            default: return wrong("is an integer");
        }
    }
    result<void> real(double v) {
        if (c.type == column_type::float32 || c.type == column_type::float64) {
            out.k = cell::kind::real;
            out.d = c.type == column_type::float32 ? static_cast<double>(static_cast<float>(v)) : v;
            return {};
        }
        if (is_integer_type(c.type)) return wrong("is not an integer");
        return wrong("is a number");
    }
    /// A string value: string/binary take it; others parse it.
    result<void> text(std::string_view s, bool from_json) {
        switch (c.type) {
            case column_type::string:
                if (!json::valid_utf8(s)) return wrong("is not valid UTF-8");
                [[fallthrough]];
            case column_type::binary:
                out.k = cell::kind::bytes;
                out.s = s;
                return {};
            case column_type::timestamp_ms:
            case column_type::timestamp_us: {
                const auto us = iss::parse_rfc3339_us(s);
                if (!us) return wrong(fmt::format("{:?} is not an RFC 3339 time", s));
                out.k = cell::kind::integer;
                out.i = c.type == column_type::timestamp_ms ? (*us >= 0 ? *us / 1000 : -((-*us + 999) / 1000)) : *us;
                return {};
            }
            case column_type::date: {
                const auto d = iss::parse_rfc3339_date(s);
                if (!d) return wrong(fmt::format("{:?} is not a YYYY-MM-DD date", s));
                out.k = cell::kind::integer;
                out.i = *d;
                return {};
            }
            default: break;
        }
        if (from_json) return wrong("is a string");
        // A string header filling a number or boolean column.
        if (c.type == column_type::boolean) {
            if (s == "true" || s == "false") {
                out.k = cell::kind::boolean;
                out.i = s == "true";
                return {};
            }
            return wrong(fmt::format("{:?} is not true or false", s));
        }
        if (auto v = parse_int(s)) return integer(*v);
        if (c.type == column_type::float32 || c.type == column_type::float64) {
            double d = 0;
            auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
            if (ec == std::errc{} && p == s.data() + s.size()) return real(d);
        }
        return wrong(fmt::format("{:?} is not a number", s));
    }

    /// A text cell made here.
    void made_text(const std::string& t) {
        out.k = cell::kind::bytes;
        out.s = t;
    }

    /// The partition id or the offset: decimal text for a string column, else an integer.
    result<void> unsigned_value(std::uint64_t v) {
        if (c.type == column_type::string) {
            std::string& t = texts.next();
            fmt::format_to(std::back_inserter(t), "{}", v);
            made_text(t);
            return {};
        }
        if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            return wrong(fmt::format("{} is beyond int64", v));
        return integer(static_cast<std::int64_t>(v));
    }

    /// The message id: 16 big-endian bytes for a binary column, else 32 hex digits.
    void id() {
        std::string& t = texts.next();
        if (c.type == column_type::binary) {
            for (int b = 15; b >= 0; --b) t += static_cast<char>(static_cast<unsigned char>(m.id >> (8 * b)));
        } else {
            json::append_hex128(t, m.id);
        }
        made_text(t);
    }

    /// The whole payload: minified checked JSON for a json column, else text.
    result<void> payload(std::string_view p) {
        if (c.type != column_type::json) return text(p, false);
        std::string& t = texts.next();
        json::payload_checker chk;  // rare path: the whole payload as checked JSON
        if (!chk.append_minified(p, t)) return wrong(fmt::format("the payload is not JSON ({})", chk.last_error()));
        made_text(t);
        return {};
    }

    /// Every user header as a map entry, keys and values as the JSON envelope writes them.
    void headers(const std::vector<proto::header_view>& hdrs,
                 std::vector<std::pair<std::string_view, std::string_view>>& entries) {
        out.k = cell::kind::map;
        for (const auto& h : hdrs) {
            std::string& k = texts.next();
            if (h.key_kind != proto::header_kind::string) {
                k += proto::header_kind_name(h.key_kind);
                k += ':';
            }
            json::append_header_value(k, h.key_kind, h.key, false);
            std::string& v = texts.next();
            json::append_header_value(v, h.value_kind, h.value, false);
            entries.emplace_back(k, v);
        }
    }

    /// One user header's value, by its kind.
    result<void> header(const proto::header_view& h) {
        using proto::header_kind;
        const proto::bytes_view v = h.value;
        switch (h.value_kind) {
            case header_kind::string:
                if (c.type != column_type::json) return text(proto::as_text(v), false);
                {
                    std::string& t = texts.next();
                    json::append_string(t, proto::as_text(v));
                    made_text(t);
                }
                return {};
            case header_kind::raw:
                if (c.type != column_type::binary) return wrong("is a raw header (use binary)");
                out.k = cell::kind::bytes, out.s = proto::as_text(v);
                return {};
            case header_kind::boolean:
                if (c.type != column_type::boolean) return wrong("is a boolean");
                out.k = cell::kind::boolean, out.i = std::to_integer<unsigned char>(v[0]) != 0;
                return {};
            case header_kind::float32: return real(load<float>(v));
            case header_kind::float64: return real(load<double>(v));
            case header_kind::int8: return integer(load<std::int8_t>(v));
            case header_kind::int16: return integer(load<std::int16_t>(v));
            case header_kind::int32: return integer(load<std::int32_t>(v));
            case header_kind::int64: return integer(load<std::int64_t>(v));
            case header_kind::uint8: return integer(load<std::uint8_t>(v));
            case header_kind::uint16: return integer(load<std::uint16_t>(v));
            case header_kind::uint32: return integer(load<std::uint32_t>(v));
            case header_kind::uint64: {
                const auto u = load<std::uint64_t>(v);
                if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
                    return wrong(fmt::format("{} is beyond int64", u));
                return integer(static_cast<std::int64_t>(u));
            }
            case header_kind::int128:
            case header_kind::uint128: return wrong("is a 128-bit integer header (no column type holds it)");
        }
        return {};
    }

    /// A JSON value found in the payload (not null).
    result<void> json_value(simdjson::dom::element e) {
        if (c.type == column_type::json) {
            std::string& t = texts.next();
            t = simdjson::minify(e);
            made_text(t);
            return {};
        }
        switch (e.type()) {
            case simdjson::dom::element_type::INT64: return integer(e.get_int64().value_unsafe());
            case simdjson::dom::element_type::UINT64:
                if (c.type == column_type::float32 || c.type == column_type::float64)
                    return real(static_cast<double>(e.get_uint64().value_unsafe()));
                return wrong(fmt::format("{} is beyond int64", e.get_uint64().value_unsafe()));
            case simdjson::dom::element_type::DOUBLE: return real(e.get_double().value_unsafe());
            case simdjson::dom::element_type::STRING: return text(e.get_string().value_unsafe(), true);
            case simdjson::dom::element_type::BOOL:
                if (c.type != column_type::boolean) return wrong("is a boolean");
                out.k = cell::kind::boolean, out.i = e.get_bool().value_unsafe() ? 1 : 0;
                return {};
            default: return wrong(fmt::format("is {}", kind_text(e.type())));
        }
    }
};

/// The value at the dotted path's `names` below `e` (object keys, array indexes); false when
/// one step is missing.
bool descend(simdjson::dom::element& e, const std::vector<std::string>& names) {
    for (const std::string& name : names) {
        simdjson::dom::element next;
        if (e.is_object()) {
            if (e.get_object().value_unsafe().at_key(name).get(next)) return false;
        } else if (e.is_array()) {
            std::size_t idx = 0;
            auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), idx);
            if (ec != std::errc{} || p != name.data() + name.size() || e.get_array().value_unsafe().at(idx).get(next))
                return false;
        } else {
            return false;
        }
        e = next;
    }
    return true;
}

}  // namespace

result<std::span<const cell>> row_reader::read(const proto::message_view& m, std::string_view stream,
                                               std::string_view topic, std::uint32_t partition) {
    impl& st = *impl_;
    st.texts.used = 0;
    st.entries.clear();
    simdjson::dom::element doc;
    const std::string_view payload = proto::as_text(m.payload);
    if (st.needs_json) {
        if (auto err = st.parser.parse(payload.data(), payload.size()).get(doc); err)
            return error{errc::bad_payload,
                         fmt::format("offset {}: the schema reads payload fields but the payload is not JSON ({})",
                                     m.offset, simdjson::error_message(err))};
    }
    if (st.needs_headers) {
        st.hdrs.clear();
        proto::header_reader reader{m.user_headers};
        for (;;) {
            auto next = reader.next();
            if (!next) return error{errc::bad_headers, fmt::format("offset {}: {}", m.offset, next.error().message())};
            if (!*next) break;
            st.hdrs.push_back(**next);
        }
    }
    for (std::size_t i = 0; i < cols_.size(); ++i) {
        const column& c = cols_[i];
        cell& out = st.row[i];
        out = cell{};
        filler f{c, m, out, st.texts};
        result<void> r;
        switch (c.source) {
            case column_source::stream:
            case column_source::topic: r = f.text(c.source == column_source::stream ? stream : topic, false); break;
            case column_source::partition: r = f.unsigned_value(partition); break;
            case column_source::offset: r = f.unsigned_value(m.offset); break;
            case column_source::id: f.id(); break;
            case column_source::timestamp:
            case column_source::origin_timestamp: {
                const std::uint64_t us = c.source == column_source::timestamp ? m.timestamp : m.origin_timestamp;
                if (us > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
                    r = f.wrong(fmt::format("{} is beyond int64", us));
                    break;
                }
                out.k = cell::kind::integer;
                out.i = c.type == column_type::timestamp_ms ? static_cast<std::int64_t>(us / 1000)
                                                            : static_cast<std::int64_t>(us);
                break;
            }
            case column_source::payload: r = f.payload(payload); break;
            case column_source::headers: f.headers(st.hdrs, st.entries); break;
            case column_source::header: {
                const proto::header_view* found = nullptr;
                for (const auto& h : st.hdrs)
                    if (h.key_kind == proto::header_kind::string && h.key_text() == c.path) found = &h;
                if (found) r = f.header(*found);  // else null
                break;
            }
            case column_source::payload_root:
            case column_source::payload_path: {
                simdjson::dom::element e = doc;
                if (c.source == column_source::payload_path && !descend(e, st.paths[i])) break;  // null
                if (!e.is_null()) r = f.json_value(e);
                break;
            }
        }
        if (!r) return r.error();
        if (out.k == cell::kind::null && !c.nullable) return f.wrong(fmt::format("has no value (nullable: false)"));
    }
    if (!st.entries.empty()) {
        for (std::size_t i = 0; i < cols_.size(); ++i)
            if (st.row[i].k == cell::kind::map) st.row[i].entries = st.entries;
    }
    return std::span<const cell>{st.row};
}

}  // namespace iss::format

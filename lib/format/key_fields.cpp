// SPDX-License-Identifier: Apache-2.0
#include "format/key_fields.hpp"

#include "common/rfc3339.hpp"
#include "proto/message.hpp"

#include <date/tz.h>
#include <fmt/format.h>
#include <simdjson.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <iterator>

namespace iss::format {

namespace {

template <class T>
T load(proto::bytes_view b) {
    T v{};
    std::memcpy(&v, b.data(), sizeof v);  // little-endian hosts only (as proto/)
    return v;
}

/// A header value as key text (strings as text, numbers decimal, bool, other kinds hex).
std::string value_text(proto::header_kind k, proto::bytes_view v) {
    using proto::header_kind;
    std::string out;
    auto it = std::back_inserter(out);
    switch (k) {
        case header_kind::string: out.assign(proto::as_text(v)); break;
        case header_kind::boolean: out = std::to_integer<unsigned char>(v[0]) != 0 ? "true" : "false"; break;
        case header_kind::int8: fmt::format_to(it, "{}", load<std::int8_t>(v)); break;
        case header_kind::int16: fmt::format_to(it, "{}", load<std::int16_t>(v)); break;
        case header_kind::int32: fmt::format_to(it, "{}", load<std::int32_t>(v)); break;
        case header_kind::int64: fmt::format_to(it, "{}", load<std::int64_t>(v)); break;
        case header_kind::uint8: fmt::format_to(it, "{}", load<std::uint8_t>(v)); break;
        case header_kind::uint16: fmt::format_to(it, "{}", load<std::uint16_t>(v)); break;
        case header_kind::uint32: fmt::format_to(it, "{}", load<std::uint32_t>(v)); break;
        case header_kind::uint64: fmt::format_to(it, "{}", load<std::uint64_t>(v)); break;
        case header_kind::float32: fmt::format_to(it, "{}", load<float>(v)); break;
        case header_kind::float64: fmt::format_to(it, "{}", load<double>(v)); break;
        case header_kind::int128:
        case header_kind::uint128:
        case header_kind::raw:
            // 128-bit integers and raw bytes: hex of the bytes as stored (little-endian for
            // the integers), which needs no big-number printing and is stable.
            for (const std::byte b : v) fmt::format_to(it, "{:02x}", std::to_integer<unsigned>(b));
            break;
    }
    return out;
}

/// "a.b.0" -> "/a/b/0" (RFC 6901: '~' -> "~0", '/' -> "~1").
std::string to_json_pointer(std::string_view path) {
    std::string p;
    p.reserve(path.size() + 1);
    p += '/';
    for (const char c : path) {
        if (c == '.') p += '/';
        else if (c == '~') p += "~0";
        else if (c == '/') p += "~1";
        else p += c;
    }
    return p;
}

/// A record time in ms (a JSON number or a decimal header), as µs; nullopt when out of range.
std::optional<std::int64_t> ms_to_us(double ms) noexcept {
    if (!std::isfinite(ms) || std::fabs(ms) > 9.2e15) return std::nullopt;
    return static_cast<std::int64_t>(std::llround(ms * 1000.0));
}

}  // namespace

result<time_source> parse_time_source(std::string_view text) {
    if (text == "timestamp") return time_source{time_source::kind::timestamp, {}};
    if (text == "origin_timestamp") return time_source{time_source::kind::origin_timestamp, {}};
    if (text.starts_with("field:") && text.size() > 6)
        return time_source{time_source::kind::field, std::string{text.substr(6)}};
    if (text.starts_with("header:") && text.size() > 7)
        return time_source{time_source::kind::header, std::string{text.substr(7)}};
    return error{errc::bad_key_template,
                 fmt::format("'{}' is not a time source: use timestamp (Iggy's append time), origin_timestamp, "
                             "field:PATH or header:NAME",
                             text)};
}

result<std::optional<std::string>> header_text(proto::bytes_view block, std::string_view name) {
    proto::header_reader reader{block};
    for (;;) {
        auto next = reader.next();
        if (!next) return error{errc::bad_headers, next.error().message()};
        if (!*next) return std::optional<std::string>{};
        const proto::header_view& h = **next;
        if (h.key_kind == proto::header_kind::string && h.key_text() == name)
            return std::optional<std::string>{value_text(h.value_kind, h.value)};
    }
}

namespace {
std::chrono::sys_seconds floor_seconds(std::int64_t t_us) {
    using namespace std::chrono;
    return sys_seconds{seconds{t_us >= 0 ? t_us / 1'000'000 : -((-t_us + 999'999) / 1'000'000)}};
}

local_time fields_of(date::local_seconds local) {
    using namespace std::chrono;
    const auto day = date::floor<date::days>(local);
    const date::year_month_day ymd{day};
    const date::hh_mm_ss<seconds> tod{local - day};
    return local_time{static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                      static_cast<unsigned>(ymd.day()), static_cast<unsigned>(tod.hours().count()),
                      static_cast<unsigned>(tod.minutes().count())};
}

std::int64_t bucket_of(std::chrono::sys_seconds s, date::local_seconds local, time_unit unit) {
    using namespace std::chrono;
    switch (unit) {
        case time_unit::none: return 0;
        case time_unit::minute:
        case time_unit::hour: {
            // The UTC instant the local minute/hour began: the local time elapsed since the
            // floor, taken off the instant. Two local 02 hours of a fall-back night differ.
            const auto floor = unit == time_unit::hour ? date::floor<hours>(local) : date::floor<minutes>(local);
            return (s - (local - floor)).time_since_epoch().count();
        }
        case time_unit::day: return date::floor<date::days>(local).time_since_epoch().count();
        case time_unit::month:
        case time_unit::year: {
            const date::year_month_day ymd{date::floor<date::days>(local)};
            const std::int64_t y = static_cast<int>(ymd.year());
            return unit == time_unit::year ? y : y * 12 + static_cast<unsigned>(ymd.month());
        }
    }
    return 0;
}
}  // namespace

local_time to_local_time(std::int64_t t_us, const date::time_zone& tz) {
    return fields_of(tz.to_local(floor_seconds(t_us)));
}

std::int64_t time_bucket(std::int64_t t_us, time_unit unit, const date::time_zone& tz) {
    const auto s = floor_seconds(t_us);
    return bucket_of(s, tz.to_local(s), unit);
}

struct record_reader::impl {
    /// The zone's offset over [begin, end): most records fall in the same one, so the
    /// time-zone database is asked only when a record leaves it.
    std::chrono::sys_seconds begin{std::chrono::seconds::max()};
    std::chrono::sys_seconds end{std::chrono::seconds::min()};
    std::chrono::seconds offset{0};
    simdjson::ondemand::parser parser;
    std::string padded;  ///< the payload with SIMDJSON_PADDING bytes of room
    std::string pointer;
};

record_reader::record_reader(const key_template& t, time_source source, const date::time_zone* tz, std::string missing)
    : t_{t}, source_{std::move(source)}, tz_{tz}, missing_{std::move(missing)}, impl_{std::make_unique<impl>()} {}
record_reader::record_reader(record_reader&&) noexcept = default;
record_reader& record_reader::operator=(record_reader&&) noexcept = default;
record_reader::~record_reader() = default;

std::optional<std::string> record_reader::field_text(proto::bytes_view payload, std::string_view path) {
    auto& p = impl_->padded;
    p.assign(proto::as_text(payload));
    const std::size_t len = p.size();
    p.resize(len + simdjson::SIMDJSON_PADDING);
    simdjson::ondemand::document doc;
    if (impl_->parser.iterate(p.data(), len, p.size()).get(doc) != simdjson::SUCCESS) return std::nullopt;
    simdjson::ondemand::value v;
    if (doc.at_pointer(to_json_pointer(path)).get(v) != simdjson::SUCCESS) return std::nullopt;
    simdjson::ondemand::json_type type;
    if (v.type().get(type) != simdjson::SUCCESS) return std::nullopt;
    switch (type) {
        case simdjson::ondemand::json_type::string: {
            std::string_view sv;
            if (v.get_string().get(sv) != simdjson::SUCCESS) return std::nullopt;
            return std::string{sv};
        }
        case simdjson::ondemand::json_type::number:
        case simdjson::ondemand::json_type::boolean: {
            std::string_view raw = v.raw_json_token();
            while (!raw.empty() &&
                   (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t'))
                raw.remove_suffix(1);
            if (type == simdjson::ondemand::json_type::boolean && raw != "true" && raw != "false") return std::nullopt;
            return std::string{raw};
        }
        default: return std::nullopt;
    }
}

result<std::int64_t> record_reader::record_time_us(const record_input& in) {
    auto bad = [this](std::string_view why) {
        const std::string_view src = source_.what == time_source::kind::field ? "field" : "header";
        return error{
            errc::bad_record_time,
            fmt::format("naming.time_source {}:{}: {} (expected epoch milliseconds as a number, or an RFC 3339 "
                        "string)",
                        src, source_.arg, why)};
    };
    switch (source_.what) {
        case time_source::kind::timestamp: return static_cast<std::int64_t>(in.timestamp_us);
        case time_source::kind::origin_timestamp: return static_cast<std::int64_t>(in.origin_timestamp_us);
        case time_source::kind::field: {
            auto v = field_text(in.payload, source_.arg);
            if (!v) return bad("missing (or the payload is not JSON)");
            // field_text gives a number as written and a string unescaped; tell them apart by
            // trying RFC 3339 first (a number never matches it).
            if (auto t = iss::parse_rfc3339_us(*v)) return *t;
            double ms = 0;
            const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), ms);
            if (ec != std::errc{} || end != v->data() + v->size()) return bad(fmt::format("'{}' is not a time", *v));
            if (auto us = ms_to_us(ms)) return *us;
            return bad("out of range");
        }
        case time_source::kind::header: {
            proto::header_reader reader{in.user_headers};
            for (;;) {
                auto next = reader.next();
                if (!next) return error{errc::bad_headers, next.error().message()};
                if (!*next) return bad("missing");
                const proto::header_view& h = **next;
                if (h.key_kind != proto::header_kind::string || h.key_text() != source_.arg) continue;
                using proto::header_kind;
                switch (h.value_kind) {
                    case header_kind::string: {
                        const std::string_view s = h.value_text();
                        if (auto t = iss::parse_rfc3339_us(s)) return *t;
                        double ms = 0;
                        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), ms);
                        if (ec == std::errc{} && end == s.data() + s.size())
                            if (auto us = ms_to_us(ms)) return *us;
                        return bad(fmt::format("'{}' is not a time", s));
                    }
                    case header_kind::int32: return std::int64_t{load<std::int32_t>(h.value)} * 1000;
                    case header_kind::int64: return load<std::int64_t>(h.value) * 1000;
                    case header_kind::uint32: return std::int64_t{load<std::uint32_t>(h.value)} * 1000;
                    case header_kind::uint64: return static_cast<std::int64_t>(load<std::uint64_t>(h.value)) * 1000;
                    case header_kind::float64:
                        if (auto us = ms_to_us(load<double>(h.value))) return *us;
                        return bad("out of range");
                    default:
                        return bad(fmt::format("a {} header is not a time", proto::header_kind_name(h.value_kind)));
                }
            }
        }
    }
    return bad("unknown source");
}

result<void> record_reader::read(const record_input& in, record_values& out, std::optional<std::int64_t>& bucket) {
    out.missing = missing_;
    out.time.reset();
    bucket.reset();
    const time_unit unit = t_.finest_time();
    if (unit != time_unit::none) {
        auto t = record_time_us(in);
        if (!t) return t.error();
        const auto sec = floor_seconds(*t);
        if (sec < impl_->begin || sec >= impl_->end) {
            const auto info = tz_->get_info(sec);
            impl_->begin = info.begin;
            impl_->end = info.end;
            impl_->offset = info.offset;
        }
        const date::local_seconds local{sec.time_since_epoch() + impl_->offset};
        out.time = fields_of(local);
        bucket = bucket_of(sec, local, unit);
    }
    const auto& args = t_.record_args();
    out.args.resize(args.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i].kind == record_arg_kind::header) {
            auto h = header_text(in.user_headers, args[i].name);
            if (!h) return h.error();
            out.args[i] = std::move(*h);
        } else {
            out.args[i] = field_text(in.payload, args[i].name);
        }
    }
    return {};
}

}  // namespace iss::format

// SPDX-License-Identifier: Apache-2.0
// Partition transforms, the bucket hash and partition paths (partition.hpp cites the spec).
#include "iceberg/partition.hpp"

#include "common/base64.hpp"
#include "common/rfc3339.hpp"
#include "format/json.hpp"
#include "iceberg/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <chrono>
#include <cstring>
#include <limits>
#include <set>
#include <variant>

namespace iss::iceberg {

namespace {

constexpr std::int64_t us_per_hour = 3'600'000'000LL;
constexpr std::int64_t us_per_day = 24 * us_per_hour;

std::int64_t floor_div(std::int64_t a, std::int64_t b) noexcept {
    const std::int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

std::chrono::year_month_day civil(std::int64_t days) {
    return std::chrono::year_month_day{std::chrono::sys_days{std::chrono::days{days}}};
}

/// Days since the epoch of a date or timestamptz value.
std::int64_t day_of(type_id t, std::int64_t v) noexcept { return t == type_id::date ? v : floor_div(v, us_per_day); }

void put_le(std::string& out, std::uint64_t v, int bytes) {
    for (int b = 0; b < bytes; ++b) out += static_cast<char>((v >> (8 * b)) & 0xFF);
}

/// The first `w` code points of UTF-8 text (a truncated code point is never split).
std::string_view utf8_prefix(std::string_view s, int w) {
    std::size_t i = 0;
    for (int n = 0; n < w && i < s.size(); ++n) {
        ++i;
        while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
    }
    return s.substr(0, i);
}

/// java.net.URLEncoder (UTF-8): the reference implementation's escaping of partition paths.
void append_url_encoded(std::string& out, std::string_view s) {
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
            c == '*' || c == '_')
            out += ch;
        else if (c == ' ') out += '+';
        else out += fmt::format("%{:02X}", c);
    }
}

bool bucketable(type_id t) noexcept {
    return t == type_id::int_ || t == type_id::long_ || t == type_id::date || t == type_id::timestamptz ||
           t == type_id::string || t == type_id::binary;
}

bool allowed(transform tr, type_id t) noexcept {
    switch (tr) {
        case transform::identity: return t != type_id::map;
        case transform::year:
        case transform::month:
        case transform::day: return t == type_id::date || t == type_id::timestamptz;
        case transform::hour: return t == type_id::timestamptz;
        case transform::bucket: return bucketable(t);
        case transform::truncate:
            return t == type_id::int_ || t == type_id::long_ || t == type_id::string || t == type_id::binary;
    }
    return false;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    return s;
}

constexpr std::string_view forms = "identity(c), year(c), month(c), day(c), hour(c), bucket(N, c), truncate(W, c)";

struct parsed {
    transform tr = transform::identity;
    int param = 0;
    std::string column;
};

/// Parses one entry's syntax; the problem sentence on failure.
std::variant<parsed, std::string> parse_entry(std::string_view text) {
    const std::string_view t = trim(text);
    const auto open = t.find('(');
    if (open == std::string_view::npos || t.back() != ')')
        return fmt::format("`{}` is not a transform call; use one of {}", text, forms);
    const std::string_view name = trim(t.substr(0, open));
    std::string_view args = t.substr(open + 1, t.size() - open - 2);
    parsed p;
    static constexpr std::pair<std::string_view, transform> names[] = {
        {"identity", transform::identity}, {"year", transform::year}, {"month", transform::month},
        {"day", transform::day},           {"hour", transform::hour}, {"bucket", transform::bucket},
        {"truncate", transform::truncate}};
    bool known = false;
    for (const auto& [n, tr] : names)
        if (n == name) {
            p.tr = tr;
            known = true;
        }
    if (!known) return fmt::format("unknown transform `{}` in `{}`; use one of {}", name, text, forms);
    if (p.tr == transform::bucket || p.tr == transform::truncate) {
        const auto comma = args.find(',');
        if (comma == std::string_view::npos)
            return fmt::format("`{}`: {} takes a number and a column: {}(N, c)", text, name, name);
        const std::string_view num = trim(args.substr(0, comma));
        long long n = 0;
        const auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), n);
        const std::string_view what = p.tr == transform::bucket ? "the bucket count N" : "the width W";
        const bool digits = !num.empty() && end == num.data() + num.size() && num.front() != '-';
        if (digits && (ec == std::errc::result_out_of_range || n > std::numeric_limits<int>::max()))
            // The spec's transform parameter is an int (Iceberg spec, "Partition Transforms").
            return fmt::format("`{}`: {} is too large: `{}` is above {}, the largest Iceberg int", text, what, num,
                               std::numeric_limits<int>::max());
        if (ec != std::errc{} || end != num.data() + num.size() || n < 1)
            return fmt::format("`{}`: {} must be a positive integer, not `{}`", text, what, num);
        p.param = static_cast<int>(n);
        args = args.substr(comma + 1);
    }
    p.column = std::string{trim(args)};
    if (p.column.empty() || p.column.find(',') != std::string::npos)
        return fmt::format("`{}`: {} takes one column name", text, name);
    return p;
}

std::string_view suffix(transform tr) {
    switch (tr) {
        case transform::identity: return "";
        case transform::year: return "_year";
        case transform::month: return "_month";
        case transform::day: return "_day";
        case transform::hour: return "_hour";
        case transform::bucket: return "_bucket";
        case transform::truncate: return "_trunc";
    }
    return "";
}

/// Builds the spec, collecting problems (the fields of columns that exist and fit).
partition_spec build(std::span<const std::string> entries, std::span<const format::column> cols,
                     std::vector<std::string>& problems, std::span<const std::string> unchecked = {}) {
    partition_spec spec;
    std::set<std::string> names;
    for (const auto& e : entries) {
        auto r = parse_entry(e);
        if (auto* why = std::get_if<std::string>(&r)) {
            problems.push_back(std::move(*why));
            continue;
        }
        const auto& p = std::get<parsed>(r);
        std::size_t col = cols.size();
        for (std::size_t i = 0; i < cols.size(); ++i)
            if (cols[i].name == p.column) col = i;
        if (col == cols.size() && std::find(unchecked.begin(), unchecked.end(), p.column) != unchecked.end())
            continue;  // a column with problems of its own
        if (col == cols.size()) {
            std::string known;
            for (const auto& c : cols) known += (known.empty() ? "" : ", ") + c.name;
            problems.push_back(fmt::format("`{}`: no column `{}` in format.schema (columns: {})", e, p.column, known));
            continue;
        }
        const auto t = iceberg_type(cols[col].type);
        if (!t) continue;  // reported by unsupported_columns
        if (!allowed(p.tr, *t)) {
            problems.push_back(fmt::format("`{}`: {} does not apply to column `{}` of type {}", e,
                                           std::string{trim(e.substr(0, e.find('(')))}, p.column,
                                           format::to_string(cols[col].type)));
            continue;
        }
        partition_field f;
        f.name = p.column + std::string{suffix(p.tr)};
        f.transform = p.tr;
        f.param = p.param;
        f.source_id = static_cast<int>(col) + 1;
        f.column = col;
        f.source_type = *t;
        f.field_id = 1000 + static_cast<int>(spec.fields.size());
        if (!names.insert(f.name).second) {
            problems.push_back(fmt::format("`{}`: partition field `{}` is already defined", e, f.name));
            continue;
        }
        spec.fields.push_back(std::move(f));
    }
    return spec;
}

}  // namespace

value from_cell(const format::cell& c) {
    using k = format::cell::kind;
    switch (c.k) {
        case k::null:
        case k::map: return {};
        case k::integer:
        case k::boolean: return value::of_int(c.i);
        case k::real: return value{false, 0, c.d, {}};
        case k::bytes: return value::of_bytes(std::string{c.s});
    }
    return {};
}

type_id partition_field::result_type() const noexcept {
    switch (transform) {
        case transform::identity:
        case transform::truncate: return source_type;
        case transform::day: return type_id::date;
        case transform::year:
        case transform::month:
        case transform::hour:
        case transform::bucket: return type_id::int_;
    }
    return type_id::int_;
}

std::string partition_field::transform_text() const {
    switch (transform) {
        case transform::identity: return "identity";
        case transform::year: return "year";
        case transform::month: return "month";
        case transform::day: return "day";
        case transform::hour: return "hour";
        case transform::bucket: return fmt::format("bucket[{}]", param);
        case transform::truncate: return fmt::format("truncate[{}]", param);
    }
    return "identity";
}

std::int32_t murmur3_x86_32(std::string_view bytes) noexcept {
    constexpr std::uint32_t c1 = 0xcc9e2d51, c2 = 0x1b873593;
    std::uint32_t h = 0;
    const std::size_t blocks = bytes.size() / 4;
    for (std::size_t i = 0; i < blocks; ++i) {
        std::uint32_t k = 0;
        for (int b = 3; b >= 0; --b)
            k = (k << 8) | static_cast<unsigned char>(bytes[i * 4 + static_cast<std::size_t>(b)]);
        k *= c1;
        k = std::rotl(k, 15);
        k *= c2;
        h ^= k;
        h = std::rotl(h, 13);
        h = h * 5 + 0xe6546b64;
    }
    std::uint32_t k = 0;
    const std::size_t tail = blocks * 4;
    switch (bytes.size() & 3) {
        case 3: k ^= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[tail + 2])) << 16; [[fallthrough]];
        case 2: k ^= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[tail + 1])) << 8; [[fallthrough]];
        case 1:
            k ^= static_cast<unsigned char>(bytes[tail]);
            k *= c1;
            k = std::rotl(k, 15);
            k *= c2;
            h ^= k;
            break;
        default: break;
    }
    h ^= static_cast<std::uint32_t>(bytes.size());
    h ^= h >> 16;
    h *= 0x85ebca6b;
    h ^= h >> 13;
    h *= 0xc2b2ae35;
    h ^= h >> 16;
    return static_cast<std::int32_t>(h);
}

std::int32_t bucket_hash(type_id t, const value& v) noexcept {
    if (t == type_id::string || t == type_id::binary) return murmur3_x86_32(v.s);
    char b[8];
    const auto u = static_cast<std::uint64_t>(v.i);
    for (int i = 0; i < 8; ++i) b[i] = static_cast<char>((u >> (8 * i)) & 0xFF);
    return murmur3_x86_32(std::string_view{b, 8});
}

value apply(const partition_field& f, const value& v) {
    if (v.null) return {};
    const type_id t = f.source_type;
    switch (f.transform) {
        case transform::identity: return v;
        case transform::bucket:
            return value::of_int(
                (static_cast<std::int64_t>(bucket_hash(t, v)) & std::numeric_limits<std::int32_t>::max()) % f.param);
        case transform::truncate:
            if (t == type_id::string) return value::of_bytes(std::string{utf8_prefix(v.s, f.param)});
            if (t == type_id::binary) return value::of_bytes(v.s.substr(0, static_cast<std::size_t>(f.param)));
            return value::of_int(v.i - (((v.i % f.param) + f.param) % f.param));
        case transform::day: return value::of_int(day_of(t, v.i));
        case transform::hour: return value::of_int(floor_div(v.i, us_per_hour));
        case transform::year:
        case transform::month: {
            const auto ymd = civil(day_of(t, v.i));
            const std::int64_t years = static_cast<int>(ymd.year()) - 1970;
            if (f.transform == transform::year) return value::of_int(years);
            return value::of_int(years * 12 + static_cast<unsigned>(ymd.month()) - 1);
        }
    }
    return {};
}

std::string single_value(type_id t, const value& v) {
    std::string out;
    switch (t) {
        case type_id::boolean: out += static_cast<char>(v.i != 0 ? 1 : 0); break;
        case type_id::int_:
        case type_id::date: put_le(out, static_cast<std::uint32_t>(v.i), 4); break;
        case type_id::long_:
        case type_id::timestamptz: put_le(out, static_cast<std::uint64_t>(v.i), 8); break;
        case type_id::float_: put_le(out, std::bit_cast<std::uint32_t>(static_cast<float>(v.d)), 4); break;
        case type_id::double_: put_le(out, std::bit_cast<std::uint64_t>(v.d), 8); break;
        case type_id::string:
        case type_id::binary:
        case type_id::map: out = v.s; break;
    }
    return out;
}

std::string human_string(const partition_field& f, const value& v) {
    if (v.null) return "null";
    std::string out;
    switch (f.transform) {
        case transform::year: return fmt::format("{}", 1970 + v.i);
        case transform::month: {
            const std::int64_t y = 1970 + floor_div(v.i, 12);
            return fmt::format("{:04}-{:02}", y, v.i - floor_div(v.i, 12) * 12 + 1);
        }
        case transform::day: iss::append_rfc3339_date(out, v.i); return out;
        case transform::hour: {
            iss::append_rfc3339_date(out, floor_div(v.i, 24));
            return out + fmt::format("-{:02}", v.i - floor_div(v.i, 24) * 24);
        }
        case transform::bucket: return fmt::format("{}", v.i);
        case transform::identity:
        case transform::truncate: break;
    }
    switch (f.source_type) {
        case type_id::boolean: return v.i != 0 ? "true" : "false";
        case type_id::date: iss::append_rfc3339_date(out, v.i); return out;
        case type_id::timestamptz: format::append_timestamp(out, v.i, false); return out;
        case type_id::float_:
        case type_id::double_: format::json::append_number(out, v.d); return out;
        case type_id::binary: iss::append_base64(out, std::as_bytes(std::span{v.s.data(), v.s.size()})); return out;
        case type_id::string:
        case type_id::map: return v.s;
        case type_id::int_:
        case type_id::long_: return fmt::format("{}", v.i);
    }
    return out;
}

std::vector<value> partition_spec::values(std::span<const format::cell> row) const {
    std::vector<value> out;
    out.reserve(fields.size());
    for (const auto& f : fields) out.push_back(apply(f, from_cell(row[f.column])));
    return out;
}

std::string partition_spec::path(std::span<const value> v) const {
    std::string out;
    for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i > 0) out += '/';
        append_url_encoded(out, fields[i].name);
        out += '=';
        append_url_encoded(out, human_string(fields[i], v[i]));
    }
    return out;
}

std::string partition_spec::fields_json() const {
    std::string out = "[";
    for (std::size_t i = 0; i < fields.size(); ++i) {
        const auto& f = fields[i];
        if (i > 0) out += ',';
        out += R"({"name":)";
        format::json::append_string(out, f.name);
        out += fmt::format(R"(,"transform":"{}","source-id":{},"field-id":{}}})", f.transform_text(), f.source_id,
                           f.field_id);
    }
    return out + "]";
}

std::string partition_spec::json() const {
    return fmt::format(R"({{"spec-id":{},"fields":{}}})", spec_id, fields_json());
}

int partition_spec::last_partition_id() const noexcept { return fields.empty() ? 999 : fields.back().field_id; }

std::vector<std::string> check_partition_by(std::span<const std::string> entries, std::span<const format::column> cols,
                                            std::span<const std::string> unchecked) {
    std::vector<std::string> problems;
    (void)build(entries, cols, problems, unchecked);
    return problems;
}

result<partition_spec> parse_partition_by(std::span<const std::string> entries, const table_schema& schema) {
    std::vector<format::column> cols;
    for (const auto& f : schema.fields) {
        format::column c;
        c.name = f.name;
        c.type = f.column;
        cols.push_back(std::move(c));
    }
    std::vector<std::string> problems;
    auto spec = build(entries, cols, problems);
    if (!problems.empty()) {
        std::string all;
        for (const auto& p : problems) all += (all.empty() ? "" : "; ") + p;
        return error{errc::bad_partition_spec, all};
    }
    for (auto& f : spec.fields) f.source_id = schema.fields[f.column].id;
    return spec;
}

}  // namespace iss::iceberg

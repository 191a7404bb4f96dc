// SPDX-License-Identifier: Apache-2.0
#include "iceberg/stats.hpp"

#include <cmath>

namespace iss::iceberg {

namespace {

constexpr std::size_t bound_bytes = 16;

/// The longest prefix of at most `n` bytes that ends at a UTF-8 code point boundary.
std::string utf8_cut(const std::string& s, std::size_t n) {
    if (s.size() <= n) return s;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
    return s.substr(0, n);
}

std::optional<std::string> upper_of(type_id t, const std::string& s) {
    if (s.size() <= bound_bytes) return s;
    std::string p = t == type_id::string ? utf8_cut(s, bound_bytes) : s.substr(0, bound_bytes);
    while (!p.empty()) {
        auto& last = p.back();
        const auto u = static_cast<unsigned char>(last);
        // in a string only an ASCII byte below 0x7F can be incremented and stay UTF-8
        if ((t == type_id::string && u < 0x7F) || (t == type_id::binary && u < 0xFF)) {
            last = static_cast<char>(u + 1);
            return p;
        }
        if (t == type_id::string) return std::nullopt;
        p.pop_back();
    }
    return std::nullopt;
}

}  // namespace

int compare(type_id t, const value& a, const value& b) noexcept {
    switch (t) {
        case type_id::float_:
        case type_id::double_: {
            if (a.d < b.d) return -1;
            if (a.d > b.d) return 1;
            return static_cast<int>(std::signbit(b.d)) - static_cast<int>(std::signbit(a.d));
        }
        case type_id::string:
        case type_id::binary:
        case type_id::map: {
            const int c = std::string_view{a.s}.compare(b.s);  // char_traits<char> compares as unsigned
            return c < 0 ? -1 : c > 0 ? 1 : 0;
        }
        default: return a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
    }
}

stats_collector::stats_collector(const table_schema& schema) : fields_{schema.fields}, cols_(schema.fields.size()) {}

void stats_collector::add(std::span<const format::cell> row) {
    for (std::size_t i = 0; i < fields_.size() && i < row.size(); ++i) {
        const auto t = fields_[i].type;
        if (t == type_id::map) continue;
        auto& c = cols_[i];
        ++c.values;
        const value v = from_cell(row[i]);
        if (v.null) {
            ++c.nulls;
            continue;
        }
        if ((t == type_id::float_ || t == type_id::double_) && std::isnan(v.d)) {
            ++c.nans;
            continue;
        }
        if (!c.min || compare(t, v, *c.min) < 0) c.min = v;
        if (!c.max || compare(t, v, *c.max) > 0) c.max = v;
    }
}

column_stats stats_collector::stats() const {
    column_stats s;
    for (std::size_t i = 0; i < fields_.size(); ++i) {
        const auto& f = fields_[i];
        if (f.type == type_id::map) continue;
        const auto& c = cols_[i];
        s.value_counts[f.id] = c.values;
        s.null_value_counts[f.id] = c.nulls;
        if (f.type == type_id::float_ || f.type == type_id::double_) s.nan_value_counts[f.id] = c.nans;
        if (!c.min) continue;
        if (f.type == type_id::string || f.type == type_id::binary) {
            s.lower_bounds[f.id] =
                f.type == type_id::string ? utf8_cut(c.min->s, bound_bytes) : c.min->s.substr(0, bound_bytes);
            if (auto u = upper_of(f.type, c.max->s)) s.upper_bounds[f.id] = std::move(*u);
        } else {
            s.lower_bounds[f.id] = single_value(f.type, *c.min);
            s.upper_bounds[f.id] = single_value(f.type, *c.max);
        }
    }
    return s;
}

void stats_collector::add_column_sizes(column_stats& s, std::span<const std::int64_t> leaf_bytes) const {
    std::vector<int> ids;
    for (const auto& f : fields_) {
        if (f.type == type_id::map) {
            ids.push_back(f.key_id);
            ids.push_back(f.value_id);
        } else {
            ids.push_back(f.id);
        }
    }
    if (ids.size() != leaf_bytes.size()) return;
    for (std::size_t k = 0; k < ids.size(); ++k) s.column_sizes[ids[k]] = leaf_bytes[k];
}

void stats_collector::reset() {
    for (auto& c : cols_) c = column{};
}

}  // namespace iss::iceberg

// SPDX-License-Identifier: Apache-2.0
#include "proto/types.hpp"

#include "proto/decoding.hpp"

#include <sstream>

namespace iss::proto {

std::ostream& operator<<(std::ostream& os, const identifier& id) { return os << to_string(id); }

std::string to_string(const identifier& id) {
    if (id.is_numeric()) return std::to_string(id.number());
    return "\"" + id.name() + "\"";
}

std::string field_text(const identifier& id) { return id.is_numeric() ? std::to_string(id.number()) : id.name(); }

result<void> append_identifier(writer& w, const identifier& id, std::string_view field) {
    if (id.is_numeric()) {
        w.u8(1);
        w.u8(4);
        w.u32(id.number());
        return {};
    }
    const std::string& n = id.name();
    if (n.empty() || n.size() > 255)
        return iss::error{errc::invalid_length, std::string{field} + " (name 1..255 bytes)"};
    w.u8(2);
    w.u8(static_cast<std::uint8_t>(n.size()));
    w.text(n);
    return {};
}

result<identifier> read_identifier(reader& r, std::string_view field) {
    auto kind = r.u8(field_path(field, "kind"));
    if (!kind) return kind.error();
    if (*kind != 1 && *kind != 2) return iss::error{errc::unknown_kind, field_path(field, "kind")};
    auto len = r.u8(field_path(field, "length"));
    if (!len) return len.error();
    if (*kind == 1) {
        if (*len != 4) return iss::error{errc::invalid_length, field_path(field, "length")};
        auto v = r.u32(field_path(field, "value"));
        if (!v) return v.error();
        return identifier::numeric(*v);
    }
    if (*len == 0) return iss::error{errc::invalid_length, field_path(field, "length")};
    auto b = r.bytes(*len, field_path(field, "value"));
    if (!b) return b.error();
    if (!is_valid_utf8(as_text(*b))) return iss::error{errc::invalid_utf8, field_path(field, "value")};
    return identifier::named(std::string{as_text(*b)});
}

result<void> append_consumer(writer& w, const consumer& c, std::string_view field) {
    if (c.kind != consumer_kind::consumer && c.kind != consumer_kind::group)
        return iss::error{errc::unknown_kind, field_path(field, "kind")};
    w.u8(static_cast<std::uint8_t>(c.kind));
    return append_identifier(w, c.id, field_path(field, "id"));
}

result<consumer> read_consumer(reader& r, std::string_view field) {
    auto kind = r.u8(field_path(field, "kind"));
    if (!kind) return kind.error();
    if (*kind != 1 && *kind != 2) return iss::error{errc::unknown_kind, field_path(field, "kind")};
    auto id = read_identifier(r, field_path(field, "id"));
    if (!id) return id.error();
    return consumer{static_cast<consumer_kind>(*kind), std::move(*id)};
}

void append_optional_partition(writer& w, std::optional<std::uint32_t> partition_id) {
    w.u8(partition_id ? 1 : 0);
    w.u32(partition_id.value_or(0));
}

result<std::optional<std::uint32_t>> read_optional_partition(reader& r, std::string_view field) {
    auto flag = r.u8(field_path(field, "flag"));
    if (!flag) return flag.error();
    auto v = r.u32(field);
    if (!v) return v.error();
    if (*flag == 1) return std::optional<std::uint32_t>{*v};
    return std::optional<std::uint32_t>{};
}

void append_polling_strategy(writer& w, const polling_strategy& s) {
    w.u8(static_cast<std::uint8_t>(s.kind));
    w.u64(s.value);
}

result<polling_strategy> read_polling_strategy(reader& r, std::string_view field) {
    auto kind = r.u8(field_path(field, "kind"));
    if (!kind) return kind.error();
    if (*kind < 1 || *kind > 5) return iss::error{errc::unknown_kind, field_path(field, "kind")};
    auto v = r.u64(field_path(field, "value"));
    if (!v) return v.error();
    return polling_strategy{static_cast<polling_kind>(*kind), *v};
}

result<void> append_partitioning(writer& w, const partitioning& p) {
    switch (p.kind) {
        case partitioning_kind::balanced:
            w.u8(1);
            w.u8(0);
            return {};
        case partitioning_kind::partition_id:
            w.u8(2);
            w.u8(4);
            w.u32(p.partition_id);
            return {};
        case partitioning_kind::messages_key:
            if (p.key.empty() || p.key.size() > 255)
                return iss::error{errc::invalid_length, "partitioning.key (1..255 bytes)"};
            w.u8(3);
            w.u8(static_cast<std::uint8_t>(p.key.size()));
            w.text(p.key);
            return {};
    }
    return iss::error{errc::unknown_kind, "partitioning.kind"};
}

result<partitioning> read_partitioning(reader& r, std::string_view field) {
    auto kind = r.u8(field_path(field, "kind"));
    if (!kind) return kind.error();
    if (*kind < 1 || *kind > 3) return iss::error{errc::unknown_kind, field_path(field, "kind")};
    auto len = r.u8(field_path(field, "length"));
    if (!len) return len.error();
    auto b = r.bytes(*len, field_path(field, "value"));
    if (!b) return b.error();
    partitioning p;
    p.kind = static_cast<partitioning_kind>(*kind);
    switch (p.kind) {
        case partitioning_kind::balanced:
            if (*len != 0) return iss::error{errc::invalid_value, field_path(field, "length")};
            break;
        case partitioning_kind::partition_id:
            if (*len != 4) return iss::error{errc::invalid_value, field_path(field, "length")};
            p.partition_id = load_le<std::uint32_t>(b->data());
            break;
        case partitioning_kind::messages_key: p.key.assign(as_text(*b)); break;
    }
    return p;
}

}  // namespace iss::proto

// SPDX-License-Identifier: Apache-2.0
// The column schema of the typed formats (lib/format/schema.hpp): type and source names,
// column checks, the envelope schema, and the date/time text helpers. Reading a message into
// a row is lib/format/row_reader.cpp.
#include "format/schema.hpp"

#include "common/rfc3339.hpp"
#include "format/json.hpp"

#include <fmt/format.h>

#include <array>
#include <iterator>
#include <set>

namespace iss::format {

namespace {

struct type_name {
    std::string_view name;
    column_type type;
};
constexpr std::array<type_name, 11> type_names{{
    {"string", column_type::string},
    {"int32", column_type::int32},
    {"int64", column_type::int64},
    {"float", column_type::float32},
    {"double", column_type::float64},
    {"boolean", column_type::boolean},
    {"timestamp_ms", column_type::timestamp_ms},
    {"timestamp_us", column_type::timestamp_us},
    {"date", column_type::date},
    {"binary", column_type::binary},
    {"json", column_type::json},
}};

struct source_name {
    std::string_view name;
    column_source source;
};
constexpr std::array<source_name, 8> envelope_sources{{
    {"stream", column_source::stream},
    {"topic", column_source::topic},
    {"partition", column_source::partition},
    {"offset", column_source::offset},
    {"id", column_source::id},
    {"timestamp", column_source::timestamp},
    {"origin_timestamp", column_source::origin_timestamp},
    {"payload", column_source::payload},
}};

}  // namespace

std::string_view to_string(column_type t) noexcept {
    if (t == column_type::map) return "map<string,string>";
    for (const auto& n : type_names)
        if (n.type == t) return n.name;
    return "?";
}

std::optional<column_type> parse_column_type(std::string_view s) noexcept {
    for (const auto& n : type_names)
        if (n.name == s) return n.type;
    return std::nullopt;
}

std::string from_text(const column& c) {
    switch (c.source) {
        case column_source::payload_path: return "payload:" + c.path;
        case column_source::payload_root: return "payload:.";
        case column_source::header: return "header:" + c.path;
        case column_source::headers: return "headers";
        default: break;
    }
    for (const auto& s : envelope_sources)
        if (s.source == c.source) return std::string{s.name};
    return "?";
}

std::vector<std::string> make_column(std::string_view name, std::string_view type, std::string_view from, bool nullable,
                                     column& out) {
    std::vector<std::string> problems;
    column c;
    c.name = std::string{name};
    c.nullable = nullable;
    if (name.empty()) problems.emplace_back("name: must not be empty");
    else if (!json::valid_utf8(name)) problems.emplace_back("name: must be valid UTF-8");
    if (auto t = parse_column_type(type)) c.type = *t;
    else
        problems.push_back(fmt::format(
            "type: {:?} is not one of string, int32, int64, float, double, boolean, timestamp_ms, timestamp_us, date, "
            "binary, json",
            type));
    bool source_ok = false;
    if (from.starts_with("payload:")) {
        const std::string_view path = from.substr(8);
        if (path == ".") {
            c.source = column_source::payload_root;
            source_ok = true;
        } else if (path.empty() || path.front() == '.' || path.back() == '.' ||
                   path.find("..") != std::string_view::npos) {
            problems.push_back(
                fmt::format("from: {:?}: a payload path is dotted names (payload:a.b.c) or payload:.", from));
        } else {
            c.source = column_source::payload_path;
            c.path = std::string{path};
            source_ok = true;
        }
    } else if (from.starts_with("header:")) {
        if (from.size() == 7) {
            problems.push_back(fmt::format("from: {:?}: name the header (header:NAME)", from));
        } else {
            c.source = column_source::header;
            c.path = std::string{from.substr(7)};
            source_ok = true;
        }
    } else {
        for (const auto& s : envelope_sources)
            if (s.name == from) c.source = s.source, source_ok = true;
        if (!source_ok)
            problems.push_back(
                fmt::format("from: {:?} is not payload:PATH, payload:., header:NAME, stream, topic, partition, offset, "
                            "id, timestamp, "
                            "origin_timestamp or payload",
                            from));
    }
    if (source_ok && parse_column_type(type)) {
        const auto bad = [&](std::string_view allowed) {
            problems.push_back(fmt::format("type: {} cannot be filled from {}; use {}", type, from, allowed));
        };
        switch (c.source) {
            case column_source::stream:
            case column_source::topic:
                if (c.type != column_type::string && c.type != column_type::binary) bad("string or binary");
                break;
            case column_source::partition:
            case column_source::offset:
                if (c.type != column_type::int64 && c.type != column_type::int32 && c.type != column_type::string)
                    bad("int64, int32 or string");
                break;
            case column_source::id:
                if (c.type != column_type::string && c.type != column_type::binary) bad("string (hex) or binary");
                break;
            case column_source::timestamp:
            case column_source::origin_timestamp:
                if (c.type != column_type::timestamp_us && c.type != column_type::timestamp_ms &&
                    c.type != column_type::int64)
                    bad("timestamp_us, timestamp_ms or int64");
                break;
            case column_source::payload:
                if (c.type != column_type::string && c.type != column_type::binary && c.type != column_type::json)
                    bad("string, binary or json");
                break;
            default: break;
        }
    }
    if (problems.empty()) out = std::move(c);
    return problems;
}

std::vector<std::string> check_schema(std::span<const column> cols) {
    std::vector<std::string> problems;
    std::set<std::string_view> names;
    for (const auto& c : cols)
        if (!names.insert(c.name).second) problems.push_back(fmt::format("column name {:?} appears twice", c.name));
    return problems;
}

std::vector<column> envelope_schema(bool headers, envelope_payload payload) {
    std::vector<column> cols{
        {"stream", column_type::string, column_source::stream, {}, false},
        {"topic", column_type::string, column_source::topic, {}, false},
        {"partition_id", column_type::int64, column_source::partition, {}, false},
        {"offset", column_type::int64, column_source::offset, {}, false},
        {"id", column_type::string, column_source::id, {}, false},
        {"timestamp", column_type::timestamp_us, column_source::timestamp, {}, false},
        {"origin_timestamp", column_type::timestamp_us, column_source::origin_timestamp, {}, false},
    };
    if (headers) cols.push_back({"headers", column_type::map, column_source::headers, {}, false});
    const column_type pt = payload == envelope_payload::binary ? column_type::binary
                           : payload == envelope_payload::json ? column_type::json
                                                               : column_type::string;
    cols.push_back({"payload", pt, column_source::payload, {}, false});
    return cols;
}

void append_timestamp(std::string& out, std::int64_t v, bool millis) {
    const std::int64_t per_s = millis ? 1000 : 1'000'000;
    std::int64_t secs = v / per_s;
    std::int64_t frac = v % per_s;
    if (frac < 0) frac += per_s, secs -= 1;
    iss::append_rfc3339(out, secs, static_cast<std::uint32_t>(frac), millis ? 3 : 6);
}

}  // namespace iss::format

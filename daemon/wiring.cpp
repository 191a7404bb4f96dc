// SPDX-License-Identifier: Apache-2.0
#include "daemon/wiring.hpp"

#include "common/journal.hpp"
#include "common/log.hpp"
#include "common/version.hpp"
#include "iceberg/names.hpp"
#include "iceberg/schema.hpp"
#include "pipeline/adapters/format_encoder.hpp"

#include <date/tz.h>
#include <fmt/format.h>

#include <charconv>
#include <cstdio>

namespace iss::app {

format::writer_options writer_options(const config::sink_config& c) {
    format::writer_options o;
    o.format = c.format.type;
    o.compression = c.format.compression;
    o.level = static_cast<int>(c.format.compression_level);
    o.metadata = c.format.metadata;
    o.headers = c.format.headers;
    o.payload = c.format.payload;
    o.separator = c.format.separator;
    for (const auto& s : c.format.schema) {
        format::column col;
        if (format::make_column(s.name, s.type, s.from, s.nullable, col).empty()) o.schema.push_back(std::move(col));
    }
    o.parquet.codec = c.format.parquet.compression;
    o.parquet.row_group_size = c.format.parquet.row_group_size;
    o.parquet.created_by = fmt::format("iggy-s3-sink version {}", iss::version);
    if (!c.format.csv.delimiter.empty()) o.csv.delimiter = c.format.csv.delimiter.front();
    o.csv.null_text = c.format.csv.null;
    o.avro.codec = c.format.avro.codec;
    // An Iceberg table's data files carry the field ids of the table's schema (Iceberg spec,
    // Appendix A, "Parquet"); config::validate checked that every column has an Iceberg type.
    if (c.iceberg.enabled && o.format == format::record_format::parquet) {
        if (auto schema = iceberg::make_schema(format::effective_schema(o)))
            o.parquet.field_ids = iceberg::parquet_field_ids(*schema);
    }
    return o;
}

std::string describe_schema(const config::sink_config& c) {
    const auto o = writer_options(c);
    if (!format::is_typed(o.format)) return {};
    std::string out;
    for (const auto& col : format::effective_schema(o))
        out += fmt::format("{} {} {}{}\n", col.name, format::to_string(col.type), format::from_text(col),
                           col.nullable ? " nullable" : "");
    return out;
}

result<iggy::client_options> iggy_options(const config::sink_config& c) {
    iggy::client_options o;
    std::string_view a = c.iggy.address;
    std::string_view host;
    std::string_view port;
    if (a.starts_with('[')) {
        const auto close = a.find(']');
        if (close == std::string_view::npos || close + 1 >= a.size() || a[close + 1] != ':')
            return error{iss::errc::invalid_argument, fmt::format("iggy.address: {:?} is not [host]:port", a)};
        host = a.substr(1, close - 1);
        port = a.substr(close + 2);
    } else {
        const auto colon = a.rfind(':');
        if (colon == std::string_view::npos)
            return error{iss::errc::invalid_argument, fmt::format("iggy.address: {:?} is not host:port", a)};
        host = a.substr(0, colon);
        port = a.substr(colon + 1);
    }
    unsigned p = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (ec != std::errc{} || end != port.data() + port.size() || p == 0 || p > 65535)
        return error{iss::errc::invalid_argument, fmt::format("iggy.address: bad port in {:?}", a)};
    o.host = std::string{host};
    o.port = static_cast<std::uint16_t>(p);
    o.username = c.iggy.username;
    o.password = c.iggy.password;
    o.token = c.iggy.token;
    o.tls.enabled = c.iggy.tls.enabled;
    o.tls.ca_file = c.iggy.tls.ca_file;
    o.tls.server_name = c.iggy.tls.server_name;
    o.max_reply_bytes = static_cast<std::size_t>(c.iggy.max_response_bytes);
    // A server with [heartbeat] enabled drops a client that sent no Ping for 1.2 x its
    // interval, and a dropped group member loses its partitions (and our buffers). Pings are
    // tiny: send them often enough for any sane heartbeat interval (>= 1 s).
    o.ping_interval = std::chrono::milliseconds{500};
    o.protocol = c.iggy.protocol;
    return o;
}

pipeline::rotation_options rotation_options(const config::sink_config& c) {
    pipeline::rotation_options r;
    r.max_records = c.rotation.max_records;
    r.max_bytes = c.rotation.max_bytes;
    r.max_span = std::chrono::duration_cast<std::chrono::microseconds>(c.rotation.max_span);
    r.schedule = std::chrono::duration_cast<std::chrono::seconds>(c.rotation.schedule);
    r.timezone = c.rotation.timezone;
    r.idle = c.rotation.idle;
    return r;
}

std::string consumer_name(const config::sink_config& c) {
    return c.iggy.group_mode() ? c.iggy.consumer_group : c.iggy.consumer;
}

pipeline::consumer_mode consumer_mode(const config::sink_config& c) {
    return c.iggy.group_mode() ? pipeline::consumer_mode::group : pipeline::consumer_mode::single;
}

pipeline::conditional_writes conditional_writes(const config::sink_config& c) { return c.s3.conditional_writes; }

pipeline::writer_options delivery_options(const config::sink_config& c, pipeline::delivery_plan plan) {
    pipeline::writer_options o;
    o.part_size = c.s3.part_size;
    o.mode = consumer_mode(c);
    o.plan = std::move(plan);
    o.on_bad_message = c.delivery.on_bad_message;
    o.retry_backoff = {c.s3.retry.base, c.s3.retry.cap};
    o.spool_dir = c.memory.spool_dir;
    o.max_open_objects = c.rotation.max_open_objects;
    return o;
}

pipeline::memory_limits memory_limits(const config::sink_config& c) {
    return {c.memory.max_buffered, c.memory.max_spool};
}

pipeline::iggy_ports_options iggy_ports_options(const config::sink_config& c) {
    pipeline::iggy_ports_options o;
    o.group_mode = c.iggy.group_mode();
    o.consumer_name = consumer_name(c);
    o.verify_checksum = c.iggy.verify_checksum;
    o.dead_letter = {c.delivery.dead_letter.stream, c.delivery.dead_letter.topic};
    return o;
}

pipeline::consumer_options consumer_options(const config::sink_config& c) {
    pipeline::consumer_options o;
    o.mode = consumer_mode(c);
    o.poll_messages = c.iggy.poll.messages;
    o.poll_interval = c.iggy.poll.interval;
    o.max_idle_interval = c.iggy.poll.max_idle_interval;
    for (const auto& s : c.sources) {
        for (const auto& t : s.topics) {
            pipeline::source_topic st{{s.stream, t}, std::nullopt};
            if (!s.all_partitions) st.partitions = s.partitions;
            o.sources.push_back(std::move(st));
        }
    }
    // {topic_created} in the key: each topic's creation time is learnt and stamped on its messages.
    if (auto t = format::key_template::parse(c.naming.key); t)
        o.topic_generation = t->uses(format::placeholder::topic_created) && !c.iceberg.enabled;
    o.on_offset_reset = c.iggy.on_offset_reset;
    o.iceberg_table = c.iceberg.enabled;
    return o;
}

iceberg::catalog_options catalog_options(const config::sink_config& c,
                                         std::shared_ptr<aws::credentials_source> credentials) {
    const auto& cat = c.iceberg.catalog;
    iceberg::catalog_options o;
    o.uri = cat.uri;
    o.warehouse = cat.warehouse;
    o.prefix = cat.prefix;
    o.auth.kind = cat.auth.type;
    o.auth.token = iceberg::catalog_secret{cat.auth.token.reveal()};
    o.auth.client_id = cat.auth.client_id;
    o.auth.client_secret = iceberg::catalog_secret{cat.auth.client_secret.reveal()};
    o.auth.token_endpoint = cat.auth.token_endpoint;
    o.auth.scope = cat.auth.scope;
    if (!cat.auth.signing_name.empty()) o.auth.signing_name = cat.auth.signing_name;
    o.auth.signing_region = cat.auth.signing_region.empty() ? c.s3.region.get() : cat.auth.signing_region;
    if (o.auth.kind == iceberg::auth_kind::sigv4) o.auth.credentials = std::move(credentials);
    return o;
}

iceberg::table_ident iceberg_table(const config::sink_config& c, const pipeline::partition_ref& p) {
    return {iceberg::namespace_levels(c.iceberg.namespace_name),
            iceberg::table_name(c.iceberg.table, p.stream, p.topic)};
}

namespace {
/// `e` with "KEY: " before its detail (the code and so the category's message kept).
error about(std::string_view key, const error& e) {
    return error{e.code(), fmt::format("{}: {}", key, e.detail().empty() ? e.code().message() : e.detail())};
}
}  // namespace

result<std::unique_ptr<pipeline::template_key_namer>> key_namer(const config::sink_config& c, std::string ext) {
    auto tmpl = format::key_template::parse(c.naming.key);
    if (!tmpl) return about("naming.key", tmpl.error());
    auto time_source = format::parse_time_source(c.naming.time_source);
    if (!time_source) return about("naming.time_source", time_source.error());
    const date::time_zone* zone = nullptr;
    try {
        zone = date::locate_zone(c.naming.timezone);
    } catch (const std::exception& e) {
        return error{iss::errc::invalid_argument,
                     fmt::format("naming.timezone: unknown time zone '{}' ({})", c.naming.timezone, e.what())};
    }
    auto namer = std::make_unique<pipeline::template_key_namer>(std::move(*tmpl), c.s3.prefix, std::move(ext),
                                                                *time_source, zone, c.naming.missing_value);
    if (auto k = pipeline::check_key_namer(*namer, {"stream", "topic", 0}); !k) return about("naming.key", k.error());
    return namer;
}

result<void> check_buildable(const config::sink_config& c) {
    if (auto o = iggy_options(c); !o) return o.error();
    if (auto r = pipeline::rotation_policy::make(rotation_options(c)); !r) return r.error();
    pipeline::format_encoders encoders{writer_options(c), c.iggy.verify_checksum};
    if (auto n = key_namer(c, encoders.extension()); !n) return n.error();
    return {};
}

std::optional<config::sink_config> load_config_or_report(std::string_view cmd, const std::string& file) {
    auto loaded = config::load_file(file, config::process_environment());
    const auto problems = config::check(loaded);
    if (!problems.empty()) {
        std::string text = fmt::format("iggy-s3-sink {}: {}: invalid configuration, {} problem{}:", cmd, file,
                                       problems.size(), problems.size() == 1 ? "" : "s");
        for (const auto& p : problems) text += fmt::format("\n  {}", config::to_string(p));
        iss::log::print_stderr(iss::log::level::error, text);
        return std::nullopt;
    }
    return loaded.config;
}

}  // namespace iss::app

// SPDX-License-Identifier: Apache-2.0
// validate(): every rule a well-typed sink_config can break, each with its YAML path (the s3
// section's rules in validate_s3.cpp).
#include "config/schema.hpp"
#include "config/validate_internal.hpp"
#include "format/key_fields.hpp"
#include "format/key_template.hpp"
#include "format/schema.hpp"
#include "format/writer.hpp"

#include <arpa/inet.h>
#include <date/tz.h>
#include <fmt/format.h>
#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <set>
#include <utility>

namespace iss::config {

namespace {

using namespace std::chrono_literals;
using namespace detail;

void check_name(collector& add, const std::string& path, const std::string& name, std::string_view what) {
    if (name.empty()) {
        add(path, "{} name is required", what);
        return;
    }
    if (name.size() > max_name_bytes)
        add(path, "{} name is {} bytes; Iggy allows at most {}", what, name.size(), max_name_bytes);
    if (!valid_utf8(name)) add(path, "{} name is not valid UTF-8", what);
}

/// host:port, with [v6]:port.
void check_address(collector& add, const std::string& a) {
    const std::string path = "iggy.address";
    if (a.empty()) {
        add(path, "is required (host:port)");
        return;
    }
    if (a.find('@') != std::string::npos) {
        add(path,
            "'{}': user info (user@host) is not allowed; credentials go in iggy.username and iggy.password "
            "(or iggy.token)",
            without_user_info(a));
        return;
    }
    if (a.find("://") != std::string::npos) {
        add(path, "'{}': write host:port without a scheme (TLS is iggy.tls.enabled)", a);
        return;
    }
    std::string_view host;
    std::string_view port;
    if (a.front() == '[') {
        const auto close = a.find(']');
        if (close == std::string::npos || close + 1 >= a.size() || a[close + 1] != ':') {
            add(path, "'{}': write an IPv6 address as [addr]:port", a);
            return;
        }
        host = std::string_view{a}.substr(1, close - 1);
        port = std::string_view{a}.substr(close + 2);
    } else {
        const auto colon = a.rfind(':');
        if (colon == std::string::npos) {
            add(path, "'{}' has no port (host:port, e.g. 127.0.0.1:8090)", a);
            return;
        }
        if (a.find(':') != colon) {
            add(path, "'{}': write an IPv6 address as [addr]:port", a);
            return;
        }
        host = std::string_view{a}.substr(0, colon);
        port = std::string_view{a}.substr(colon + 1);
    }
    if (host.empty()) add(path, "'{}' has no host", a);
    unsigned long p = 0;
    bool ok = !port.empty() && port.size() <= 5;
    for (char c : port) {
        ok = ok && c >= '0' && c <= '9';
        p = p * 10 + static_cast<unsigned long>(c - '0');
    }
    if (!ok || p == 0 || p > 65535) add(path, "'{}': the port must be 1..65535", a);
}

void check_iggy(collector& add, const iggy_section& i) {
    check_address(add, i.address);
    if (!i.password.empty() && !i.token.empty()) add("iggy.token", "set either iggy.password or iggy.token, not both");
    if (i.password.empty() && i.token.empty())
        add("iggy.password",
            "Iggy needs a login: set iggy.password (or env IGGY_PASSWORD) with iggy.username, or iggy.token");
    if (!i.password.empty() && i.username.empty()) add("iggy.username", "is required with iggy.password");
    if (!i.tls.enabled && !i.tls.ca_file.empty())
        add("iggy.tls.ca_file", "is set but iggy.tls.enabled is false (set enabled: true to use TLS)");
    if (!i.tls.enabled && !i.tls.server_name.empty())
        add("iggy.tls.server_name", "is set but iggy.tls.enabled is false (set enabled: true to use TLS)");
    if (i.group_mode()) check_name(add, "iggy.consumer_group", i.consumer_group, "consumer group");
    else check_name(add, "iggy.consumer", i.consumer, "consumer");
    if (i.poll.messages == 0) add("iggy.poll.messages", "must be > 0");
    if (i.poll.messages > 1'000'000) add("iggy.poll.messages", "must be <= 1000000 (one reply is held in memory)");
    if (i.poll.interval <= 0ms)
        add("iggy.poll.interval", "must be > 0 (0 would poll an empty partition in a busy loop)");
    if (i.poll.interval > 60s) add("iggy.poll.interval", "must be <= 1m");
    if (i.max_response_bytes < 64 * kib) add("iggy.max_response_bytes", "must be >= 64KiB");
    if (i.max_response_bytes > 4 * gib - 1)
        add("iggy.max_response_bytes", "must be < 4GiB (a frame length is 32 bits)");
}

void check_sources(collector& add, const sink_config& c) {
    if (c.sources.empty()) {
        add("sources", "at least one source is required (- stream: NAME, topics: [NAME])");
        return;
    }
    std::set<std::pair<std::string, std::string>> seen;
    for (std::size_t n = 0; n < c.sources.size(); ++n) {
        const auto& s = c.sources[n];
        const std::string base = fmt::format("sources[{}]", n);
        check_name(add, base + ".stream", s.stream, "stream");
        if (s.topics.empty()) add(base + ".topics", "at least one topic is required");
        for (std::size_t t = 0; t < s.topics.size(); ++t) {
            const std::string tpath = fmt::format("{}.topics[{}]", base, t);
            check_name(add, tpath, s.topics[t], "topic");
            if (!seen.emplace(s.stream, s.topics[t]).second)
                add(tpath, "{}/{} is listed twice: it would be consumed twice", s.stream, s.topics[t]);
        }
        if (!s.all_partitions) {
            if (c.iggy.group_mode()) {
                add(base + ".partitions",
                    "a partition list needs single-consumer mode (iggy.consumer: NAME); in a consumer group the server "
                    "assigns partitions (use partitions: all)");
            }
            if (s.partitions.empty()) add(base + ".partitions", "an empty list reads nothing (use all, or list ids)");
            std::set<std::uint32_t> ids;
            for (auto id : s.partitions)
                if (!ids.insert(id).second) add(base + ".partitions", "partition {} is listed twice", id);
        }
    }
}

void check_format(collector& add, const format_section& f) {
    if (f.type != format::record_format::raw && f.separator != "\n")
        add("format.separator", "applies only to format.type raw (JSON records are separated by the format itself)");
    if (f.compression == format::compression::none && f.compression_level != 0) {
        if (format::compresses_inside(f.type))
            add("format.compression_level",
                "applies only to format.compression (gzip, zstd); {} compresses inside the file at its codec's "
                "default level: remove format.compression_level",
                f.type == format::record_format::parquet ? "Parquet (format.parquet.compression)"
                                                         : "Avro (format.avro.codec)");
        else add("format.compression_level", "is set but format.compression is none");
    }
    if (f.compression == format::compression::gzip && f.compression_level > 9)
        add("format.compression_level", "must be 0 (default) or 1..9 for gzip, not {}", f.compression_level);
    if (f.compression == format::compression::zstd && f.compression_level > 19)
        add("format.compression_level", "must be 0 (default) or 1..19 for zstd, not {}", f.compression_level);
    if (f.type == format::record_format::raw && f.payload != format::payload_mode::automatic)
        add("format.payload", "applies only to the JSON types; raw writes payload bytes as they are");
    const bool typed = format::is_typed(f.type);
    if (f.type == format::record_format::parquet && f.compression != format::compression::none)
        add("format.compression",
            "is refused for format.type parquet, which compresses inside the file: set "
            "format.parquet.compression ({}) and leave format.compression none",
            choice_names(table(parquet_compression_choices), ", "));
    if (f.type == format::record_format::avro && f.compression != format::compression::none)
        add("format.compression",
            "is refused for format.type avro, which compresses inside the file: set "
            "format.avro.codec ({}) and leave format.compression none",
            choice_names(table(avro_codec_choices), ", "));
    if (!typed && !f.schema.empty()) add("format.schema", "applies only to format.type csv, parquet and avro");
    std::vector<format::column> cols;
    for (std::size_t i = 0; i < f.schema.size(); ++i) {
        const auto& c = f.schema[i];
        format::column col;
        col.name = c.name;  // kept for the duplicate check when the column has other problems
        for (const std::string& p : format::make_column(c.name, c.type, c.from, c.nullable, col)) {
            // make_column's problems start with the key they are about ("type: ...").
            const auto colon = p.find(": ");
            add(fmt::format("format.schema[{}].{}", i, p.substr(0, colon)), "{}", p.substr(colon + 2));
        }
        cols.push_back(std::move(col));
    }
    for (const std::string& p : format::check_schema(cols)) add("format.schema", "{}", p);
    if (f.type == format::record_format::avro)
        for (std::size_t i = 0; i < f.schema.size(); ++i) {
            const std::string& n = f.schema[i].name;
            const bool ok = !n.empty() && (std::isalpha(static_cast<unsigned char>(n[0])) != 0 || n[0] == '_') &&
                            std::all_of(n.begin(), n.end(), [](char ch) {
                                return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_';
                            });
            if (!ok)
                add(fmt::format("format.schema[{}].name", i),
                    "{:?} is not an Avro name (letters, digits and _, not starting with a digit)", n);
        }
    if (f.csv.delimiter.size() != 1 || f.csv.delimiter == "\"" || f.csv.delimiter == "\r" || f.csv.delimiter == "\n")
        add("format.csv.delimiter", "must be one character other than a quote, CR or LF, not {:?}", f.csv.delimiter);
    if (f.csv.null.find_first_of("\"\r\n") != std::string::npos ||
        f.csv.null.find(f.csv.delimiter) != std::string::npos)
        add("format.csv.null", "must not contain a quote, CR, LF or the delimiter");
    if (f.parquet.row_group_size < 64 * kib || f.parquet.row_group_size > gib)
        add("format.parquet.row_group_size", "must be 64KiB to 1GiB, not {}", format_size(f.parquet.row_group_size));
}

void check_rotation(collector& add, const sink_config& c) {
    const auto& r = c.rotation;
    if (r.max_records == 0) add("rotation.max_records", "must be > 0");
    if (r.max_bytes == 0) add("rotation.max_bytes", "must be > 0");
    if (r.max_bytes > max_object) add("rotation.max_bytes", "must be <= 5TiB (S3's largest object)");
    else if (c.s3.part_size >= 5 * mib && r.max_bytes > c.s3.part_size * max_parts)
        add("rotation.max_bytes",
            "({}) is more than {} parts of s3.part_size ({}): S3 allows at most {} parts per object",
            format_size(r.max_bytes), max_parts, format_size(c.s3.part_size), max_parts);
    if (r.max_span < 0ms) add("rotation.max_span", "must be >= 0");
    if (r.idle < 0ms) add("rotation.idle", "must be >= 0");
    if (r.schedule < 0ms) add("rotation.schedule", "must be >= 0");
    if (r.schedule > 0ms) {
        constexpr milliseconds day{86'400'000};
        if (r.schedule < 1s || r.schedule % 1000 != 0ms || (r.schedule < day && day % r.schedule != 0ms) ||
            (r.schedule > day && r.schedule % day != 0ms))
            add("rotation.schedule",
                "({}) must divide a day evenly (1m, 5m, 15m, 1h, 6h, 1d) or be whole days, so boundaries align",
                format_duration(r.schedule));
    }
    if (r.idle == 0ms && r.schedule == 0ms)
        add("rotation.idle",
            "rotation.idle and rotation.schedule are both 0: a partition that goes quiet would never upload (or "
            "commit) what it holds; set idle (e.g. 1m)");
    if (r.timezone.empty()) {
        add("rotation.timezone", "is required (an IANA name such as UTC or Europe/Berlin)");
    } else {
        try {
            (void)date::locate_zone(r.timezone);
        } catch (const std::exception&) {
            add("rotation.timezone", "'{}' is not a known IANA time zone (e.g. UTC, Europe/Berlin)", r.timezone);
        }
    }
}

/// The most each open object's compressor holds (format::codec_memory; Parquet and Avro keep
/// format.compression none).
std::uint64_t codec_memory(const format_section& f) {
    format::writer_options o;
    o.compression = f.compression;
    o.level = f.compression_level;
    return format::codec_memory(o);
}

/// `bytes` in MiB to one decimal, as a reader wants a compressor's size ("89.8MiB").
std::string mib_text(std::uint64_t bytes) {
    return fmt::format("{:.1f}MiB", static_cast<double>(bytes) / static_cast<double>(mib));
}

/// "gzip" or "zstd", as format.compression names it.
std::string_view codec_name(const format_section& f) noexcept {
    return choice_name(f.compression, compression_choices);
}

void check_memory(collector& add, const sink_config& c) {
    if (c.performance.workers > 256)
        add("performance.workers", "must be 0 (one per core) to 256, not {}", c.performance.workers);
    if (c.memory.max_buffered < mib)
        add("memory.max_buffered", "must be >= 1MiB (a poll batch and one object's buffer), not {}",
            format_size(c.memory.max_buffered));
    else if (const std::uint64_t state = codec_memory(c.format); state >= c.memory.max_buffered)
        add("memory.max_buffered",
            "is {}, but every open object's {} compressor holds {} (format.compression_level {}): not one object "
            "fits; raise memory.max_buffered or lower format.compression_level",
            format_size(c.memory.max_buffered), codec_name(c.format), mib_text(state), c.format.compression_level);
}

void check_record_naming(collector& add, const sink_config& c) {
    if (c.rotation.max_open_objects == 0) add("rotation.max_open_objects", "must be >= 1");
    if (c.rotation.max_open_objects > 100'000)
        add("rotation.max_open_objects", "must be <= 100000 (each open object holds up to one part in memory)");
    if (auto ts = format::parse_time_source(c.naming.time_source); !ts) {
        add("naming.time_source", "{}", ts.error().detail());
    }
    if (c.naming.timezone.empty()) {
        add("naming.timezone", "is required (an IANA name such as UTC or Europe/Berlin)");
    } else {
        try {
            (void)date::locate_zone(c.naming.timezone);
        } catch (const std::exception&) {
            add("naming.timezone", "'{}' is not a known IANA time zone (e.g. UTC, Europe/Berlin)", c.naming.timezone);
        }
    }
    if (c.naming.missing_value.empty())
        add("naming.missing_value", "must not be empty (an empty path level is not a Hive partition value)");
}

void check_naming(collector& add, const sink_config& c) {
    check_record_naming(add, c);
    check_memory(add, c);
    const auto problems = format::key_template::check(c.naming.key);
    for (const auto& p : problems) add("naming.key", "{}", p);
    if (!problems.empty()) return;
    const auto t = format::key_template::parse(c.naming.key).value();
    if (!c.s3.prefix.empty() && !t.uses(format::placeholder::prefix))
        add("naming.key", "has no {{prefix}} but s3.prefix is '{}' (add {{prefix}} or set s3.prefix: \"\")",
            c.s3.prefix);
    // Two sources whose keys render alike would overwrite nothing (If-None-Match) but be taken
    // as already written: their messages would be skipped, i.e. lost.
    const bool by_stream = t.uses(format::placeholder::stream);
    const bool by_topic = t.uses(format::placeholder::topic);
    std::set<std::pair<std::string, std::string>> projected;
    std::set<std::pair<std::string, std::string>> pairs;
    for (const auto& s : c.sources)
        for (const auto& topic : s.topics) pairs.emplace(s.stream, topic);
    for (const auto& [stream, topic] : pairs) {
        auto key = std::make_pair(by_stream ? stream : std::string{}, by_topic ? topic : std::string{});
        if (!projected.insert(key).second) {
            add("naming.key",
                "lacks {} but sources include several {}: their objects would get the same keys, and the later ones "
                "would be taken as already written (lost)",
                by_stream  ? "{topic}"
                : by_topic ? "{stream}"
                           : "{stream} and {topic}",
                by_stream ? "topics of one stream" : "streams/topics");
            break;
        }
    }
    // The longest key this config can produce must fit S3's 1024-byte limit.
    std::size_t longest_stream = 0;
    std::size_t longest_topic = 0;
    for (const auto& [stream, topic] : pairs) {
        std::string e;
        format::append_name_encoded(e, stream);
        longest_stream = std::max(longest_stream, e.size());
        e.clear();
        format::append_name_encoded(e, topic);
        longest_topic = std::max(longest_topic, e.size());
    }
    const std::string s(longest_stream, 's');
    const std::string tp(longest_topic, 't');
    // Record placeholders: not bounded by the config; count the missing value (docs/configuration.md
    // says that long values make long keys, and S3 refuses keys over 1024 bytes).
    format::record_values rv;
    rv.time = format::local_time{9999, 12, 31, 23, 59};
    rv.missing = c.naming.missing_value;
    rv.args.assign(t.record_args().size(), std::nullopt);
    format::key_values kv{c.s3.prefix, s, tp, 4'294'967'295U, 18'446'744'073'709'551'615ULL, "jsonl.gz"};
    kv.record = &rv;
    const auto key = t.render(kv);
    if (key.size() > max_key_bytes)
        add("naming.key", "renders keys of up to {} bytes; S3 allows {} (shorten s3.prefix or the template)",
            key.size(), max_key_bytes);
}

/// admin.listen: empty (off) or IP:PORT with an IP literal ([v6]:port), port 0..65535 (0: the
/// OS picks one, which the daemon logs).
void check_admin(collector& add, const admin_section& a) {
    if (a.max_connections < 1 || a.max_connections > 4096)
        add("admin.max_connections", "must be 1 to 4096, not {}", a.max_connections);
    const std::string& v = a.listen;
    if (v.empty()) return;
    const std::string path = "admin.listen";
    const char* shape =
        "write IP:PORT such as 127.0.0.1:9464, 0.0.0.0:9464 or [::]:9464, or \"\" to turn the admin server off";
    std::string host;
    std::string_view port;
    int family = AF_INET;
    if (v.front() == '[') {
        const auto close = v.find(']');
        if (close == std::string::npos || close + 1 >= v.size() || v[close + 1] != ':') {
            add(path, "'{}': {}", v, shape);
            return;
        }
        host = v.substr(1, close - 1);
        port = std::string_view{v}.substr(close + 2);
        family = AF_INET6;
    } else {
        const auto colon = v.rfind(':');
        if (colon == std::string::npos || v.find(':') != colon) {
            add(path, "'{}': {}", v, shape);
            return;
        }
        host = v.substr(0, colon);
        port = std::string_view{v}.substr(colon + 1);
    }
    unsigned char buf[sizeof(in6_addr)];
    if (inet_pton(family, host.c_str(), buf) != 1)
        add(path, "'{}': '{}' is not an IP address (host names are not resolved); {}", v, host, shape);
    unsigned long p = 0;
    bool ok = !port.empty() && port.size() <= 5;
    for (char ch : port) {
        ok = ok && ch >= '0' && ch <= '9';
        p = p * 10 + static_cast<unsigned long>(ch - '0');
    }
    if (!ok || p > 65535) add(path, "'{}': the port must be 0..65535", v);
}

void check_delivery(collector& add, const sink_config& c) {
    const auto& d = c.delivery;
    if (d.on_bad_message == pipeline::bad_message_policy::dead_letter) {
        check_name(add, "delivery.dead_letter.stream", d.dead_letter.stream, "stream");
        check_name(add, "delivery.dead_letter.topic", d.dead_letter.topic, "topic");
    } else if (!d.dead_letter.empty() && (d.dead_letter.stream.empty() || d.dead_letter.topic.empty())) {
        add("delivery.dead_letter", "needs both stream and topic");
    }
    for (const auto& s : c.sources) {
        if (s.stream != d.dead_letter.stream) continue;
        if (std::find(s.topics.begin(), s.topics.end(), d.dead_letter.topic) != s.topics.end()) {
            add("delivery.dead_letter.topic",
                "{}/{} is one of the sources: a bad message would be read back and fail again, forever",
                d.dead_letter.stream, d.dead_letter.topic);
        }
    }
}

std::string_view unit_name(format::time_unit u) {
    switch (u) {
        case format::time_unit::minute: return "minute";
        case format::time_unit::hour: return "hour";
        case format::time_unit::day: return "day";
        case format::time_unit::month: return "month";
        case format::time_unit::year: return "year";
        case format::time_unit::none: break;
    }
    return "?";
}

std::vector<problem> naming_warnings(const sink_config& c) {
    std::vector<problem> out;
    auto t = format::key_template::parse(c.naming.key);
    if (!t) return out;
    const auto unit = t->finest_time();
    milliseconds bucket{0};
    switch (unit) {
        case format::time_unit::minute: bucket = 60s; break;
        case format::time_unit::hour: bucket = 3600s; break;
        default: return out;  // days and coarser: never finer than a sensible rotation
    }
    // Every object holds one time bucket at most. When the time triggers would let an object
    // run longer than a bucket, the bucket is what closes objects: one (small) object per
    // bucket and encoded partition, which is how other sinks ended with a file per second.
    milliseconds fill{0};
    for (const milliseconds d : {c.rotation.max_span, c.rotation.schedule})
        if (d > 0ms && (fill == 0ms || d < fill)) fill = d;
    if ((fill == 0ms && unit == format::time_unit::minute) || (fill > 0ms && bucket < fill)) {
        out.push_back(problem{
            "naming.key",
            fmt::format("its finest time field is the {} (one object per {} of record time and encoded partition at "
                        "least), finer than the rotation would fill ({}max_records {}): expect many small objects; "
                        "use a coarser field ({{HH}} or {{date}}) or rotate sooner",
                        unit_name(unit), unit_name(unit),
                        fill == 0ms ? std::string{} : fmt::format("max_span/schedule {} s, ", fill.count() / 1000),
                        c.rotation.max_records),
            0});
    }
    return out;
}

void memory_warnings(std::vector<problem>& out, const sink_config& c) {
    // A codec whose state takes a good share of the budget: few objects stay open at once.
    if (const std::uint64_t state = codec_memory(c.format);
        state > 0 && state < c.memory.max_buffered && state > c.memory.max_buffered / 8)
        out.push_back(
            problem{"format.compression_level",
                    fmt::format("{} at this level holds {} per open object (its window and match tables), counted in "
                                "memory.max_buffered ({}): it fits the state of {} open object{} at most (with their "
                                "buffers, fewer), and objects beyond are closed early; lower the level or raise "
                                "memory.max_buffered",
                                codec_name(c.format), mib_text(state), format_size(c.memory.max_buffered),
                                c.memory.max_buffered / state, c.memory.max_buffered / state == 1 ? "" : "s"),
                    0});
    if (c.memory.max_buffered >= mib && c.memory.max_buffered < c.s3.part_size)
        out.push_back(
            problem{"memory.max_buffered",
                    fmt::format("is less than s3.part_size ({} < {}): objects are closed before they fill one "
                                "part, so none is uploaded in parts; raise it or lower s3.part_size",
                                format_size(c.memory.max_buffered), format_size(c.s3.part_size)),
                    0});
}

/// iggy.on_offset_reset: earliest reads a topic created again from offset 0: its objects need
/// keys the old topic's never had ({topic_created}), or an old key would be taken as already
/// written (412, adopted) and the new messages lost.
void check_offset_reset(collector& add, const sink_config& c) {
    if (c.iggy.on_offset_reset != pipeline::offset_reset_policy::earliest) return;
    const auto t = format::key_template::parse(c.naming.key);
    if (t && !t->uses(format::placeholder::topic_created))
        add("iggy.on_offset_reset",
            "earliest needs {{topic_created}} in naming.key (e.g. "
            "\"{{prefix}}/{{stream}}/{{topic}}/{{topic_created}}/{{partition}}/{{start_offset:020}}.{{ext}}\"): the "
            "topic "
            "created again starts at offset 0, and without its creation time in the key its objects would get the old "
            "topic's keys and be taken as already written (lost); or keep on_offset_reset: fail");
    if (c.iggy.group_mode())
        add("iggy.on_offset_reset",
            "earliest is for a single consumer (iggy.consumer): a consumer group is deleted with its topic, so an "
            "offset reset is not seen in group mode; remove the key or set iggy.consumer");
    if (c.iceberg.enabled)
        add("iggy.on_offset_reset",
            "earliest cannot be used with iceberg: the table's data files are named from the source partition and "
            "offset (not by naming.key, so no {{topic_created}}), and the new topic's files would get the old topic's "
            "keys under the table's location (taken as written: lost), while the table's offsets are the old "
            "topic's; keep on_offset_reset: fail, and after a topic is created again write it to a new table "
            "(iceberg.table)");
}

}  // namespace

std::vector<problem> warnings(const sink_config& c) {
    auto out = naming_warnings(c);
    memory_warnings(out, c);
    // With iceberg set the data files are named by their table (its location, data/...): keys
    // of the key layout set to other than their defaults are unused (harmless: a warning).
    if (c.iceberg.enabled) {
        const sink_config defaults;
        if (c.s3.prefix != defaults.s3.prefix)
            out.push_back(problem{"s3.prefix",
                                  "is not used with iceberg set: the data files go under their table's location "
                                  "(data/...); remove it",
                                  0});
        if (c.naming.key != defaults.naming.key)
            out.push_back(problem{"naming.key",
                                  "is not used with iceberg set: the data files are named by their table "
                                  "(data/PARTITION PATH/STREAM+TOPIC+PARTITION+OFFSET.parquet); remove it",
                                  0});
    }
    if (c.s3.checksum == s3::checksum_kind::none && c.s3.payload_signing == s3::payload_signing::unsigned_payload)
        out.push_back(problem{"s3.checksum",
                              "none with s3.payload_signing unsigned: nothing but TLS checks the bodies (no checksum, "
                              "no signed SHA-256), so a body corrupted before encryption is stored as it is; use "
                              "auto, crc32c or md5",
                              0});
    return out;
}

std::vector<problem> validate(const sink_config& c) {
    collector add;
    check_iggy(add, c.iggy);
    check_sources(add, c);
    check_s3(add, c);
    check_format(add, c.format);
    check_rotation(add, c);
    check_naming(add, c);
    check_delivery(add, c);
    if (c.shutdown.grace <= 0ms) add("shutdown.grace", "must be > 0");
    check_admin(add, c.admin);
    check_iceberg(add, c);
    check_offset_reset(add, c);
    return std::move(add.out);
}

}  // namespace iss::config

// SPDX-License-Identifier: Apache-2.0
// Micro-benchmark of lib/format (issue 7): formatting throughput for 1 KiB JSON payloads.
// Wall-clock timing is fine here: this is a benchmark, not a test.
// Usage: bench_format [seconds per measurement, default 2].
#include "format/key_fields.hpp"
#include "format/key_template.hpp"
#include "format/writer.hpp"

#include <date/tz.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <string>
#include <vector>

namespace fm = iss::format;
namespace proto = iss::proto;
using bench_clock = std::chrono::steady_clock;

namespace {

/// CPU time of this thread in seconds: on a shared machine (2 cores, several builds) the
/// rates per CPU-second say what one core does; the wall-clock rates what we got.
double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// A ~1 KiB JSON web-request record with some pretty-printing whitespace, varied per message.
std::string make_payload(std::uint64_t i) {
    std::string p = fmt::format(
        "{{\n  \"ts\": \"2026-11-30T03:00:{:02}.{:06}Z\",\n  \"method\": \"{}\",\n  \"path\": \"/api/v1/orders/{}\",\n"
        "  \"status\": {},\n  \"latency_ms\": {}.{},\n  \"user\": {{\"id\": {}, \"name\": \"user-{}\", \"tier\": "
        "\"gold\"}},\n"
        "  \"ua\": \"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 "
        "Safari/537.36\",\n"
        "  \"tags\": [\"checkout\", \"eu-west-1\", \"canary\"],\n  \"note\": \"",
        i % 60, i * 7919 % 1'000'000, i % 3 == 0 ? "POST" : "GET", i * 31, i % 17 == 0 ? 500 : 200, i % 250, i % 10,
        i % 10'000, i % 10'000);
    // The rest: words drawn pseudo-randomly from a small vocabulary (log-like text), so gzip
    // sees realistic input, neither trivial nor random.
    static constexpr const char* words[] = {
        "order",  "created",  "payment",  "accepted",    "retry",   "timeout",   "warehouse", "eu-west-1",
        "item",   "sku-4471", "customer", "session",     "token",   "refreshed", "cache",     "miss",
        "hit",    "queue",    "latency",  "p99",         "shipped", "invoice",   "tax",       "discount",
        "coupon", "cart",     "checkout", "fraud-score", "0.17",    "ok",        "declined",  "3ds"};
    std::uint64_t x = i * 0x9E3779B97F4A7C15ULL + 1;
    while (p.size() < 1024 - 16) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p += words[x % 32];
        p += ' ';
        if ((x >> 20) % 8 == 0) p += fmt::format("{} ", x % 100'000);
    }
    p.resize(1024 - 4, ' ');  // pad with spaces: resize alone would pad with NUL bytes, which are not JSON
    p += "\"\n}";
    return p;
}

struct corpus {
    std::deque<proto::byte_buffer> buffers;
    std::vector<std::string> payloads;
    std::vector<proto::message_view> messages;
    std::uint64_t payload_bytes = 0;
};

corpus build(std::size_t n) {
    corpus c;
    c.payloads.reserve(n);
    proto::byte_buffer headers;
    (void)proto::append_user_header(headers, proto::header_kind::string, proto::as_bytes("content-type"),
                                    proto::header_kind::string, proto::as_bytes("application/json"));
    proto::byte_buffer v;
    proto::append_header_value_bytes(v, proto::header_value{std::uint64_t{123456789}});
    (void)proto::append_user_header(headers, proto::header_kind::string, proto::as_bytes("trace-id"),
                                    proto::header_kind::uint64, v);
    for (std::size_t i = 0; i < n; ++i) {
        c.payloads.push_back(make_payload(i));
        c.payload_bytes += c.payloads.back().size();
    }
    for (std::size_t i = 0; i < n; ++i) {
        proto::message_fields f;
        f.id = i;
        f.offset = 1'000'000 + i;
        f.timestamp = 1'796'000'523'000'004ULL + i * 1000;
        f.origin_timestamp = f.timestamp - 250;
        f.payload = proto::as_bytes(c.payloads[i]);
        f.user_headers = headers;
        auto& b = c.buffers.emplace_back();
        if (!proto::append_message(b, f, true)) std::abort();
        c.messages.push_back(proto::decode_message(b).value());
    }
    return c;
}

struct result_row {
    double messages_per_s;
    double out_mb_per_s;
    double payload_mb_per_s;
    double ratio;      ///< output bytes / payload bytes
    double cpu_share;  ///< CPU seconds / wall seconds
};

result_row measure(const corpus& c, const fm::writer_options& o, double seconds) {
    fm::writer w{o};
    std::string out;
    out.reserve(c.payload_bytes * 2);
    std::uint64_t messages = 0;
    std::uint64_t out_bytes = 0;
    std::uint64_t payload_bytes = 0;
    const auto start = bench_clock::now();
    const double cpu0 = thread_cpu_seconds();
    double elapsed = 0;
    while (elapsed < seconds) {
        out.clear();
        w.begin(out);
        for (const auto& m : c.messages)
            if (auto r = w.append(m, {"app", "requests", 3}, out); !r) {
                fmt::print(stderr, "bench_format: {}\n", r.error().message());
                std::abort();
            }
        w.finish(out);
        messages += c.messages.size();
        out_bytes += out.size();
        payload_bytes += c.payload_bytes;
        elapsed = std::chrono::duration<double>(bench_clock::now() - start).count();
    }
    const double cpu = thread_cpu_seconds() - cpu0;
    return {static_cast<double>(messages) / cpu, static_cast<double>(out_bytes) / cpu / 1e6,
            static_cast<double>(payload_bytes) / cpu / 1e6,
            static_cast<double>(out_bytes) / static_cast<double>(payload_bytes), cpu / elapsed};
}

/// Formatting plus what the pipeline does per message for a key template: read the record
/// values (time, headers, fields) and render the encoded partition (the key at offset 0).
/// An empty template: formatting only (keys without record placeholders cost nothing per
/// message).
result_row measure_keyed(const corpus& c, const fm::writer_options& o, std::string_view tmpl, std::string_view source,
                         double seconds) {
    if (tmpl.empty()) return measure(c, o, seconds);
    const auto t = fm::key_template::parse(tmpl).value();
    fm::record_reader reader{t, fm::parse_time_source(source).value(), date::locate_zone("Europe/Berlin"),
                             std::string{fm::default_missing_value}};
    fm::record_values values;
    std::optional<std::int64_t> bucket;
    fm::writer w{o};
    std::string out;
    std::string key;
    std::uint64_t messages = 0;
    std::uint64_t out_bytes = 0;
    std::uint64_t payload_bytes = 0;
    const auto start = bench_clock::now();
    const double cpu0 = thread_cpu_seconds();
    double elapsed = 0;
    while (elapsed < seconds) {
        out.clear();
        w.begin(out);
        for (const auto& m : c.messages) {
            if (auto r = reader.read({m.timestamp, m.origin_timestamp, m.payload, m.user_headers}, values, bucket);
                !r) {
                fmt::print(stderr, "record_reader: {}\n", r.error().message());
                std::abort();
            }
            fm::key_values v{"iggy", "app", "requests", 3, 0, "jsonl"};
            v.record = &values;
            key = t.render(v);
            if (!w.append(m, {"app", "requests", 3}, out)) std::abort();
        }
        w.finish(out);
        messages += c.messages.size();
        out_bytes += out.size();
        payload_bytes += c.payload_bytes;
        elapsed = std::chrono::duration<double>(bench_clock::now() - start).count();
    }
    const double cpu = thread_cpu_seconds() - cpu0;
    return {static_cast<double>(messages) / cpu, static_cast<double>(out_bytes) / cpu / 1e6,
            static_cast<double>(payload_bytes) / cpu / 1e6,
            static_cast<double>(out_bytes) / static_cast<double>(payload_bytes), cpu / elapsed};
}

}  // namespace

int main(int argc, char** argv) {
    double seconds = argc > 1 ? std::atof(argv[1]) : 2.0;
    if (seconds <= 0) seconds = 2.0;
    const corpus c = build(10'000);
    fmt::print("bench_format: {} messages of {:.0f} B JSON payload (2 headers), {:.1f}s per row\n", c.messages.size(),
               static_cast<double>(c.payload_bytes) / static_cast<double>(c.messages.size()), seconds);
    fmt::print("rates per CPU-second of the formatting thread (cpu = its share of wall time)\n");
    fmt::print("{:<34} {:>12} {:>14} {:>15} {:>8} {:>6}\n", "case", "messages/s", "output MB/s", "payload MB/s",
               "out/in", "cpu");
    struct named {
        const char* name;
        fm::writer_options o;
    };
    std::vector<named> cases;
    const auto add = [&](const char* name, fm::record_format f, fm::compression z, fm::payload_mode p) {
        fm::writer_options o;
        o.format = f;
        o.compression = z;
        o.payload = p;
        cases.push_back({name, o});
    };
    using fm::compression;
    using fm::payload_mode;
    using fm::record_format;
    add("json_lines, payload auto", record_format::json_lines, compression::none, payload_mode::automatic);
    add("json_lines, payload auto, gzip", record_format::json_lines, compression::gzip, payload_mode::automatic);
    add("json_lines, payload auto, gzip -1", record_format::json_lines, compression::gzip, payload_mode::automatic);
    cases.back().o.level = 1;
    add("json_lines, payload auto, zstd", record_format::json_lines, compression::zstd, payload_mode::automatic);
    add("json_lines, payload string", record_format::json_lines, compression::none, payload_mode::string);
    add("json_lines, payload base64", record_format::json_lines, compression::none, payload_mode::base64);
    add("raw", record_format::raw, compression::none, payload_mode::automatic);
    add("raw, gzip", record_format::raw, compression::gzip, payload_mode::automatic);
    add("raw, zstd", record_format::raw, compression::zstd, payload_mode::automatic);
    // Typed formats: the web-request record as 9 declared columns (the long `note` included,
    // so the bytes compare with the JSON rows above).
    const auto web_schema = [] {
        std::vector<fm::column> cols;
        const auto col = [&](const char* name, fm::column_type t, const char* from) {
            fm::column k;
            if (const auto p = fm::make_column(name, fm::to_string(t), from, true, k); !p.empty()) {
                fmt::print(stderr, "bench_format: column {}: {}\n", name, p.front());
                std::abort();
            }
            cols.push_back(k);
        };
        col("offset", fm::column_type::int64, "offset");
        col("ts", fm::column_type::timestamp_us, "payload:ts");
        col("method", fm::column_type::string, "payload:method");
        col("path", fm::column_type::string, "payload:path");
        col("status", fm::column_type::int32, "payload:status");
        col("latency_ms", fm::column_type::float64, "payload:latency_ms");
        col("user_id", fm::column_type::int64, "payload:user.id");
        col("tier", fm::column_type::string, "payload:user.tier");
        col("note", fm::column_type::string, "payload:note");
        return cols;
    }();
    const auto add_typed = [&](const char* name, fm::record_format f) {
        fm::writer_options o;
        o.format = f;
        o.schema = web_schema;
        cases.push_back({name, o});
        return &cases.back().o;
    };
    add_typed("parquet, snappy", record_format::parquet)->parquet.codec = fm::parquet_codec::snappy;
    add_typed("parquet, zstd", record_format::parquet)->parquet.codec = fm::parquet_codec::zstd;
    add_typed("parquet, none", record_format::parquet)->parquet.codec = fm::parquet_codec::none;
    add_typed("avro, null codec", record_format::avro)->avro.codec = fm::avro_codec::null;
    add_typed("avro, deflate", record_format::avro)->avro.codec = fm::avro_codec::deflate;
    add_typed("avro, snappy", record_format::avro)->avro.codec = fm::avro_codec::snappy;
    add_typed("csv", record_format::csv);
    add_typed("csv, gzip", record_format::csv)->compression = compression::gzip;
    for (const auto& [name, o] : cases) {
        const auto r = measure(c, o, seconds);
        fmt::print("{:<34} {:>12.0f} {:>14.1f} {:>15.1f} {:>8.3f} {:>5.0f}%\n", name, r.messages_per_s, r.out_mb_per_s,
                   r.payload_mb_per_s, r.ratio, r.cpu_share * 100);
    }
    // The cost of partition placeholders per message (json_lines, no compression).
    fm::writer_options plain;
    struct keyed {
        const char* name;
        const char* tmpl;
        const char* source;
    };
    const keyed keyed_cases[] = {
        {"keys: no record placeholders", "", "timestamp"},
        {"keys: dt={date}/hour={hour}", "{prefix}/dt={date}/hour={hour}/{partition}-{start_offset:020}.{ext}",
         "timestamp"},
        {"keys: + field:ts, header, field",
         "{prefix}/dt={date}/hour={hour}/ct={header:content-type}/tier={field:user.tier}/"
         "{partition}-{start_offset:020}.{ext}",
         "field:ts"},
    };
    for (const auto& k : keyed_cases) {
        const auto r = measure_keyed(c, plain, k.tmpl, k.source, seconds);
        fmt::print("{:<34} {:>12.0f} {:>14.1f} {:>15.1f} {:>8.3f} {:>5.0f}%\n", k.name, r.messages_per_s,
                   r.out_mb_per_s, r.payload_mb_per_s, r.ratio, r.cpu_share * 100);
    }
    return 0;
}

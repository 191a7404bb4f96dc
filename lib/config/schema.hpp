// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The schema, declared once (docs/architecture.md §8.6.2): `visit_schema` walks every key of
/// `sink_config` with its type and help text. Three visitors use it: the loader (YAML ->
/// struct, unknown keys, types), the printer (struct -> YAML, secrets as ****) and the
/// describer (docs/configuration.md and `--help-config`). Internal to lib/config.
///
/// A visitor provides:
///   section(key, help, fn)                  a nested mapping
///   optional_section(key, help, present, fn) a nested mapping whose absence means "off"
///                                           (`present`: the loader sets it, the printer
///                                           omits the section when false)
///   list(key, vec, help, fn(item))          a sequence of mappings
///   field(key, value, help)                 string, bool, u32/u64 counts, durations, secrets, named types
///   size(key, u64, help)                    a byte size
///   choice(key, enum, table, help)          one of named values
///   strings(key, vector<string>, help[, default_text])  a scalar or a sequence of scalars
///                                           (default_text for the docs: "(required)" unless given)
///   partitions(key, all, ids, help)         `all` or a sequence of ids
///   pairs(key, map, help)                   a mapping of names to string values
///   env_default(var[, unless])              the next key defaults to env VAR (docs, loader); with
///                                           `unless`, only while that sibling key is not set
///                                           to a non-empty value (VAR is then not read at all)
///   hide_next(bool)                         the printer omits the next key

#include "config/config.hpp"

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace iss::config::detail {

/// Field kinds the visitors treat apart: secrets (printed as ****) and named strings.
template <class T>
struct is_secret : std::false_type {};
template <class Tag>
struct is_secret<secret<Tag>> : std::true_type {};
template <class T>
struct is_named : std::false_type {};
template <class Tag>
struct is_named<named_type<std::string, Tag>> : std::true_type {};

template <class E>
struct choice {
    std::string_view name;
    E value;
};

// One table per choice: the YAML names of the module's own enum values (the first name of a
// value is the one printed and documented; later ones are aliases). The loader reads with it,
// the printer and the describer write with it, and validation's messages name values with it.
inline constexpr std::array<choice<proto::wire_protocol>, 4> protocol_choices{
    {{"auto", proto::wire_protocol::automatic},
     {"0.8", proto::wire_protocol::g1_0_8},
     {"0.9", proto::wire_protocol::g2_0_9},
     {"0.10", proto::wire_protocol::g2_0_10}}};
inline constexpr std::array<choice<pipeline::offset_reset_policy>, 2> offset_reset_choices{
    {{"fail", pipeline::offset_reset_policy::fail}, {"earliest", pipeline::offset_reset_policy::earliest}}};
inline constexpr std::array<choice<s3::addressing>, 7> path_style_choices{{{"auto", s3::addressing::automatic},
                                                                           {"true", s3::addressing::path},
                                                                           {"false", s3::addressing::virtual_hosted},
                                                                           {"yes", s3::addressing::path},
                                                                           {"no", s3::addressing::virtual_hosted},
                                                                           {"on", s3::addressing::path},
                                                                           {"off", s3::addressing::virtual_hosted}}};
/// `auto` is no value of s3::checksum_kind: the daemon decides after the start-up probe.
inline constexpr std::array<choice<std::optional<s3::checksum_kind>>, 4> checksum_choices{
    {{"auto", std::nullopt},
     {"md5", s3::checksum_kind::md5},
     {"crc32c", s3::checksum_kind::crc32c},
     {"none", s3::checksum_kind::none}}};
/// `auto` is no value of s3::payload_signing: the daemon decides from the endpoint.
inline constexpr std::array<choice<std::optional<s3::payload_signing>>, 3> payload_signing_choices{
    {{"auto", std::nullopt},
     {"signed", s3::payload_signing::signed_payload},
     {"unsigned", s3::payload_signing::unsigned_payload}}};
inline constexpr std::array<choice<pipeline::conditional_writes>, 3> conditional_writes_choices{
    {{"auto", pipeline::conditional_writes::auto_detect},
     {"required", pipeline::conditional_writes::required},
     {"off", pipeline::conditional_writes::off}}};
inline constexpr std::array<choice<format::record_format>, 6> format_type_choices{
    {{"json_lines", format::record_format::json_lines},
     {"json_array", format::record_format::json_array},
     {"raw", format::record_format::raw},
     {"csv", format::record_format::csv},
     {"parquet", format::record_format::parquet},
     {"avro", format::record_format::avro}}};
inline constexpr std::array<choice<format::parquet_codec>, 4> parquet_compression_choices{
    {{"snappy", format::parquet_codec::snappy},
     {"zstd", format::parquet_codec::zstd},
     {"gzip", format::parquet_codec::gzip},
     {"none", format::parquet_codec::none}}};
inline constexpr std::array<choice<format::avro_codec>, 3> avro_codec_choices{{{"null", format::avro_codec::null},
                                                                               {"deflate", format::avro_codec::deflate},
                                                                               {"snappy", format::avro_codec::snappy}}};
inline constexpr std::array<choice<aws::source_kind>, 7> credentials_source_choices{
    {{"auto", aws::source_kind::automatic},
     {"static", aws::source_kind::static_keys},
     {"env", aws::source_kind::env},
     {"web_identity", aws::source_kind::web_identity},
     {"profile", aws::source_kind::profile},
     {"container", aws::source_kind::container},
     {"imds", aws::source_kind::imds}}};
inline constexpr std::array<choice<s3::sse_type>, 5> sse_type_choices{{{"none", s3::sse_type::none},
                                                                       {"AES256", s3::sse_type::aes256},
                                                                       {"aws:kms", s3::sse_type::kms},
                                                                       {"aws:kms:dsse", s3::sse_type::kms_dsse},
                                                                       {"customer", s3::sse_type::customer}}};
inline constexpr std::array<choice<format::compression>, 3> compression_choices{
    {{"none", format::compression::none}, {"gzip", format::compression::gzip}, {"zstd", format::compression::zstd}}};
inline constexpr std::array<choice<format::payload_mode>, 4> payload_mode_choices{
    {{"auto", format::payload_mode::automatic},
     {"json", format::payload_mode::json},
     {"string", format::payload_mode::string},
     {"base64", format::payload_mode::base64}}};
inline constexpr std::array<choice<pipeline::bad_message_policy>, 3> bad_message_choices{
    {{"fail", pipeline::bad_message_policy::fail},
     {"skip", pipeline::bad_message_policy::skip},
     {"dead_letter", pipeline::bad_message_policy::dead_letter}}};
inline constexpr std::array<choice<iceberg::auth_kind>, 4> catalog_auth_choices{{{"none", iceberg::auth_kind::none},
                                                                                 {"bearer", iceberg::auth_kind::bearer},
                                                                                 {"oauth2", iceberg::auth_kind::oauth2},
                                                                                 {"sigv4", iceberg::auth_kind::sigv4}}};
inline constexpr std::array<choice<log::level>, 6> log_level_choices{{{"trace", log::level::trace},
                                                                      {"debug", log::level::debug},
                                                                      {"info", log::level::info},
                                                                      {"warn", log::level::warn},
                                                                      {"error", log::level::error},
                                                                      {"off", log::level::off}}};
inline constexpr std::array<choice<log::output_format>, 2> log_format_choices{
    {{"text", log::output_format::text}, {"json", log::output_format::json}}};

/// The names of a choice table joined by `separator`, each value once (the first of its
/// aliases): "auto, md5, crc32c" for error messages, "auto | md5 | crc32c" in the printer.
template <class E>
std::string choice_names(std::span<const choice<E>> choices, std::string_view separator) {
    std::string out;
    for (const auto& c : choices) {
        bool alias = false;
        for (const auto& d : choices) {
            if (&d == &c) break;
            if (d.value == c.value) alias = true;
        }
        if (alias) continue;
        if (!out.empty()) out += separator;
        out += c.name;
    }
    return out;
}

template <class E, std::size_t N>
std::span<const choice<E>> table(const std::array<choice<E>, N>& a) {
    return {a.data(), a.size()};
}

/// The (first) name of `v` in its table; "?" for a value the table lacks (a bug).
template <class E>
std::string_view choice_name(E v, std::span<const choice<E>> choices) {
    for (const auto& c : choices)
        if (c.value == v) return c.name;
    return "?";
}
template <class E, std::size_t N>
std::string_view choice_name(E v, const std::array<choice<E>, N>& a) {
    return choice_name(v, table(a));
}

/// The `iggy:` section and `sources:`.
template <class V, class C>
void visit_iggy(V& v, C& c) {
    v.section("iggy", "The Iggy server and the consumer.", [&] {
        auto& i = c.iggy;
        v.field("address", i.address, "host:port of the Iggy server's TCP listener (IPv6 as [::1]:8090).");
        v.field("username", i.username, "User for password login.");
        v.env_default("IGGY_PASSWORD", "token");
        v.field("password", i.password,
                "Password for `username` (secret). Absent: env IGGY_PASSWORD, unless `token` is set (then the "
                "variable is not read). Set this or `token`.");
        v.field("token", i.token, "Personal access token, instead of username/password (secret).");
        v.section("tls", "TLS to the Iggy server.", [&] {
            v.field("enabled", i.tls.enabled, "Connect with TLS.");
            v.field("ca_file", i.tls.ca_file, "PEM CA bundle to verify the server; empty: the system's trust store.");
            v.field("server_name", i.tls.server_name,
                    "Name checked in the server certificate (and sent as SNI unless it is an IP address); empty: the "
                    "host of `address`.");
        });
        v.hide_next(!i.consumer.empty());
        v.field("consumer_group", i.consumer_group,
                "Consumer group to join: the server assigns partitions among the group's members (group mode).");
        v.hide_next(i.consumer.empty());
        v.field(
            "consumer", i.consumer,
            "Instead of `consumer_group`: a single consumer with this name reading every configured partition itself.");
        v.section("poll", "Polling.", [&] {
            v.field("messages", i.poll.messages, "Messages asked for per poll request.");
            v.field("interval", i.poll.interval, "Wait after a poll that returned nothing.");
            v.field("max_idle_interval", i.poll.max_idle_interval,
                    "A partition whose polls keep coming back empty is polled less often: the wait doubles from "
                    "`interval` up to this (so thousands of idle partitions cost few requests); a message there waits "
                    "at most this long. 0: poll every partition every round.");
        });
        v.field("verify_checksum", i.verify_checksum,
                "Check every message's XXH3-64 checksum; a mismatch is a bad message.");
        v.size("max_response_bytes", i.max_response_bytes,
               "Largest poll reply accepted; a bigger frame closes the connection.");
        v.choice("protocol", i.protocol, table(protocol_choices),
                 "Wire protocol: `auto` detects at connect; `0.8` the G1 framing (Iggy 0.8.x); `0.9` the consensus "
                 "framing, protocol 0.11.0 (Iggy 0.9.x); `0.10` protocol 0.12.0 (Iggy 0.10.x, provisional).");
        v.choice("on_offset_reset", i.on_offset_reset, table(offset_reset_choices),
                 "A partition whose next offset lies past its newest offset: the topic was deleted and created "
                 "again, its offsets starting at 0. `fail`: stop that partition (readiness false, metric "
                 "offset_reset_partitions), the others go on; to read the new topic, point s3.prefix at a new "
                 "location (with iceberg: set iceberg.table to a new table) and restart. With iceberg a reset is also "
                 "found at a start: the table records the creation time of the topic its offsets are of. `earliest`: "
                 "read the new topic from its first message without a restart; needs {topic_created} in naming.key "
                 "(the topic's creation time: the new topic's objects get keys of their own, the old ones are never "
                 "overwritten); single consumer only; not with iceberg (docs/operations.md, Faults).");
    });
    v.list("sources", c.sources, "What to read: streams, their topics and partitions. At least one entry.",
           [&](auto& s) {
               v.field("stream", s.stream, "Stream name.");
               v.strings("topics", s.topics, "Topic names (one name or a list).");
               v.partitions("partitions", s.all_partitions, s.partitions,
                            "`all`, or a list of partition ids (from 0; single-consumer mode only: a group gets its "
                            "partitions from the server).");
           });
}

/// The `s3:` section.
template <class V, class C>
void visit_s3(V& v, C& c) {
    v.section("s3", "The bucket and the S3 client.", [&] {
        auto& s = c.s3;
        v.field("bucket", s.bucket, "Bucket name (required).");
        v.field("region", s.region, "Region used in the SigV4 signature (MinIO/RGW: usually us-east-1).");
        v.field("endpoint", s.endpoint,
                "Empty: AWS S3 for `region`. Otherwise http(s)://host[:port] of an S3-compatible store, no path.");
        v.choice("path_style", s.path_style, table(path_style_choices),
                 "`true`: https://host/bucket/key; `false`: https://bucket.host/key; `auto`: virtual-hosted on AWS "
                 "unless the bucket has dots, path style on a custom endpoint.");
        v.field("prefix", s.prefix,
                "`{prefix}` in naming.key (may contain `/`; may be empty). Not used with iceberg set (a warning).");
        v.env_default("AWS_ACCESS_KEY_ID");
        v.field("access_key_id", s.access_key_id, "Access key id. Absent: env AWS_ACCESS_KEY_ID.");
        v.env_default("AWS_SECRET_ACCESS_KEY");
        v.field(
            "secret_access_key", s.secret_access_key,
            "Secret access key (secret). Absent: env AWS_SECRET_ACCESS_KEY, only when access_key_id is absent too.");
        v.env_default("AWS_SESSION_TOKEN");
        v.field("session_token", s.session_token,
                "Session token of temporary credentials (secret). Absent: env AWS_SESSION_TOKEN, only when "
                "access_key_id is absent too.");
        v.section("tls", "TLS to the store.", [&] {
            v.field("ca_file", s.tls.ca_file, "PEM CA bundle for a private endpoint; empty: the system's trust store.");
            v.field("insecure", s.tls.insecure, "Skip certificate verification (tests only; never in production).");
        });
        v.size("part_size", s.part_size,
               "Multipart part size (5MiB to 5GiB). Objects larger than this go up as multipart uploads while they "
               "grow; memory per open object is about one part.");
        v.choice(
            "checksum", s.checksum, table(checksum_choices),
            "The one checksum sent with each upload: `auto` runs a probe at start (a PutObject with a deliberately "
            "wrong x-amz-checksum-crc32c) and uses x-amz-checksum-crc32c (hardware CRC-32C) when the store refuses it, "
            "else Content-MD5; `md5`: Content-MD5 (checked by every store); `crc32c`: x-amz-checksum-crc32c; `none`.");
        v.choice("payload_signing", s.payload_signing, table(payload_signing_choices),
                 "`auto`: UNSIGNED-PAYLOAD over https (TLS and the checksum protect the body, as the AWS SDKs do), "
                 "signed over plain http or with `s3.checksum: none`; `signed`: SigV4 signs the body's SHA-256; "
                 "`unsigned`: UNSIGNED-PAYLOAD (https only; saves hashing).");
        v.choice(
            "conditional_writes", s.conditional_writes, table(conditional_writes_choices),
            "If-None-Match writes (docs/architecture.md §3): `auto` probes the store at start, `required` refuses to "
            "start without them, `off` never sends them (a group rebalance may then duplicate data, never lose it).");
        v.section("timeouts", "Per-request deadlines.", [&] {
            v.field("connect", s.timeouts.connect, "TCP connect plus TLS handshake.");
            v.field("request", s.timeouts.request, "One request, from sending to the end of the response.");
        });
        v.section("retry", "Retries with full-jitter exponential backoff.", [&] {
            v.field("attempts", s.retry.attempts, "Attempts per operation (>= 1).");
            v.field("base", s.retry.base, "Backoff ceiling of the first retry; doubles each retry.");
            v.field("cap", s.retry.cap, "Largest backoff ceiling.");
            v.field(
                "deadline", s.retry.deadline,
                "Bound on one operation with all its retries. Group mode: at most 25s (the server forces a partition "
                "hand-over after 30s). Single consumer: 0 means none; a failed upload is retried without end.");
        });
        v.section("credentials", "Where the S3 credentials come from.", [&] {
            v.choice("source", s.credentials.source, table(credentials_source_choices),
                     "`auto`: the AWS SDKs' chain (static keys, env, web identity, profile, container, imds; the first "
                     "that answers); or one of them pinned. See docs/aws.md.");
        });
        v.section("assume_role", "STS AssumeRole on top of the credentials found (cross-account writes).", [&] {
            v.field("role_arn", s.assume_role.role_arn, "Role to assume; empty: none.");
            v.field("session_name", s.assume_role.session_name, "RoleSessionName; empty: iggy-s3-sink-<unix time>.");
            v.field("external_id", s.assume_role.external_id,
                    "ExternalId the role's trust policy asks for; empty: not sent.");
            v.field("duration", s.assume_role.duration, "Lifetime asked for (15m to 12h).");
        });
        v.field("sts_endpoint", s.sts_endpoint,
                "STS endpoint URL; empty: env AWS_ENDPOINT_URL_STS, else https://sts.<region>.amazonaws.com.");
        v.field("proxy", s.proxy,
                "HTTP proxy for S3 and STS, http://[user:password@]host:port (secret: printed as ****); empty: env "
                "HTTPS_PROXY / HTTP_PROXY, with NO_PROXY.");
        v.section("sse", "Server-side encryption of every object.", [&] {
            v.choice("type", s.sse.type, table(sse_type_choices),
                     "`AES256` (SSE-S3), `aws:kms` (SSE-KMS), `aws:kms:dsse`, `customer` (SSE-C: the key goes with "
                     "every write and read).");
            v.field("kms_key_id", s.sse.kms_key_id,
                    "aws:kms / aws:kms:dsse: key id or ARN; empty: the account's default key.");
            v.field("kms_context", s.sse.kms_context, "aws:kms / aws:kms:dsse: encryption context, a JSON object.");
            v.field("bucket_key_enabled", s.sse.bucket_key_enabled, "aws:kms: use an S3 Bucket Key.");
            v.field("customer_key", s.sse.customer_key, "customer: the 256-bit key, base64 (secret).");
        });
        v.field("storage_class", s.storage_class,
                "x-amz-storage-class of every object (STANDARD_IA, GLACIER_IR, ...); empty: the bucket's default.");
        v.field("acl", s.acl,
                "Canned ACL of every object (bucket-owner-full-control, private, ...); empty: none sent.");
        v.pairs("tags", s.tags, "Tags of every object (name: value), sent as x-amz-tagging.");
        v.pairs("metadata", s.metadata,
                "Extra user metadata of every object (lower-case names; printable ASCII values).");
    });
}

/// The `format:` and `rotation:` sections: what an object holds and when it closes.
template <class V, class C>
void visit_records(V& v, C& c) {
    v.section("format", "The records inside each object.", [&] {
        auto& f = c.format;
        v.choice("type", f.type, table(format_type_choices),
                 "`json_lines`: one JSON envelope per line (.jsonl); `json_array`: one JSON array (.json); `raw`: "
                 "payloads joined by `separator` (.bin); `csv` (.csv), `parquet` (.parquet), `avro` (.avro): typed "
                 "rows with the columns of `schema` (or the envelope's).");
        v.choice("compression", f.compression, table(compression_choices),
                 "`gzip` adds .gz and Content-Type application/gzip, `zstd` adds .zst and application/zstd (no "
                 "Content-Encoding, so downloads stay compressed files).");
        v.field("metadata", f.metadata,
                "JSON types: the envelope's stream, topic, partition_id, offset, id, timestamps. `false` keeps only "
                "payload (and headers).");
        v.field("headers", f.headers, "JSON types: the `headers` object of user headers.");
        v.choice("payload", f.payload, table(payload_mode_choices),
                 "JSON types: `auto` embeds valid JSON (minified), else valid UTF-8 as a string, else base64; `json` "
                 "requires JSON (anything else is a bad message); `string` (invalid UTF-8 replaced by U+FFFD) and "
                 "`base64` force one form.");
        v.field("compression_level", f.compression_level,
                "0: the codec's default (gzip 6, zstd 3). gzip 1 (fastest) to 9 (smallest), which keep zlib's meaning "
                "of each number (at most about zlib's size at the same level, in less CPU): 1 to 3 are ISA-L igzip's "
                "levels 1 to 3, 4 to 9 libdeflate's same levels; zstd 1 to 19, each open object holding zstd's state "
                "for the level within `memory.max_buffered` (3.7 MiB at 3, 89.8 MiB at 19: see docs/operations.md). "
                "Only with `format.compression`: Parquet pages and Avro blocks are compressed at their codec's default "
                "level. See docs/benchmarks.md.");
        v.field("separator", f.separator,
                "`raw` only: written between payloads (YAML escapes: \"\\n\"); may be empty.");
        v.list("schema", f.schema,
               "Typed formats (csv, parquet, avro): the columns, in order. Absent: the envelope (stream, topic, "
               "partition_id, offset, id, timestamp, origin_timestamp, headers, payload). See "
               "docs/formats-and-layout.md.",
               [&](auto& col) {
                   v.field("name", col.name, "Column name.");
                   v.field(
                       "type", col.type,
                       "string, int32, int64, float, double, boolean, timestamp_ms, timestamp_us, date, binary, json.");
                   v.field("from", col.from,
                           "payload:PATH (dotted), payload:. (whole payload), header:NAME, or stream, topic, "
                           "partition, offset, id, timestamp, origin_timestamp, payload.");
                   v.field("nullable", col.nullable,
                           "A missing value is null; `false`: the message is a bad message (delivery.on_bad_message).");
               });
        v.section("parquet", "format.type parquet.", [&] {
            v.choice("compression", f.parquet.compression, table(parquet_compression_choices),
                     "Page compression inside the file (format.compression must stay none).");
            v.size("row_group_size", f.parquet.row_group_size,
                   "Uncompressed bytes buffered per row group; a full row group is appended to the object (and goes up "
                   "as parts). Memory per open object is about one row group.");
        });
        v.section("csv", "format.type csv.", [&] {
            v.field("delimiter", f.csv.delimiter, "Field delimiter, one character (\"\\t\" for tabs).");
            v.field("null", f.csv.null, "How a null is written; an empty string is then written as \"\".");
        });
        v.section("avro", "format.type avro.", [&] {
            v.choice("codec", f.avro.codec, table(avro_codec_choices),
                     "Block compression inside the file (format.compression must stay none).");
        });
    });
    v.section("rotation",
              "When an object is closed and uploaded: whichever trigger fires first; 0 disables a time trigger.", [&] {
                  auto& r = c.rotation;
                  v.field("max_records", r.max_records, "Messages per object.");
                  v.size("max_bytes", r.max_bytes, "Bytes per object as uploaded (after compression).");
                  v.field("max_span", r.max_span,
                          "Span of message timestamps from the object's first message (record time, not wall clock).");
                  v.field("schedule", r.schedule,
                          "Close at wall-clock boundaries of this period, aligned in `timezone` (must divide 1d: 15m, "
                          "1h, 6h, 1d).");
                  v.field("timezone", r.timezone, "IANA time zone for `schedule`.");
                  v.field("idle", r.idle,
                          "Close when a partition has had no new message for this long, so quiet partitions get "
                          "uploaded and committed.");
                  v.field("max_open_objects", r.max_open_objects,
                          "Open objects per partition (one per encoded partition: keys that differ in more than "
                          "{start_offset}); above it the object with the oldest first message is closed first. Memory: "
                          "about one part per open object.");
              });
}

/// The `memory:`, `performance:`, `naming:`, `delivery:`, `shutdown:`, `log:` and `admin:` sections.
template <class V, class C>
void visit_daemon(V& v, C& c) {
    v.section("memory", "The memory and spool budget of the whole daemon (docs/operations.md, Sizing).", [&] {
        v.size(
            "max_buffered", c.memory.max_buffered,
            "Bytes held in memory for open objects and poll batches, all partitions together. Near it the partitions "
            "holding the most are not polled; at it the largest open objects are closed and uploaded early.");
        v.size("max_spool", c.memory.max_spool,
               "Bytes in spool files (object bytes beyond one part, on disk in the temp dir); an object whose next "
               "part would pass it is closed instead. 0: never spool (objects close at s3.part_size).");
        v.field("spool_dir", c.memory.spool_dir,
                "Directory of the spool files (unlinked, so a crash leaves nothing behind). Empty: $TMPDIR, else "
                "/tmp. Full, read-only or missing: objects are closed at about s3.part_size instead of spooling, "
                "/readyz names it and iggy_s3_sink_spool_errors_total counts it (docs/operations.md, Faults).");
    });
    v.section("performance", "Cores (docs/operations.md, Sizing).", [&] {
        v.field("workers", c.performance.workers,
                "Threads that format and compress records while the event loop does the network I/O; ordering and "
                "delivery per partition stay the same. 0 to 256. 0: one per core the process may use; 1: everything "
                "on the event-loop thread.");
    });
    v.section("naming", "Object keys.", [&] {
        v.field("key", c.naming.key,
                "Key template: {prefix} {stream} {topic} {partition} {start_offset} {topic_created} {ext}, numbers "
                "zero-padded as "
                "{start_offset:020}; record placeholders {yyyy} {MM} {dd} {HH} {mm} {date} {hour} {header:NAME} "
                "{field:PATH}. Must contain {partition} and {start_offset}; see docs/formats-and-layout.md. Not used "
                "with iceberg set (the table names its data files; a warning).");
        v.field("missing_value", c.naming.missing_value,
                "What {header:NAME} / {field:PATH} (and the time fields) render when the message has no such value "
                "(the Hive convention).");
        v.field("time_source", c.naming.time_source,
                "Record time of the time placeholders: `timestamp` (Iggy's append time), `origin_timestamp` (the "
                "producer's), `field:PATH` or `header:NAME` (epoch milliseconds as a number, or an RFC 3339 string). A "
                "message whose time cannot be read follows delivery.on_bad_message.");
        v.field(
            "timezone", c.naming.timezone,
            "IANA time zone of the time placeholders (its real offsets: a fall-back day has one local hour twice).");
    });
    v.section("delivery", "Messages that cannot be written.", [&] {
        v.choice("on_bad_message", c.delivery.on_bad_message, table(bad_message_choices),
                 "`fail`: stop that partition and log why; `skip`: count, log and go on; `dead_letter`: send the "
                 "message to `dead_letter` and go on.");
        v.section("dead_letter", "Iggy topic for bad messages (on_bad_message: dead_letter).", [&] {
            v.field("stream", c.delivery.dead_letter.stream, "Stream of the dead-letter topic.");
            v.field("topic", c.delivery.dead_letter.topic, "Dead-letter topic; must not be one of the sources.");
        });
    });
    v.section("shutdown", "Stopping.", [&] {
        v.field("grace", c.shutdown.grace,
                "After SIGTERM: time to finish, upload and commit what is buffered before exiting.");
    });
    v.section("log", "Logging (stderr).", [&] {
        v.choice("level", c.log.level, table(log_level_choices), "Minimum level.");
        v.choice("format", c.log.format, table(log_format_choices), "`text` or `json` (one JSON object per line).");
    });
    v.section("admin", "The admin HTTP server on the event loop: /metrics, /healthz, /readyz.", [&] {
        v.field("listen", c.admin.listen,
                "IP:PORT to serve on (`0.0.0.0:9464` for all interfaces, `[::]:9464` for IPv6); empty turns the server "
                "off. See docs/operations.md.");
        v.field("max_connections", c.admin.max_connections,
                "Connections served at once, 1 to 4096. A new connection beyond it closes the one that has waited "
                "longest for a request (idle first), so scrapes get through while idle or slow clients pile up; "
                "iggy_s3_sink_admin_connections_closed_total{reason=\"max_connections\"} counts them. Takes effect at "
                "the next start.");
    });
    v.optional_section(
        "iceberg",
        "Commit the Parquet objects to Apache Iceberg tables through a REST catalog (format 2, append only, exactly "
        "once: the Iggy offset is stored after the table commit). Absent: no table. Needs format.type parquet.",
        c.iceberg.enabled, [&] {
            auto& i = c.iceberg;
            v.section("catalog", "The Iceberg REST catalog.", [&] {
                v.field("uri", i.catalog.uri, "http(s)://host[:port][/path] of the REST catalog (required).");
                v.field("warehouse", i.catalog.warehouse,
                        "Warehouse sent to the catalog's GET v1/config (AWS S3 Tables: the table bucket ARN); empty: "
                        "not sent.");
                v.field("prefix", i.catalog.prefix,
                        "Path prefix after v1/ of every catalog request; empty: the one the catalog's config gives.");
                v.section("auth", "How catalog requests are authenticated.", [&] {
                    auto& a = i.catalog.auth;
                    v.choice(
                        "type", a.type, table(catalog_auth_choices),
                        "`none`; `bearer`: `token` in an Authorization header; `oauth2`: client credentials "
                        "exchanged for a token, refreshed before it expires; `sigv4`: each request signed with the "
                        "S3 credentials chain (AWS S3 Tables, Glue).");
                    v.field("token", a.token, "bearer: the token (secret).");
                    v.field("client_id", a.client_id, "oauth2: the client id.");
                    v.field("client_secret", a.client_secret, "oauth2: the client secret (secret).");
                    v.field("token_endpoint", a.token_endpoint,
                            "oauth2: the token endpoint URL; empty: the catalog's v1/oauth/tokens.");
                    v.field("scope", a.scope, "oauth2: the scope asked for.");
                    v.field("signing_name", a.signing_name,
                            "sigv4: the service name signed for: `s3tables` (AWS S3 Tables), `glue` (the Glue Iceberg "
                            "REST endpoint).");
                    v.field("signing_region", a.signing_region, "sigv4: the region signed for; empty: s3.region.");
                });
            });
            v.field("namespace", i.namespace_name, "Namespace of the tables (dots separate levels: `a.b`).");
            v.field("table", i.table,
                    "Table name; {stream} and {topic} are replaced by the source's names (the default makes one table "
                    "per source topic; topics may share one). Besides them: letters, digits, _ and - only.");
            v.field("create", i.create, "Create the namespace and the table when missing.");
            v.strings("partition_by", i.partition_by,
                      "Partition transforms over format.schema columns: identity(c), year(c), month(c), day(c), "
                      "hour(c), bucket(N, c), truncate(W, c). Each object holds one partition value.",
                      "[] (unpartitioned)");
            v.field("commit_interval", i.commit_interval,
                    "Durable objects are committed to the table in one snapshot at least this often (and at shutdown); "
                    "their offsets are stored in Iggy after the commit.");
        });
}

/// Walks the schema, section by section in the order of the help and the printed config.
/// C is `sink_config` or `const sink_config`.
template <class V, class C>
void visit_schema(V& v, C& c) {
    visit_iggy(v, c);
    visit_s3(v, c);
    visit_records(v, c);
    visit_daemon(v, c);
}

}  // namespace iss::config::detail

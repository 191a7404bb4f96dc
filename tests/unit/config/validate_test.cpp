// SPDX-License-Identifier: Apache-2.0
#include "config/config.hpp"
#include "test_env.hpp"

#include "catch2_compat.hpp"

#include <algorithm>
#include <functional>
#include <string>
#include <tuple>
#include <utility>

using namespace iss::config;
using namespace std::chrono_literals;

namespace {
sink_config valid() {
    auto l = parse(test::minimal_yaml(), test::fixed_env({}));
    REQUIRE(l.problems.empty());
    REQUIRE(validate(l.config).empty());
    return l.config;
}
/// The one problem `c` has (fails the test when there are none or several).
problem only_problem(const sink_config& c) {
    const auto ps = validate(c);
    std::string s;
    for (const auto& p : ps) s += to_string(p) + "\n";
    INFO(s);
    REQUIRE(ps.size() == 1);
    return ps[0];
}
bool mentions(const problem& p, std::string_view path, std::string_view text) {
    UNSCOPED_INFO(to_string(p));
    return p.path == path && p.message.find(text) != std::string::npos;
}
}  // namespace

TEST_CASE("validation reports every problem at once", "[config][validate]") {
    sink_config c;  // nothing set: no bucket, no sources, no password (credentials: the chain looks at start)
    c.rotation.max_records = 0;
    c.s3.credentials.source = iss::aws::source_kind::static_keys;  // pinned static: the keys are required
    c.s3.part_size = 1 * mib;
    const auto ps = validate(c);
    std::vector<std::string> paths;
    for (const auto& p : ps) paths.push_back(p.path);
    for (const char* expected : {"iggy.password", "sources", "s3.bucket", "s3.access_key_id", "s3.secret_access_key",
                                 "s3.part_size", "rotation.max_records"}) {
        INFO(expected);
        CHECK(std::find(paths.begin(), paths.end(), expected) != paths.end());
    }
    CHECK(to_string(problem{"rotation.max_records", "must be > 0", 0}) == "rotation.max_records: must be > 0");
}

TEST_CASE("iggy rules", "[config][validate]") {
    auto c = valid();
    c.iggy.address = "localhost";
    CHECK(mentions(only_problem(c), "iggy.address", "has no port"));
    c.iggy.address = "tcp://localhost:8090";
    CHECK(mentions(only_problem(c), "iggy.address", "without a scheme"));
    c.iggy.address = "[::1]:8090";
    CHECK(validate(c).empty());
    c.iggy.address = "::1:8090";
    CHECK(mentions(only_problem(c), "iggy.address", "[addr]:port"));
    c.iggy.address = "host:70000";
    CHECK(mentions(only_problem(c), "iggy.address", "1..65535"));
    // User info is named as the problem (not "[addr]:port") and the password is never echoed.
    c.iggy.address = "iggy:s3cr3t-pw@127.0.0.1:8090";
    CHECK(mentions(only_problem(c), "iggy.address", "'****@127.0.0.1:8090': user info (user@host) is not allowed"));
    CHECK(only_problem(c).message.find("s3cr3t-pw") == std::string::npos);
    c.iggy.address = "tcp://iggy:s3cr3t-pw@127.0.0.1:8090";
    CHECK(mentions(only_problem(c), "iggy.address", "'tcp://****@127.0.0.1:8090': user info"));
    CHECK(only_problem(c).message.find("s3cr3t-pw") == std::string::npos);
    c = valid();
    c.iggy.token = iss::iggy_token{"tok"};
    CHECK(mentions(only_problem(c), "iggy.token", "not both"));
    c.iggy.password = {};
    CHECK(validate(c).empty());
    c = valid();
    c.iggy.tls.ca_file = "/etc/ca.pem";
    CHECK(mentions(only_problem(c), "iggy.tls.ca_file", "enabled is false"));
    c = valid();
    c.iggy.poll.messages = 0;
    CHECK(mentions(only_problem(c), "iggy.poll.messages", "> 0"));
    c = valid();
    c.iggy.poll.interval = 0ms;
    CHECK(mentions(only_problem(c), "iggy.poll.interval", "busy loop"));
    c = valid();
    c.iggy.consumer_group = std::string(256, 'g');
    CHECK(mentions(only_problem(c), "iggy.consumer_group", "at most 255"));
    c = valid();
    c.iggy.max_response_bytes = 1024;
    CHECK(mentions(only_problem(c), "iggy.max_response_bytes", ">= 64KiB"));
}

TEST_CASE("sources rules", "[config][validate]") {
    auto c = valid();
    c.sources.push_back(source_section{"app", {"requests"}, true, {}});
    CHECK(mentions(only_problem(c), "sources[1].topics[0]", "listed twice"));
    c = valid();
    c.sources[0].topics.clear();
    CHECK(mentions(only_problem(c), "sources[0].topics", "at least one topic"));
    c = valid();
    c.sources[0].all_partitions = false;
    c.sources[0].partitions = {0, 1};
    CHECK(mentions(only_problem(c), "sources[0].partitions", "single-consumer mode"));
    c.iggy.consumer = "solo";
    c.s3.retry.deadline = 0ms;  // allowed for a single consumer
    CHECK(validate(c).empty());
    c.sources[0].partitions = {1, 1};
    CHECK(mentions(only_problem(c), "sources[0].partitions", "listed twice"));
    c.sources[0].partitions = {};
    CHECK(mentions(only_problem(c), "sources[0].partitions", "empty list"));
    c = valid();
    c.sources[0].stream = "";
    CHECK(mentions(only_problem(c), "sources[0].stream", "required"));
    c.sources[0].stream = "bad\xff";
    CHECK(mentions(only_problem(c), "sources[0].stream", "UTF-8"));
}

TEST_CASE("s3 rules", "[config][validate]") {
    auto c = valid();
    c.s3.bucket = iss::bucket_name{"My_Bucket"};
    CHECK(mentions(only_problem(c), "s3.bucket", "not a valid AWS bucket name"));
    c.s3.endpoint = "http://127.0.0.1:7480";
    CHECK(validate(c).empty());  // a private store's naming rules are its own
    c.s3.endpoint = "https://minio.local:9000/lake";
    CHECK(mentions(only_problem(c), "s3.endpoint", "must have no path"));
    c.s3.endpoint = "minio.local:9000";
    CHECK(mentions(only_problem(c), "s3.endpoint", "http:// or https://"));
    c = valid();
    c.s3.endpoint = "http://127.0.0.1:7480";
    c.s3.path_style = iss::s3::addressing::virtual_hosted;
    CHECK(mentions(only_problem(c), "s3.path_style", "IP-address endpoint"));
    c.s3.path_style = iss::s3::addressing::automatic;
    c.s3.payload_signing = iss::s3::payload_signing::unsigned_payload;
    CHECK(mentions(only_problem(c), "s3.payload_signing", "needs https"));
    c.s3.payload_signing = iss::s3::payload_signing::signed_payload;
    c.s3.tls.ca_file = "/ca.pem";
    CHECK(mentions(only_problem(c), "s3.tls.ca_file", "http://"));
    c = valid();
    c.s3.part_size = 5 * mib - 1;
    CHECK(mentions(only_problem(c), "s3.part_size", ">= 5MiB"));
    c.s3.part_size = 5 * mib;
    CHECK(validate(c).empty());
    c.s3.part_size = 5 * gib;
    CHECK(validate(c).empty());
    c.s3.part_size = 5 * gib + 1;
    CHECK(mentions(only_problem(c), "s3.part_size", "<= 5GiB"));
    c = valid();
    c.s3.access_key_id = {};
    CHECK(mentions(only_problem(c), "s3.access_key_id", "AWS_ACCESS_KEY_ID"));
    c = valid();
    c.s3.region = iss::region_name{""};
    CHECK(mentions(only_problem(c), "s3.region", "required"));
}

TEST_CASE("the retry deadline stays under the group hand-over", "[config][validate]") {
    auto c = valid();
    c.s3.retry.deadline = 30s;
    CHECK(mentions(only_problem(c), "s3.retry.deadline", "hand-over"));
    c.s3.retry.deadline = 25s;
    CHECK(validate(c).empty());
    c.s3.retry.deadline = 0ms;
    CHECK(mentions(only_problem(c), "s3.retry.deadline", "must be > 0 in group mode"));
    c.iggy.consumer = "solo";
    c.s3.retry.deadline = 10min;
    CHECK(validate(c).empty());
    c = valid();
    c.s3.retry.deadline = 5s;
    CHECK(mentions(only_problem(c), "s3.timeouts.request", "<= s3.retry.deadline"));
    c = valid();
    c.s3.retry.cap = 100ms;
    CHECK(mentions(only_problem(c), "s3.retry.cap", ">= s3.retry.base"));
    c = valid();
    c.s3.retry.attempts = 0;
    CHECK(mentions(only_problem(c), "s3.retry.attempts", ">= 1"));
}

TEST_CASE("format rules", "[config][validate]") {
    auto c = valid();
    c.format.compression = iss::format::compression::zstd;
    CHECK(validate(c).empty());
    c.format.compression_level = 19;
    CHECK(validate(c).empty());
    c.format.compression_level = 20;
    CHECK(mentions(only_problem(c), "format.compression_level", "1..19"));
    c.format.compression = iss::format::compression::gzip;
    c.format.compression_level = 10;
    CHECK(mentions(only_problem(c), "format.compression_level", "1..9"));
    c.format.compression_level = 1;
    CHECK(validate(c).empty());
    c.format.compression = iss::format::compression::none;
    CHECK(mentions(only_problem(c), "format.compression_level", "compression is none"));
    c = valid();
    c.format.separator = "|";
    CHECK(mentions(only_problem(c), "format.separator", "raw"));
    c.format.type = iss::format::record_format::raw;
    CHECK(validate(c).empty());
    c.format.separator = "";
    CHECK(validate(c).empty());
    c.format.payload = iss::format::payload_mode::json;
    CHECK(mentions(only_problem(c), "format.payload", "JSON types"));
}

TEST_CASE("rotation rules", "[config][validate]") {
    auto c = valid();
    c.rotation.max_bytes = 0;
    CHECK(mentions(only_problem(c), "rotation.max_bytes", "> 0"));
    c.rotation.max_bytes = 8 * mib * 10'001;
    CHECK(mentions(only_problem(c), "rotation.max_bytes", "10000 parts"));
    c = valid();
    c.rotation.schedule = 7min;
    CHECK(mentions(only_problem(c), "rotation.schedule", "divide a day"));
    c.rotation.schedule = 48h;
    CHECK(validate(c).empty());
    c.rotation.schedule = 0ms;
    c.rotation.idle = 0ms;
    CHECK(mentions(only_problem(c), "rotation.idle", "never upload"));
    c = valid();
    c.rotation.timezone = "Mars/Olympus_Mons";
    CHECK(mentions(only_problem(c), "rotation.timezone", "not a known IANA time zone"));
    c.rotation.timezone = "Europe/Berlin";
    CHECK(validate(c).empty());
}

TEST_CASE("naming: template problems are listed one per line under naming.key", "[config][validate]") {
    auto c = valid();
    c.naming.key = "{prefix}/{stream}/{end_offset}/{uuid}";
    const auto ps = validate(c);
    REQUIRE(ps.size() == 4);
    for (const auto& p : ps) CHECK(p.path == "naming.key");
    CHECK(ps[0].message.find("{end_offset}") != std::string::npos);
    CHECK(ps[1].message.find("{uuid}") != std::string::npos);
    c.naming.key = "{prefix}/{stream}/{start_offset}";
    CHECK(mentions(only_problem(c), "naming.key", "must contain {partition}"));
}

TEST_CASE("iggy.on_offset_reset: earliest needs {topic_created} in the key and a single consumer",
          "[config][validate]") {
    auto c = valid();
    c.iggy.consumer = "sink";
    c.iggy.on_offset_reset = iss::pipeline::offset_reset_policy::earliest;
    // The default key: the topic created again would render the old topic's keys.
    CHECK(mentions(only_problem(c), "iggy.on_offset_reset", "earliest needs {topic_created} in naming.key"));
    c.naming.key = "{prefix}/{stream}/{topic}/{topic_created}/{partition}/{start_offset:020}.{ext}";
    CHECK(validate(c).empty());
    c.iggy.consumer.clear();  // group mode: the group goes with its topic, a reset is never seen
    CHECK(mentions(only_problem(c), "iggy.on_offset_reset", "earliest is for a single consumer"));
    c.iggy.consumer = "sink";
    c.iggy.on_offset_reset = iss::pipeline::offset_reset_policy::fail;
    c.naming.key = "{prefix}/{partition}/{start_offset}";
    CHECK(validate(c).empty());  // fail: any key
    c.iggy.on_offset_reset = iss::pipeline::offset_reset_policy::earliest;
    c.iceberg.enabled = true;
    const auto ps = validate(c);
    CHECK(std::any_of(ps.begin(), ps.end(), [](const problem& p) {
        // why (the data files' keys would collide) and what to do (a new table)
        return mentions(p, "iggy.on_offset_reset", "earliest cannot be used with iceberg") &&
               mentions(p, "iggy.on_offset_reset", "old topic's keys") &&
               mentions(p, "iggy.on_offset_reset", "a new table (iceberg.table)");
    }));
}

TEST_CASE("naming: a key without {prefix} while a prefix is set", "[config][validate]") {
    auto c = valid();
    c.naming.key = "{stream}/{topic}/{partition}/{start_offset}";
    CHECK(mentions(only_problem(c), "naming.key", "has no {prefix}"));
    c.s3.prefix = "";
    CHECK(validate(c).empty());
}

TEST_CASE("naming: sources whose keys would collide", "[config][validate]") {
    auto c = valid();
    c.s3.prefix = "";
    c.naming.key = "{partition}/{start_offset}";
    CHECK(validate(c).empty());  // one stream, one topic: fine
    c.sources[0].topics.push_back("errors");
    CHECK(mentions(only_problem(c), "naming.key", "same keys"));
    c.naming.key = "{topic}/{partition}/{start_offset}";
    CHECK(validate(c).empty());
    c.sources.push_back(source_section{"other", {"requests"}, true, {}});
    CHECK(mentions(only_problem(c), "naming.key", "lacks {stream}"));
}

TEST_CASE("naming: keys longer than S3 allows", "[config][validate]") {
    auto c = valid();
    c.s3.prefix = std::string(1000, 'p');
    CHECK(mentions(only_problem(c), "naming.key", "1024"));
}

TEST_CASE("delivery rules", "[config][validate]") {
    auto c = valid();
    c.delivery.on_bad_message = iss::pipeline::bad_message_policy::dead_letter;
    CHECK(validate(c).size() == 2);  // stream and topic required
    c.delivery.dead_letter = {"app", "requests"};
    CHECK(mentions(only_problem(c), "delivery.dead_letter.topic", "one of the sources"));
    c.delivery.dead_letter = {"app", "s3-dead-letter"};
    CHECK(validate(c).empty());
    c.delivery.on_bad_message = iss::pipeline::bad_message_policy::fail;
    c.delivery.dead_letter = {"app", ""};
    CHECK(mentions(only_problem(c), "delivery.dead_letter", "both stream and topic"));
}

TEST_CASE("shutdown rules", "[config][validate]") {
    auto c = valid();
    c.shutdown.grace = 0ms;
    CHECK(mentions(only_problem(c), "shutdown.grace", "> 0"));
}

TEST_CASE("s3.endpoint host and port, bucket length and region auto follow the client's rules", "[config][validate]") {
    auto c = valid();
    c.s3.endpoint = "http://127.0.0.1:99999";
    CHECK(mentions(only_problem(c), "s3.endpoint", "the port must be 1..65535"));
    c.s3.endpoint = "http://127.0.0.1:0";
    CHECK(mentions(only_problem(c), "s3.endpoint", "the port must be 1..65535"));
    c.s3.endpoint = "http://127.0.0.1:80a";
    CHECK(mentions(only_problem(c), "s3.endpoint", "the port must be 1..65535"));
    c.s3.endpoint = "http://user:pw@rgw:7480";
    CHECK(mentions(only_problem(c), "s3.endpoint", "user info"));
    // The password is never echoed: the URL is quoted with its user info masked.
    c.s3.endpoint = "http://AKIAUSER:S3cr3tPass@rgw:7480";
    CHECK(mentions(only_problem(c), "s3.endpoint", "'http://****@rgw:7480': user info (user@host) is not allowed"));
    CHECK(only_problem(c).message.find("S3cr3tPass") == std::string::npos);
    CHECK(only_problem(c).message.find("AKIAUSER") == std::string::npos);
    c.s3.endpoint = "http://AKIAUSER:S3cr3tPass@rgw:7480/lake";
    for (const auto& p : validate(c)) CHECK(to_string(p).find("S3cr3tPass") == std::string::npos);
    c.s3.endpoint = "AKIAUSER:S3cr3tPass@rgw:7480";
    CHECK(mentions(only_problem(c), "s3.endpoint", "'****@rgw:7480' must start with http://"));
    c.s3.endpoint = "http://[::1:7480";
    CHECK(mentions(only_problem(c), "s3.endpoint", "no closing ']'"));
    c.s3.endpoint = "http://:7480";
    CHECK(mentions(only_problem(c), "s3.endpoint", "no host"));
    for (const char* ok :
         {"http://127.0.0.1:7480", "http://[::1]:7480", "https://minio.local", "https://s3.example:65535/"}) {
        INFO(ok);
        c.s3.endpoint = ok;
        CHECK(validate(c).empty());
    }
    c = valid();
    c.s3.endpoint = "http://127.0.0.1:7480";
    c.s3.bucket = iss::bucket_name{"nu"};
    CHECK(mentions(only_problem(c), "s3.bucket", "3 to 63"));
    c.s3.bucket = iss::bucket_name{std::string(64, 'b')};
    CHECK(mentions(only_problem(c), "s3.bucket", "3 to 63"));
    c = valid();
    c.s3.region = iss::region_name{"auto"};
    CHECK(mentions(only_problem(c), "s3.region", "needs s3.endpoint"));
    c.s3.endpoint = "https://acct.r2.cloudflarestorage.com";
    CHECK(validate(c).empty());
    // Every problem at once.
    c = valid();
    c.s3.endpoint = "http://127.0.0.1:99999";
    c.s3.bucket = iss::bucket_name{"nu"};
    CHECK(validate(c).size() == 2);
}

TEST_CASE("admin.listen: IP:PORT or empty", "[config][validate]") {
    auto c = valid();
    CHECK(c.admin.listen == "127.0.0.1:9464");
    for (const char* ok : {"", "0.0.0.0:9464", "[::]:9464", "[::1]:0", "127.0.0.1:0"}) {
        c.admin.listen = ok;
        INFO(ok);
        CHECK(validate(c).empty());
    }
    c.admin.listen = "localhost:9464";
    CHECK(mentions(only_problem(c), "admin.listen", "not an IP address"));
    c.admin.listen = "127.0.0.1";
    CHECK(mentions(only_problem(c), "admin.listen", "IP:PORT"));
    c.admin.listen = "127.0.0.1:99999";
    CHECK(mentions(only_problem(c), "admin.listen", "0..65535"));
    c.admin.listen = "::1:9464";
    CHECK(mentions(only_problem(c), "admin.listen", "IP:PORT"));
}

TEST_CASE("admin.max_connections: 1 to 4096, default 64", "[config][validate]") {
    auto c = valid();
    CHECK(c.admin.max_connections == 64);
    for (std::uint32_t ok : {1U, 64U, 4096U}) {
        c.admin.max_connections = ok;
        CHECK(validate(c).empty());
    }
    for (std::uint32_t bad : {0U, 4097U}) {
        c.admin.max_connections = bad;
        CHECK(mentions(only_problem(c), "admin.max_connections", "1 to 4096"));
    }
}

TEST_CASE("the remaining rules, one mutation each", "[config][validate]") {
    struct rule_case {
        const char* name;
        void (*mutate)(sink_config&);
        const char* path;
        const char* text;
    };
    const rule_case cases[] = {
        {"server name without TLS", [](sink_config& c) { c.iggy.tls.server_name = "iggy.local"; },
         "iggy.tls.server_name", "enabled is false"},
        {"password without user", [](sink_config& c) { c.iggy.username = ""; }, "iggy.username", "required"},
        {"huge poll", [](sink_config& c) { c.iggy.poll.messages = 2'000'000; }, "iggy.poll.messages", "<= 1000000"},
        {"slow poll", [](sink_config& c) { c.iggy.poll.interval = milliseconds{120'000}; }, "iggy.poll.interval",
         "<= 1m"},
        {"4 GiB reply", [](sink_config& c) { c.iggy.max_response_bytes = 4 * gib; }, "iggy.max_response_bytes",
         "< 4GiB"},
        {"consumer name",
         [](sink_config& c) {
             c.iggy.consumer = std::string(300, 'c');
             c.s3.retry.deadline = 0ms;
         },
         "iggy.consumer", "at most 255"},
        {"empty address", [](sink_config& c) { c.iggy.address = ""; }, "iggy.address", "required"},
        {"no host", [](sink_config& c) { c.iggy.address = ":8090"; }, "iggy.address", "no host"},
        {"topic name", [](sink_config& c) { c.sources[0].topics[0] = ""; }, "sources[0].topics[0]", "required"},
        {"insecure over http",
         [](sink_config& c) {
             c.s3.endpoint = "http://rgw:7480";
             c.s3.tls.insecure = true;
         },
         "s3.tls.insecure", "http://"},
        {"endpoint without host", [](sink_config& c) { c.s3.endpoint = "https://"; }, "s3.endpoint", "no host"},
        {"slash in a private bucket",
         [](sink_config& c) {
             c.s3.endpoint = "http://rgw:7480";
             c.s3.bucket = iss::bucket_name{"a/b"};
         },
         "s3.bucket", "must not contain '/'"},
        {"dotted bucket, virtual-hosted, https",
         [](sink_config& c) {
             c.s3.bucket = iss::bucket_name{"my.lake"};
             c.s3.path_style = iss::s3::addressing::virtual_hosted;
         },
         "s3.path_style", "fails TLS"},
        {"region with a space", [](sink_config& c) { c.s3.region = iss::region_name{"us east"}; }, "s3.region",
         "not a region"},
        {"no secret", [](sink_config& c) { c.s3.secret_access_key = {}; }, "s3.secret_access_key",
         "AWS_SECRET_ACCESS_KEY"},
        {"prefix control", [](sink_config& c) { c.s3.prefix = "a\tb"; }, "s3.prefix", "control"},
        {"connect 0", [](sink_config& c) { c.s3.timeouts.connect = 0ms; }, "s3.timeouts.connect", "> 0"},
        {"request 0", [](sink_config& c) { c.s3.timeouts.request = 0ms; }, "s3.timeouts.request", "> 0"},
        {"connect over deadline", [](sink_config& c) { c.s3.timeouts.connect = 20s; }, "s3.timeouts.connect",
         "<= s3.retry.deadline"},
        {"base 0", [](sink_config& c) { c.s3.retry.base = 0ms; }, "s3.retry.base", "> 0"},
        {"5 TiB object", [](sink_config& c) { c.rotation.max_bytes = 6ULL * 1024 * gib; }, "rotation.max_bytes",
         "5TiB"},
        {"no time zone", [](sink_config& c) { c.rotation.timezone = ""; }, "rotation.timezone", "required"},
        {"sub-second schedule", [](sink_config& c) { c.rotation.schedule = 500ms; }, "rotation.schedule",
         "divide a day"},
        {"dead letter stream name",
         [](sink_config& c) {
             c.delivery.on_bad_message = iss::pipeline::bad_message_policy::dead_letter;
             c.delivery.dead_letter = {std::string(256, 's'), "dlq"};
         },
         "delivery.dead_letter.stream", "at most 255"},
    };
    for (const auto& rc : cases) {
        INFO(rc.name);
        auto c = valid();
        rc.mutate(c);
        CHECK(mentions(only_problem(c), rc.path, rc.text));
    }
}

TEST_CASE("typed formats: compression refused for parquet and avro, schema problems by path", "[config][validate]") {
    auto c = valid();
    c.format.type = iss::format::record_format::parquet;
    CHECK(validate(c).empty());
    c.format.compression = iss::format::compression::gzip;
    CHECK(mentions(only_problem(c), "format.compression", "format.parquet.compression"));
    c.format.type = iss::format::record_format::avro;
    CHECK(mentions(only_problem(c), "format.compression", "format.avro.codec"));
    c.format.type = iss::format::record_format::csv;
    CHECK(validate(c).empty());  // csv is compressed like JSON
    c.format.compression = iss::format::compression::none;
    c.format.schema = {{"status", "int32", "payload:status", true}, {"when", "timestamp_ms", "payload:ts", false}};
    CHECK(validate(c).empty());
    c.format.schema.push_back({"status", "integer", "payload:", true});
    const auto ps = validate(c);
    std::vector<std::string> paths;
    for (const auto& p : ps) paths.push_back(p.path);
    CHECK(paths == std::vector<std::string>{"format.schema[2].type", "format.schema[2].from", "format.schema"});
    c.format.schema.pop_back();
    c.format.type = iss::format::record_format::json_lines;
    CHECK(mentions(only_problem(c), "format.schema", "applies only to format.type csv, parquet and avro"));
    c.format.type = iss::format::record_format::avro;
    c.format.schema[0].name = "1st-col";
    CHECK(mentions(only_problem(c), "format.schema[0].name", "not an Avro name"));
    c.format.schema[0].name = "status";
    c.format.csv.delimiter = "ab";
    CHECK(mentions(only_problem(c), "format.csv.delimiter", "one character"));
    c.format.csv.delimiter = ",";
    c.format.parquet.row_group_size = 1024;
    CHECK(mentions(only_problem(c), "format.parquet.row_group_size", "64KiB to 1GiB"));
}

TEST_CASE("credentials and object options are checked at start, each problem named", "[config][validate]") {
    auto c = valid();
    c.s3.access_key_id = {};
    c.s3.secret_access_key = {};
    CHECK(validate(c).empty());  // auto: the chain looks at start
    c.s3.credentials.source = iss::aws::source_kind::static_keys;
    CHECK(validate(c).size() == 2);  // both keys named
    const std::vector<std::tuple<std::string, std::function<void(sink_config&)>, std::string, std::string>> cases{
        {"pinned other source with keys", [](sink_config& x) { x.s3.credentials.source = iss::aws::source_kind::imds; },
         "s3.access_key_id", "ignored"},
        {"role arn", [](sink_config& x) { x.s3.assume_role.role_arn = "role/sink"; }, "s3.assume_role.role_arn", "ARN"},
        {"duration",
         [](sink_config& x) {
             x.s3.assume_role.role_arn = "arn:aws:iam::1:role/a";
             x.s3.assume_role.duration = 5min;
         },
         "s3.assume_role.duration", "15m"},
        {"session without role", [](sink_config& x) { x.s3.assume_role.session_name = "sink"; },
         "s3.assume_role.session_name", "role_arn"},
        {"https proxy", [](sink_config& x) { x.s3.proxy = iss::proxy_url{"https://p:443"}; }, "s3.proxy", "http://"},
        {"customer key length",
         [](sink_config& x) {
             x.s3.sse.type = iss::s3::sse_type::customer;
             x.s3.sse.customer_key = iss::sse_customer_key{"c2hvcnQ="};
         },
         "s3.sse.customer_key", "32 bytes"},
        {"customer key missing", [](sink_config& x) { x.s3.sse.type = iss::s3::sse_type::customer; },
         "s3.sse.customer_key", "required"},
        {"kms key without kms", [](sink_config& x) { x.s3.sse.kms_key_id = "k"; }, "s3.sse.kms_key_id", "aws:kms"},
        {"kms context not json",
         [](sink_config& x) {
             x.s3.sse.type = iss::s3::sse_type::kms;
             x.s3.sse.kms_context = "a=b";
         },
         "s3.sse.kms_context", "JSON"},
        {"acl", [](sink_config& x) { x.s3.acl = "everyone"; }, "s3.acl", "canned"},
        {"storage class", [](sink_config& x) { x.s3.storage_class = "standard"; }, "s3.storage_class", "upper case"},
        {"metadata non-ascii", [](sink_config& x) { x.s3.metadata["owner"] = "caf\xc3\xa9"; }, "s3.metadata.owner",
         "ASCII"},
        {"metadata upper case", [](sink_config& x) { x.s3.metadata["Owner"] = "a"; }, "s3.metadata", "lower-case"},
        {"metadata reserved", [](sink_config& x) { x.s3.metadata["iggy-first-offset"] = "1"; },
         "s3.metadata.iggy-first-offset", "sink's own"},
    };
    for (const auto& [name, edit, path, text] : cases) {
        INFO(name);
        auto x = valid();
        edit(x);
        CHECK(mentions(only_problem(x), path, text));
    }
    auto ok = valid();
    ok.s3.sse.type = iss::s3::sse_type::customer;
    ok.s3.sse.customer_key = iss::sse_customer_key{"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="};
    ok.s3.tags = {{"team", "data"}};
    CHECK(validate(ok).empty());
}

TEST_CASE("lake layout rules: time source, naming time zone, missing value, max_open_objects", "[config][validate]") {
    auto c = valid();
    c.naming.key =
        "{prefix}/{stream}/{topic}/dt={date}/hour={hour}/tenant={header:tenant}/{partition}-{start_offset:020}.{ext}";
    c.naming.time_source = "field:ts";
    c.naming.timezone = "Europe/Berlin";
    CHECK(validate(c).empty());
    c.naming.time_source = "wallclock";
    CHECK(mentions(only_problem(c), "naming.time_source", "field:PATH or header:NAME"));
    c.naming.time_source = "header:ts";
    c.naming.timezone = "Mars/Olympus";
    CHECK(mentions(only_problem(c), "naming.timezone", "not a known IANA time zone"));
    c.naming.timezone = "UTC";
    c.naming.missing_value = "";
    CHECK(mentions(only_problem(c), "naming.missing_value", "must not be empty"));
    c.naming.missing_value = "none";
    c.rotation.max_open_objects = 0;
    CHECK(mentions(only_problem(c), "rotation.max_open_objects", ">= 1"));
    c.rotation.max_open_objects = 32;
    c.naming.key = "{header:}/{partition}-{start_offset}";
    c.s3.prefix = "";
    CHECK(mentions(only_problem(c), "naming.key", "needs a header name"));
}

TEST_CASE("check-config warns when the finest time field is finer than the rotation would fill", "[config][validate]") {
    auto c = valid();
    CHECK(warnings(c).empty());  // the default key has no time field
    c.naming.key = "{prefix}/{stream}/{topic}/dt={date}/hour={hour}/{partition}-{start_offset:020}.{ext}";
    CHECK(warnings(c).empty());  // hours, max_span 10m: the rotation closes first
    c.naming.key = "{prefix}/{stream}/{topic}/{date}/{HH}{mm}/{partition}-{start_offset:020}.{ext}";
    c.rotation.max_records = 100'000;
    auto w = warnings(c);
    REQUIRE(w.size() == 1);
    CHECK(mentions(w[0], "naming.key", "finer than the rotation would fill"));
    CHECK(w[0].message.find("100000") != std::string::npos);
    CHECK(validate(c).empty());  // a warning never fails a start
    c.rotation.max_span = 30s;   // objects close every 30 s anyway: minutes fit
    c.rotation.schedule = 0ms;
    CHECK(warnings(c).empty());
}

TEST_CASE("a compressor's state per open object is weighed against memory.max_buffered", "[config][validate]") {
    auto c = valid();
    c.format.compression = iss::format::compression::zstd;
    c.format.compression_level = 9;  // 17 MiB per open object: 15 fit in 256 MiB
    CHECK(validate(c).empty());
    CHECK(warnings(c).empty());
    c.format.compression_level = 19;  // 89.8 MiB: 2 fit
    CHECK(validate(c).empty());
    auto w = warnings(c);
    REQUIRE(w.size() == 1);
    CHECK(mentions(w[0], "format.compression_level", "89.8MiB per open object"));
    CHECK(mentions(w[0], "format.compression_level", "fits the state of 2 open objects"));
    c.memory.max_buffered = 64ull << 20;  // not even one
    CHECK(mentions(only_problem(c), "memory.max_buffered", "not one object fits"));
    CHECK(mentions(only_problem(c), "memory.max_buffered", "89.8MiB (format.compression_level 19)"));
    c.format.compression_level = 3;
    CHECK(validate(c).empty());
    CHECK(warnings(c).empty());
    // Parquet and Avro compress inside: a level there is refused with what to do.
    c = valid();
    c.format.type = iss::format::record_format::parquet;
    c.format.compression_level = 9;
    CHECK(mentions(only_problem(c), "format.compression_level", "remove format.compression_level"));
    // Each warning once (a key with minutes and a budget below one part).
    c = valid();
    c.naming.key = "{prefix}/{stream}/{topic}/{date}/{HH}{mm}/{partition}-{start_offset:020}.{ext}";
    c.memory.max_buffered = 4ull << 20;
    w = warnings(c);
    CHECK(std::count_if(w.begin(), w.end(), [](const auto& p) { return p.path == "memory.max_buffered"; }) == 1);
}

TEST_CASE("check-config warns when nothing but TLS checks the bodies", "[config][validate]") {
    auto c = valid();
    c.s3.endpoint = "https://s3.example.com";
    c.s3.checksum = iss::s3::checksum_kind::none;
    CHECK(warnings(c).empty());  // payload_signing auto: signed (the body keeps one check)
    c.s3.payload_signing = iss::s3::payload_signing::unsigned_payload;
    CHECK(validate(c).empty());
    const auto w = warnings(c);
    REQUIRE(w.size() == 1);
    CHECK(mentions(w[0], "s3.checksum", "nothing but TLS checks the bodies"));
    c.s3.checksum = iss::s3::checksum_kind::crc32c;
    CHECK(warnings(c).empty());
}

TEST_CASE("performance.workers: 0 (one per core) to 256", "[config][validate]") {
    auto c = valid();
    CHECK(c.performance.workers == 0);  // the default: one per core
    for (std::uint32_t ok : {1u, 4u, 256u}) {
        c.performance.workers = ok;
        CHECK(validate(c).empty());
    }
    c.performance.workers = 257;
    CHECK(mentions(only_problem(c), "performance.workers", "0 (one per core) to 256"));
    // From YAML, and a value that is no number is named too.
    auto l = parse(test::minimal_yaml() + "performance:\n  workers: 4\n", test::fixed_env({}));
    REQUIRE(l.problems.empty());
    CHECK(l.config.performance.workers == 4);
    auto bad = parse(test::minimal_yaml() + "performance:\n  workers: many\n", test::fixed_env({}));
    REQUIRE(bad.problems.size() == 1);
    CHECK(bad.problems[0].path == "performance.workers");
}

namespace {
const char* iceberg_format =
    "format: {type: parquet, schema: [{name: ts, type: timestamp_us, from: timestamp, nullable: false},\n"
    "                                 {name: tenant, type: string, from: 'payload:tenant'}]}\n";
loaded iceberg_config(const std::string& section) {
    return parse(test::minimal_yaml() + iceberg_format + section, test::fixed_env({}));
}
}  // namespace

TEST_CASE("iceberg: absent means off, present turns it on with its defaults", "[config][validate][iceberg]") {
    CHECK_FALSE(valid().iceberg.enabled);
    auto l = iceberg_config("iceberg: {catalog: {uri: 'http://127.0.0.1:8181'}}\n");
    REQUIRE(l.problems.empty());
    const auto& i = l.config.iceberg;
    CHECK(i.enabled);
    CHECK(i.namespace_name == "iggy");
    CHECK(i.table == "{stream}_{topic}");
    CHECK(i.create);
    CHECK(i.partition_by.empty());
    CHECK(i.commit_interval == 1min);
    CHECK(i.catalog.auth.type == iss::iceberg::auth_kind::none);
    CHECK(validate(l.config).empty());
    // to_yaml prints the section only when it is on, and it reads back the same
    CHECK(to_yaml(valid()).find("iceberg:") == std::string::npos);
    const auto y = to_yaml(l.config);
    CHECK(y.find("iceberg:") != std::string::npos);
    const auto back = parse(y, test::fixed_env({}));
    CHECK(back.problems.empty());
    CHECK(back.config.iceberg.enabled);
    CHECK(back.config.iceberg.catalog.uri == "http://127.0.0.1:8181");
}

TEST_CASE("iceberg: every key is read", "[config][validate][iceberg]") {
    auto l = iceberg_config(
        "iceberg:\n"
        "  catalog: {uri: 'https://glue.eu-west-1.amazonaws.com/iceberg', warehouse: '123:s3tablescatalog/b',\n"
        "            prefix: 'catalogs/x', auth: {type: sigv4, signing_name: glue, signing_region: eu-west-1}}\n"
        "  namespace: lake.raw\n"
        "  table: '{topic}'\n"
        "  create: false\n"
        "  partition_by: ['day(ts)', 'identity(tenant)']\n"
        "  commit_interval: 5m\n");
    REQUIRE(l.problems.empty());
    const auto& i = l.config.iceberg;
    CHECK(i.catalog.warehouse == "123:s3tablescatalog/b");
    CHECK(i.catalog.prefix == "catalogs/x");
    CHECK(i.catalog.auth.type == iss::iceberg::auth_kind::sigv4);
    CHECK(i.catalog.auth.signing_name == "glue");
    CHECK(i.catalog.auth.signing_region == "eu-west-1");
    CHECK(i.namespace_name == "lake.raw");
    CHECK(i.table == "{topic}");
    CHECK_FALSE(i.create);
    CHECK(i.partition_by == std::vector<std::string>{"day(ts)", "identity(tenant)"});
    CHECK(i.commit_interval == 5min);
    CHECK(validate(l.config).empty());
    CHECK(iceberg_config("iceberg: {catalog: {uri: 'http://c', nope: 1}}\n").problems.size() == 1);
}

TEST_CASE("iceberg: a format other than parquet is refused, saying why", "[config][validate][iceberg]") {
    auto c = valid();
    c.iceberg.enabled = true;
    c.iceberg.catalog.uri = "http://127.0.0.1:8181";
    const auto p = only_problem(c);
    CHECK(mentions(p, "iceberg", "needs format.type parquet, not json_lines"));
    CHECK(mentions(p, "iceberg", "data files"));
}

TEST_CASE("iceberg: every problem is listed with its key", "[config][validate][iceberg]") {
    auto l = iceberg_config(
        "iceberg:\n"
        "  catalog: {uri: 'ftp://x', prefix: '/p', auth: {type: oauth2, token_endpoint: 'x', scope: ''}}\n"
        "  namespace: 'a..b'\n"
        "  table: '{stream}-{partition}'\n"
        "  partition_by: ['days(ts)', 'identity(nope)', 'hour(tenant)']\n"
        "  commit_interval: 0\n");
    REQUIRE(l.problems.empty());
    const auto ps = validate(l.config);
    std::string all;
    for (const auto& p : ps) all += to_string(p) + "\n";
    INFO(all);
    const auto has = [&](std::string_view path, std::string_view text) {
        return std::any_of(ps.begin(), ps.end(), [&](const problem& p) { return mentions(p, path, text); });
    };
    CHECK(has("iceberg.catalog.uri", "http:// or https://"));
    CHECK(has("iceberg.catalog.prefix", "must not start or end with /"));
    CHECK(has("iceberg.catalog.auth.client_id", "required with auth.type oauth2"));
    CHECK(has("iceberg.catalog.auth.client_secret", "required with auth.type oauth2"));
    CHECK(has("iceberg.catalog.auth.token_endpoint", "URL"));
    CHECK(has("iceberg.catalog.auth.scope", "must not be empty"));
    CHECK(has("iceberg.namespace", "separated by dots"));
    CHECK(has("iceberg.table", "\"partition\""));
    CHECK(has("iceberg.partition_by", "unknown transform `days`"));
    CHECK(has("iceberg.partition_by", "no column `nope`"));
    CHECK(has("iceberg.partition_by", "hour does not apply to column `tenant` of type string"));
    CHECK(has("iceberg.commit_interval", "must be > 0"));
    CHECK(ps.size() == 12);
}

TEST_CASE("iceberg: partition_by's syntax is checked even when a format.schema column is bad",
          "[config][validate][iceberg]") {
    // Issue 36: one bad column hid every partition_by problem, even `day(ts` and `bucket(0, x)`.
    auto l = parse(test::minimal_yaml() +
                       "format: {type: parquet, schema: [{name: ts, type: timestamp_us, from: timestamp},\n"
                       "                                 {name: broken, type: nope, from: 'payload:x'}]}\n"
                       "iceberg: {catalog: {uri: 'http://c'},\n"
                       "          partition_by: ['day(ts', 'bucket(0, ts)', 'identity(broken)', 'identity(nope)',\n"
                       "                         'hour(ts)']}\n",
                   test::fixed_env({}));
    REQUIRE(l.problems.empty());
    const auto ps = validate(l.config);
    std::string all;
    for (const auto& p : ps) all += to_string(p) + "\n";
    INFO(all);
    std::vector<std::string> partition_by;
    for (const auto& p : ps)
        if (p.path == "iceberg.partition_by") partition_by.push_back(to_string(p));
    CHECK(partition_by.size() == 3);  // day(ts, bucket(0, ...), no column nope; broken: its own problem
    CHECK(all.find("`day(ts`") != std::string::npos);
    CHECK(all.find("`bucket(0, ts)`") != std::string::npos);
    CHECK(all.find("no column `nope`") != std::string::npos);
    CHECK(all.find("no column `broken`") == std::string::npos);
    CHECK(std::any_of(ps.begin(), ps.end(), [](const problem& p) { return p.path.starts_with("format.schema"); }));
}

TEST_CASE("iceberg: a table name with characters no table name has is refused, naming them",
          "[config][validate][iceberg]") {
    // Issue 36: "{stream}/{topic}" made a table named `app/events`.
    auto l = iceberg_config("iceberg: {catalog: {uri: 'http://c'}, table: '{stream}/{topic}'}\n");
    CHECK(mentions(only_problem(l.config), "iceberg.table", "has \"/\", not valid in a table name"));
    l = iceberg_config("iceberg: {catalog: {uri: 'http://c'}, table: 'raw.{topic} x'}\n");
    CHECK(mentions(only_problem(l.config), "iceberg.table", "has \". \""));
    for (const char* ok : {"'{stream}_{topic}'", "everything", "'events-{topic}'"}) {
        l = iceberg_config(std::string{"iceberg: {catalog: {uri: 'http://c'}, table: "} + ok + "}\n");
        CHECK(validate(l.config).empty());
    }
}

TEST_CASE("iceberg: s3.prefix and naming.key set by the user are unused: a warning names each",
          "[config][validate][iceberg]") {
    auto l = iceberg_config("iceberg: {catalog: {uri: 'http://c'}}\n");
    CHECK(warnings(l.config).empty());  // their defaults: nothing to say
    l = parse(test::minimal_yaml() + iceberg_format +
                  "naming: {key: '{prefix}/{stream}/{topic}/{partition}/{start_offset:020}.{ext}'}\n"
                  "iceberg: {catalog: {uri: 'http://c'}}\n",
              test::fixed_env({}));
    l.config.s3.prefix = "raw";
    REQUIRE(l.problems.empty());
    CHECK(validate(l.config).empty());
    const auto w = warnings(l.config);
    const auto has = [&](std::string_view path, std::string_view text) {
        return std::any_of(w.begin(), w.end(), [&](const problem& p) { return mentions(p, path, text); });
    };
    CHECK(has("s3.prefix", "is not used with iceberg set"));
    CHECK(has("naming.key", "is not used with iceberg set"));
    l.config.iceberg.enabled = false;
    CHECK(warnings(l.config).empty());
}

TEST_CASE("iceberg: an auth key of another type than auth.type is a problem naming the key",
          "[config][validate][iceberg]") {
    // Issue 36: a token under type none (or oauth2 keys under bearer) was accepted and unused.
    auto l = iceberg_config("iceberg: {catalog: {uri: 'http://c', auth: {token: t0ps3cret}}}\n");
    auto p = only_problem(l.config);
    CHECK(mentions(p, "iceberg.catalog.auth.token", "is set, but auth.type is none (only bearer uses it)"));
    CHECK(to_string(p).find("t0ps3cret") == std::string::npos);
    l = iceberg_config(
        "iceberg: {catalog: {uri: 'http://c', auth: {type: bearer, token: t, client_id: i, scope: s,\n"
        "          signing_region: eu-west-1}}}\n");
    const auto ps = validate(l.config);
    const auto has = [&](std::string_view path, std::string_view text) {
        return std::any_of(ps.begin(), ps.end(), [&](const problem& q) { return mentions(q, path, text); });
    };
    CHECK(has("iceberg.catalog.auth.client_id", "auth.type is bearer (only oauth2 uses it)"));
    CHECK(has("iceberg.catalog.auth.scope", "set auth.type: oauth2"));
    CHECK(has("iceberg.catalog.auth.signing_region", "only sigv4 uses it"));
    CHECK(ps.size() == 3);
    l = iceberg_config(
        "iceberg: {catalog: {uri: 'http://c', auth: {type: sigv4, signing_name: s3tables, client_secret: x}}}\n");
    CHECK(mentions(only_problem(l.config), "iceberg.catalog.auth.client_secret", "only oauth2 uses it"));
    l = iceberg_config(
        "iceberg: {catalog: {uri: 'http://c', auth: {type: oauth2, client_id: i, client_secret: x, scope: s,\n"
        "          token_endpoint: 'https://idp/token'}}}\n");
    CHECK(validate(l.config).empty());
}

TEST_CASE("iceberg: auth keys per type, timestamp_ms refused", "[config][validate][iceberg]") {
    auto l = iceberg_config("iceberg: {catalog: {uri: 'http://c', auth: {type: bearer}}}\n");
    CHECK(mentions(only_problem(l.config), "iceberg.catalog.auth.token", "required with auth.type bearer"));
    l = iceberg_config("iceberg: {catalog: {uri: 'http://c', auth: {type: sigv4}}}\n");
    CHECK(mentions(only_problem(l.config), "iceberg.catalog.auth.signing_name", "s3tables"));
    l = iceberg_config("iceberg: {catalog: {uri: 'http://c', auth: {type: bearer, token: t0ps3cret}}}\n");
    CHECK(validate(l.config).empty());
    CHECK(to_yaml(l.config).find("t0ps3cret") == std::string::npos);
    l = parse(test::minimal_yaml() +
                  "format: {type: parquet, schema: [{name: at, type: timestamp_ms, from: timestamp}]}\n"
                  "iceberg: {catalog: {uri: 'http://c'}}\n",
              test::fixed_env({}));
    CHECK(mentions(only_problem(l.config), "format.schema", "use timestamp_us"));
    // the envelope schema (no format.schema) partitions by its own columns
    l = parse(test::minimal_yaml() + "format: {type: parquet}\n" +
                  "iceberg: {catalog: {uri: 'http://c'}, partition_by: ['day(timestamp)', 'identity(topic)']}\n",
              test::fixed_env({}));
    CHECK(validate(l.config).empty());
}

TEST_CASE("a refusal names the values the loader reads: one table per choice", "[config][validate]") {
    // The loader's "must be one of ..." and validation's refusal list the same names (the
    // schema's choice table), so what the refusal suggests is what the file may say.
    const auto listed = [](std::string_view yaml_tail, std::string_view path) {
        auto l = parse(test::minimal_yaml() + std::string{yaml_tail}, test::fixed_env({}));
        REQUIRE(l.problems.size() == 1);
        CHECK(l.problems[0].path == path);
        const std::string& m = l.problems[0].message;
        const auto from = m.find("one of ") + 7;
        return m.substr(from, m.find(", not ") - from);
    };
    const std::string parquet = listed("format: {parquet: {compression: lz4}}\n", "format.parquet.compression");
    const std::string avro = listed("format: {avro: {codec: bzip2}}\n", "format.avro.codec");
    CHECK(parquet == "snappy, zstd, gzip, none");
    auto c = valid();
    c.format.compression = iss::format::compression::gzip;
    c.format.type = iss::format::record_format::parquet;
    CHECK(mentions(only_problem(c), "format.compression", "format.parquet.compression (" + parquet + ")"));
    c.format.type = iss::format::record_format::avro;
    CHECK(mentions(only_problem(c), "format.compression", "format.avro.codec (" + avro + ")"));
    // Every name the refusal lists loads into the module's own value, which prints back as it.
    for (const auto& [name, codec] :
         {std::pair{"snappy", iss::format::parquet_codec::snappy}, std::pair{"zstd", iss::format::parquet_codec::zstd},
          std::pair{"gzip", iss::format::parquet_codec::gzip}, std::pair{"none", iss::format::parquet_codec::none}}) {
        auto l = parse(test::minimal_yaml() + "format: {type: parquet, parquet: {compression: " + name + "}}\n",
                       test::fixed_env({}));
        REQUIRE(l.problems.empty());
        CHECK(l.config.format.parquet.compression == codec);
        CHECK(to_yaml(l.config).find(std::string{"compression: "} + name) != std::string::npos);
    }
}

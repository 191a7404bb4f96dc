// SPDX-License-Identifier: Apache-2.0
#include "daemon/wiring.hpp"

#include "daemon/s3_wiring.hpp"
#include "s3/probe.hpp"

#include "catch2_compat.hpp"

using namespace iss;

TEST_CASE("wiring: iggy.address host:port and [v6]:port", "[daemon][wiring]") {
    config::sink_config c;
    c.iggy.address = "iggy.example:8090";
    auto o = app::iggy_options(c);
    REQUIRE(o.has_value());
    CHECK(o->host == "iggy.example");
    CHECK(o->port == 8090);
    c.iggy.address = "[::1]:9000";
    CHECK(app::iggy_options(c)->host == "::1");
    CHECK(app::iggy_options(c)->port == 9000);
    c.iggy.address = "nohost";
    CHECK(app::iggy_options(c).has_error());
    c.iggy.address = "h:0";
    CHECK(app::iggy_options(c).has_error());
}

TEST_CASE("wiring: sources become one consumer source per topic, partitions kept", "[daemon][wiring]") {
    config::sink_config c;
    c.sources.push_back({"app", {"requests", "errors"}, true, {}});
    c.sources.push_back({"billing", {"invoices"}, false, {0, 2}});
    c.iggy.consumer = "solo";
    auto o = app::consumer_options(c);
    CHECK(o.mode == pipeline::consumer_mode::single);
    REQUIRE(o.sources.size() == 3);
    CHECK(o.sources[1].topic == pipeline::topic_ref{"app", "errors"});
    CHECK_FALSE(o.sources[1].partitions.has_value());
    CHECK(*o.sources[2].partitions == std::vector<std::uint32_t>{0, 2});
    CHECK(app::consumer_name(c) == "solo");
    c.iggy.consumer.clear();
    CHECK(app::consumer_options(c).mode == pipeline::consumer_mode::group);
    CHECK(app::consumer_name(c) == "s3-sink");
}

TEST_CASE("wiring: rotation durations keep their units", "[daemon][wiring]") {
    config::sink_config c;
    c.rotation.max_span = std::chrono::milliseconds{1500};
    c.rotation.schedule = std::chrono::hours{1};
    auto r = app::rotation_options(c);
    CHECK(r.max_span == std::chrono::microseconds{1'500'000});
    CHECK(r.schedule == std::chrono::seconds{3600});
    CHECK(r.idle == std::chrono::minutes{1});
}

TEST_CASE("wiring: s3.payload_signing auto is UNSIGNED-PAYLOAD over https only", "[daemon][wiring][s3]") {
    config::sink_config c;
    CHECK(c.s3.payload_signing == std::nullopt);  // the default
    CHECK(c.s3.checksum == std::nullopt);         // the default
    c.s3.endpoint = "https://s3.example:9000";
    CHECK(app::s3_options(c).payload == s3::payload_signing::unsigned_payload);
    c.s3.endpoint = "HTTPS://s3.example";
    CHECK(app::s3_options(c).payload == s3::payload_signing::unsigned_payload);
    c.s3.endpoint = "";  // AWS: https
    CHECK(app::s3_options(c).payload == s3::payload_signing::unsigned_payload);
    c.s3.endpoint = "http://127.0.0.1:7480";
    CHECK(app::s3_options(c).payload == s3::payload_signing::signed_payload);
    c.s3.endpoint = "http://https.example";
    CHECK(app::s3_options(c).payload == s3::payload_signing::signed_payload);
    // auto relies on the body checksum over https: without one the payload is signed.
    c.s3.endpoint = "https://s3.example";
    c.s3.checksum = s3::checksum_kind::none;
    CHECK(app::s3_options(c).payload == s3::payload_signing::signed_payload);
    c.s3.checksum = s3::checksum_kind::md5;
    CHECK(app::s3_options(c).payload == s3::payload_signing::unsigned_payload);
    // Explicit values stay as given.
    c.s3.payload_signing = s3::payload_signing::signed_payload;
    c.s3.endpoint = "https://s3.example";
    CHECK(app::s3_options(c).payload == s3::payload_signing::signed_payload);
    c.s3.payload_signing = s3::payload_signing::unsigned_payload;
    CHECK(app::s3_options(c).payload == s3::payload_signing::unsigned_payload);
}

TEST_CASE("wiring: s3.checksum auto starts as Content-MD5 until the probe decides; explicit values kept",
          "[daemon][wiring][s3]") {
    config::sink_config c;
    CHECK(app::s3_options(c).checksum == s3::checksum_kind::md5);
    c.s3.checksum = s3::checksum_kind::crc32c;
    CHECK(app::s3_options(c).checksum == s3::checksum_kind::crc32c);
    c.s3.checksum = s3::checksum_kind::none;
    CHECK(app::s3_options(c).checksum == s3::checksum_kind::none);
    CHECK(s3::automatic_checksum(s3::capability::yes) == s3::checksum_kind::crc32c);
    CHECK(s3::automatic_checksum(s3::capability::no) == s3::checksum_kind::md5);
    CHECK(s3::automatic_checksum(s3::capability::unknown) == s3::checksum_kind::md5);
}

TEST_CASE("wiring: the start-up log says which checksum and payload signing were picked, and why",
          "[daemon][wiring][s3]") {
    config::sink_config c;
    CHECK(app::describe_checksum(c, s3::capability::yes, "") ==
          "auto: crc32c (the store refused a wrong x-amz-checksum-crc32c)");
    CHECK(app::describe_checksum(c, s3::capability::no, "PutObject with a wrong x-amz-checksum-crc32c answered 200") ==
          "auto: md5 (PutObject with a wrong x-amz-checksum-crc32c answered 200)");
    CHECK(app::describe_checksum(c, s3::capability::unknown, "") == "auto: md5 (the store's CRC-32C check is unknown)");
    c.s3.checksum = s3::checksum_kind::md5;
    CHECK(app::describe_checksum(c, s3::capability::yes, "") == "md5 (set in the configuration)");
    c.s3.checksum = s3::checksum_kind::crc32c;
    CHECK(app::describe_checksum(c, s3::capability::no, "x") == "crc32c (set in the configuration)");

    c.s3.endpoint = "https://s3.example";
    CHECK(app::describe_payload_signing(c) ==
          "auto: UNSIGNED-PAYLOAD (https endpoint: TLS and the body checksum protect the body)");
    c.s3.endpoint = "";
    CHECK(app::describe_payload_signing(c) ==
          "auto: UNSIGNED-PAYLOAD (AWS, over https: TLS and the body checksum protect the body)");
    c.s3.endpoint = "http://127.0.0.1:7480";
    CHECK(app::describe_payload_signing(c) ==
          "auto: signed (the body's SHA-256) (plain http endpoint: only the signature protects the body in transit)");
    c.s3.endpoint = "https://s3.example";
    c.s3.checksum = s3::checksum_kind::none;
    CHECK(app::describe_payload_signing(c) ==
          "auto: signed (the body's SHA-256) (s3.checksum: none: only the signature protects the body)");
    c.s3.payload_signing = s3::payload_signing::signed_payload;
    CHECK(app::describe_payload_signing(c) == "signed (the body's SHA-256) (set in the configuration)");
}

TEST_CASE("wiring: the delivery options take s3.part_size, s3.retry, delivery.* and the mode from the config",
          "[daemon][wiring]") {
    config::sink_config c;
    c.iggy.consumer = "";  // group mode
    c.iggy.consumer_group = "lake";
    c.s3.part_size = 16ULL << 20;
    c.s3.retry.base = std::chrono::milliseconds{300};
    c.s3.retry.cap = std::chrono::milliseconds{9000};
    c.rotation.max_open_objects = 7;
    c.delivery.on_bad_message = pipeline::bad_message_policy::dead_letter;
    c.delivery.dead_letter = {"errors", "bad"};
    c.s3.conditional_writes = pipeline::conditional_writes::required;
    pipeline::delivery_plan plan;
    plan.guarantee = "exactly once";
    const auto o = app::delivery_options(c, plan);
    CHECK(o.part_size == (16ULL << 20));
    CHECK(o.mode == pipeline::consumer_mode::group);
    CHECK(o.plan.guarantee == "exactly once");
    CHECK(o.on_bad_message == pipeline::bad_message_policy::dead_letter);
    CHECK(o.retry_backoff.base == std::chrono::milliseconds{300});
    CHECK(o.retry_backoff.cap == std::chrono::milliseconds{9000});
    CHECK(o.max_open_objects == 7);
    CHECK(app::conditional_writes(c) == pipeline::conditional_writes::required);

    const auto ports = app::iggy_ports_options(c);
    CHECK(ports.group_mode);
    CHECK(ports.consumer_name == "lake");
    CHECK(ports.dead_letter.stream == "errors");
    CHECK(ports.dead_letter.topic == "bad");

    c.iggy.consumer = "single-one";
    CHECK(app::consumer_mode(c) == pipeline::consumer_mode::single);
    CHECK(app::iggy_ports_options(c).consumer_name == "single-one");
    CHECK_FALSE(app::iggy_ports_options(c).group_mode);
}

TEST_CASE("wiring: iceberg.catalog -> the catalog client's options", "[daemon][wiring][iceberg]") {
    config::sink_config c;
    c.s3.region = region_name{"eu-west-1"};
    c.iceberg.enabled = true;
    c.iceberg.catalog.uri = "https://s3tables.eu-west-1.amazonaws.com/iceberg";
    c.iceberg.catalog.warehouse = "arn:aws:s3tables:eu-west-1:111122223333:bucket/lake";
    c.iceberg.catalog.auth.type = iceberg::auth_kind::sigv4;
    c.iceberg.catalog.auth.signing_name = "s3tables";
    std::shared_ptr<aws::credentials_source> creds =
        std::make_shared<aws::fixed_source>(sigv4::credentials{access_key_id{"AK"}, secret_access_key{"SK"}, {}});
    auto o = app::catalog_options(c, creds);
    CHECK(o.uri == "https://s3tables.eu-west-1.amazonaws.com/iceberg");
    CHECK(o.warehouse == "arn:aws:s3tables:eu-west-1:111122223333:bucket/lake");
    CHECK(o.auth.kind == iceberg::auth_kind::sigv4);
    CHECK(o.auth.signing_name == "s3tables");
    CHECK(o.auth.signing_region == "eu-west-1");  // s3.region when auth.signing_region is empty
    CHECK(o.auth.credentials == creds);
    c.iceberg.catalog.auth.signing_region = "us-east-1";
    CHECK(app::catalog_options(c, creds).auth.signing_region == "us-east-1");

    c.iceberg.catalog.auth = {};
    c.iceberg.catalog.auth.type = iceberg::auth_kind::oauth2;
    c.iceberg.catalog.auth.client_id = "sink";
    c.iceberg.catalog.auth.client_secret = oauth2_client_secret{"s3cr3t"};
    o = app::catalog_options(c, creds);
    CHECK(o.auth.kind == iceberg::auth_kind::oauth2);
    CHECK(o.auth.client_id == "sink");
    CHECK(o.auth.client_secret.reveal() == "s3cr3t");
    CHECK(o.auth.credentials == nullptr);  // only sigv4 signs with the S3 credentials
}

TEST_CASE("wiring: iceberg table per source partition; Parquet field ids only with iceberg",
          "[daemon][wiring][iceberg]") {
    config::sink_config c;
    c.iceberg.namespace_name = "analytics.iggy";
    c.iceberg.table = "{stream}_{topic}";
    const auto t = app::iceberg_table(c, {"app", "events", 2});
    CHECK(t.ns == std::vector<std::string>{"analytics", "iggy"});
    CHECK(t.name == "app_events");

    c.format.type = format::record_format::parquet;
    c.format.schema.push_back({"tenant", "string", "payload:tenant", true});
    c.format.schema.push_back({"ts", "timestamp_us", "payload:ts", false});
    CHECK(app::writer_options(c).parquet.field_ids.empty());
    c.iceberg.enabled = true;
    const auto ids = app::writer_options(c).parquet.field_ids;
    REQUIRE(ids.size() == 2);
    CHECK(ids[0].id == 1);
    CHECK(ids[1].id == 2);
}

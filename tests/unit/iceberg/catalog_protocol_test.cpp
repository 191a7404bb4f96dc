// SPDX-License-Identifier: Apache-2.0
#include "iceberg/catalog_protocol.hpp"

#include "http/types.hpp"

#include "catch2_compat.hpp"

#include <string>

using namespace iss;
using namespace iss::iceberg;
using Catch::Matchers::ContainsSubstring;

TEST_CASE("catalog targets carry the base path, the prefix and the %1F namespace separator", "[iceberg]") {
    const catalog_paths p{"/iceberg/", "arn%3Aaws%3As3tables%3Aus-east-1%3A1%3Abucket%2Fb"};
    const table_ident t{{"analytics", "iggy events"}, "orders/v1"};
    CHECK(p.namespaces() == "/iceberg/v1/arn%3Aaws%3As3tables%3Aus-east-1%3A1%3Abucket%2Fb/namespaces");
    CHECK(p.table(t) ==
          "/iceberg/v1/arn%3Aaws%3As3tables%3Aus-east-1%3A1%3Abucket%2Fb/namespaces/analytics%1Figgy%20events/"
          "tables/orders%2Fv1");
    CHECK(p.config("arn:aws:s3tables:us-east-1:1:bucket/b") ==
          "/iceberg/v1/config?warehouse=arn%3Aaws%3As3tables%3Aus-east-1%3A1%3Abucket%2Fb");
    CHECK(p.oauth_tokens() == "/iceberg/v1/oauth/tokens");

    const catalog_paths bare{"", ""};
    CHECK(bare.tables({"ns"}) == "/v1/namespaces/ns/tables");
    CHECK(bare.config("") == "/v1/config");
    CHECK(t.to_string() == "analytics.iggy events.orders/v1");
}

TEST_CASE("the config's prefix override is the prefix; defaults are kept apart", "[iceberg]") {
    auto c = parse_config(R"({"defaults":{"clients":"4"},"overrides":{"prefix":"wh1"},"endpoints":[]})");
    REQUIRE(c.has_value());
    CHECK(c->prefix() == "wh1");
    CHECK(c->defaults.at("clients") == "4");
    auto none = parse_config(R"({"defaults":{},"overrides":{}})");
    REQUIRE(none.has_value());
    CHECK(none->prefix().empty());
    auto bad = parse_config("<html>");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error() == catalog_errc::bad_response);
}

TEST_CASE("a LoadTableResult gives the metadata text and its uuid, location and snapshot", "[iceberg]") {
    const std::string body =
        R"({"metadata-location":"s3://b/wh/ns/t/metadata/00001.json","config":{"token":"x"},)"
        R"("metadata":{"format-version":2,"table-uuid":"u-1","location":"s3://b/wh/ns/t","current-snapshot-id":42,)"
        R"("snapshots":[{"snapshot-id":42,"summary":{"operation":"append"}}]}})";
    auto t = parse_load_table(body);
    REQUIRE(t.has_value());
    CHECK(t->metadata_location == "s3://b/wh/ns/t/metadata/00001.json");
    CHECK(t->table_uuid == "u-1");
    CHECK(t->location == "s3://b/wh/ns/t");
    CHECK(t->format_version == 2);
    CHECK(t->current_snapshot_id == 42);
    CHECK(t->config.at("token") == "x");
    CHECK_THAT(t->metadata_json, ContainsSubstring(R"("snapshots":[{"snapshot-id":42)"));

    auto empty = parse_load_table(
        R"({"metadata":{"format-version":2,"table-uuid":"u","location":"s3://b/t","current-snapshot-id":-1}})");
    REQUIRE(empty.has_value());
    CHECK_FALSE(empty->current_snapshot_id.has_value());

    auto no_uuid = parse_load_table(R"({"metadata":{"format-version":2,"location":"s3://b/t"}})");
    REQUIRE_FALSE(no_uuid.has_value());
    CHECK(no_uuid.error() == catalog_errc::bad_response);
    CHECK_THAT(no_uuid.error().message(), ContainsSubstring("table-uuid"));
    CHECK_FALSE(parse_load_table(R"({"metadata-location":"x"})").has_value());
}

TEST_CASE("a create-table body holds the schema, the spec and format version 2", "[iceberg]") {
    create_table_request r;
    r.name = "events";
    r.schema_json = R"({"type":"struct","schema-id":0,"fields":[{"id":1,"name":"a","required":false,"type":"long"}]})";
    r.partition_spec_json = R"({"spec-id":0,"fields":[]})";
    auto b = create_table_body(r);
    REQUIRE(b.has_value());
    CHECK_THAT(*b, ContainsSubstring(R"("name":"events")"));
    CHECK_THAT(*b, ContainsSubstring(R"("schema":{"type":"struct","schema-id":0,)"));
    CHECK_THAT(*b, ContainsSubstring(R"("partition-spec":{"spec-id":0,"fields":[]})"));
    CHECK_THAT(*b, ContainsSubstring(R"("format-version":"2")"));
    CHECK_THAT(*b, ContainsSubstring(R"("stage-create":false)"));
    CHECK(b->find("location") == std::string::npos);

    r.schema_json = "not json";
    auto bad = create_table_body(r);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error() == catalog_errc::bad_request);
    CHECK(create_namespace_body({"a", "b"}) == R"({"namespace":["a","b"]})");
}

TEST_CASE("an OAuth2 token answer gives the token and its lifetime", "[iceberg]") {
    auto t = parse_oauth_token(
        R"({"access_token":"tok","token_type":"bearer","expires_in":3600,"issued_token_type":"urn:x"})");
    REQUIRE(t.has_value());
    CHECK(t->access_token == "tok");
    CHECK(t->expires_in == std::chrono::seconds{3600});
    auto forever = parse_oauth_token(R"({"access_token":"tok","token_type":"bearer"})");
    REQUIRE(forever.has_value());
    CHECK_FALSE(forever->expires_in.has_value());
    CHECK_FALSE(parse_oauth_token(R"({"token_type":"bearer"})").has_value());
}

TEST_CASE("statuses map to what the table step does next", "[iceberg]") {
    const std::string conflict =
        R"({"error":{"message":"Requirement failed: branch main has changed","type":"CommitFailedException","code":409}})";
    auto c = classify(catalog_op::commit, 409, conflict, "table ns.t", "http://cat");
    CHECK(c == catalog_errc::commit_conflict);
    CHECK_THAT(c.message(), ContainsSubstring("CommitFailedException: Requirement failed"));
    CHECK(retryable(c));
    CHECK(classify(catalog_op::create_table, 409, "{}", "table ns.t", "u") == catalog_errc::already_exists);
    CHECK(classify(catalog_op::create_namespace, 409, "", "namespace ns", "u") == catalog_errc::already_exists);

    for (unsigned s : {500U, 502U, 503U, 504U}) {
        INFO(s);
        CHECK(classify(catalog_op::commit, s, "", "table ns.t", "u") == catalog_errc::unknown_outcome);
        CHECK(classify(catalog_op::load_table, s, "", "table ns.t", "u") == catalog_errc::unavailable);
    }
    CHECK(classify(catalog_op::load_table, 429, "", "table ns.t", "u") == catalog_errc::unavailable);

    auto unauth = classify(catalog_op::load_table, 401, "", "table ns.t", "http://cat");
    CHECK(unauth == catalog_errc::unauthorized);
    CHECK_THAT(unauth.message(), ContainsSubstring("iceberg.catalog.auth"));
    CHECK_FALSE(retryable(unauth));
    CHECK(classify(catalog_op::commit, 419, "", "t", "u") == catalog_errc::unauthorized);
    auto forbidden = classify(catalog_op::commit, 403, "", "table ns.t", "u");
    CHECK(forbidden == catalog_errc::forbidden);
    CHECK_THAT(forbidden.message(), ContainsSubstring("grant it access to table ns.t"));
    auto missing = classify(catalog_op::load_table, 404,
                            R"({"error":{"message":"Table does not exist: ns.t","type":"NoSuchTableException"}})",
                            "table ns.t", "u");
    CHECK(missing == catalog_errc::not_found);
    // No advice about iceberg.create here: the caller knows whether the table is created again.
    CHECK_THAT(missing.message(), ContainsSubstring("it does not exist (check iceberg.namespace, iceberg.table"));
    CHECK_THAT(missing.message(), !ContainsSubstring("iceberg.create"));
    CHECK_THAT(missing.message(), ContainsSubstring("NoSuchTableException: Table does not exist"));
    CHECK(classify(catalog_op::commit, 400, "", "t", "u") == catalog_errc::bad_request);
    CHECK_FALSE(retryable(classify(catalog_op::commit, 400, "", "t", "u")));
}

TEST_CASE("a transport failure after sending leaves a commit's outcome unknown", "[iceberg]") {
    const error reset{http::errc::closed_before_response, "127.0.0.1:1"};
    const error timeout{http::errc::timeout, "read"};
    const error refused{http::errc::connect_failed, "127.0.0.1:1"};
    CHECK(classify_transport(catalog_op::commit, reset, "t", "u") == catalog_errc::unknown_outcome);
    CHECK(classify_transport(catalog_op::commit, timeout, "t", "u") == catalog_errc::unknown_outcome);
    // never sent: nothing can have been applied
    CHECK(classify_transport(catalog_op::commit, refused, "t", "u") == catalog_errc::unavailable);
    CHECK(classify_transport(catalog_op::load_table, timeout, "t", "u") == catalog_errc::unavailable);
}

TEST_CASE("OAuth2 error bodies (RFC 6749) are read too", "[iceberg]") {
    auto eb = parse_error_body(R"({"error":"invalid_client","error_description":"Credentials are invalid"})");
    CHECK(eb.type == "invalid_client");
    CHECK(eb.message == "Credentials are invalid");
    auto none = parse_error_body("<html>oops</html>");
    CHECK(none.type.empty());
    CHECK(none.message.empty());
}

TEST_CASE("SigV4 signs catalog requests for the configured service and region", "[iceberg]") {
    sigv4::credentials creds{access_key_id{"AKIDEXAMPLE"}, secret_access_key{"secret"}, session_token{"tok"}};
    const auto now = std::chrono::system_clock::time_point{std::chrono::seconds{1'765'000'000}};
    auto hs = sign_catalog_request("POST", "/iceberg/v1/arn%3Ab/namespaces/ns/tables/t", "s3tables.example",
                                   "application/json", R"({"updates":[]})", creds, "s3tables", "eu-west-1", now);
    REQUIRE(hs.has_value());
    std::string auth, sha, token;
    for (const auto& h : *hs) {
        if (http::iequals(h.name, "Authorization")) auth = h.value;
        if (http::iequals(h.name, "x-amz-content-sha256")) sha = h.value;
        if (http::iequals(h.name, "X-Amz-Security-Token")) token = h.value;
    }
    CHECK_THAT(auth, ContainsSubstring("Credential=AKIDEXAMPLE/20251206/eu-west-1/s3tables/aws4_request"));
    CHECK_THAT(auth, ContainsSubstring("SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date"));
    CHECK(sha.size() == 64);
    CHECK(token == "tok");
    auto glue = sign_catalog_request("GET", "/iceberg/v1/config?warehouse=123", "glue.example", "", "", creds, "glue",
                                     "us-east-1", now);
    REQUIRE(glue.has_value());
    auto bad = sign_catalog_request("GET", "/v1/config", "h", "", "", sigv4::credentials{}, "glue", "us-east-1", now);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error() == catalog_errc::auth_failed);
}

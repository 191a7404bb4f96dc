// SPDX-License-Identifier: Apache-2.0
#include "aws/parse.hpp"

#include "aws/error.hpp"

#include "catch2_compat.hpp"

using namespace iss;
using namespace iss::aws;

TEST_CASE("ISO 8601 times as AWS writes them parse to the same instant", "[aws]") {
    auto a = parse_iso8601("2026-12-01T15:04:05Z");
    REQUIRE(a.has_value());
    CHECK(format_iso8601(*a) == "2026-12-01T15:04:05Z");
    auto b = parse_iso8601("2026-12-01T15:04:05.559129898Z");  // RGW's STS
    REQUIRE(b.has_value());
    CHECK(*b == *a);
    auto c = parse_iso8601("2026-12-01T15:04:05+00:00");
    REQUIRE(c.has_value());
    CHECK(*c == *a);
    CHECK_FALSE((parse_iso8601("2026-12-01 15:04")).has_value());
    CHECK_FALSE((parse_iso8601("2026-12-01T15:04:05+02:00")).has_value());
    CHECK_FALSE((parse_iso8601("2026-13-01T15:04:05Z")).has_value());
}

TEST_CASE("an ISO 8601 time the system clock cannot hold is refused, not overflowed", "[aws]") {
    // The clock counts nanoseconds in 64 bits: 1677-09-21 .. 2262-04-11.
    CHECK(parse_iso8601("2262-04-11T00:00:00Z").has_value());
    auto far = parse_iso8601("4052-12-01T15:04:05.123Z");
    REQUIRE_FALSE(far.has_value());
    CHECK(far.error() == aws::errc::bad_response);
    CHECK(far.error().detail().find("range") != std::string::npos);
    CHECK_FALSE(parse_iso8601("0001-01-01T00:00:00Z").has_value());
    auto doc = parse_credentials_json(
        R"({"AccessKeyId":"A","SecretAccessKey":"S","Expiration":"9999-12-31T23:59:59Z"})", "IMDS");
    REQUIRE_FALSE(doc.has_value());
    CHECK(doc.error().detail().find("Expiration") != std::string::npos);
}

TEST_CASE("the shared files parse into sections, lower-case keys, trimmed values", "[aws]") {
    const auto ini = parse_ini(
        "# comment\n[default]\naws_access_key_id = AK1 \n; other\n[profile sink]\n"
        "ROLE_ARN=arn:aws:iam::123:role/sink\nsource_profile = default\ns3 =\n"
        "  max_concurrent_requests = 2\nregion = eu-west-1\n",
        "config");
    REQUIRE(ini.has_value());
    CHECK(ini->at("default").at("aws_access_key_id") == "AK1");
    CHECK(ini->at("profile sink").at("role_arn") == "arn:aws:iam::123:role/sink");
    CHECK(ini->at("profile sink").at("region") == "eu-west-1");
    CHECK_FALSE(ini->at("profile sink").contains("max_concurrent_requests"));
    auto bad = parse_ini("key = before section\n", "credentials");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error() == aws::errc::bad_source);
    CHECK(bad.error().detail().find("credentials line 1") != std::string::npos);
}

TEST_CASE("container and IMDS JSON documents give keys and expiry; errors never echo the secret", "[aws]") {
    auto id = parse_credentials_json(
        R"({"AccessKeyId":"ASIA1","SecretAccessKey":"sek","Token":"tok","Expiration":"2026-12-01T15:04:05Z"})",
        "container");
    REQUIRE(id.has_value());
    CHECK(id->keys.access_key_id.get() == "ASIA1");
    CHECK(id->keys.secret_access_key.reveal() == "sek");
    CHECK(id->keys.session_token.reveal() == "tok");
    REQUIRE(id->expiry);
    CHECK(format_iso8601(*id->expiry) == "2026-12-01T15:04:05Z");
    auto failed = parse_credentials_json(R"({"Code":"AssumeRoleUnauthorizedAccess","Message":"no"})", "IMDS");
    REQUIRE_FALSE(failed.has_value());
    CHECK(failed.error().detail().find("AssumeRoleUnauthorizedAccess") != std::string::npos);
    auto missing = parse_credentials_json(R"({"AccessKeyId":"ASIA1","Token":"very-secret-token"})", "container");
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().message().find("very-secret-token") == std::string::npos);
    CHECK_FALSE((parse_credentials_json("not json", "container")).has_value());
}

TEST_CASE("STS answers: credentials with the assumed role, and error documents", "[aws]") {
    const std::string ok =
        "<AssumeRoleResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><AssumeRoleResult><Credentials>"
        "<AccessKeyId>ASIA2</AccessKeyId><SecretAccessKey>s2</SecretAccessKey><SessionToken>t2</SessionToken>"
        "<Expiration>2026-12-01T15:04:05Z</Expiration></Credentials><AssumedRoleUser>"
        "<Arn>arn:aws:sts::123:assumed-role/sink/s</Arn></AssumedRoleUser></AssumeRoleResult></AssumeRoleResponse>";
    auto id = parse_sts_credentials(ok, "AssumeRole");
    REQUIRE(id.has_value());
    CHECK(id->keys.access_key_id.get() == "ASIA2");
    CHECK(id->keys.session_token.reveal() == "t2");
    CHECK(id->detail == "assumed arn:aws:sts::123:assumed-role/sink/s");
    CHECK_FALSE((parse_sts_credentials(ok, "AssumeRoleWithWebIdentity")).has_value());  // wrong document for the action
    const auto e = parse_sts_error(
        "<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code>"
        "<Message>not allowed</Message></Error></ErrorResponse>");
    CHECK(e.code == "AccessDenied");
    CHECK(e.message == "not allowed");
}

TEST_CASE("form encoding percent-encodes names and values, '/' and '+' included", "[aws]") {
    CHECK(form_encode({{"Action", "AssumeRole"}, {"RoleArn", "arn:aws:iam::1:role/a+b c"}}) ==
          "Action=AssumeRole&RoleArn=arn%3Aaws%3Aiam%3A%3A1%3Arole%2Fa%2Bb%20c");
}

TEST_CASE("describe names source, role and expiry, never the secret or token", "[aws]") {
    identity id;
    id.keys = {access_key_id{"ASIA3"}, secret_access_key{"the-secret"}, session_token{"the-token"}};
    id.source = "web identity";
    id.detail = "role arn:aws:iam::123:role/sink";
    id.expiry = *parse_iso8601("2026-12-01T15:04:05Z");
    CHECK(id.describe() == "web identity, role arn:aws:iam::123:role/sink, expires 2026-12-01T15:04:05Z");
}

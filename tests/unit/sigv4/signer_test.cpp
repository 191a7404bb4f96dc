// SPDX-License-Identifier: Apache-2.0
#include "sigv4/signer.hpp"

#include "sigv4/chunked.hpp"

#include "catch2_compat.hpp"

#include <chrono>

namespace sv = iss::sigv4;
using namespace std::chrono_literals;

namespace {
// 2013-05-24T00:00:00Z, the S3 documentation's example time.
const auto doc_time = std::chrono::sys_days{std::chrono::year{2013} / 5 / 24};
sv::credentials doc_creds() {
    return {iss::access_key_id{"AKIAIOSFODNN7EXAMPLE"},
            iss::secret_access_key{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
            {}};
}
}  // namespace

TEST_CASE("format_amz_date renders UTC basic ISO 8601 truncated to seconds", "[sigv4][signer]") {
    CHECK(sv::format_amz_date(doc_time) == "20130524T000000Z");
    CHECK(sv::format_amz_date(std::chrono::sys_days{std::chrono::year{2015} / 8 / 30} + 12h + 36min + 999ms) ==
          "20150830T123600Z");
}

TEST_CASE("signing key derivation and cache", "[sigv4][signer]") {
    const auto creds = doc_creds();
    CHECK(sv::to_hex(sv::derive_signing_key(creds.secret_access_key, "20130524", "us-east-1", "s3").bytes) ==
          "dbb893acc010964918f1fd433add87c70e8b0db6be30c1fbeafefa5ec6ba8378");
    sv::signing_key_cache cache;
    const auto& k1 = cache.get(creds.secret_access_key, "20130524", "us-east-1", "s3");
    CHECK(sv::to_hex(k1.bytes) == "dbb893acc010964918f1fd433add87c70e8b0db6be30c1fbeafefa5ec6ba8378");
    (void)cache.get(creds.secret_access_key, "20130524", "us-east-1", "s3");
    CHECK(cache.misses() == 1);
    (void)cache.get(creds.secret_access_key, "20130525", "us-east-1", "s3");
    CHECK(cache.misses() == 2);
    (void)cache.get(iss::secret_access_key{"other"}, "20130525", "us-east-1", "s3");
    CHECK(cache.misses() == 3);
}

TEST_CASE("S3 PUT with a '$' in the key signs /test%24file.text (single encoding)", "[sigv4][signer]") {
    const sv::header hs[] = {{"Host", "examplebucket.s3.amazonaws.com"},
                             {"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                             {"x-amz-storage-class", "REDUCED_REDUNDANCY"}};
    sv::request_view req;
    req.method = "PUT";
    req.path = "/test$file.text";
    req.headers = hs;
    req.body = "Welcome to Amazon S3.";
    auto s = sv::sign(req, doc_creds(), sv::signing_params{}, doc_time);
    REQUIRE(s.has_value());
    CHECK(s->signature == "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
    CHECK(s->payload_hash == "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
    REQUIRE(s->headers.size() == 3);
    CHECK(s->headers[0].name == "X-Amz-Date");
    CHECK(s->headers[1].name == "x-amz-content-sha256");
    CHECK(s->headers[2].name == "Authorization");
}

TEST_CASE("sign rejects requests it cannot sign correctly", "[sigv4][signer]") {
    const sv::header no_host[] = {{"Range", "bytes=0-9"}};
    const sv::header signed_already[] = {{"Host", "h"}, {"Authorization", "x"}};
    const sv::header bad_name[] = {{"Host", "h"}, {"Bad Name", "x"}};
    sv::request_view req;
    req.method = "GET";
    req.headers = no_host;
    CHECK(sv::sign(req, doc_creds(), {}, doc_time).error() == sv::errc::missing_host);
    req.headers = signed_already;
    CHECK(sv::sign(req, doc_creds(), {}, doc_time).error() == sv::errc::reserved_header);
    req.headers = bad_name;
    CHECK(sv::sign(req, doc_creds(), {}, doc_time).error() == sv::errc::invalid_header_name);
    const sv::header ok[] = {{"Host", "h"}};
    req.headers = ok;
    req.path = "relative";
    CHECK(sv::sign(req, doc_creds(), {}, doc_time).error() == sv::errc::invalid_path);
    req.path = "/";
    req.payload_sha256 = "ABC";
    CHECK(sv::sign(req, doc_creds(), {}, doc_time).error() == sv::errc::invalid_payload_hash);
    req.payload_sha256 = {};
    CHECK(sv::sign(req, sv::credentials{}, {}, doc_time).error() == sv::errc::missing_credentials);
    sv::signing_params p;
    p.region = "";
    CHECK(sv::sign(req, doc_creds(), p, doc_time).error() == sv::errc::invalid_scope);
    CHECK(sv::presign(req, doc_creds(), {}, doc_time, 0s).error() == sv::errc::invalid_expiry);
    CHECK(sv::presign(req, doc_creds(), {}, doc_time, 604801s).error() == sv::errc::invalid_expiry);
    p = {};
    p.payload = sv::payload_mode::streaming;
    CHECK(sv::presign(req, doc_creds(), p, doc_time, 60s).error() == sv::errc::invalid_payload_mode);
    const sv::query_param sig[] = {{"X-Amz-Signature", "x"}};
    req.query = sig;
    CHECK(sv::presign(req, doc_creds(), {}, doc_time, 60s).error() == sv::errc::reserved_query_param);
}

TEST_CASE("canonical_uri: S3 single encoding, generic double encoding, normalisation", "[sigv4][signer]") {
    sv::signing_params s3;
    CHECK(sv::canonical_uri("/a b/$", sv::path_form::raw, s3).value() == "/a%20b/%24");
    CHECK(sv::canonical_uri("/a%20b/%24", sv::path_form::encoded, s3).value() == "/a%20b/%24");
    CHECK(sv::canonical_uri("//a/./b/../", sv::path_form::raw, s3).value() == "//a/./b/../");
    sv::signing_params generic;
    generic.double_encode_path = true;
    generic.normalize_path = true;
    CHECK(sv::canonical_uri("/a%20b/%24", sv::path_form::encoded, generic).value() == "/a%2520b/%2524");
    CHECK(sv::canonical_uri("/a b", sv::path_form::raw, generic).value() == "/a%2520b");
    CHECK(sv::canonical_uri("//a/./b/../", sv::path_form::encoded, generic).value() == "/a/");
}

TEST_CASE("aws-chunked content length matches the S3 streaming example", "[sigv4][chunked]") {
    CHECK(sv::aws_chunked_content_length(66560, 65536) == 66824);
    CHECK(sv::aws_chunked_content_length(0, 65536) == sv::aws_chunk_wire_size(0));
    CHECK(sv::aws_chunk_wire_size(0) == 86);
}

namespace {
struct fake_field {
    std::string n, v;
    [[nodiscard]] std::string_view name_string() const { return n; }
    [[nodiscard]] std::string_view value() const { return v; }
};
}  // namespace

TEST_CASE("wire_target and presigned_target send what is signed", "[sigv4][signer]") {
    const sv::query_param qs[] = {{"uploadId", "a/b+c"}, {"partNumber", "2"}};
    sv::request_view req;
    req.method = "PUT";
    req.path = "/bucket/stream=1/k ey+$.json";
    req.query = qs;
    CHECK(sv::wire_target(req) == "/bucket/stream%3D1/k%20ey%2B%24.json?partNumber=2&uploadId=a%2Fb%2Bc");
    req.form = sv::path_form::encoded;
    req.path = "/bucket/k%20ey";
    req.query = {};
    CHECK(sv::wire_target(req) == "/bucket/k%20ey");
    sv::presigned_query p;
    p.query = "X-Amz-Algorithm=AWS4-HMAC-SHA256";
    CHECK(sv::presigned_target(req, p) == "/bucket/k%20ey?X-Amz-Algorithm=AWS4-HMAC-SHA256");
    req.query = qs;
    CHECK(sv::presigned_target(req, p) ==
          "/bucket/k%20ey?partNumber=2&uploadId=a%2Fb%2Bc&X-Amz-Algorithm=AWS4-HMAC-SHA256");
}

TEST_CASE("headers_of adapts a Beast-like field container", "[sigv4][signer]") {
    const std::vector<fake_field> fields{{"Host", "h"}, {"Range", "bytes=0-1"}};
    const auto hs = sv::headers_of(fields);
    REQUIRE(hs.size() == 2);
    CHECK(hs[0].name == "Host");
    CHECK(hs[1].value == "bytes=0-1");
}

TEST_CASE("the key cache gives the same signature as derivation, and session tokens are signed in S3 mode",
          "[sigv4][signer]") {
    const sv::header hs[] = {{"Host", "examplebucket.s3.amazonaws.com"}};
    sv::request_view req;
    req.method = "GET";
    req.path = "/test.txt";
    req.headers = hs;
    auto creds = doc_creds();
    creds.session_token = iss::session_token{"TOKEN/+="};
    sv::signing_key_cache cache;
    auto a = sv::sign(req, creds, {}, doc_time);
    auto b = sv::sign(req, creds, {}, doc_time, cache);
    REQUIRE(a.has_value());
    REQUIRE(b.has_value());
    CHECK(a->signature == b->signature);
    CHECK(a->signed_header_names == "host;x-amz-content-sha256;x-amz-date;x-amz-security-token");
    CHECK(a->headers.front().name == "X-Amz-Security-Token");
    auto p = sv::presign(req, creds, {}, doc_time, std::chrono::seconds{60}, cache);
    REQUIRE(p.has_value());
    CHECK(p->query.find("X-Amz-Security-Token=TOKEN%2F%2B%3D") != std::string::npos);
    CHECK(cache.misses() == 1);
}

// SPDX-License-Identifier: Apache-2.0
#include "s3/request.hpp"

#include "s3/checksum.hpp"
#include "s3/error.hpp"
#include "sigv4/hash.hpp"

#include "catch2_compat.hpp"

using namespace iss;

namespace {
s3::client_options custom(std::string endpoint) {
    s3::client_options o;
    o.endpoint = std::move(endpoint);
    o.credentials = {access_key_id{"AKID"}, secret_access_key{"SECRET"}, {}};
    return o;
}
const auto t0 = std::chrono::system_clock::time_point{std::chrono::seconds{1'700'000'000}};
}  // namespace

TEST_CASE("AWS endpoints are virtual-hosted unless the bucket has dots or path style is asked", "[s3][addressing]") {
    s3::client_options o;
    o.region = "eu-west-1";
    auto a = s3::resolve_target(o, "my-bucket");
    REQUIRE(a.has_value());
    CHECK(a->ep.host == "my-bucket.s3.eu-west-1.amazonaws.com");
    CHECK(a->ep.tls);
    CHECK(a->path_prefix.empty());
    auto dotted = s3::resolve_target(o, "my.bucket");
    REQUIRE(dotted.has_value());
    CHECK(dotted->ep.host == "s3.eu-west-1.amazonaws.com");
    CHECK(dotted->path_prefix == "/my.bucket");
    o.style = s3::addressing::path;
    CHECK(s3::resolve_target(o, "my-bucket")->path_prefix == "/my-bucket");
    o.region = "auto";
    CHECK_FALSE(s3::resolve_target(o, "x-bucket").has_value());  // R2's region needs an endpoint
}

TEST_CASE("custom endpoints are path-style by default; virtual-hosted keeps the connect host", "[s3][addressing]") {
    auto o = custom("http://s3.localhost:7480");
    auto p = s3::resolve_target(o, "bucket-a");
    REQUIRE(p.has_value());
    CHECK(p->ep.host == "s3.localhost");
    CHECK(p->path_prefix == "/bucket-a");
    o.style = s3::addressing::virtual_hosted;
    o.connect_address = "127.0.0.1";
    auto v = s3::resolve_target(o, "bucket-a");
    REQUIRE(v.has_value());
    CHECK(v->ep.host == "bucket-a.s3.localhost");
    CHECK(v->ep.connect_host == "127.0.0.1");
    CHECK(v->ep.host_header() == "bucket-a.s3.localhost:7480");
    auto ip = s3::resolve_target(custom("http://127.0.0.1:7480"), "bucket-a");
    CHECK(ip->path_prefix == "/bucket-a");
}

TEST_CASE("PutObject carries exactly one checksum, metadata and the condition", "[s3][builders]") {
    const std::vector<std::string_view> body{"hello ", "world"};
    s3::put_options o;
    o.metadata["iggy-first-offset"] = "5";
    o.if_none_match = true;
    o.content_type = "application/json";
    auto count = [](const s3::request_spec& s, std::string_view name) {
        int n = 0;
        for (const auto& h : s.headers) n += http::iequals(h.first, name) ? 1 : 0;
        return n;
    };
    auto md5 = s3::build_put_object("bucket-a", "k", body, o, s3::checksum_kind::md5);
    REQUIRE(md5.has_value());
    CHECK(count(*md5, "content-md5") == 1);
    CHECK(count(*md5, "x-amz-checksum-crc32c") == 0);
    CHECK(count(*md5, "if-none-match") == 1);
    CHECK(count(*md5, "x-amz-meta-iggy-first-offset") == 1);
    auto crc = s3::build_put_object("bucket-a", "k", body, o, s3::checksum_kind::crc32c);
    CHECK(count(*crc, "content-md5") == 0);
    CHECK(count(*crc, "x-amz-checksum-crc32c") == 1);
    auto none = s3::build_put_object("bucket-a", "k", body, o, s3::checksum_kind::none);
    CHECK(count(*none, "content-md5") + count(*none, "x-amz-checksum-crc32c") == 0);
    s3::put_options bad;
    bad.metadata["Bad Name"] = "x";
    CHECK(s3::build_put_object("bucket-a", "k", body, bad, s3::checksum_kind::md5).error() ==
          s3::errc::invalid_argument);
    CHECK(s3::build_put_object("ab", "k", body, o, s3::checksum_kind::md5).error() == s3::errc::invalid_argument);
}

TEST_CASE("multipart builders validate part numbers and part order", "[s3][builders]") {
    std::vector<std::string_view> body{"x"};
    CHECK(s3::build_upload_part("bucket-a", "k", "id", 0, body, s3::checksum_kind::md5).error() ==
          s3::errc::invalid_argument);
    CHECK(s3::build_upload_part("bucket-a", "k", "id", 10001, body, s3::checksum_kind::md5).error() ==
          s3::errc::invalid_argument);
    CHECK(s3::build_complete_multipart("bucket-a", "k", "id", {{2, "\"a\"", ""}}, false).error() ==
          s3::errc::invalid_argument);
    auto ok = s3::build_complete_multipart("bucket-a", "k", "id", {{1, "\"a\"", ""}, {2, "\"b\"", ""}}, true);
    REQUIRE(ok.has_value());
    CHECK(ok->method == "POST");
}

TEST_CASE("digests the caller computed while producing the body are sent as they are, each where it belongs",
          "[s3][builders]") {
    const std::vector<std::string_view> body{"hello ", "world"};
    auto header = [](const s3::request_spec& s, std::string_view name) {
        std::string v;
        for (const auto& h : s.headers)
            if (http::iequals(h.first, name)) v = h.second;
        return v;
    };
    // Not the body's digests: shows they are not recomputed.
    iss::body_digests given;
    given.crc32c = 0x12345678;
    given.md5 = std::array<std::uint8_t, 16>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    given.sha256 = std::array<std::uint8_t, 32>{};
    (*given.sha256)[0] = 0xab;
    const std::string given_sha = sigv4::to_hex(*given.sha256);
    s3::put_options o;
    o.known = given;
    auto put = s3::build_put_object("bucket-a", "k", body, o, s3::checksum_kind::crc32c);
    REQUIRE(put.has_value());
    CHECK(header(*put, "x-amz-checksum-crc32c") == s3::crc32c_header_value(*given.crc32c));
    CHECK(header(*put, "content-md5").empty());
    CHECK(put->payload_sha256 == given_sha);
    auto part = s3::build_upload_part("bucket-a", "k", "id", 1, body, s3::checksum_kind::crc32c, given);
    REQUIRE(part.has_value());
    CHECK(header(*part, "x-amz-checksum-crc32c") == s3::crc32c_header_value(*given.crc32c));
    CHECK(part->payload_sha256 == given_sha);
    // With MD5 in force: the given MD5, no CRC-32C.
    auto md5 = s3::build_upload_part("bucket-a", "k", "id", 1, body, s3::checksum_kind::md5, given);
    CHECK(header(*md5, "x-amz-checksum-crc32c").empty());
    CHECK(header(*md5, "content-md5") == s3::content_md5_value(*given.md5));
    auto md5_put = s3::build_put_object("bucket-a", "k", body, o, s3::checksum_kind::md5);
    CHECK(header(*md5_put, "x-amz-checksum-crc32c").empty());
    CHECK(header(*md5_put, "content-md5") == s3::content_md5_value(*given.md5));
    // Without them: computed over the body (the payload hash later, by prepare()).
    auto own = s3::build_upload_part("bucket-a", "k", "id", 1, body, s3::checksum_kind::crc32c);
    CHECK(header(*own, "x-amz-checksum-crc32c") == s3::crc32c_base64(body));
    CHECK(own->payload_sha256.empty());
    auto own_md5 = s3::build_upload_part("bucket-a", "k", "id", 1, body, s3::checksum_kind::md5);
    CHECK(header(*own_md5, "content-md5") == s3::content_md5(body));
    // The signed request carries the given payload hash, in the header and the signature.
    auto c = custom("http://127.0.0.1:9000");
    sigv4::signing_key_cache keys;
    auto signed_part = *s3::build_upload_part("bucket-a", "k", "id", 1, body, s3::checksum_kind::md5, given);
    auto p = s3::prepare(signed_part, c, t0, keys);
    REQUIRE(p.has_value());
    CHECK(p->req.headers.get("x-amz-content-sha256") == given_sha);
}

TEST_CASE("body_digester: CRC-32C, MD5 and SHA-256 over pieces equal the one-shot digests, and it starts over",
          "[s3][checksum]") {
    const std::string whole(100000, 'x');
    const std::vector<std::string_view> one{whole};
    s3::body_digester d{s3::digest_set{.crc32c = true, .md5 = true, .sha256 = true}};
    for (std::size_t at = 0; at < whole.size(); at += 4093) d.update(std::string_view{whole}.substr(at, 4093));
    const auto got = d.finish();
    REQUIRE(got.crc32c);
    REQUIRE(got.md5);
    REQUIRE(got.sha256);
    CHECK(*got.crc32c == s3::crc32c(whole));
    CHECK(s3::content_md5_value(*got.md5) == s3::content_md5(one));
    CHECK(sigv4::to_hex(*got.sha256) == sigv4::sha256_hex(whole));
    // After finish() it starts over: the digests of "abc" alone.
    d.update("abc");
    const auto again = d.finish();
    CHECK(*again.crc32c == s3::crc32c("abc"));
    CHECK(sigv4::to_hex(*again.sha256) == sigv4::sha256_hex("abc"));
    CHECK(s3::content_md5_value(*again.md5) == "kAFQmDzST7DWlj99KOF/cg==");  // RFC 1321 test suite, base64
    // Only what was asked for.
    s3::body_digester md5_only{s3::digest_set{.md5 = true}};
    md5_only.update("abc");
    const auto m = md5_only.finish();
    CHECK_FALSE(m.crc32c);
    CHECK_FALSE(m.sha256);
    CHECK(m.md5);
}

TEST_CASE("prepare encodes the key once for the wire, as the signer signs it", "[s3][prepare]") {
    auto o = custom("http://127.0.0.1:9000");
    sigv4::signing_key_cache keys;
    std::vector<std::string_view> body{"data"};
    auto spec = s3::build_put_object("bucket-a", "/a b+c=d%e~f!g'h(i*j//k\xc3\xa9", body, {}, s3::checksum_kind::md5);
    REQUIRE(spec.has_value());
    auto p = s3::prepare(*spec, o, t0, keys);
    REQUIRE(p.has_value());
    CHECK(p->req.target == "/bucket-a//a%20b%2Bc%3Dd%25e~f%21g%27h%28i%2Aj//k%C3%A9");
    CHECK(p->req.headers.get("host") == "127.0.0.1:9000");
    CHECK(p->req.headers.get("authorization")
              .starts_with("AWS4-HMAC-SHA256 Credential=AKID/20231114/us-east-1/s3/aws4_request"));
    CHECK(p->req.headers.get("x-amz-content-sha256") == sigv4::sha256_hex("data"));
    CHECK(p->req.body_size() == 4);
    o.payload = s3::payload_signing::unsigned_payload;
    auto u = s3::prepare(*spec, o, t0, keys);
    CHECK(u->req.headers.get("x-amz-content-sha256") == "UNSIGNED-PAYLOAD");
    s3::list_options lo;
    lo.prefix = "pre fix/";
    lo.delimiter = "/";
    lo.continuation_token = "tok+en";
    lo.max_keys = 50;
    auto list = s3::build_list_objects_v2("bucket-a", lo);
    auto lp = s3::prepare(*list, o, t0, keys);
    CHECK(lp->req.target ==
          "/bucket-a?continuation-token=tok%2Ben&delimiter=%2F&encoding-type=url&list-type=2&max-keys=50&prefix=pre%"
          "20fix%2F");
}

TEST_CASE("options are validated with the key named", "[s3][options]") {
    s3::client_options o;
    o.part_size = 1 << 20;
    auto v = s3::validate(o);
    REQUIRE_FALSE(v.has_value());
    CHECK(v.error().detail().find("s3.part_size") != std::string::npos);
    o.part_size = 8 << 20;
    CHECK(s3::validate(o).has_value());
}

#include "s3/request.hpp"

#include "s3/checksum.hpp"
#include "s3/error.hpp"

#include <catch2/catch.hpp>

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

TEST_CASE("a CRC-32C the caller computed while producing the body is sent as it is, with CRC-32C only",
          "[s3][builders]") {
    const std::vector<std::string_view> body{"hello ", "world"};
    auto header = [](const s3::request_spec& s, std::string_view name) {
        std::string v;
        for (const auto& h : s.headers)
            if (http::iequals(h.first, name)) v = h.second;
        return v;
    };
    const std::uint32_t given = 0x12345678;  // not the body's: shows it is not recomputed
    s3::put_options o;
    o.known_crc32c = given;
    auto put = s3::build_put_object("bucket-a", "k", body, o, s3::checksum_kind::crc32c);
    REQUIRE(put.has_value());
    CHECK(header(*put, "x-amz-checksum-crc32c") == s3::crc32c_header_value(given));
    auto part = s3::build_upload_part("bucket-a", "k", "id", 1, body, s3::checksum_kind::crc32c, given);
    REQUIRE(part.has_value());
    CHECK(header(*part, "x-amz-checksum-crc32c") == s3::crc32c_header_value(given));
    // Without one: computed over the body.
    auto own = s3::build_upload_part("bucket-a", "k", "id", 1, body, s3::checksum_kind::crc32c);
    CHECK(header(*own, "x-amz-checksum-crc32c") == s3::crc32c_base64(body));
    // With MD5 in force it is ignored: the request carries MD5 alone.
    auto md5 = s3::build_upload_part("bucket-a", "k", "id", 1, body, s3::checksum_kind::md5, given);
    CHECK(header(*md5, "x-amz-checksum-crc32c").empty());
    CHECK_FALSE(header(*md5, "content-md5").empty());
    auto md5_put = s3::build_put_object("bucket-a", "k", body, o, s3::checksum_kind::md5);
    CHECK(header(*md5_put, "x-amz-checksum-crc32c").empty());
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

// SPDX-License-Identifier: Apache-2.0
#include "http/types.hpp"

#include "catch2_compat.hpp"

#include <string>
#include <utility>
#include <vector>

using namespace iss;

TEST_CASE("parse_url takes scheme, host and port, defaulting the port", "[http]") {
    auto a = http::parse_url("https://S3.Example.com");
    REQUIRE(a.has_value());
    CHECK(a->tls);
    CHECK(a->host == "s3.example.com");
    CHECK(a->port == 443);
    CHECK(a->host_header() == "s3.example.com");
    auto b = http::parse_url("http://127.0.0.1:9000/some/path?x=1");
    REQUIRE(b.has_value());
    CHECK_FALSE(b->tls);
    CHECK(b->port == 9000);
    CHECK(b->host_header() == "127.0.0.1:9000");
    auto c = http::parse_url("http://[::1]:8080");
    REQUIRE(c.has_value());
    CHECK(c->host == "::1");
    CHECK(c->host_header() == "[::1]:8080");
    CHECK(http::url_path("http://h:1/a/b?q") == "/a/b");
    CHECK(http::url_path("http://h:1") == "");
}

TEST_CASE("parse_url refuses what is not an http(s) URL", "[http]") {
    CHECK(http::parse_url("ftp://x").error() == http::errc::invalid_url);
    CHECK(http::parse_url("http://").error() == http::errc::invalid_url);
    CHECK(http::parse_url("http://h:0").error() == http::errc::invalid_url);
    CHECK(http::parse_url("http://h:70000").error() == http::errc::invalid_url);
    CHECK(http::parse_url("http://h:12x").error() == http::errc::invalid_url);
    CHECK(http::parse_url("http://u:p@h").error() == http::errc::invalid_url);
}

TEST_CASE("header names match whatever their case", "[http]") {
    http::header_list h{{"ETag", "\"abc\""}, {"x-amz-request-id", "r1"}};
    CHECK(h.get("etag") == "\"abc\"");
    CHECK(h.get("ETAG") == "\"abc\"");
    CHECK(h.get("X-Amz-Request-Id") == "r1");
    CHECK_FALSE(h.find("content-length"));
    h.set("etag", "\"new\"");
    CHECK(h.size() == 2);
    CHECK(h.get("ETag") == "\"new\"");
    h.erase("X-AMZ-REQUEST-ID");
    CHECK(h.size() == 1);
}

TEST_CASE("the Host header shows non-default ports only", "[http]") {
    http::endpoint e{true, "h.example", 443, ""};
    CHECK(e.host_header() == "h.example");
    e.port = 8443;
    CHECK(e.host_header() == "h.example:8443");
    e.tls = false;
    e.port = 80;
    CHECK(e.host_header() == "h.example");
}

TEST_CASE("an endpoint prints as a URL, IPv6 hosts bracketed, with the connect host", "[http]") {
    http::endpoint e{true, "::1", 9000, ""};
    CHECK(e.host_header() == "[::1]:9000");
    CHECK(e.to_string() == "https://[::1]:9000");
    e.tls = false;
    e.port = 80;
    e.host = "s3.example";
    e.connect_host = "127.0.0.1";
    CHECK(e.to_string() == "http://s3.example (via 127.0.0.1)");
}

TEST_CASE("proxy routes: scheme, NO_PROXY, credentials as Basic, redacted URLs", "[http][proxy]") {
    http::proxy_options p;
    p.https_url = "http://user:p%40ss@proxy.local:3128";
    p.http_url = "http://proxy.local:8080";
    p.no_proxy = "localhost, .internal, s3.example.com:9000, 10.0.0.1";
    auto tls = http::route_for(p, http::endpoint{true, "bucket.s3.amazonaws.com", 443});
    REQUIRE(tls.has_value());
    REQUIRE(tls->has_value());
    CHECK((*tls)->proxy.host == "proxy.local");
    CHECK((*tls)->proxy.port == 3128);
    CHECK((*tls)->authorization == "Basic dXNlcjpwQHNz");  // user:p@ss
    auto plain = http::route_for(p, http::endpoint{false, "rgw", 80});
    REQUIRE(plain.has_value());
    REQUIRE(plain->has_value());
    CHECK((*plain)->proxy.port == 8080);
    CHECK((*plain)->authorization.empty());
    const std::vector<std::pair<std::string, std::uint16_t>> direct{
        {"localhost", 443}, {"a.internal", 443}, {"s3.example.com", 9000}, {"10.0.0.1", 443}};
    for (const auto& [host, port] : direct) {
        auto r = http::route_for(p, http::endpoint{true, host, port});
        REQUIRE(r.has_value());
        CHECK_FALSE(r->has_value());
    }
    auto other_port = http::route_for(p, http::endpoint{true, "s3.example.com", 443});
    REQUIRE(other_port.has_value());
    CHECK(other_port->has_value());
    CHECK(http::no_proxy_matches("example.com", "a.example.com", 443));
    CHECK(http::no_proxy_matches("example.com", "example.com", 443));
    CHECK_FALSE(http::no_proxy_matches(".example.com", "example.com", 443));
    CHECK_FALSE(http::no_proxy_matches("example.com", "badexample.com", 443));
    CHECK(http::no_proxy_matches("*", "anything", 1));
    CHECK(http::redact_url("http://user:secret@proxy:3128") == "http://user:****@proxy:3128");
    CHECK(http::redact_url("http://proxy:3128") == "http://proxy:3128");
    p.https_url = "https://proxy:443";
    auto bad = http::route_for(p, http::endpoint{true, "x", 443});
    REQUIRE_FALSE(bad.has_value());
    p.https_url = "http://user:hunter2@";
    auto bad2 = http::route_for(p, http::endpoint{true, "x", 443});
    REQUIRE_FALSE(bad2.has_value());
    CHECK(bad2.error().message().find("hunter2") == std::string::npos);
}

// SPDX-License-Identifier: Apache-2.0
// config::validate (shared by check-config, probe and run) must refuse every configuration
// that the modules `run` hands it to refuse later: the S3 client's options and request
// builders, and the Iggy address mapping. Each value below is tried both ways.
#include "config/config.hpp"
#include "daemon/s3_wiring.hpp"
#include "daemon/wiring.hpp"
#include "s3/request.hpp"

#include "catch2_compat.hpp"

#include <algorithm>
#include <string>
#include <vector>

using namespace iss;

namespace {

config::sink_config valid_config() {
    auto l = config::parse(
        "iggy: {password: pw}\n"
        "sources: [{stream: app, topics: [requests]}]\n"
        "s3: {bucket: lake, access_key_id: AK, secret_access_key: SK}\n",
        [](std::string_view) -> std::optional<std::string> { return std::nullopt; });
    REQUIRE(l.problems.empty());
    REQUIRE(config::validate(l.config).empty());
    return l.config;
}

bool validation_refuses(const config::sink_config& c, std::string_view path) {
    const auto ps = config::validate(c);
    return std::any_of(ps.begin(), ps.end(), [&](const config::problem& p) { return p.path == path; });
}

/// What `run` does with the S3 options before its first request, and the first request's builder.
bool s3_client_refuses(const config::sink_config& c) {
    const auto o = app::s3_options(c);
    return !s3::validate(o) || !s3::resolve_target(o, c.s3.bucket.get()) || !s3::build_head_bucket(c.s3.bucket.get());
}

}  // namespace

TEST_CASE("validation refuses every s3.endpoint the S3 client refuses, and only those", "[daemon][validation]") {
    for (const char* e : {"http://127.0.0.1:7480", "http://127.0.0.1:99999", "http://127.0.0.1:0",
                          "http://127.0.0.1:65535", "http://127.0.0.1:65536", "http://rgw:80x", "https://minio.local",
                          "https://minio.local/", "http://user@rgw:7480", "http://[::1]:7480", "http://[::1]",
                          "http://[::1:7480", "http://[::1]x", "http://:7480", "https://", "ftp://rgw", "rgw:7480"}) {
        INFO(e);
        auto c = valid_config();
        c.s3.endpoint = e;
        CHECK(validation_refuses(c, "s3.endpoint") == s3_client_refuses(c));
    }
}

TEST_CASE("validation refuses every bucket name the S3 request builders refuse", "[daemon][validation]") {
    for (const char* endpoint : {"", "http://127.0.0.1:7480", "https://minio.local"}) {
        for (const std::string& b :
             std::vector<std::string>{"nu", "abc", std::string(63, 'b'), std::string(64, 'b'), "lake"}) {
            INFO(endpoint << " " << b);
            auto c = valid_config();
            c.s3.endpoint = endpoint;
            c.s3.bucket = bucket_name{b};
            if (s3_client_refuses(c)) CHECK(validation_refuses(c, "s3.bucket"));
        }
    }
}

TEST_CASE("validation refuses s3.region auto without an endpoint, as the client does", "[daemon][validation]") {
    auto c = valid_config();
    c.s3.region = region_name{"auto"};
    CHECK(s3_client_refuses(c));
    CHECK(validation_refuses(c, "s3.region"));
}

TEST_CASE("validation refuses every iggy.address the Iggy wiring refuses", "[daemon][validation]") {
    // Validation is stricter still (":8090" has no host, "::1:8090" needs brackets).
    for (const char* a : {"127.0.0.1:8090", "127.0.0.1:99999", "127.0.0.1:0", "host", "host:", ":8090", "[::1]:8090",
                          "[::1]", "[::1:8090", "host:80x", "::1:8090", "iggy.example:8090"}) {
        INFO(a);
        auto c = valid_config();
        c.iggy.address = a;
        if (!app::iggy_options(c)) CHECK(validation_refuses(c, "iggy.address"));
        else if (std::string_view{a} != ":8090" && std::string_view{a} != "::1:8090")
            CHECK_FALSE(validation_refuses(c, "iggy.address"));
    }
}

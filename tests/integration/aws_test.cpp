// lib/aws against a real Ceph RGW (the `rgw` CTest fixture): short-lived credentials from the
// loopback test server renewed several times while objects go up to RGW (through the
// server's re-signing S3 front), and RGW's own STS (AssumeRole) as a real issuer of session
// tokens. Each test case uses its own bucket.
#include "aws/aws_test_server.hpp"
#include "aws/providers.hpp"
#include "aws/refresh.hpp"
#include "http/client.hpp"
#include "s3/client.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <random>

using namespace iss;
namespace net = boost::asio;
using namespace std::chrono_literals;

namespace {

std::map<std::string, std::string> load_env() {
    const char* dir = std::getenv("RGW_DIR");
    const std::string path = std::string{dir != nullptr ? dir : ISS_BINARY_DIR "/rgw"} + "/env";
    std::ifstream in{path};
    if (!in) {
        std::fprintf(stderr, "RGW env file %s missing: run through ctest (fixture rgw)\n", path.c_str());
        const char* ci = std::getenv("CI");
        std::exit(ci != nullptr && std::string{ci} == "true" ? 1 : 77);
    }
    std::map<std::string, std::string> env;
    std::string line;
    while (std::getline(in, line)) {
        const auto eq = line.find('=');
        if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return env;
}

const std::map<std::string, std::string>& rgw() {
    static const auto env = load_env();
    return env;
}

sigv4::credentials rgw_keys() {
    return {access_key_id{rgw().at("RGW_ACCESS_KEY")}, secret_access_key{rgw().at("RGW_SECRET_KEY")}, {}};
}

std::string unique_bucket(std::string_view what) {
    static std::mt19937_64 rng{std::random_device{}()};
    return fmt::format("t-{}-{:08x}", what, static_cast<std::uint32_t>(rng()));
}

template <class T>
T run(net::io_context& ioc, std::function<net::awaitable<T>()> task) {
    std::optional<T> out;
    std::exception_ptr err;
    net::co_spawn(ioc, task(), [&](std::exception_ptr e, T v) {
        err = e;
        if (!e) out = std::move(v);
        ioc.stop();
    });
    ioc.restart();
    ioc.run();
    if (err) std::rethrow_exception(err);
    return std::move(*out);
}

int sh(const std::string& cmd) {
    const int rc = std::system(cmd.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

}  // namespace

TEST_CASE("3-second container credentials are renewed several times while 60 objects go up, none fails", "[aws][rgw]") {
    net::io_context ioc{1};
    test::aws_test_server server{ioc.get_executor()};
    server.set_lifetime(3s);
    server.set_container_token("pod-token");
    auto up = http::parse_url(rgw().at("RGW_ENDPOINT"));
    REQUIRE(up.has_value());
    server.set_upstream(*up, rgw_keys(), rgw().at("RGW_REGION"));

    aws::chain_options co;
    const std::string uri = server.url() + "/container/creds";
    co.env = [uri](std::string_view n) -> std::optional<std::string> {
        if (n == "AWS_CONTAINER_CREDENTIALS_FULL_URI") return uri;
        if (n == "AWS_CONTAINER_AUTHORIZATION_TOKEN") return std::string{"pod-token"};
        if (n == "AWS_EC2_METADATA_DISABLED") return std::string{"true"};
        return std::nullopt;
    };
    auto http = std::make_shared<http::client>(ioc.get_executor());
    auto source = std::make_shared<aws::refreshing_source>(ioc.get_executor(), aws::make_provider(ioc.get_executor(), http, co));
    auto id = run<result<aws::identity>>(ioc, [&]() { return source->start(true); });
    REQUIRE(id.has_value());
    CHECK(id->source == "container");

    s3::client_options so;
    so.endpoint = server.url();
    so.region = rgw().at("RGW_REGION");
    so.credentials_source = source;
    so.retry.attempts = 3;
    so.retry.base = 20ms;
    so.retry.cap = 200ms;
    s3::client c{ioc.get_executor(), so};
    const auto bucket = unique_bucket("aws-refresh");
    REQUIRE(run<result<void>>(ioc, [&]() { return c.create_bucket(bucket); }).has_value());

    // One object every 200 ms for 12 s: four lifetimes of 3 s.
    unsigned failed = 0;
    const unsigned objects = 60;
    for (unsigned i = 0; i < objects; ++i) {
        const std::string body = fmt::format("object {}", i);
        auto r = run<result<s3::put_result>>(ioc, [&]() -> net::awaitable<result<s3::put_result>> {
            std::vector<std::string_view> views{body};
            auto out = co_await c.put_object(bucket, fmt::format("k/{:04}", i), std::move(views), s3::put_options{});
            net::steady_timer t{co_await net::this_coro::executor};
            t.expires_after(200ms);
            co_await t.async_wait(net::use_awaitable);
            co_return out;
        });
        if (!r) {
            ++failed;
            UNSCOPED_INFO(r.error().message());
        }
    }
    source->stop();
    CHECK(failed == 0);
    const auto& st = server.stats();
    CHECK(st.container >= 4);  // first fetch + at least three renewals
    CHECK(st.s3_bad_signature == 0);
    CHECK(st.s3_ok >= objects);
    CHECK(server.violations().empty());
    for (const auto& v : server.violations()) UNSCOPED_INFO(v);
    std::fprintf(stderr, "aws refresh run: %u objects, %u container fetches, %u S3 requests ok, %u ExpiredToken, %llu forced\n",
                 objects, st.container, st.s3_ok, st.s3_expired,
                 static_cast<unsigned long long>(source->stats().forced));

    // Every object is in RGW (read directly with RGW's own keys).
    s3::client_options direct;
    direct.endpoint = rgw().at("RGW_ENDPOINT");
    direct.region = rgw().at("RGW_REGION");
    direct.credentials = rgw_keys();
    s3::client d{ioc.get_executor(), direct};
    unsigned found = 0;
    for (unsigned i = 0; i < objects; ++i) {
        auto g = run<result<s3::get_result>>(ioc, [&]() { return d.get_object(bucket, fmt::format("k/{:04}", i)); });
        if (g && g->body == fmt::format("object {}", i)) ++found;
    }
    CHECK(found == objects);
    server.stop();
}

TEST_CASE("RGW's own STS: AssumeRole signed with the user's keys gives session credentials RGW accepts", "[aws][rgw]") {
    // RGW's STS changes how RGW answers a wrong secret, so the shared fixture starts without
    // it; `RGW_STS=1 scripts/rgw start DIR` turns it on for this case.
    const auto conf = rgw().at("RGW_CONF");
    if (sh(fmt::format("grep -q 'rgw s3 auth use sts = true' {}", conf)) != 0) {
        WARN("RGW started without its STS (RGW_STS=1 scripts/rgw start DIR): AssumeRole against RGW not checked");
        return;
    }
    // The role, trusted by the test user (radosgw-admin; caps roles=* lets the user call STS).
    const std::string role = fmt::format("sink-{:06x}", static_cast<unsigned>(std::random_device{}() & 0xffffff));
    REQUIRE(sh(fmt::format("timeout 30 radosgw-admin -c {} caps add --uid=test --caps='roles=*' >/dev/null 2>&1", conf)) == 0);
    REQUIRE(sh(fmt::format("timeout 30 radosgw-admin -c {} role create --role-name={} --path=/ "
                           "--assume-role-policy-doc='{{\"Version\":\"2012-10-17\",\"Statement\":[{{\"Effect\":\"Allow\","
                           "\"Principal\":{{\"AWS\":[\"arn:aws:iam:::user/test\"]}},\"Action\":[\"sts:AssumeRole\"]}}]}}' >/dev/null 2>&1",
                           conf, role)) == 0);
    REQUIRE(sh(fmt::format("timeout 30 radosgw-admin -c {} role-policy put --role-name={} --policy-name=rw "
                           "--policy-doc='{{\"Version\":\"2012-10-17\",\"Statement\":[{{\"Effect\":\"Allow\",\"Action\":[\"s3:*\"],"
                           "\"Resource\":\"arn:aws:s3:::*\"}}]}}' >/dev/null 2>&1",
                           conf, role)) == 0);

    net::io_context ioc{1};
    aws::chain_options co;
    co.source = aws::source_kind::static_keys;
    co.static_keys = rgw_keys();
    co.region = rgw().at("RGW_REGION");
    co.sts_endpoint = rgw().at("RGW_ENDPOINT");
    co.assume_role.role_arn = "arn:aws:iam:::role/" + role;
    co.assume_role.session_name = "sink-test";
    co.assume_role.duration = 900s;
    auto http = std::make_shared<http::client>(ioc.get_executor());
    auto source = std::make_shared<aws::refreshing_source>(ioc.get_executor(), aws::make_provider(ioc.get_executor(), http, co));
    auto id = run<result<aws::identity>>(ioc, [&]() { return source->start(false); });
    REQUIRE(id.has_value());
    CHECK(id->source == "assume role");
    CHECK_FALSE(id->keys.session_token.empty());
    CHECK(id->keys.access_key_id.get() != rgw().at("RGW_ACCESS_KEY"));
    REQUIRE(id->expiry.has_value());
    std::fprintf(stderr, "RGW STS: %s\n", id->describe().c_str());

    s3::client_options so;
    so.endpoint = rgw().at("RGW_ENDPOINT");
    so.region = rgw().at("RGW_REGION");
    so.credentials_source = source;
    so.retry.attempts = 2;
    s3::client c{ioc.get_executor(), so};
    const auto bucket = unique_bucket("aws-rgw-sts");
    auto cb = run<result<void>>(ioc, [&]() { return c.create_bucket(bucket); });
    REQUIRE(cb.has_value());
    auto put = run<result<s3::put_result>>(ioc, [&]() {
        std::vector<std::string_view> body{"via RGW STS"};
        return c.put_object(bucket, "sts-object", std::move(body), s3::put_options{});
    });
    REQUIRE(put.has_value());
    auto got = run<result<s3::get_result>>(ioc, [&]() { return c.get_object(bucket, "sts-object"); });
    REQUIRE(got.has_value());
    CHECK(got->body == "via RGW STS");
    source->stop();
}

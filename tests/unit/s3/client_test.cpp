// SPDX-License-Identifier: Apache-2.0
// The client's retry loop against the fault front used as a scripted server (no RGW).
#include "s3/client.hpp"

#include "aws/aws_test_server.hpp"
#include "aws/providers.hpp"
#include "aws/refresh.hpp"
#include "common/log.hpp"
#include "http/client.hpp"
#include "s3/fault_front.hpp"
#include "tests/support/clock_sleeper.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "catch2_compat.hpp"

#include <algorithm>
#include <fstream>
#include <functional>

using namespace iss;
namespace net = boost::asio;
using namespace std::chrono_literals;

namespace {

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

s3::client_options options_for(const test::fault_front& f) {
    s3::client_options o;
    o.endpoint = f.url();
    o.credentials = {access_key_id{"AKID"}, secret_access_key{"SECRET"}, {}};
    o.retry.base = 10ms;
    o.retry.cap = 100ms;
    o.retry.attempts = 5;
    o.retry.deadline = 10s;
    return o;
}

const std::string error_body(std::string_view code) {
    return fmt::format(
        "<?xml version=\"1.0\"?><Error><Code>{}</Code><Message>m</Message><RequestId>rq</RequestId></Error>", code);
}

}  // namespace

TEST_CASE("retries SlowDown twice then succeeds, with jittered waits under the ceilings", "[s3][client]") {
    net::io_context ioc{1};
    test::fault_front front{ioc.get_executor(), std::nullopt};
    front.set_fixed_response(200, {{"ETag", "\"abc\""}}, "");
    front.add_rule({"PUT", "/", test::fault::slow_down_503, 0, 2});
    s3::client c{ioc.get_executor(), options_for(front), real_clock::instance(), 42};
    auto r = run<result<s3::put_result>>(ioc, [&]() {
        std::vector<std::string_view> body{"payload"};
        return c.put_object("bucket-a", "k", std::move(body), s3::put_options{});
    });
    REQUIRE(r.has_value());
    CHECK(r->etag == "\"abc\"");
    CHECK(c.stats().attempts == 3);
    CHECK(c.stats().retries == 2);
    REQUIRE(c.stats().recent_waits.size() == 2);
    CHECK(c.stats().recent_waits[0] <= 10ms);  // U(0, base)
    CHECK(c.stats().recent_waits[1] <= 20ms);  // U(0, 2 base)
    CHECK(front.requests().size() == 3);
}

TEST_CASE("a 500 with an empty body is retried", "[s3][client]") {
    net::io_context ioc{1};
    test::fault_front front{ioc.get_executor(), std::nullopt};
    front.add_rule({"GET", "/", test::fault::internal_500_empty, 0, 1});
    front.set_fixed_response(200, {}, "<ListBucketResult><KeyCount>0</KeyCount></ListBucketResult>");
    s3::client c{ioc.get_executor(), options_for(front), real_clock::instance(), 1};
    auto r =
        run<result<s3::list_objects_page>>(ioc, [&]() { return c.list_objects_v2("bucket-a", s3::list_options{}); });
    REQUIRE(r.has_value());
    CHECK(c.stats().attempts == 2);
}

TEST_CASE("a wrong secret gives one clear error and no retry storm", "[s3][client]") {
    net::io_context ioc{1};
    test::fault_front front{ioc.get_executor(), std::nullopt};
    front.set_fixed_response(403, {}, error_body("SignatureDoesNotMatch"));
    s3::client c{ioc.get_executor(), options_for(front), real_clock::instance(), 1};
    auto r = run<result<s3::put_result>>(ioc, [&]() {
        std::vector<std::string_view> body{"x"};
        return c.put_object("bucket-a", "k", std::move(body), s3::put_options{});
    });
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == s3::errc::signature_mismatch);
    CHECK(s3::status_of(r.error()) == s3::status::fatal);
    CHECK(r.error().message().find("s3.secret_access_key") != std::string::npos);
    CHECK(c.stats().attempts == 1);
    CHECK(front.requests().size() == 1);
}

TEST_CASE("RequestTimeTooSkewed re-signs once with the server's clock offset", "[s3][client]") {
    net::io_context ioc{1};
    test::fault_front front{ioc.get_executor(), std::nullopt};
    // Server time 2023-11-14T22:13:20Z + 1 h; the local (manual) clock says 22:13:20.
    front.set_fixed_response(403, {{"Date", "Tue, 14 Nov 2023 23:13:20 GMT"}}, error_body("RequestTimeTooSkewed"));
    manual_clock clk;  // 1'700'000'000 s = Tue, 14 Nov 2023 22:13:20 GMT
    s3::client c{ioc.get_executor(), options_for(front), clk, 1};
    auto r = run<result<void>>(ioc, [&]() { return c.delete_object("bucket-a", "k"); });
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == s3::errc::clock_skew);
    CHECK(c.stats().resigns == 1);
    CHECK(c.stats().attempts == 2);
    CHECK(c.clock_offset() == 3600s);
    CHECK(c.stats().clock_offset == 3600s);
    REQUIRE(front.requests().size() == 2);
    CHECK(front.requests()[0].headers.get("x-amz-date") == "20231114T221320Z");
    CHECK(front.requests()[1].headers.get("x-amz-date") == "20231114T231320Z");
}

TEST_CASE("the waits between attempts are the sleeper's, and the deadline is the injected clock's", "[s3][client]") {
    // A minute of SlowDown with waits of up to 10 s: on the real clock this would take a
    // minute; here the sleeper moves the manual clock by each wait instead.
    net::io_context ioc{1};
    test::fault_front front{ioc.get_executor(), std::nullopt};
    front.add_rule({"PUT", "/", test::fault::slow_down_503, 0, 10'000});
    manual_clock clk;
    iss::test::clock_sleeper sleeper{clk};
    auto o = options_for(front);
    o.retry.base = 10s;
    o.retry.cap = 10s;
    o.retry.attempts = 10'000;
    o.retry.deadline = 60s;
    o.sleeper = &sleeper;
    s3::client c{ioc.get_executor(), o, clk, 7};
    const auto start = clk.steady_now();
    auto r = run<result<s3::put_result>>(ioc, [&]() {
        std::vector<std::string_view> body{"payload"};
        return c.put_object("bucket-a", "k", std::move(body), s3::put_options{});
    });
    REQUIRE_FALSE(r.has_value());
    CHECK(s3::status_of(r.error()) == s3::status::retryable);
    CHECK_THAT(r.error().detail(), Catch::Matchers::ContainsSubstring("(s3.retry.deadline reached)"));
    // Every wait went through the sleeper, none past the deadline, and the waits are what
    // moved the clock to it.
    REQUIRE_FALSE(sleeper.waits.empty());
    CHECK(c.stats().retries == sleeper.waits.size());
    std::chrono::milliseconds waited{0};
    for (const auto w : sleeper.waits) {
        CHECK(w <= 10s);
        waited += w;
    }
    CHECK(waited == 60s);
    CHECK(clk.steady_now() - start == 60s);
    // Each attempt but the first followed a wait; the last wait reached the deadline. (An
    // attempt left with a few milliseconds may time out before the front sees it.)
    CHECK(c.stats().attempts == sleeper.waits.size());
    CHECK(front.requests().size() <= c.stats().attempts);
    CHECK(front.requests().size() >= 2);
}

TEST_CASE("an answer slower than the deadline gives up as retryable within the deadline", "[s3][client]") {
    net::io_context ioc{1};
    test::fault_front front{ioc.get_executor(), std::nullopt};
    front.add_rule({"", "/", test::fault::delay, 0, 100, 5000ms});
    auto o = options_for(front);
    o.retry.deadline = 300ms;
    s3::client c{ioc.get_executor(), o, real_clock::instance(), 1};
    auto r = run<result<s3::head_result>>(ioc, [&]() { return c.head_object("bucket-a", "k"); });
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == http::errc::timeout);
    CHECK(s3::status_of(r.error()) == s3::status::retryable);
    CHECK(r.error().detail().find("gave up") != std::string::npos);
}

TEST_CASE("a lower-case etag header is read", "[s3][client]") {
    net::io_context ioc{1};
    test::fault_front front{ioc.get_executor(), std::nullopt};
    front.set_fixed_response(200, {{"ETag", "\"p1\""}}, "");
    front.add_rule({"PUT", "/", test::fault::lowercase_headers, 0, 1});
    s3::client c{ioc.get_executor(), options_for(front), real_clock::instance(), 1};
    auto r = run<result<s3::completed_part>>(ioc, [&]() {
        std::vector<std::string_view> body{"x"};
        return c.upload_part("bucket-a", "k", "up1", 1, std::move(body));
    });
    REQUIRE(r.has_value());
    CHECK(r->etag == "\"p1\"");
}

TEST_CASE("404 on HEAD is not_found; 412 on a conditional put is exists", "[s3][client]") {
    net::io_context ioc{1};
    test::fault_front front{ioc.get_executor(), std::nullopt};
    front.set_fixed_response(404, {}, "");
    s3::client c{ioc.get_executor(), options_for(front), real_clock::instance(), 1};
    auto h = run<result<s3::head_result>>(ioc, [&]() { return c.head_object("bucket-a", "k"); });
    REQUIRE_FALSE(h.has_value());
    CHECK(s3::status_of(h.error()) == s3::status::not_found);
    front.set_fixed_response(412, {}, error_body("PreconditionFailed"));
    auto p = run<result<s3::put_result>>(ioc, [&]() {
        std::vector<std::string_view> body{"x"};
        s3::put_options o;
        o.if_none_match = true;
        return c.put_object("bucket-a", "k", std::move(body), o);
    });
    REQUIRE_FALSE(p.has_value());
    CHECK(s3::status_of(p.error()) == s3::status::exists);
    CHECK(front.requests().back().headers.get("if-none-match") == "*");
    CHECK(c.stats().retries == 0);
}

TEST_CASE("a wrong region is reported with the region the store names", "[s3][client]") {
    net::io_context ioc{1};
    test::fault_front front{ioc.get_executor(), std::nullopt};
    front.set_fixed_response(400, {},
                             "<Error><Code>AuthorizationHeaderMalformed</Code><Message>the region 'us-east-1' "
                             "is wrong; expecting 'eu-central-1'</Message><Region>eu-central-1</Region></Error>");
    s3::client c{ioc.get_executor(), options_for(front), real_clock::instance(), 1};
    auto r =
        run<result<s3::list_objects_page>>(ioc, [&]() { return c.list_objects_v2("bucket-a", s3::list_options{}); });
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == s3::errc::wrong_region);
    CHECK(r.error().message().find("region 'eu-central-1'") != std::string::npos);
    CHECK(r.error().message().find("s3.region") != std::string::npos);
    CHECK(c.stats().attempts == 1);
    // HEAD: no body, the region comes in x-amz-bucket-region.
    front.set_fixed_response(301, {{"x-amz-bucket-region", "ap-south-1"}}, "");
    auto h = run<result<void>>(ioc, [&]() { return c.head_bucket("bucket-a"); });
    REQUIRE_FALSE(h.has_value());
    CHECK(h.error() == s3::errc::wrong_region);
    CHECK(h.error().message().find("region 'ap-south-1'") != std::string::npos);
}

TEST_CASE("no log line carries the secret key or the signature", "[s3][client]") {
    std::vector<std::string> lines;
    log::set_sink([&](std::string_view l) { lines.emplace_back(l); });
    const auto old_level = log::min_level();
    log::configure(log::level::trace, log::output_format::text);
    {
        net::io_context ioc{1};
        test::fault_front front{ioc.get_executor(), std::nullopt};
        front.set_fixed_response(403, {}, error_body("SignatureDoesNotMatch"));
        front.add_rule({"PUT", "/", test::fault::slow_down_503, 0, 1});
        auto o = options_for(front);
        o.credentials.secret_access_key = secret_access_key{"TOP-SECRET-VALUE"};
        s3::client c{ioc.get_executor(), o, real_clock::instance(), 1};
        auto r = run<result<s3::put_result>>(ioc, [&]() {
            std::vector<std::string_view> body{"x"};
            return c.put_object("bucket-a", "k", std::move(body), s3::put_options{});
        });
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().message().find("TOP-SECRET-VALUE") == std::string::npos);
        REQUIRE(front.requests().size() == 2);
        const std::string auth{front.requests()[0].headers.get("authorization")};
        const std::string signature = auth.substr(auth.find("Signature=") + 10);
        for (const auto& l : lines) {
            CHECK(l.find("TOP-SECRET-VALUE") == std::string::npos);
            CHECK(l.find(signature) == std::string::npos);
        }
    }
    log::configure(old_level, log::output_format::text);
    log::set_sink({});
    CHECK(lines.size() >= 2);  // the retry warning and the final error were logged
}

// ---- credentials from a source, and ExpiredToken

namespace {

/// A provider over the test server's container endpoint that claims a far expiry, so the
/// client believes the keys valid until the store says otherwise.
class optimistic_provider final : public aws::provider {
public:
    explicit optimistic_provider(std::shared_ptr<aws::provider> inner) : inner_{std::move(inner)} {}
    aws::task<result<aws::identity>> fetch() override {
        auto r = co_await inner_->fetch();
        if (r) r->expiry = std::chrono::system_clock::now() + 1h;
        co_return r;
    }
    std::string name() const override { return "optimistic"; }

private:
    std::shared_ptr<aws::provider> inner_;
};

struct sourced {
    net::io_context ioc{1};
    test::aws_test_server server{ioc.get_executor()};
    std::shared_ptr<aws::refreshing_source> source;
    std::unique_ptr<s3::client> client;

    sourced() {
        server.set_container_token("container-auth-token-77");
        aws::chain_options o;
        o.source = aws::source_kind::container;
        const std::string uri = server.url() + "/container/creds";
        o.env = [uri](std::string_view n) -> std::optional<std::string> {
            if (n == "AWS_CONTAINER_CREDENTIALS_FULL_URI") return uri;
            if (n == "AWS_CONTAINER_AUTHORIZATION_TOKEN") return std::string{"container-auth-token-77"};
            return std::nullopt;
        };
        auto http = std::make_shared<http::client>(ioc.get_executor());
        auto p = std::make_shared<optimistic_provider>(aws::make_provider(ioc.get_executor(), http, o));
        source = std::make_shared<aws::refreshing_source>(ioc.get_executor(), p);
        REQUIRE(run<result<aws::identity>>(ioc, [&]() { return source->start(false); }).has_value());
        s3::client_options so;
        so.endpoint = server.url();
        so.credentials_source = source;
        so.retry.base = 10ms;
        so.retry.cap = 100ms;
        so.retry.attempts = 3;
        client = std::make_unique<s3::client>(ioc.get_executor(), so);
    }
    result<s3::put_result> put() {
        return run<result<s3::put_result>>(ioc, [&]() {
            std::vector<std::string_view> body{"payload"};
            return client->put_object("bucket-a", "k", std::move(body), s3::put_options{});
        });
    }
};

}  // namespace

TEST_CASE("requests are signed with the source's credentials and their session token", "[s3][client][aws]") {
    sourced s;
    auto r = s.put();
    REQUIRE(r.has_value());
    CHECK(s.server.stats().s3_ok == 1);
    CHECK(s.server.violations().empty());
}

TEST_CASE("ExpiredToken from the store forces one credentials refresh and one retry", "[s3][client][aws]") {
    sourced s;
    REQUIRE(s.put().has_value());
    s.server.expire_all();
    auto r = s.put();
    REQUIRE(r.has_value());
    CHECK(s.server.stats().s3_expired == 1);
    CHECK(s.server.stats().container == 2);
    CHECK(s.server.stats().s3_ok == 2);
    CHECK(s.source->stats().forced == 1);
    CHECK(s.client->stats().retries == 0);  // the renewal is not a retry
    CHECK(s.server.violations().empty());
}

TEST_CASE("ExpiredToken with credentials that cannot be renewed fails at once", "[s3][client][aws]") {
    net::io_context ioc{1};
    test::fault_front front{ioc.get_executor(), std::nullopt};
    front.set_fixed_response(400, {}, error_body("ExpiredToken"));
    auto o = options_for(front);
    o.credentials_source = std::make_shared<aws::fixed_source>(o.credentials);
    s3::client c{ioc.get_executor(), o};
    auto r = run<result<s3::put_result>>(ioc, [&]() {
        std::vector<std::string_view> body{"payload"};
        return c.put_object("bucket-a", "k", std::move(body), s3::put_options{});
    });
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == s3::errc::expired_token);
    CHECK(front.requests().size() == 1);
}

// ---- object options on the wire

namespace {

std::vector<std::string> amz_headers(const test::recorded_request& r) {
    std::vector<std::string> out;
    for (const auto& [n, v] : r.headers) {
        std::string l = n;
        for (auto& ch : l) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if ((l.starts_with("x-amz-") && l != "x-amz-date" && l != "x-amz-content-sha256") || l == "content-md5") {
            if (l == "content-md5") continue;
            out.push_back(l + ": " + v);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
}

const std::string customer_key = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";  // "0123456789abcdef0123456789abcdef"

}  // namespace

TEST_CASE("PutObject carries exactly the SSE-KMS, storage class, ACL, tag and metadata headers", "[s3][client]") {
    net::io_context ioc{1};
    test::fault_front front{ioc.get_executor(), std::nullopt};
    front.set_fixed_response(200, {{"ETag", "\"abc\""}}, "");
    auto o = options_for(front);
    o.objects.sse.type = s3::sse_type::kms;
    o.objects.sse.kms_key_id = "arn:aws:kms:eu-west-1:123:key/k1";
    o.objects.sse.kms_context = R"({"app":"sink"})";
    o.objects.sse.bucket_key_enabled = true;
    o.objects.storage_class = "STANDARD_IA";
    o.objects.acl = "bucket-owner-full-control";
    o.objects.tags = {{"team", "data eng"}, {"env", "prod"}};
    o.objects.metadata = {{"owner", "sink"}};
    s3::client c{ioc.get_executor(), o};
    auto r = run<result<s3::put_result>>(ioc, [&]() {
        std::vector<std::string_view> body{"payload"};
        return c.put_object("bucket-a", "k", std::move(body), s3::put_options{});
    });
    REQUIRE(r.has_value());
    REQUIRE(front.requests().size() == 1);
    CHECK(amz_headers(front.requests()[0]) ==
          sorted({"x-amz-acl: bucket-owner-full-control", "x-amz-meta-owner: sink",
                  "x-amz-server-side-encryption: aws:kms",
                  "x-amz-server-side-encryption-aws-kms-key-id: arn:aws:kms:eu-west-1:123:key/k1",
                  "x-amz-server-side-encryption-bucket-key-enabled: true",
                  "x-amz-server-side-encryption-context: eyJhcHAiOiJzaW5rIn0=", "x-amz-storage-class: STANDARD_IA",
                  "x-amz-tagging: env=prod&team=data%20eng"}));
}

TEST_CASE("SSE-C sends its three headers on create and every UploadPart, never x-amz-server-side-encryption",
          "[s3][client]") {
    net::io_context ioc{1};
    test::fault_front front{ioc.get_executor(), std::nullopt};
    front.set_fixed_response(200, {{"ETag", "\"abc\""}},
                             "<InitiateMultipartUploadResult><UploadId>u1</UploadId></InitiateMultipartUploadResult>");
    auto o = options_for(front);
    o.objects.sse.type = s3::sse_type::customer;
    o.objects.sse.customer_key = s3::sse_customer_key{customer_key};
    o.objects.storage_class = "STANDARD";
    s3::client c{ioc.get_executor(), o};
    auto id = run<result<std::string>>(ioc, [&]() { return c.create_multipart("bucket-a", "k", s3::put_options{}); });
    REQUIRE(id.has_value());
    for (int part = 1; part <= 2; ++part) {
        auto p = run<result<s3::completed_part>>(ioc, [&]() {
            std::vector<std::string_view> body{"part"};
            return c.upload_part("bucket-a", "k", *id, part, std::move(body));
        });
        REQUIRE(p.has_value());
    }
    std::vector<std::string> ssec{
        "x-amz-server-side-encryption-customer-algorithm: AES256",
        "x-amz-server-side-encryption-customer-key: " + customer_key,
        "x-amz-server-side-encryption-customer-key-md5: " + std::string{"hRasmdxgYDKV3nvbahU1MA=="}};
    std::sort(ssec.begin(), ssec.end());
    REQUIRE(front.requests().size() == 3);
    auto create = ssec;
    create.push_back("x-amz-storage-class: STANDARD");
    std::sort(create.begin(), create.end());
    CHECK(amz_headers(front.requests()[0]) == create);
    CHECK(amz_headers(front.requests()[1]) == ssec);
    CHECK(amz_headers(front.requests()[2]) == ssec);
}

TEST_CASE("no secret, session token, web identity token or proxy password appears in a log line or error",
          "[s3][client][aws]") {
    std::vector<std::string> lines;
    const auto level = log::min_level();
    log::configure(log::level::trace, log::output_format::text);  // every line, canonical requests too
    log::set_sink([&](std::string_view l) { lines.emplace_back(l); });
    std::vector<std::string> errors;
    {
        sourced s;  // container credentials (Authorization token "tok")
        REQUIRE(s.put().has_value());
        s.server.expire_all();
        REQUIRE(s.put().has_value());  // ExpiredToken: renewal logged
        s.server.fail_next("/container/", 500, 10);
        s.server.expire_all();
        auto failed = s.put();  // renewal fails: the error is reported
        REQUIRE_FALSE(failed.has_value());
        errors.push_back(failed.error().message());
        // A web identity token STS refuses, and an unreachable proxy with a password.
        aws::chain_options o;
        o.source = aws::source_kind::web_identity;
        o.sts_endpoint = s.server.url();
        const std::string dir = std::string{ISS_BINARY_DIR};
        { std::ofstream{dir + "/web-token-test"} << "eyJ-web-identity-secret"; }
        o.env = [dir](std::string_view n) -> std::optional<std::string> {
            if (n == "AWS_WEB_IDENTITY_TOKEN_FILE") return dir + "/web-token-test";
            if (n == "AWS_ROLE_ARN") return std::string{"arn:aws:iam::1:role/r"};
            return std::nullopt;
        };
        http::client_options ho;
        ho.proxy.https_url = "http://proxyuser:proxy-password-42@127.0.0.1:1";
        ho.proxy.http_url = ho.proxy.https_url;
        auto http = std::make_shared<http::client>(s.ioc.get_executor(), ho);
        auto p = aws::make_provider(s.ioc.get_executor(), http, o);
        auto src = std::make_shared<aws::refreshing_source>(s.ioc.get_executor(), p);
        auto r = run<result<aws::identity>>(s.ioc, [&]() { return src->start(false); });
        REQUIRE_FALSE(r.has_value());
        errors.push_back(r.error().message());
        std::vector<std::string> secrets = s.server.secrets_issued();
        secrets.insert(secrets.end(), {"eyJ-web-identity-secret", "proxy-password-42", "container-auth-token-77"});
        REQUIRE(secrets.size() > 4);
        for (const auto& secret : secrets) {
            INFO(secret);
            for (const auto& l : lines) CHECK(l.find(secret) == std::string::npos);
            for (const auto& e : errors) CHECK(e.find(secret) == std::string::npos);
        }
    }
    log::set_sink({});
    log::configure(level, log::output_format::text);
    CHECK_FALSE(lines.empty());
}

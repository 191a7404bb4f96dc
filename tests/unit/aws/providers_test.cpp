// SPDX-License-Identifier: Apache-2.0
#include "aws/providers.hpp"

#include "aws/aws_test_server.hpp"
#include "aws/error.hpp"
#include "http/client.hpp"
#include "run.hpp"

#include "catch2_compat.hpp"

#include <filesystem>
#include <fstream>
#include <map>

using namespace iss;
using namespace iss::aws;
namespace net = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

struct fixture {
    net::io_context ioc{1};
    test::aws_test_server server{ioc.get_executor()};
    std::shared_ptr<http::client> http = std::make_shared<http::client>(ioc.get_executor());
    std::map<std::string, std::string> env;
    fs::path dir;

    fixture() {
        dir = fs::temp_directory_path() / fmt::format("iss-aws-test-{}-{}", ::getpid(), counter()++);
        fs::create_directories(dir);
        env["HOME"] = dir.string();  // no ~/.aws of the machine
        env["AWS_EC2_METADATA_DISABLED"] = "true";
    }
    ~fixture() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    static int& counter() {
        static int n = 0;
        return n;
    }
    std::string write(const std::string& name, const std::string& text) {
        const auto p = dir / name;
        fs::create_directories(p.parent_path());
        std::ofstream{p} << text;
        return p.string();
    }
    chain_options opts(source_kind k = source_kind::automatic) {
        chain_options o;
        o.source = k;
        o.sts_endpoint = server.url();
        o.env = [this](std::string_view n) -> std::optional<std::string> {
            auto it = env.find(std::string{n});
            if (it == env.end()) return std::nullopt;
            return it->second;
        };
        return o;
    }
    result<identity> fetch(chain_options o) {
        auto p = make_provider(ioc.get_executor(), http, std::move(o));
        return test::run<result<identity>>(ioc, [p]() { return p->fetch(); });
    }
    void web_identity() {
        server.set_web_identity_token("eyJ.web.token");
        env["AWS_WEB_IDENTITY_TOKEN_FILE"] = write("token", "eyJ.web.token\n");
        env["AWS_ROLE_ARN"] = "arn:aws:iam::123:role/sink";
        env["AWS_ROLE_SESSION_NAME"] = "pod-1";
    }
    void container() {
        server.set_container_token("pod-identity-token");
        env["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = server.url() + "/container/v1/credentials";
        env["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"] = write("eks-token", "pod-identity-token");
    }
    void imds() {
        env.erase("AWS_EC2_METADATA_DISABLED");
        env["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = server.url();
    }
};

}  // namespace

TEST_CASE("static keys come first in the chain", "[aws]") {
    fixture f;
    f.env["AWS_ACCESS_KEY_ID"] = "AKENV";
    f.env["AWS_SECRET_ACCESS_KEY"] = "env-secret";
    auto o = f.opts();
    o.static_keys = {access_key_id{"AKSTATIC"}, secret_access_key{"static-secret"}, {}};
    auto r = f.fetch(o);
    REQUIRE(r.has_value());
    CHECK(r->source == "static");
    CHECK(r->keys.access_key_id.get() == "AKSTATIC");
    CHECK_FALSE(r->expiry);
}

TEST_CASE("environment keys come before web identity, profile, container and IMDS", "[aws]") {
    fixture f;
    f.web_identity();
    f.container();
    f.imds();
    f.env["AWS_ACCESS_KEY_ID"] = "AKENV";
    f.env["AWS_SECRET_ACCESS_KEY"] = "env-secret";
    f.env["AWS_SESSION_TOKEN"] = "env-token";
    auto r = f.fetch(f.opts());
    REQUIRE(r.has_value());
    CHECK(r->source == "env");
    CHECK(r->keys.session_token.reveal() == "env-token");
    CHECK(f.server.requests().empty());
}

TEST_CASE("web identity calls STS AssumeRoleWithWebIdentity unsigned, before profile and container", "[aws]") {
    fixture f;
    f.web_identity();
    f.container();
    f.write(".aws/credentials", "[default]\naws_access_key_id = AKPROFILE\naws_secret_access_key = p\n");
    auto r = f.fetch(f.opts());
    REQUIRE(r.has_value());
    CHECK(r->source == "web identity");
    CHECK(r->detail == "role arn:aws:iam::123:role/sink");
    CHECK(r->keys.access_key_id.get().starts_with("ASIATEST"));
    REQUIRE(r->expiry);
    CHECK(f.server.stats().web_identity == 1);
    CHECK(f.server.stats().container == 0);
    CHECK(f.server.violations().empty());
}

TEST_CASE("a wrong web identity token is an STS rejection naming the code", "[aws]") {
    fixture f;
    f.web_identity();
    f.server.set_web_identity_token("another");
    auto r = f.fetch(f.opts(source_kind::web_identity));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == aws::errc::sts_rejected);
    CHECK(r.error().detail().find("InvalidIdentityToken") != std::string::npos);
    CHECK(r.error().message().find("eyJ.web.token") == std::string::npos);
}

TEST_CASE("the profile comes before the container endpoint; plain keys from the credentials file", "[aws]") {
    fixture f;
    f.container();
    f.write(".aws/credentials", "[default]\naws_access_key_id = AKPROFILE\naws_secret_access_key = profile-secret\n");
    auto r = f.fetch(f.opts());
    REQUIRE(r.has_value());
    CHECK(r->source == "profile");
    CHECK(r->keys.access_key_id.get() == "AKPROFILE");
    CHECK(f.server.stats().container == 0);
}

TEST_CASE("a profile with role_arn + source_profile calls AssumeRole signed with the source profile's keys", "[aws]") {
    fixture f;
    f.server.add_base_keys({access_key_id{"AKBASE"}, secret_access_key{"base-secret"}, {}});
    f.server.set_external_id("ext-42");
    f.env["AWS_CONFIG_FILE"] = f.write("conf/config",
                                       "[profile sink]\nrole_arn = arn:aws:iam::123:role/sink\nsource_profile = base\n"
                                       "external_id = ext-42\nrole_session_name = sess\nduration_seconds = 900\n");
    f.env["AWS_SHARED_CREDENTIALS_FILE"] =
        f.write("conf/credentials", "[base]\naws_access_key_id = AKBASE\naws_secret_access_key = base-secret\n");
    f.env["AWS_PROFILE"] = "sink";
    auto r = f.fetch(f.opts(source_kind::profile));
    REQUIRE(r.has_value());
    CHECK(r->source == "profile");
    CHECK(r->detail == "profile sink, role arn:aws:iam::123:role/sink via source_profile base");
    CHECK(f.server.stats().assume_role == 1);
    CHECK(f.server.violations().empty());
}

TEST_CASE("AssumeRole signed with a wrong secret is refused by the server's SigV4 check", "[aws]") {
    fixture f;
    f.server.add_base_keys({access_key_id{"AKBASE"}, secret_access_key{"base-secret"}, {}});
    f.env["AWS_CONFIG_FILE"] = f.write("config",
                                       "[profile sink]\nrole_arn = arn:aws:iam::123:role/sink\nsource_profile = base\n"
                                       "[profile base]\naws_access_key_id = AKBASE\naws_secret_access_key = wrong\n");
    f.env["AWS_PROFILE"] = "sink";
    auto r = f.fetch(f.opts(source_kind::profile));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == aws::errc::sts_rejected);
    CHECK(r.error().detail().find("SignatureDoesNotMatch") != std::string::npos);
    REQUIRE(f.server.violations().size() == 1);
}

TEST_CASE("an AWS_PROFILE that no file has is an error, a missing default profile is not configured", "[aws]") {
    fixture f;
    f.write(".aws/config", "[profile other]\nregion = x\n");
    auto r = f.fetch(f.opts(source_kind::profile));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == aws::errc::not_configured);
    f.env["AWS_PROFILE"] = "sink";
    auto e = f.fetch(f.opts(source_kind::profile));
    REQUIRE_FALSE(e.has_value());
    CHECK(e.error() == aws::errc::bad_source);
    CHECK(e.error().detail().find("'sink'") != std::string::npos);
}

TEST_CASE("a source_profile loop is detected", "[aws]") {
    fixture f;
    f.write(".aws/config",
            "[profile a]\nrole_arn = arn:aws:iam::1:role/a\nsource_profile = b\n"
            "[profile b]\nrole_arn = arn:aws:iam::1:role/b\nsource_profile = a\n");
    f.env["AWS_PROFILE"] = "a";
    auto r = f.fetch(f.opts(source_kind::profile));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().detail().find("loop") != std::string::npos);
}

TEST_CASE("the container endpoint gets the token file's token, before IMDS", "[aws]") {
    fixture f;
    f.container();
    f.imds();
    auto r = f.fetch(f.opts());
    REQUIRE(r.has_value());
    CHECK(r->source == "container");
    CHECK(f.server.stats().container == 1);
    CHECK(f.server.stats().imds_tokens == 0);
    CHECK(f.server.violations().empty());
}

TEST_CASE("the container endpoint with AWS_CONTAINER_AUTHORIZATION_TOKEN, and a wrong one fails", "[aws]") {
    fixture f;
    f.server.set_container_token("tok-1");
    f.env["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = f.server.url() + "/container/x";
    f.env["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = "tok-1";
    auto r = f.fetch(f.opts(source_kind::container));
    REQUIRE(r.has_value());
    f.env["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = "tok-2";
    auto bad = f.fetch(f.opts(source_kind::container));
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error() == aws::errc::fetch_failed);
    CHECK(bad.error().message().find("tok-2") == std::string::npos);
}

TEST_CASE("a plain-http full URI to a non-loopback host is refused", "[aws]") {
    fixture f;
    f.env["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = "http://192.0.2.10/creds";
    auto r = f.fetch(f.opts(source_kind::container));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == aws::errc::bad_source);
}

TEST_CASE("IMDSv2: token PUT with a TTL, role name, credentials, every GET with the token", "[aws]") {
    fixture f;
    f.imds();
    auto r = f.fetch(f.opts());
    REQUIRE(r.has_value());
    CHECK(r->source == "imds");
    CHECK(r->detail == "instance profile role sink-instance-role");
    CHECK(f.server.stats().imds_tokens == 1);
    CHECK(f.server.stats().imds == 1);
    CHECK(f.server.violations().empty());
}

TEST_CASE("IMDS refusing the token PUT is a failure, never an IMDSv1 fallback", "[aws]") {
    fixture f;
    f.imds();
    f.server.fail_next("/latest/api/token", 403, 1);
    auto r = f.fetch(f.opts(source_kind::imds));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == aws::errc::fetch_failed);
    CHECK(r.error().detail().find("IMDSv1 is never used") != std::string::npos);
    REQUIRE(f.server.requests().size() == 1);  // no GET without a token followed
    CHECK(f.server.violations().empty());
}

TEST_CASE("AWS_EC2_METADATA_DISABLED turns IMDS off", "[aws]") {
    fixture f;
    f.imds();
    f.env["AWS_EC2_METADATA_DISABLED"] = "TRUE";
    auto r = f.fetch(f.opts(source_kind::imds));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == aws::errc::not_configured);
    CHECK(f.server.requests().empty());
}

TEST_CASE("a pinned source ignores the others", "[aws]") {
    fixture f;
    f.env["AWS_ACCESS_KEY_ID"] = "AKENV";
    f.env["AWS_SECRET_ACCESS_KEY"] = "env-secret";
    f.container();
    auto r = f.fetch(f.opts(source_kind::container));
    REQUIRE(r.has_value());
    CHECK(r->source == "container");
    auto s = f.fetch(f.opts(source_kind::static_keys));
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error() == aws::errc::not_configured);
}

TEST_CASE("a chain with nothing found lists every source it tried", "[aws]") {
    fixture f;
    auto r = f.fetch(f.opts());
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == aws::errc::none_found);
    const std::string d = r.error().detail();
    INFO(d);
    for (const char* s : {"static:", "env:", "web identity:", "profile:", "container:", "imds:"})
        CHECK(d.find(s) != std::string::npos);
    CHECK(d.find("AWS_EC2_METADATA_DISABLED") != std::string::npos);
}

TEST_CASE("assume_role wraps the chain: AssumeRole signed with the base credentials and their token", "[aws]") {
    fixture f;
    f.container();  // the base: temporary keys with a session token, issued by the server itself
    auto o = f.opts();
    o.assume_role.role_arn = "arn:aws:iam::999:role/writer";
    o.assume_role.session_name = "sink";
    o.assume_role.duration = 900s;
    auto r = f.fetch(o);
    REQUIRE(r.has_value());
    CHECK(r->source == "assume role");
    CHECK(r->detail == "role arn:aws:iam::999:role/writer, base credentials: container");
    CHECK(f.server.stats().container == 1);
    CHECK(f.server.stats().assume_role == 1);
    CHECK(f.server.violations().empty());
}

TEST_CASE("STS answering 500 is a transient fetch failure", "[aws]") {
    fixture f;
    f.web_identity();
    f.server.fail_next("/", 500, 1);
    auto r = f.fetch(f.opts(source_kind::web_identity));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == aws::errc::fetch_failed);
}

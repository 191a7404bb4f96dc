// SPDX-License-Identifier: Apache-2.0
// aws-test-server: the loopback AWS credential doubles of aws_test_server.hpp (IMDSv2, the
// container endpoint, STS, and the re-signing S3 front) as a process, for end-to-end tests
// of the daemon (tests/integration/e2e/aws_cases.py). A TEST DOUBLE: never point anything
// real at it. One io_context, one thread.
//
// The first line on stdout is `listening on 127.0.0.1:PORT`. SIGTERM or SIGINT prints one
// JSON line (the counters of aws_server_stats, the violations, and every secret and session
// token handed out, for tests that grep logs for them) and exits 0.

#include "aws/aws_test_server.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace net = boost::asio;
using namespace iss;

namespace {

const char* const usage_text = R"(aws-test-server: a TEST DOUBLE of the AWS credential endpoints, on 127.0.0.1:PORT
(port picked by the OS), for the daemon's end-to-end tests:
  IMDSv2         PUT /latest/api/token, GET /latest/meta-data/iam/security-credentials/[ROLE]
  container      GET /container/... (Authorization must equal --container-token)
  STS            POST / (AssumeRoleWithWebIdentity: unsigned, token = --web-identity-token;
                 AssumeRole: SigV4 verified against the keys it issued)
  S3 front       every other request: SigV4 verified against the keys it issued (expired: 400
                 ExpiredToken), re-signed with the upstream's keys and forwarded to --upstream
Every credential it hands out lives --lifetime-ms.

Usage: aws-test-server [options]
  --lifetime-ms N            lifetime of every issued credential in milliseconds (default 3600000)
  --container-token TOKEN    the Authorization the container endpoint requires
  --web-identity-token TOKEN the WebIdentityToken AssumeRoleWithWebIdentity must carry
  --imds-role NAME           the instance profile role name (default sink-instance-role)
  --upstream URL             forward S3 requests there (without it: S3 requests get 200),
                             re-signed with UPSTREAM_ACCESS_KEY_ID / UPSTREAM_SECRET_ACCESS_KEY
                             from the environment
  --upstream-region REGION   region of the upstream's signature (default us-east-1)
Output: first line `listening on 127.0.0.1:PORT`; on SIGTERM/SIGINT one JSON line
  {"imds_tokens", "issued", "web_identity", "assume_role", "container", "imds", "s3_ok",
   "s3_expired", "s3_bad_signature", "violations": [...], "secrets": [...]} and exit 0.
Exit: 0 after SIGTERM/SIGINT, 2 on a bad argument.
)";

[[noreturn]] void usage_error(const std::string& what) {
    std::fprintf(stderr, "aws-test-server: %s\n\n%s", what.c_str(), usage_text);
    std::exit(2);
}

boost::json::value stats_json(const test::aws_test_server& s) {
    const auto& st = s.stats();
    boost::json::object o;
    o["imds_tokens"] = st.imds_tokens;
    o["issued"] = st.issued;
    o["web_identity"] = st.web_identity;
    o["assume_role"] = st.assume_role;
    o["container"] = st.container;
    o["imds"] = st.imds;
    o["s3_ok"] = st.s3_ok;
    o["s3_expired"] = st.s3_expired;
    o["s3_bad_signature"] = st.s3_bad_signature;
    boost::json::array v;
    for (const auto& line : s.violations()) v.emplace_back(line);
    o["violations"] = std::move(v);
    boost::json::array sec;
    for (const auto& x : s.secrets_issued()) sec.emplace_back(x);
    o["secrets"] = std::move(sec);
    return o;
}

std::string env_or_empty(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr ? std::string{v} : std::string{};
}

}  // namespace

int main(int argc, char** argv) {
    long long lifetime_ms = 3'600'000;
    std::string container_token, web_token, imds_role = "sink-instance-role", upstream, region = "us-east-1";
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fputs(usage_text, stdout);
            return 0;
        }
        if (i + 1 >= argc) usage_error(fmt::format("{} needs a value", a));
        const std::string v = argv[++i];
        if (a == "--lifetime-ms") {
            const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), lifetime_ms);
            if (ec != std::errc{} || p != v.data() + v.size() || lifetime_ms < 1000)
                usage_error(fmt::format("--lifetime-ms '{}': a whole number of milliseconds, at least 1000", v));
        } else if (a == "--container-token") {
            container_token = v;
        } else if (a == "--web-identity-token") {
            web_token = v;
        } else if (a == "--imds-role") {
            imds_role = v;
        } else if (a == "--upstream") {
            upstream = v;
        } else if (a == "--upstream-region") {
            region = v;
        } else {
            usage_error(fmt::format("unknown option {}", a));
        }
    }

    net::io_context ioc{1};
    test::aws_test_server server{ioc.get_executor()};
    server.set_lifetime(std::chrono::milliseconds{lifetime_ms});
    server.set_container_token(container_token);
    server.set_web_identity_token(web_token);
    server.set_imds_role(imds_role);
    if (!upstream.empty()) {
        auto ep = http::parse_url(upstream);
        if (!ep) usage_error(fmt::format("--upstream '{}': {}", upstream, ep.error().message()));
        const auto ak = env_or_empty("UPSTREAM_ACCESS_KEY_ID");
        const auto sk = env_or_empty("UPSTREAM_SECRET_ACCESS_KEY");
        if (ak.empty() || sk.empty())
            usage_error("--upstream needs UPSTREAM_ACCESS_KEY_ID and UPSTREAM_SECRET_ACCESS_KEY");
        server.set_upstream(*ep, sigv4::credentials{access_key_id{ak}, secret_access_key{sk}, {}}, region);
    }

    net::signal_set stop_signals{ioc, SIGTERM, SIGINT};
    stop_signals.async_wait([&](const boost::system::error_code& ec, int) {
        if (ec) return;
        std::printf("%s\n", boost::json::serialize(stats_json(server)).c_str());
        std::fflush(stdout);
        server.stop();
        ioc.stop();
    });
    std::printf("listening on 127.0.0.1:%u\n", static_cast<unsigned>(server.port()));
    std::fflush(stdout);
    ioc.run();
    return 0;
}

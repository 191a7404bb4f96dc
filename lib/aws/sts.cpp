// SPDX-License-Identifier: Apache-2.0
// STS for the providers (lib/aws/providers.hpp): AssumeRoleWithWebIdentity (unsigned) and
// AssumeRole (signed with SigV4, service "sts"), as form-encoded POSTs to the STS endpoint;
// the answer parsed by parse_sts_credentials / parse_sts_error (lib/aws/parse.hpp).
#include "aws/error.hpp"
#include "aws/parse.hpp"
#include "aws/provider_support.hpp"
#include "aws/providers.hpp"
#include "http/client.hpp"

namespace iss::aws {

using namespace detail;

std::string provider_context::sts_url() const {
    if (!opts.sts_endpoint.empty()) return opts.sts_endpoint;
    if (auto e = env("AWS_ENDPOINT_URL_STS")) return *e;
    return fmt::format("https://sts.{}.amazonaws.com", opts.region);
}

namespace {

task<result<identity>> sts_call(const provider_context& ctx, std::string action,
                                std::vector<std::pair<std::string, std::string>> params,
                                std::optional<sigv4::credentials> signer) {
    const std::string url = ctx.sts_url();
    auto ep = http::parse_url(url);
    if (!ep)
        co_return error{errc::bad_source,
                        fmt::format("STS endpoint '{}': {} (check s3.sts_endpoint / AWS_ENDPOINT_URL_STS)", url,
                                    ep.error().message())};
    std::vector<std::pair<std::string, std::string>> head;
    head.emplace_back("Action", action);
    head.emplace_back("Version", "2011-06-15");
    params.insert(params.begin(), head.begin(), head.end());
    const std::string body = form_encode(params);
    const std::string target = target_of(url);
    const std::string host = ep->host_header();
    const std::string content_type = "application/x-www-form-urlencoded; charset=utf-8";
    http::request req{"POST", target};
    req.headers.add("Host", host);
    req.headers.add("Content-Type", content_type);
    req.headers.add("Accept", "application/xml");
    if (signer) {
        const std::vector<sigv4::header> hs{{"Host", host}, {"Content-Type", content_type}};
        sigv4::request_view view{};
        view.method = "POST";
        view.path = target;
        view.form = sigv4::path_form::encoded;
        view.headers = hs;
        view.body = body;
        sigv4::signing_params sp;
        sp.service = "sts";
        sp.region = ctx.opts.region;
        sp.normalize_path = true;
        sp.double_encode_path = true;
        sp.add_content_sha256_header = false;
        auto s = sigv4::sign(view, *signer, sp, ctx.clk->system_now());
        if (!s) co_return error{errc::bad_source, fmt::format("STS {}: cannot sign: {}", action, s.error().message())};
        for (const auto& h : s->headers) req.headers.add(h.name, h.value);
    }
    auto owned = std::make_shared<std::string>(body);
    req.body.emplace_back(*owned);
    auto r = co_await send(ctx, url, std::move(req), ctx.opts.timeout, "STS");
    if (!r) co_return r.error();
    if (r->status == 200) co_return parse_sts_credentials(r->body, action);
    const auto e = parse_sts_error(r->body);
    const std::string what = fmt::format("STS {} at {}: HTTP {}{}{}{}", action, ep->to_string(), r->status,
                                         e.code.empty() ? "" : " ", e.code, e.message.empty() ? "" : ": " + e.message);
    const bool transient = r->status >= 500 || r->status == 429 || e.code == "Throttling" ||
                           e.code == "IDPCommunicationError" || e.code == "ServiceUnavailable" ||
                           e.code == "InternalFailure";
    co_return error{transient ? errc::fetch_failed : errc::sts_rejected, what};
}

}  // namespace

task<result<identity>> sts_assume_role_with_web_identity(const provider_context& ctx, std::string role_arn,
                                                         std::string session_name, std::string token) {
    std::vector<std::pair<std::string, std::string>> p;
    p.emplace_back("RoleArn", std::move(role_arn));
    p.emplace_back("RoleSessionName", std::move(session_name));
    p.emplace_back("WebIdentityToken", std::move(token));
    co_return co_await sts_call(ctx, "AssumeRoleWithWebIdentity", std::move(p), std::nullopt);
}

task<result<identity>> sts_assume_role(const provider_context& ctx, sigv4::credentials base, assume_role_options role) {
    std::vector<std::pair<std::string, std::string>> p;
    p.emplace_back("RoleArn", role.role_arn);
    p.emplace_back("RoleSessionName", role.session_name.empty() ? default_session_name(*ctx.clk) : role.session_name);
    p.emplace_back("DurationSeconds", std::to_string(role.duration.count()));
    if (!role.external_id.empty()) p.emplace_back("ExternalId", role.external_id);
    co_return co_await sts_call(ctx, "AssumeRole", std::move(p), std::move(base));
}

}  // namespace iss::aws

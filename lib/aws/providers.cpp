// SPDX-License-Identifier: Apache-2.0
#include "aws/providers.hpp"

#include "aws/error.hpp"
#include "aws/parse.hpp"
#include "aws/provider_support.hpp"
#include "common/log.hpp"
#include "http/client.hpp"

#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

namespace iss::aws {

namespace detail {

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

bool iequal(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

/// Reads a whole file. nullopt when it does not exist; an error when it exists but cannot be read.
result<std::optional<std::string>> read_file(const std::string& path, std::string_view role) {
    std::ifstream in{path, std::ios::binary};
    if (!in) {
        if (errno == ENOENT) return std::optional<std::string>{};
        return error{errc::bad_source, fmt::format("{} {}: {}", role, path, std::strerror(errno))};
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    return std::optional<std::string>{ss.str()};
}

/// A token file's content, trimmed; errors name the file, never the content.
result<std::string> read_token(const std::string& path, std::string_view role) {
    auto r = read_file(path, role);
    if (!r) return r.error();
    if (!*r) return error{errc::bad_source, fmt::format("{} {}: no such file", role, path)};
    std::string t{trim(**r)};
    if (t.empty()) return error{errc::bad_source, fmt::format("{} {}: empty", role, path)};
    if (t.find_first_of("\r\n") != std::string::npos)
        return error{errc::bad_source, fmt::format("{} {}: more than one line", role, path)};
    return t;
}

std::string default_session_name(const iss::clock& clk) {
    return fmt::format("iggy-s3-sink-{}",
                       std::chrono::duration_cast<std::chrono::seconds>(clk.system_now().time_since_epoch()).count());
}

task<result<http::response>> send(const provider_context& ctx, std::string url, http::request req,
                                  std::chrono::milliseconds timeout, std::string_view what) {
    auto ep = http::parse_url(url);
    if (!ep) co_return error{errc::bad_source, fmt::format("{} URL '{}': {}", what, url, ep.error().message())};
    auto r = co_await ctx.http->send(*ep, std::move(req), timeout);  // a cancellation throws
    if (!r) {
        co_return error{errc::fetch_failed, fmt::format("{} {}: {}", what, ep->to_string(), r.error().message())};
    }
    co_return std::move(*r);
}

std::string target_of(std::string_view url) {
    std::string_view p = http::url_path(url);
    const auto scheme = url.find("://");
    const auto slash = scheme == std::string_view::npos ? std::string_view::npos : url.find('/', scheme + 3);
    if (slash != std::string_view::npos) p = url.substr(slash);  // keep the query too
    return p.empty() ? "/" : std::string{p};
}

}  // namespace detail

namespace {

using namespace detail;

// ---- static and env ----

class static_provider final : public provider {
public:
    explicit static_provider(sigv4::credentials k) : keys_{std::move(k)} {}
    task<result<identity>> fetch() override {
        if (keys_.access_key_id.get().empty() && keys_.secret_access_key.empty())
            co_return error{errc::not_configured, "s3.access_key_id is not set"};
        if (keys_.access_key_id.get().empty() || keys_.secret_access_key.empty())
            co_return error{errc::bad_source, "s3.access_key_id and s3.secret_access_key must be set together"};
        identity id;
        id.keys = keys_;
        id.source = "static";
        id.detail = "s3.access_key_id";
        co_return id;
    }
    std::string name() const override { return "static"; }

private:
    sigv4::credentials keys_;
};

class env_provider final : public provider {
public:
    explicit env_provider(env_lookup env) : env_{std::move(env)} {}
    task<result<identity>> fetch() override {
        auto get = [&](std::string_view n) { return env_ ? env_(n).value_or("") : std::string{}; };
        const auto id_ = get("AWS_ACCESS_KEY_ID");
        const auto secret = get("AWS_SECRET_ACCESS_KEY");
        if (id_.empty() && secret.empty()) co_return error{errc::not_configured, "AWS_ACCESS_KEY_ID is not set"};
        if (id_.empty() || secret.empty())
            co_return error{errc::bad_source, "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together"};
        identity id;
        id.keys = {access_key_id{id_}, secret_access_key{secret}, session_token{get("AWS_SESSION_TOKEN")}};
        id.source = "env";
        id.detail = "AWS_ACCESS_KEY_ID";
        co_return id;
    }
    std::string name() const override { return "env"; }

private:
    env_lookup env_;
};

// ---- web identity ----

class web_identity_provider final : public provider {
public:
    explicit web_identity_provider(std::shared_ptr<const provider_context> c) : ctx_{std::move(c)} {}
    task<result<identity>> fetch() override {
        const auto file = ctx_->env("AWS_WEB_IDENTITY_TOKEN_FILE").value_or("");
        const auto role = ctx_->env("AWS_ROLE_ARN").value_or("");
        if (file.empty() && role.empty())
            co_return error{errc::not_configured, "AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN are not set"};
        if (file.empty() || role.empty())
            co_return error{errc::bad_source, "AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN must be set together"};
        auto token = read_token(file, "AWS_WEB_IDENTITY_TOKEN_FILE");  // re-read each time: the kubelet rotates it
        if (!token) co_return token.error();
        auto session = ctx_->env("AWS_ROLE_SESSION_NAME").value_or("");
        if (session.empty()) session = default_session_name(*ctx_->clk);
        auto r = co_await sts_assume_role_with_web_identity(*ctx_, role, session, std::move(*token));
        if (!r) co_return r.error();
        r->source = "web identity";
        r->detail = "role " + role;
        co_return r;
    }
    std::string name() const override { return "web identity"; }

private:
    std::shared_ptr<const provider_context> ctx_;
};

// ---- shared files ----

class profile_provider final : public provider {
public:
    explicit profile_provider(std::shared_ptr<const provider_context> c) : ctx_{std::move(c)} {}

    task<result<identity>> fetch() override {
        const auto home = ctx_->env("HOME").value_or("");
        auto cred_path = ctx_->env("AWS_SHARED_CREDENTIALS_FILE").value_or("");
        auto conf_path = ctx_->env("AWS_CONFIG_FILE").value_or("");
        if (cred_path.empty() && !home.empty()) cred_path = home + "/.aws/credentials";
        if (conf_path.empty() && !home.empty()) conf_path = home + "/.aws/config";
        const auto explicit_profile = ctx_->env("AWS_PROFILE").value_or("");
        const std::string profile = explicit_profile.empty() ? "default" : explicit_profile;

        ini_file creds, conf;
        bool any_file = false;
        for (auto [path, out, role] :
             {std::tuple{cred_path, &creds, "credentials file"}, std::tuple{conf_path, &conf, "config file"}}) {
            if (path.empty()) continue;
            auto text = read_file(path, role);
            if (!text) co_return text.error();
            if (!*text) continue;
            any_file = true;
            auto ini = parse_ini(**text, path);
            if (!ini) co_return ini.error();
            *out = std::move(*ini);
        }
        if (!any_file) {
            if (!explicit_profile.empty())
                co_return error{errc::bad_source,
                                fmt::format("AWS_PROFILE={}: neither {} nor {} exists", profile, cred_path, conf_path)};
            co_return error{errc::not_configured, fmt::format("no {} or {}", cred_path, conf_path)};
        }
        creds_ = std::move(creds);
        conf_ = std::move(conf);
        std::set<std::string> seen;
        auto r = co_await resolve(profile, !explicit_profile.empty(), seen);
        if (!r) co_return r.error();
        co_return r;
    }
    std::string name() const override { return "profile"; }

private:
    using section = std::map<std::string, std::string, std::less<>>;

    std::optional<section> lookup(const std::string& name) const {
        std::optional<section> out;
        auto merge = [&](const ini_file& f, const std::string& s) {
            auto it = f.find(s);
            if (it == f.end()) return;
            if (!out) out.emplace();
            for (const auto& [k, v] : it->second) (*out)[k] = v;
        };
        if (name == "default") merge(conf_, "default");
        merge(conf_, "profile " + name);
        merge(creds_, name);  // the credentials file wins (the SDKs' precedence)
        return out;
    }

    task<result<identity>> resolve(std::string name, bool must_exist, std::set<std::string>& seen) {
        const auto p = lookup(name);
        if (!p) {
            if (must_exist) co_return error{errc::bad_source, fmt::format("profile '{}' is in neither file", name)};
            co_return error{errc::not_configured, fmt::format("no profile '{}'", name)};
        }
        auto get = [&](std::string_view k) {
            auto it = p->find(k);
            return it == p->end() ? std::string{} : it->second;
        };
        const auto role_arn = get("role_arn");
        const auto key_id = get("aws_access_key_id");
        const auto secret = get("aws_secret_access_key");
        if (role_arn.empty()) {
            if (key_id.empty() && secret.empty()) {
                if (must_exist)
                    co_return error{errc::bad_source,
                                    fmt::format("profile '{}' has no aws_access_key_id and no role_arn", name)};
                co_return error{errc::not_configured, fmt::format("profile '{}' has no credentials", name)};
            }
            if (key_id.empty() || secret.empty())
                co_return error{
                    errc::bad_source,
                    fmt::format("profile '{}': aws_access_key_id and aws_secret_access_key must be set together",
                                name)};
            identity id;
            id.keys = {access_key_id{key_id}, secret_access_key{secret}, session_token{get("aws_session_token")}};
            id.source = "profile";
            id.detail = "profile " + name;
            co_return id;
        }
        if (!seen.insert(name).second)
            co_return error{errc::bad_source, fmt::format("profile '{}': source_profile loop", name)};
        if (seen.size() > 5) co_return error{errc::bad_source, "source_profile chain longer than 5"};
        assume_role_options role;
        role.role_arn = role_arn;
        role.session_name = get("role_session_name");
        role.external_id = get("external_id");
        if (const auto d = get("duration_seconds"); !d.empty()) {
            char* end = nullptr;
            const long v = std::strtol(d.c_str(), &end, 10);
            if (end == d.c_str() || *end != '\0' || v < 900 || v > 43200)
                co_return error{errc::bad_source,
                                fmt::format("profile '{}': duration_seconds must be 900 .. 43200", name)};
            role.duration = std::chrono::seconds{v};
        }
        sigv4::credentials base;
        std::string via;
        const auto source_profile = get("source_profile");
        const auto token_file = get("web_identity_token_file");
        if (!source_profile.empty()) {
            if (source_profile == name) {
                if (key_id.empty() || secret.empty())
                    co_return error{errc::bad_source,
                                    fmt::format("profile '{}' is its own source_profile but has no keys", name)};
                base = {access_key_id{key_id}, secret_access_key{secret}, session_token{get("aws_session_token")}};
            } else {
                auto b = co_await resolve(source_profile, true, seen);
                if (!b)
                    co_return error{b.error().code(),
                                    fmt::format("profile '{}' source_profile: {}", name, b.error().detail())};
                base = b->keys;
            }
            via = "source_profile " + source_profile;
        } else if (!token_file.empty()) {
            auto token = read_token(token_file, "web_identity_token_file");
            if (!token) co_return token.error();
            const auto session = role.session_name.empty() ? default_session_name(*ctx_->clk) : role.session_name;
            auto r = co_await sts_assume_role_with_web_identity(*ctx_, role_arn, session, std::move(*token));
            if (!r) co_return r.error();
            r->source = "profile";
            r->detail = fmt::format("profile {}, role {} (web identity)", name, role_arn);
            co_return r;
        } else if (!get("credential_source").empty()) {
            co_return error{errc::bad_source,
                            fmt::format("profile '{}': credential_source is not supported; use source_profile", name)};
        } else {
            co_return error{
                errc::bad_source,
                fmt::format("profile '{}': role_arn needs source_profile or web_identity_token_file", name)};
        }
        auto r = co_await sts_assume_role(*ctx_, std::move(base), role);
        if (!r) co_return r.error();
        r->source = "profile";
        r->detail = fmt::format("profile {}, role {} via {}", name, role_arn, via);
        co_return r;
    }

    std::shared_ptr<const provider_context> ctx_;
    ini_file creds_, conf_;
};

// ---- container ----

bool container_host_allowed(const http::endpoint& ep) {
    if (ep.tls) return true;
    const auto& h = ep.host;
    return h == "localhost" || h.starts_with("127.") || h == "::1" || h == "169.254.170.2" || h == "169.254.170.23" ||
           h == "fd00:ec2::23";
}

class container_provider final : public provider {
public:
    explicit container_provider(std::shared_ptr<const provider_context> c) : ctx_{std::move(c)} {}
    task<result<identity>> fetch() override {
        const auto rel = ctx_->env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI").value_or("");
        const auto full = ctx_->env("AWS_CONTAINER_CREDENTIALS_FULL_URI").value_or("");
        std::string url;
        if (!rel.empty()) {
            url = "http://169.254.170.2" + (rel.starts_with('/') ? rel : "/" + rel);
        } else if (!full.empty()) {
            auto ep = http::parse_url(full);
            if (!ep)
                co_return error{errc::bad_source,
                                fmt::format("AWS_CONTAINER_CREDENTIALS_FULL_URI: {}", ep.error().message())};
            if (!container_host_allowed(*ep))
                co_return error{
                    errc::bad_source,
                    fmt::format("AWS_CONTAINER_CREDENTIALS_FULL_URI {}: plain http only to a loopback address, "
                                "169.254.170.2, 169.254.170.23 or fd00:ec2::23; use https",
                                ep->to_string())};
            url = full;
        } else {
            co_return error{
                errc::not_configured,
                "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and AWS_CONTAINER_CREDENTIALS_FULL_URI are not set"};
        }
        std::string auth;
        if (const auto f = ctx_->env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE").value_or(""); !f.empty()) {
            auto t = read_token(f, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");  // re-read: EKS rotates it
            if (!t) co_return t.error();
            auth = std::move(*t);
        } else {
            auth = ctx_->env("AWS_CONTAINER_AUTHORIZATION_TOKEN").value_or("");
            if (auth.find_first_of("\r\n") != std::string::npos)
                co_return error{errc::bad_source, "AWS_CONTAINER_AUTHORIZATION_TOKEN holds a line break"};
        }
        http::request req{"GET", target_of(url)};
        req.headers.add("Accept", "application/json");
        if (!auth.empty()) req.headers.add("Authorization", auth);
        auto r = co_await send(*ctx_, url, std::move(req), ctx_->opts.timeout, "container endpoint");
        if (!r) co_return r.error();
        const auto where = url.substr(0, url.find('?'));
        if (r->status != 200)
            co_return error{errc::fetch_failed, fmt::format("container endpoint {}: HTTP {}", where, r->status)};
        auto id = parse_credentials_json(r->body, "container endpoint");
        if (!id) co_return id.error();
        id->source = "container";
        id->detail = "endpoint " + where;
        co_return id;
    }
    std::string name() const override { return "container"; }

private:
    std::shared_ptr<const provider_context> ctx_;
};

// ---- IMDSv2 ----

class imds_provider final : public provider {
public:
    explicit imds_provider(std::shared_ptr<const provider_context> c) : ctx_{std::move(c)} {}
    task<result<identity>> fetch() override {
        if (iequal(ctx_->env("AWS_EC2_METADATA_DISABLED").value_or(""), "true"))
            co_return error{errc::not_configured, "AWS_EC2_METADATA_DISABLED=true"};
        std::string base = ctx_->env("AWS_EC2_METADATA_SERVICE_ENDPOINT").value_or("http://169.254.169.254");
        while (base.ends_with('/')) base.pop_back();
        const auto t = ctx_->opts.imds_timeout;
        // IMDSv2 session token. Without it there is no fallback to IMDSv1 (unauthenticated GETs).
        http::request tok{"PUT", "/latest/api/token"};
        tok.headers.add("X-aws-ec2-metadata-token-ttl-seconds", "21600");
        auto tr = co_await send(*ctx_, base, std::move(tok), t, "IMDSv2 token from");
        if (!tr) co_return tr.error();
        if (tr->status != 200)
            co_return error{errc::fetch_failed,
                            fmt::format("IMDSv2 token from {}: HTTP {} (IMDSv1 is never used)", base, tr->status)};
        const std::string token{trim(tr->body)};
        if (token.empty()) co_return error{errc::bad_response, fmt::format("IMDSv2 token from {}: empty", base)};

        http::request role_req{"GET", "/latest/meta-data/iam/security-credentials/"};
        role_req.headers.add("X-aws-ec2-metadata-token", token);
        auto rr = co_await send(*ctx_, base, std::move(role_req), t, "IMDS role from");
        if (!rr) co_return rr.error();
        if (rr->status == 404)
            co_return error{errc::not_configured, fmt::format("IMDS {}: no instance profile attached", base)};
        if (rr->status != 200)
            co_return error{errc::fetch_failed, fmt::format("IMDS role from {}: HTTP {}", base, rr->status)};
        std::string role{trim(std::string_view{rr->body}.substr(0, rr->body.find('\n')))};
        if (role.empty())
            co_return error{errc::not_configured, fmt::format("IMDS {}: no instance profile attached", base)};

        http::request creq{"GET", "/latest/meta-data/iam/security-credentials/" + role};
        creq.headers.add("X-aws-ec2-metadata-token", token);
        auto cr = co_await send(*ctx_, base, std::move(creq), t, "IMDS credentials from");
        if (!cr) co_return cr.error();
        if (cr->status != 200)
            co_return error{errc::fetch_failed,
                            fmt::format("IMDS credentials of role {} from {}: HTTP {}", role, base, cr->status)};
        auto id = parse_credentials_json(cr->body, "IMDS");
        if (!id) co_return id.error();
        id->source = "imds";
        id->detail = "instance profile role " + role;
        co_return id;
    }
    std::string name() const override { return "imds"; }

private:
    std::shared_ptr<const provider_context> ctx_;
};

// ---- assume role over a base ----

class assume_role_provider final : public provider {
public:
    assume_role_provider(std::shared_ptr<const provider_context> c, std::shared_ptr<provider> base,
                         assume_role_options r)
        : ctx_{std::move(c)}, base_{std::move(base)}, role_{std::move(r)} {}
    task<result<identity>> fetch() override {
        auto b = co_await base_->fetch();
        if (!b) co_return b.error();
        auto r = co_await sts_assume_role(*ctx_, b->keys, role_);
        if (!r) co_return r.error();
        r->source = "assume role";
        r->detail = fmt::format("role {}, base credentials: {}", role_.role_arn, b->source);
        co_return r;
    }
    std::string name() const override { return "assume role over " + base_->name(); }

private:
    std::shared_ptr<const provider_context> ctx_;
    std::shared_ptr<provider> base_;
    assume_role_options role_;
};

// ---- the chain ----

class chain_provider final : public provider {
public:
    explicit chain_provider(std::vector<std::shared_ptr<provider>> s) : steps_{std::move(s)} {}
    task<result<identity>> fetch() override {
        if (chosen_) co_return co_await chosen_->fetch();
        std::string tried;
        for (const auto& s : steps_) {
            auto r = co_await s->fetch();
            if (r) {
                chosen_ = s;
                co_return r;
            }
            if (!tried.empty()) tried += "; ";
            tried += fmt::format("{}: {}", s->name(),
                                 r.error() == errc::not_configured ? "not configured (" + r.error().detail() + ")"
                                                                   : r.error().message());
        }
        co_return error{errc::none_found, "tried " + tried};
    }
    std::string name() const override { return "chain"; }

private:
    std::vector<std::shared_ptr<provider>> steps_;
    std::shared_ptr<provider> chosen_;
};

sigv4::credentials no_keys() { return {}; }

}  // namespace

std::string_view to_string(source_kind k) noexcept {
    switch (k) {
        case source_kind::automatic: return "auto";
        case source_kind::static_keys: return "static";
        case source_kind::env: return "env";
        case source_kind::web_identity: return "web_identity";
        case source_kind::profile: return "profile";
        case source_kind::container: return "container";
        case source_kind::imds: return "imds";
    }
    return "?";
}

std::optional<std::string> provider_context::env(std::string_view name) const {
    if (!opts.env) return std::nullopt;
    auto v = opts.env(name);
    if (v && v->empty()) return std::nullopt;
    return v;
}

std::shared_ptr<provider> make_static_provider(sigv4::credentials keys) {
    return std::make_shared<static_provider>(std::move(keys));
}
std::shared_ptr<provider> make_env_provider(env_lookup env) { return std::make_shared<env_provider>(std::move(env)); }
std::shared_ptr<provider> make_web_identity_provider(std::shared_ptr<const provider_context> ctx) {
    return std::make_shared<web_identity_provider>(std::move(ctx));
}
std::shared_ptr<provider> make_profile_provider(std::shared_ptr<const provider_context> ctx) {
    return std::make_shared<profile_provider>(std::move(ctx));
}
std::shared_ptr<provider> make_container_provider(std::shared_ptr<const provider_context> ctx) {
    return std::make_shared<container_provider>(std::move(ctx));
}
std::shared_ptr<provider> make_imds_provider(std::shared_ptr<const provider_context> ctx) {
    return std::make_shared<imds_provider>(std::move(ctx));
}
std::shared_ptr<provider> make_assume_role_provider(std::shared_ptr<const provider_context> ctx,
                                                    std::shared_ptr<provider> base, assume_role_options role) {
    return std::make_shared<assume_role_provider>(std::move(ctx), std::move(base), std::move(role));
}
std::shared_ptr<provider> make_chain(std::vector<std::shared_ptr<provider>> steps) {
    return std::make_shared<chain_provider>(std::move(steps));
}

std::shared_ptr<provider> make_provider(boost::asio::any_io_executor ex, std::shared_ptr<http::client> http,
                                        chain_options opts, const iss::clock& clk) {
    auto ctx = std::make_shared<provider_context>();
    ctx->ex = ex;
    ctx->http = std::move(http);
    ctx->clk = &clk;
    ctx->opts = std::move(opts);
    const auto& o = ctx->opts;
    std::shared_ptr<provider> p;
    switch (o.source) {
        case source_kind::static_keys: p = make_static_provider(o.static_keys); break;
        case source_kind::env: p = make_env_provider(o.env); break;
        case source_kind::web_identity: p = make_web_identity_provider(ctx); break;
        case source_kind::profile: p = make_profile_provider(ctx); break;
        case source_kind::container: p = make_container_provider(ctx); break;
        case source_kind::imds: p = make_imds_provider(ctx); break;
        case source_kind::automatic:
            p = make_chain({make_static_provider(o.static_keys), make_env_provider(o.env),
                            make_web_identity_provider(ctx), make_profile_provider(ctx), make_container_provider(ctx),
                            make_imds_provider(ctx)});
            break;
    }
    if (!o.assume_role.role_arn.empty()) p = make_assume_role_provider(ctx, std::move(p), o.assume_role);
    (void)no_keys;
    return p;
}

}  // namespace iss::aws

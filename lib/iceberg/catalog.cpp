// SPDX-License-Identifier: Apache-2.0
// The REST catalog client (catalog.hpp): one exchange function sends every request through
// lib/http with the configured authentication and classifies what comes back
// (catalog_protocol.hpp); the calls build targets and bodies and parse answers.
#include "iceberg/catalog.hpp"

#include "aws/parse.hpp"
#include "common/log.hpp"
#include "common/net/async_mutex.hpp"
#include "http/client.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/this_coro.hpp>

namespace iss::iceberg {

namespace net = boost::asio;
using namespace std::chrono_literals;

namespace {

const log::logger& logger() {
    static const log::logger l{"iceberg"};
    return l;
}

constexpr std::string_view json_type = "application/json";
constexpr std::string_view form_type = "application/x-www-form-urlencoded";

}  // namespace

struct catalog_client::impl {
    impl(http::client& h, catalog_options o, const iss::clock& c, net::any_io_executor ex)
        : http{h}, opts{std::move(o)}, clk{c}, token_mu{std::move(ex)}, paths{"", opts.prefix} {}

    http::client& http;
    catalog_options opts;
    const iss::clock& clk;
    http::endpoint ep;
    bool ep_ok = false;
    error ep_error;
    async_mutex token_mu;
    std::optional<oauth_token> token;
    iss::clock::steady_time token_refresh_at{};
    catalog_paths paths;
    catalog_stats st;

    // The OAuth2 token to send, fetched when there is none or it is near its expiry.
    task<result<std::string>> bearer_token() {
        auto g = co_await token_mu.lock();
        if (token && (!token->expires_in || clk.steady_now() < token_refresh_at)) co_return token->access_token;
        auto t = co_await fetch_token();
        if (!t) co_return t.error();
        const auto now = clk.steady_now();
        if (t->expires_in) {
            const auto life = std::chrono::duration_cast<std::chrono::milliseconds>(*t->expires_in);
            token_refresh_at = now + life - std::min<std::chrono::milliseconds>(life / 10, 60s);
        }
        token = std::move(*t);
        ++st.token_fetches;
        logger().info("OAuth2 token for client id {} obtained{}", opts.auth.client_id,
                      token->expires_in ? fmt::format(", valid {} s", token->expires_in->count()) : std::string{});
        co_return token->access_token;
    }

    task<result<oauth_token>> fetch_token() {
        const std::string url =
            opts.auth.token_endpoint.empty() ? ep.to_string() + paths.oauth_tokens() : opts.auth.token_endpoint;
        auto tep = http::parse_url(url);
        const std::string what = fmt::format("OAuth2 token endpoint {}", tep ? tep->to_string() : url);
        if (!tep)
            co_return error{catalog_errc::bad_uri, fmt::format("{}: {} (check iceberg.catalog.auth.token_endpoint)",
                                                               what, tep.error().message())};
        std::vector<std::pair<std::string, std::string>> form;
        form.emplace_back("grant_type", "client_credentials");
        form.emplace_back("client_id", opts.auth.client_id);
        form.emplace_back("client_secret", opts.auth.client_secret.reveal());
        if (!opts.auth.scope.empty()) form.emplace_back("scope", opts.auth.scope);
        const std::string body = aws::form_encode(form);
        std::string target{http::url_path(url)};
        if (target.empty()) target = "/";
        http::request req{"POST", target};
        req.headers.add("Host", tep->host_header());
        req.headers.add("Accept", std::string{json_type});
        req.headers.add("Content-Type", std::string{form_type});
        req.body.emplace_back(body);
        ++st.requests;
        auto r = co_await http.send(*tep, std::move(req), opts.request_timeout);  // a cancellation throws
        if (!r) {
            co_return classify_transport(catalog_op::token, r.error(), what, url);
        }
        if (r->status == 200) co_return parse_oauth_token(r->body);
        if (r->status >= 500 || r->status == 429) co_return classify(catalog_op::token, r->status, r->body, what, url);
        const auto eb = parse_error_body(r->body);
        co_return error{catalog_errc::auth_failed,
                        fmt::format("{} refused client id '{}': HTTP {}{}{}: check iceberg.catalog.auth.client_id, "
                                    "client_secret and scope",
                                    what, opts.auth.client_id, r->status, eb.type.empty() ? "" : " " + eb.type,
                                    eb.message.empty() ? "" : ": " + eb.message)};
    }

    // Adds the authentication headers of the configured kind.
    task<result<void>> authorize(http::request& req, std::string_view body, std::string_view content_type) {
        switch (opts.auth.kind) {
            case auth_kind::none: co_return result<void>{};
            case auth_kind::bearer:
                req.headers.add("Authorization", "Bearer " + opts.auth.token.reveal());
                co_return result<void>{};
            case auth_kind::oauth2: {
                auto t = co_await bearer_token();
                if (!t) co_return t.error();
                req.headers.add("Authorization", "Bearer " + *t);
                co_return result<void>{};
            }
            case auth_kind::sigv4: {
                if (!opts.auth.credentials)
                    co_return error{catalog_errc::auth_failed, "sigv4: no AWS credentials source (a wiring bug)"};
                auto creds = co_await opts.auth.credentials->current();
                if (!creds)
                    co_return error{catalog_errc::auth_failed,
                                    fmt::format("sigv4: no AWS credentials: {}", creds.error().message())};
                auto hs =
                    sign_catalog_request(req.method, req.target, ep.host_header(), content_type, body, creds->keys,
                                         opts.auth.signing_name, opts.auth.signing_region, clk.system_now());
                if (!hs) co_return hs.error();
                for (auto& h : *hs) req.headers.add(std::move(h.name), std::move(h.value));
                co_return result<void>{};
            }
        }
        co_return result<void>{};
    }

    // Sends one request and answers the response when its status is 2xx, else the classified
    // error. With oauth2, a 401 drops the token and the request goes once more with a new one.
    task<result<http::response>> exchange(catalog_op op, std::string method, std::string target, std::string body,
                                          std::string what) {
        if (!ep_ok) co_return ep_error;
        const std::string_view ctype = body.empty() ? std::string_view{} : json_type;
        for (int attempt = 0;; ++attempt) {
            http::request req{method, target};
            req.headers.add("Host", ep.host_header());
            req.headers.add("Accept", std::string{json_type});
            if (!ctype.empty()) req.headers.add("Content-Type", std::string{ctype});
            auto a = co_await authorize(req, body, ctype);
            if (!a) co_return a.error();
            if (!body.empty()) req.body.emplace_back(body);
            ++st.requests;
            auto r = co_await http.send(ep, std::move(req), opts.request_timeout);  // a cancellation throws
            if (!r) {
                co_return classify_transport(op, r.error(), what, opts.uri);
            }
            if (r->status >= 200 && r->status < 300) co_return std::move(*r);
            if (r->status == 401 && opts.auth.kind == auth_kind::oauth2 && attempt == 0) {
                logger().warn("{}: HTTP 401 with the current OAuth2 token; fetching a new one", what);
                auto g = co_await token_mu.lock();
                token.reset();
                continue;
            }
            co_return classify(op, r->status, r->body, what, opts.uri);
        }
    }
};

catalog_client::catalog_client(net::any_io_executor ex, http::client& http, catalog_options opts, const iss::clock& clk)
    : impl_{std::make_unique<impl>(http, std::move(opts), clk, std::move(ex))} {
    auto ep = http::parse_url(impl_->opts.uri);
    if (ep) {
        impl_->ep = *ep;
        impl_->ep_ok = true;
        impl_->paths = catalog_paths{std::string{http::url_path(impl_->opts.uri)}, impl_->opts.prefix};
    } else {
        impl_->ep_error = error{catalog_errc::bad_uri,
                                fmt::format("iceberg.catalog.uri '{}': {}", impl_->opts.uri, ep.error().message())};
    }
}

catalog_client::~catalog_client() = default;

task<result<catalog_config>> catalog_client::connect() {
    auto r = co_await impl_->exchange(catalog_op::config, "GET", impl_->paths.config(impl_->opts.warehouse), {},
                                      "catalog configuration (GET /v1/config)");
    if (!r) co_return r.error();
    auto c = parse_config(r->body);
    if (!c) co_return c.error();
    std::string prefix = impl_->opts.prefix.empty() ? c->prefix() : impl_->opts.prefix;
    impl_->paths = catalog_paths{std::string{http::url_path(impl_->opts.uri)}, std::move(prefix)};
    logger().info("catalog {}: prefix '{}'", impl_->ep.to_string(), impl_->paths.prefix());
    co_return std::move(*c);
}

task<result<void>> catalog_client::create_namespace(std::vector<std::string> ns) {
    auto r = co_await impl_->exchange(catalog_op::create_namespace, "POST", impl_->paths.namespaces(),
                                      create_namespace_body(ns), fmt::format("namespace {}", namespace_string(ns)));
    if (!r) co_return r.error();
    logger().info("namespace {} created", namespace_string(ns));
    co_return result<void>{};
}

task<result<loaded_table>> catalog_client::load_table(table_ident t) {
    auto r = co_await impl_->exchange(catalog_op::load_table, "GET", impl_->paths.table(t), {},
                                      fmt::format("table {}", t.to_string()));
    if (!r) co_return r.error();
    co_return parse_load_table(r->body);
}

task<result<loaded_table>> catalog_client::create_table(std::vector<std::string> ns, create_table_request r) {
    auto body = create_table_body(r);
    if (!body) co_return body.error();
    const table_ident t{ns, r.name};
    auto a = co_await impl_->exchange(catalog_op::create_table, "POST", impl_->paths.tables(ns), std::move(*body),
                                      fmt::format("table {}", t.to_string()));
    if (!a) co_return a.error();
    auto lt = parse_load_table(a->body);
    if (lt) logger().info("table {} created at {}", t.to_string(), lt->location);
    co_return lt;
}

task<result<loaded_table>> catalog_client::ensure_table(table_ident t, create_table_request r, bool create) {
    auto loaded = co_await load_table(t);
    if (loaded || !(loaded.error() == catalog_errc::not_found) || !create) co_return loaded;
    auto ns = co_await create_namespace(t.ns);
    if (!ns && !(ns.error() == catalog_errc::already_exists)) co_return ns.error();
    r.name = t.name;
    auto created = co_await create_table(t.ns, std::move(r));
    if (created || !(created.error() == catalog_errc::already_exists)) co_return created;
    co_return co_await load_table(t);  // another writer created it first
}

task<result<loaded_table>> catalog_client::commit(table_ident t, std::string body) {
    auto r = co_await impl_->exchange(catalog_op::commit, "POST", impl_->paths.table(t), std::move(body),
                                      fmt::format("table {}", t.to_string()));
    if (!r) co_return r.error();
    co_return parse_load_table(r->body);
}

const std::string& catalog_client::prefix() const noexcept { return impl_->paths.prefix(); }
const catalog_options& catalog_client::options() const noexcept { return impl_->opts; }
catalog_stats catalog_client::stats() const noexcept { return impl_->st; }

}  // namespace iss::iceberg

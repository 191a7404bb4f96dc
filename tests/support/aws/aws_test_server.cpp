// SPDX-License-Identifier: Apache-2.0
#include "aws/aws_test_server.hpp"

#include "http/client.hpp"
#include "sigv4/encoding.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <fmt/format.h>

#include <ctime>
#include <list>
#include <random>
#include <set>

namespace iss::test {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using sys = std::chrono::system_clock;

namespace {
constexpr auto use_tuple = net::as_tuple(net::use_awaitable);

std::string iso(sys::time_point t) {
    const std::time_t tt = sys::to_time_t(t);
    std::tm tm{};
    gmtime_r(&tt, &tm);
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                       tm.tm_min, tm.tm_sec);
}

std::optional<sys::time_point> parse_amz_date(std::string_view s) {
    if (s.size() != 16 || s[8] != 'T' || s[15] != 'Z') return std::nullopt;
    std::tm tm{};
    auto n = [&](std::size_t p, std::size_t l) { return std::stoi(std::string{s.substr(p, l)}); };
    tm.tm_year = n(0, 4) - 1900;
    tm.tm_mon = n(4, 2) - 1;
    tm.tm_mday = n(6, 2);
    tm.tm_hour = n(9, 2);
    tm.tm_min = n(11, 2);
    tm.tm_sec = n(13, 2);
    return sys::from_time_t(timegm(&tm));
}

struct auth_parts {
    std::string akid, date, region, service, signed_headers, signature;
};

std::optional<auth_parts> parse_auth(std::string_view v) {
    constexpr std::string_view alg = "AWS4-HMAC-SHA256 ";
    if (!v.starts_with(alg)) return std::nullopt;
    v.remove_prefix(alg.size());
    auth_parts a;
    auto field = [&](std::string_view name) -> std::string {
        const auto p = v.find(name);
        if (p == std::string_view::npos) return {};
        auto rest = v.substr(p + name.size());
        return std::string{rest.substr(0, rest.find(','))};
    };
    const auto cred = field("Credential=");
    a.signed_headers = field("SignedHeaders=");
    a.signature = field("Signature=");
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (;;) {
        const auto slash = cred.find('/', start);
        parts.push_back(cred.substr(start, slash - start));
        if (slash == std::string::npos) break;
        start = slash + 1;
    }
    if (parts.size() != 5 || parts[4] != "aws4_request") return std::nullopt;
    a.akid = parts[0];
    a.date = parts[1];
    a.region = parts[2];
    a.service = parts[3];
    return a;
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (;;) {
        const auto p = s.find(sep, start);
        out.push_back(s.substr(start, p - start));
        if (p == std::string::npos) break;
        start = p + 1;
    }
    return out;
}

bool reserved(std::string_view n) {
    return http::iequals(n, "authorization") || http::iequals(n, "x-amz-date") ||
           http::iequals(n, "x-amz-security-token") || http::iequals(n, "x-amz-content-sha256");
}

/// Signs (method, target, the listed headers, body) the way the client must have, and
/// returns the signature, or "" when the request cannot be rebuilt.
std::string resign(const std::string& method, const std::string& target, const http::header_list& headers,
                   const std::vector<std::string>& names, const std::string& body, const sigv4::credentials& creds,
                   const std::string& service, const std::string& region, sys::time_point when,
                   std::vector<sigv4::owned_header>* out_headers = nullptr, std::string host_override = {}) {
    const auto q = target.find('?');
    const std::string path = target.substr(0, q);
    std::vector<sigv4::owned_query_param> owned;
    if (q != std::string::npos) {
        auto parsed = sigv4::parse_query(std::string_view{target}.substr(q + 1));
        if (!parsed) return {};
        owned = std::move(*parsed);
    }
    std::vector<sigv4::query_param> qs;
    for (const auto& p : owned) qs.push_back(p.view());
    std::vector<std::string> values;
    values.reserve(names.size());
    std::vector<sigv4::header> hs;
    for (const auto& n : names) {
        if (reserved(n)) continue;
        if (!host_override.empty() && http::iequals(n, "host")) values.push_back(host_override);
        else values.emplace_back(headers.get(n));
    }
    std::size_t i = 0;
    for (const auto& n : names) {
        if (reserved(n)) continue;
        hs.push_back({n, values[i++]});
    }
    sigv4::request_view view{};
    view.method = method;
    view.path = path;
    view.form = sigv4::path_form::encoded;
    view.query = qs;
    view.headers = hs;
    sigv4::signing_params sp;
    sp.service = service;
    sp.region = region;
    const std::string content_sha{headers.get("x-amz-content-sha256")};
    if (service == "s3") {
        if (content_sha == sigv4::unsigned_payload_literal) sp.payload = sigv4::payload_mode::unsigned_payload;
        else view.payload_sha256 = content_sha;
        if (content_sha.empty()) view.body = body;
    } else {
        sp.normalize_path = true;
        sp.double_encode_path = true;
        sp.add_content_sha256_header = false;
        view.body = body;
    }
    auto s = sigv4::sign(view, creds, sp, when);
    if (!s) return {};
    if (out_headers) *out_headers = s->headers;
    return s->signature;
}

std::string random_hex(std::mt19937_64& rng, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += "0123456789abcdef"[rng() % 16];
    return s;
}

}  // namespace

struct aws_test_server::impl : std::enable_shared_from_this<impl> {
    struct issued_key {
        sigv4::credentials creds;
        sys::time_point expiry;
    };
    struct failure_rule {
        std::string prefix;
        unsigned status;
        unsigned times;
    };

    net::any_io_executor ex;
    tcp::acceptor acceptor;
    std::list<tcp::socket*> open;
    bool stopped = false;
    std::chrono::milliseconds lifetime{3'600'000};
    std::string container_token;
    std::string web_token;
    std::string imds_role = "sink-instance-role";
    std::string external_id;
    std::vector<sigv4::credentials> base_keys;
    std::optional<http::endpoint> upstream;
    sigv4::credentials upstream_keys;
    std::string upstream_region = "us-east-1";
    std::unique_ptr<http::client> upstream_client;
    std::vector<failure_rule> failures;
    std::set<std::string> imds_tokens;
    std::map<std::string, issued_key> issued;
    aws_server_stats stats;
    std::vector<std::string> violations;
    std::vector<std::pair<std::string, std::string>> seen;
    std::mt19937_64 rng{std::random_device{}()};

    explicit impl(net::any_io_executor e) : ex{e}, acceptor{e, tcp::endpoint{net::ip::make_address("127.0.0.1"), 0}} {
        http::client_options o;
        o.timeout.read = std::chrono::milliseconds{120'000};
        upstream_client = std::make_unique<http::client>(ex, o);
    }

    issued_key issue() {
        ++stats.issued;
        issued_key k;
        const auto n = stats.issued;
        k.creds.access_key_id = access_key_id{fmt::format("ASIATEST{:08}", n)};
        k.creds.secret_access_key = secret_access_key{fmt::format("test-secret-{}-{}", n, random_hex(rng, 24))};
        k.creds.session_token = session_token{fmt::format("test-token-{}-{}", n, random_hex(rng, 32))};
        // The expiry as written (whole seconds), so the server and the client agree on it.
        k.expiry = std::chrono::floor<std::chrono::seconds>(sys::now() + lifetime);
        issued[k.creds.access_key_id.get()] = k;
        return k;
    }

    std::string json_creds(const issued_key& k, bool imds) {
        return fmt::format(
            R"({{{}"AccessKeyId":"{}","SecretAccessKey":"{}","Token":"{}","Expiration":"{}"}})",
            imds ? R"("Code":"Success","LastUpdated":")" + iso(sys::now()) + R"(","Type":"AWS-HMAC",)" : std::string{},
            k.creds.access_key_id.get(), k.creds.secret_access_key.reveal(), k.creds.session_token.reveal(),
            iso(k.expiry));
    }

    std::string sts_xml(const std::string& action, const issued_key& k, const std::string& role,
                        const std::string& session) {
        return fmt::format(
            "<{0}Response xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><{0}Result><Credentials>"
            "<AccessKeyId>{1}</AccessKeyId><SecretAccessKey>{2}</SecretAccessKey><SessionToken>{3}</SessionToken>"
            "<Expiration>{4}</Expiration></Credentials><AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/"
            "{5}/{6}"
            "</Arn><AssumedRoleId>AROATEST:{6}</AssumedRoleId></AssumedRoleUser></{0}Result><ResponseMetadata>"
            "<RequestId>test-{7}</RequestId></ResponseMetadata></{0}Response>",
            action, k.creds.access_key_id.get(), k.creds.secret_access_key.reveal(), k.creds.session_token.reveal(),
            iso(k.expiry), role.substr(role.rfind('/') + 1), session, stats.issued);
    }

    static http::response error_xml(unsigned status, std::string code, std::string message, bool sts) {
        std::string body = sts ? fmt::format(
                                     "<ErrorResponse><Error><Type>Sender</Type><Code>{}</Code><Message>{}</Message>"
                                     "</Error><RequestId>test</RequestId></ErrorResponse>",
                                     code, message)
                               : fmt::format(
                                     "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>{}</Code><Message>{}"
                                     "</Message><RequestId>test</RequestId></Error>",
                                     code, message);
        return http::response{status, "X", {{"Content-Type", "application/xml"}}, std::move(body)};
    }

    void violation(std::string v) { violations.push_back(std::move(v)); }

    /// The credentials the request's Authorization names, if they verify. Sets `expired`.
    std::optional<sigv4::credentials> verify(const std::string& method, const std::string& target,
                                             const http::header_list& h, const std::string& body, bool allow_base,
                                             bool& expired, std::string& why) {
        expired = false;
        auto a = parse_auth(h.get("authorization"));
        if (!a) {
            why = "no or malformed Authorization";
            return std::nullopt;
        }
        auto when = parse_amz_date(h.get("x-amz-date"));
        if (!when) {
            why = "no X-Amz-Date";
            return std::nullopt;
        }
        std::optional<sigv4::credentials> creds;
        if (auto it = issued.find(a->akid); it != issued.end()) {
            creds = it->second.creds;
            if (sys::now() >= it->second.expiry) expired = true;
        } else if (allow_base) {
            for (const auto& b : base_keys)
                if (b.access_key_id.get() == a->akid) creds = b;
        }
        if (!creds) {
            why = "unknown access key " + a->akid;
            return std::nullopt;
        }
        const auto sig =
            resign(method, target, h, split(a->signed_headers, ';'), body, *creds, a->service, a->region, *when);
        if (sig.empty() || sig != a->signature) {
            why = "signature does not verify for " + a->akid;
            return std::nullopt;
        }
        return creds;
    }

    net::awaitable<http::response> handle(const std::string& method, const std::string& target,
                                          const http::header_list& h, const std::string& body) {
        seen.emplace_back(method, target);
        for (auto& f : failures) {
            if (f.times > 0 && target.starts_with(f.prefix)) {
                --f.times;
                co_return http::response{f.status, "Injected", {}, "injected failure"};
            }
        }
        // ---- IMDSv2
        if (target == "/latest/api/token") {
            if (method != "PUT") {
                violation("IMDS token requested with " + method + " instead of PUT");
                co_return http::response{405, "Method Not Allowed", {}, {}};
            }
            const std::string ttl{h.get("x-aws-ec2-metadata-token-ttl-seconds")};
            int v = 0;
            try {
                v = std::stoi(ttl);
            } catch (...) {
                v = 0;
            }
            if (v < 1 || v > 21600) {
                violation("IMDS token PUT with TTL '" + ttl + "' (must be 1..21600)");
                co_return http::response{400, "Bad Request", {}, {}};
            }
            ++stats.imds_tokens;
            auto tok = fmt::format("imds-token-{}-{}", stats.imds_tokens, random_hex(rng, 16));
            imds_tokens.insert(tok);
            co_return http::response{200, "OK", {{"X-aws-ec2-metadata-token-ttl-seconds", ttl}}, tok};
        }
        if (target.starts_with("/latest/")) {
            if (!imds_tokens.contains(std::string{h.get("x-aws-ec2-metadata-token")})) {
                violation("IMDS " + target + " without a valid IMDSv2 token (an IMDSv1 request)");
                co_return http::response{401, "Unauthorized", {}, {}};
            }
            constexpr std::string_view base = "/latest/meta-data/iam/security-credentials/";
            if (target == base) {
                if (imds_role.empty()) co_return http::response{404, "Not Found", {}, {}};
                co_return http::response{200, "OK", {}, imds_role};
            }
            if (target.starts_with(base) && target.substr(base.size()) == imds_role && !imds_role.empty()) {
                ++stats.imds;
                co_return http::response{200, "OK", {{"Content-Type", "text/plain"}}, json_creds(issue(), true)};
            }
            co_return http::response{404, "Not Found", {}, {}};
        }
        // ---- container endpoint
        if (target.starts_with("/container/")) {
            if (h.get("authorization") != container_token) {
                violation("container endpoint called with a wrong or missing Authorization token");
                co_return http::response{401, "Unauthorized", {}, R"({"message":"bad token"})"};
            }
            ++stats.container;
            co_return http::response{200, "OK", {{"Content-Type", "application/json"}}, json_creds(issue(), false)};
        }
        // ---- STS
        if (method == "POST" && (target == "/" || target == "/sts") &&
            h.get("content-type").starts_with("application/x-www-form-urlencoded")) {
            auto parsed = sigv4::parse_query(body);
            std::map<std::string, std::string> p;
            if (parsed)
                for (auto& q : *parsed) p[q.name] = q.value;
            const auto action = p["Action"];
            if (p["Version"] != "2011-06-15") violation("STS " + action + " without Version=2011-06-15");
            if (p["RoleArn"].empty() || p["RoleSessionName"].empty())
                violation("STS " + action + " without RoleArn or RoleSessionName");
            if (action == "AssumeRoleWithWebIdentity") {
                if (h.contains("authorization") || h.contains("x-amz-security-token"))
                    violation("AssumeRoleWithWebIdentity carried a signature or a session token");
                if (p["WebIdentityToken"] != web_token)
                    co_return error_xml(400, "InvalidIdentityToken", "the web identity token does not verify", true);
                ++stats.web_identity;
                co_return http::response{200,
                                         "OK",
                                         {{"Content-Type", "text/xml"}},
                                         sts_xml(action, issue(), p["RoleArn"], p["RoleSessionName"])};
            }
            if (action == "AssumeRole") {
                bool expired = false;
                std::string why;
                auto who = verify(method, target, h, body, true, expired, why);
                if (!who) {
                    violation("AssumeRole: " + why);
                    co_return error_xml(403, "SignatureDoesNotMatch", why, true);
                }
                if (expired)
                    co_return error_xml(400, "ExpiredToken", "The security token included in the request is expired",
                                        true);
                if (p["ExternalId"] != external_id) {
                    violation(fmt::format("AssumeRole ExternalId '{}', expected '{}'", p["ExternalId"], external_id));
                    co_return error_xml(403, "AccessDenied", "wrong external id", true);
                }
                const auto d = p["DurationSeconds"];
                if (!d.empty() && (std::stoi(d) < 900 || std::stoi(d) > 43200))
                    violation("AssumeRole DurationSeconds " + d);
                ++stats.assume_role;
                co_return http::response{200,
                                         "OK",
                                         {{"Content-Type", "text/xml"}},
                                         sts_xml(action, issue(), p["RoleArn"], p["RoleSessionName"])};
            }
            violation("STS action '" + action + "' unknown");
            co_return error_xml(400, "InvalidAction", "unknown action", true);
        }
        // ---- S3 front
        bool expired = false;
        std::string why;
        auto who = verify(method, target, h, body, false, expired, why);
        if (!who) {
            ++stats.s3_bad_signature;
            violation(fmt::format("S3 {} {}: {}", method, target, why));
            co_return error_xml(403, "SignatureDoesNotMatch", why, false);
        }
        if (expired) {
            ++stats.s3_expired;
            co_return error_xml(400, "ExpiredToken", "The provided token has expired.", false);
        }
        ++stats.s3_ok;
        if (!upstream) co_return http::response{200, "OK", {{"ETag", "\"test\""}}, {}};
        // Re-sign with the upstream's keys: the same headers, Host of the upstream.
        auto a = parse_auth(h.get("authorization"));
        std::vector<std::string> names = split(a->signed_headers, ';');
        std::vector<sigv4::owned_header> signing;
        const std::string host = upstream->host_header();
        auto sig =
            resign(method, target, h, names, body, upstream_keys, "s3", upstream_region, sys::now(), &signing, host);
        http::request fwd{method, target};
        for (const auto& [n, v] : h) {
            if (reserved(n) || http::iequals(n, "host")) continue;
            fwd.headers.add(n, v);
        }
        fwd.headers.add("Host", host);
        for (const auto& s : signing) fwd.headers.add(s.name, s.value);
        auto owned = std::make_shared<std::string>(body);
        if (!owned->empty()) fwd.body.push_back(*owned);
        auto r = co_await upstream_client->send(*upstream, std::move(fwd));
        if (!r) co_return http::response{502, "Bad Gateway", {}, r.error().message()};
        co_return std::move(*r);
    }

    net::awaitable<void> accept_loop() {
        auto self = shared_from_this();
        for (;;) {
            auto [ec, sock] = co_await acceptor.async_accept(use_tuple);
            if (ec || stopped) co_return;
            net::co_spawn(ex, session(std::move(sock)), net::detached);
        }
    }

    net::awaitable<void> session(tcp::socket sock) {
        auto self = shared_from_this();
        open.push_back(&sock);
        auto it = std::prev(open.end());
        struct unlist {
            impl* i;
            std::list<tcp::socket*>::iterator it;
            ~unlist() { i->open.erase(it); }
        } guard{this, it};
        beast::flat_buffer buf;
        for (;;) {
            bhttp::request_parser<bhttp::string_body> p;
            p.body_limit(boost::none);
            auto [ec, n] = co_await bhttp::async_read(sock, buf, p, use_tuple);
            if (ec || stopped) co_return;
            auto& msg = p.get();
            http::header_list h;
            for (const auto& f : msg) h.add(std::string{f.name_string()}, std::string{f.value()});
            const std::string method{msg.method_string()};
            auto resp = co_await handle(method, std::string{msg.target()}, h, msg.body());
            std::string out = fmt::format("HTTP/1.1 {} {}\r\n", resp.status, resp.reason.empty() ? "X" : resp.reason);
            for (const auto& [name, value] : resp.headers) {
                if (http::iequals(name, "content-length") || http::iequals(name, "transfer-encoding") ||
                    http::iequals(name, "connection"))
                    continue;
                out += name + ": " + value + "\r\n";
            }
            const bool head = method == "HEAD";
            const auto len = head ? std::string{resp.headers.get("content-length")} : std::to_string(resp.body.size());
            if (!len.empty()) out += "Content-Length: " + len + "\r\n";
            out += "\r\n";
            if (!head) out += resp.body;
            auto [wec, wn] = co_await net::async_write(sock, net::buffer(out), use_tuple);
            if (wec || !msg.keep_alive() || stopped) co_return;
        }
    }
};

aws_test_server::aws_test_server(net::any_io_executor ex) : impl_{std::make_shared<impl>(ex)} {
    net::co_spawn(ex, impl_->accept_loop(), net::detached);
}
aws_test_server::~aws_test_server() { stop(); }

std::uint16_t aws_test_server::port() const { return impl_->acceptor.local_endpoint().port(); }
std::string aws_test_server::url() const { return fmt::format("http://127.0.0.1:{}", port()); }
void aws_test_server::set_lifetime(std::chrono::milliseconds d) { impl_->lifetime = d; }
void aws_test_server::set_container_token(std::string t) { impl_->container_token = std::move(t); }
void aws_test_server::set_web_identity_token(std::string t) { impl_->web_token = std::move(t); }
void aws_test_server::set_imds_role(std::string r) { impl_->imds_role = std::move(r); }
void aws_test_server::add_base_keys(sigv4::credentials k) { impl_->base_keys.push_back(std::move(k)); }
void aws_test_server::set_external_id(std::string e) { impl_->external_id = std::move(e); }
void aws_test_server::set_upstream(http::endpoint upstream, sigv4::credentials keys, std::string region) {
    impl_->upstream = std::move(upstream);
    impl_->upstream_keys = std::move(keys);
    impl_->upstream_region = std::move(region);
}
void aws_test_server::fail_next(std::string prefix, unsigned status, unsigned times) {
    impl_->failures.push_back({std::move(prefix), status, times});
}
void aws_test_server::expire_all() {
    for (auto& [k, v] : impl_->issued) v.expiry = sys::now() - std::chrono::seconds{1};
}
const aws_server_stats& aws_test_server::stats() const { return impl_->stats; }
const std::vector<std::string>& aws_test_server::violations() const { return impl_->violations; }
std::vector<std::string> aws_test_server::secrets_issued() const {
    std::vector<std::string> out;
    for (const auto& [k, v] : impl_->issued) {
        out.push_back(v.creds.secret_access_key.reveal());
        out.push_back(v.creds.session_token.reveal());
    }
    return out;
}
const std::vector<std::pair<std::string, std::string>>& aws_test_server::requests() const { return impl_->seen; }

void aws_test_server::stop() {
    if (impl_->stopped) return;
    impl_->stopped = true;
    boost::system::error_code ec;
    impl_->acceptor.close(ec);
    for (auto* s : impl_->open) s->close(ec);
}

}  // namespace iss::test

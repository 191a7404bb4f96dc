// SPDX-License-Identifier: Apache-2.0
// The REST catalog protocol without I/O (catalog_protocol.hpp): targets, bodies, answers, and
// the status table. Spec: apache/iceberg open-api/rest-catalog-open-api.yaml.
#include "iceberg/catalog_protocol.hpp"

#include "http/types.hpp"
#include "sigv4/encoding.hpp"

#include <boost/json.hpp>

namespace iss::iceberg {

namespace json = boost::json;

namespace {

const char* catalog_message(int ev) noexcept {
    switch (static_cast<catalog_errc>(ev)) {
        case catalog_errc::commit_conflict: return "commit conflict: the table changed since it was loaded";
        case catalog_errc::unknown_outcome:
            return "commit outcome unknown: reload the table to learn whether it applied";
        case catalog_errc::unavailable: return "catalog unavailable: retry later";
        case catalog_errc::already_exists: return "already exists";
        case catalog_errc::not_found: return "not found in the catalog";
        case catalog_errc::unauthorized: return "the catalog refused the credentials (check iceberg.catalog.auth)";
        case catalog_errc::forbidden: return "the catalog denied access (grant the principal access to it)";
        case catalog_errc::bad_request: return "the catalog refused the request as invalid";
        case catalog_errc::bad_response: return "the catalog's answer is not what the REST spec describes";
        case catalog_errc::auth_failed: return "no catalog credentials: the token endpoint or the signer failed";
        case catalog_errc::bad_uri: return "not a usable catalog URL (check iceberg.catalog.uri)";
    }
    return "unknown iceberg catalog error";
}

const simple_category catalog_cat{"iceberg.catalog", catalog_message};

std::string trim_slash(std::string s) {
    while (!s.empty() && s.back() == '/') s.pop_back();
    return s;
}

// The string members of `o` as a map (other value kinds are skipped: the spec's maps are
// string to string).
std::map<std::string, std::string> string_map(const json::value* v) {
    std::map<std::string, std::string> out;
    if (v == nullptr || !v->is_object()) return out;
    for (const auto& [k, x] : v->as_object())
        if (x.is_string()) out.emplace(std::string{k}, std::string{x.as_string()});
    return out;
}

result<json::value> parse_json(std::string_view body, std::string_view what) {
    boost::system::error_code ec;
    json::value v = json::parse(body, ec);
    if (ec) return error{catalog_errc::bad_response, fmt::format("{}: not JSON ({})", what, ec.message())};
    if (!v.is_object()) return error{catalog_errc::bad_response, fmt::format("{}: not a JSON object", what)};
    return v;
}

std::string status_text(unsigned status, const error_body& eb) {
    std::string s = fmt::format("HTTP {}", status);
    if (!eb.type.empty()) s += " " + eb.type;
    if (!eb.message.empty()) s += ": " + eb.message;
    return s;
}

}  // namespace

const boost::system::error_category& catalog_category() noexcept { return catalog_cat; }

bool retryable(const error& e) noexcept {
    return e == catalog_errc::unavailable || e == catalog_errc::unknown_outcome || e == catalog_errc::commit_conflict;
}

std::string namespace_string(const std::vector<std::string>& ns) {
    std::string out;
    for (const auto& level : ns) {
        if (!out.empty()) out += '.';
        out += level;
    }
    return out;
}

std::string table_ident::to_string() const {
    const std::string n = namespace_string(ns);
    return n.empty() ? name : n + "." + name;
}

std::string encode_namespace(const std::vector<std::string>& ns) {
    std::string out;
    for (const auto& level : ns) {
        if (!out.empty()) out += "%1F";
        out += sigv4::uri_encode(level, false);
    }
    return out;
}

catalog_paths::catalog_paths(std::string base_path, std::string prefix)
    : base_{trim_slash(std::move(base_path))}, prefix_{trim_slash(std::move(prefix))} {
    while (!prefix_.empty() && prefix_.front() == '/') prefix_.erase(0, 1);
}

std::string catalog_paths::v1() const { return prefix_.empty() ? base_ + "/v1" : base_ + "/v1/" + prefix_; }

std::string catalog_paths::config(std::string_view warehouse) const {
    std::string t = base_ + "/v1/config";
    if (!warehouse.empty()) t += "?warehouse=" + sigv4::uri_encode(warehouse, false);
    return t;
}

std::string catalog_paths::namespaces() const { return v1() + "/namespaces"; }

std::string catalog_paths::tables(const std::vector<std::string>& ns) const {
    return v1() + "/namespaces/" + encode_namespace(ns) + "/tables";
}

std::string catalog_paths::table(const table_ident& t) const {
    return tables(t.ns) + "/" + sigv4::uri_encode(t.name, false);
}

std::string catalog_paths::oauth_tokens() const { return base_ + "/v1/oauth/tokens"; }

std::string catalog_config::prefix() const {
    if (auto it = overrides.find("prefix"); it != overrides.end()) return it->second;
    if (auto it = defaults.find("prefix"); it != defaults.end()) return it->second;
    return {};
}

result<catalog_config> parse_config(std::string_view body) {
    auto v = parse_json(body, "GET /v1/config");
    if (!v) return v.error();
    const auto& o = v->as_object();
    catalog_config c;
    c.defaults = string_map(o.if_contains("defaults"));
    c.overrides = string_map(o.if_contains("overrides"));
    return c;
}

result<loaded_table> parse_load_table(std::string_view body) {
    auto v = parse_json(body, "table answer");
    if (!v) return v.error();
    const auto& o = v->as_object();
    loaded_table t;
    const auto* loc = o.if_contains("metadata-location");
    if (loc != nullptr && loc->is_string()) t.metadata_location = std::string{loc->as_string()};
    const auto* md = o.if_contains("metadata");
    if (md == nullptr || !md->is_object())
        return error{catalog_errc::bad_response, "table answer: no `metadata` object"};
    t.metadata_json = json::serialize(*md);
    const auto& m = md->as_object();
    const auto* uuid = m.if_contains("table-uuid");
    const auto* location = m.if_contains("location");
    const auto* version = m.if_contains("format-version");
    if (uuid == nullptr || !uuid->is_string())
        return error{catalog_errc::bad_response, "table metadata: no `table-uuid`"};
    if (location == nullptr || !location->is_string())
        return error{catalog_errc::bad_response, "table metadata: no `location`"};
    if (version == nullptr || !version->is_int64())
        return error{catalog_errc::bad_response, "table metadata: no `format-version`"};
    t.table_uuid = std::string{uuid->as_string()};
    t.location = std::string{location->as_string()};
    t.format_version = static_cast<int>(version->as_int64());
    if (const auto* cur = m.if_contains("current-snapshot-id");
        cur != nullptr && cur->is_int64() && cur->as_int64() != -1)
        t.current_snapshot_id = cur->as_int64();
    t.config = string_map(o.if_contains("config"));
    return t;
}

std::string create_namespace_body(const std::vector<std::string>& ns) {
    json::array levels;
    for (const auto& l : ns) levels.emplace_back(l);
    json::object o;
    o["namespace"] = std::move(levels);
    return json::serialize(o);
}

result<std::string> create_table_body(const create_table_request& r) {
    json::object o;
    o["name"] = r.name;
    boost::system::error_code ec;
    json::value schema = json::parse(r.schema_json, ec);
    if (ec || !schema.is_object())
        return error{catalog_errc::bad_request, "create table: the schema is not a JSON object"};
    o["schema"] = std::move(schema);
    if (!r.partition_spec_json.empty()) {
        json::value spec = json::parse(r.partition_spec_json, ec);
        if (ec || !spec.is_object())
            return error{catalog_errc::bad_request, "create table: the partition spec is not a JSON object"};
        o["partition-spec"] = std::move(spec);
    }
    if (!r.location.empty()) o["location"] = r.location;
    o["stage-create"] = false;
    json::object props;
    for (const auto& [k, v] : r.properties) props[k] = v;
    if (!props.contains("format-version")) props["format-version"] = "2";
    o["properties"] = std::move(props);
    return json::serialize(o);
}

result<oauth_token> parse_oauth_token(std::string_view body) {
    auto v = parse_json(body, "OAuth2 token answer");
    if (!v) return v.error();
    const auto& o = v->as_object();
    const auto* tok = o.if_contains("access_token");
    if (tok == nullptr || !tok->is_string() || tok->as_string().empty())
        return error{catalog_errc::bad_response, "OAuth2 token answer: no `access_token`"};
    oauth_token t;
    t.access_token = std::string{tok->as_string()};
    if (const auto* e = o.if_contains("expires_in"); e != nullptr && e->is_int64() && e->as_int64() > 0)
        t.expires_in = std::chrono::seconds{e->as_int64()};
    return t;
}

error_body parse_error_body(std::string_view body) {
    error_body eb;
    boost::system::error_code ec;
    json::value v = json::parse(body, ec);
    if (ec || !v.is_object()) return eb;
    const auto* e = v.as_object().if_contains("error");
    if (e == nullptr || !e->is_object()) {
        // OAuth2 errors (RFC 6749 §5.2): {"error": "invalid_client", "error_description": "..."}
        const auto& o = v.as_object();
        if (e != nullptr && e->is_string()) eb.type = std::string{e->as_string()};
        if (const auto* d = o.if_contains("error_description"); d != nullptr && d->is_string())
            eb.message = std::string{d->as_string()};
        return eb;
    }
    const auto& eo = e->as_object();
    if (const auto* t = eo.if_contains("type"); t != nullptr && t->is_string()) eb.type = std::string{t->as_string()};
    if (const auto* m = eo.if_contains("message"); m != nullptr && m->is_string())
        eb.message = std::string{m->as_string()};
    return eb;
}

error classify(catalog_op op, unsigned status, std::string_view body, std::string_view what, std::string_view uri) {
    const error_body eb = parse_error_body(body);
    const std::string st = status_text(status, eb);
    const bool commit = op == catalog_op::commit;
    if (status == 409)
        return commit ? error{catalog_errc::commit_conflict, fmt::format("commit to {}: {}", what, st)}
                      : error{catalog_errc::already_exists, fmt::format("{} at {}: {}", what, uri, st)};
    if (status == 401 || status == 419)
        return error{catalog_errc::unauthorized,
                     fmt::format("{} at {}: {}: the catalog refused the credentials; check iceberg.catalog.auth "
                                 "(token, client id and secret, or the AWS credentials for sigv4)",
                                 what, uri, st)};
    if (status == 403)
        return error{
            catalog_errc::forbidden,
            fmt::format("{} at {}: {}: the principal may not do this; grant it access to {}", what, uri, st, what)};
    if (status == 404)
        return error{catalog_errc::not_found,
                     fmt::format("{} at {}: {}: it does not exist (check iceberg.namespace, iceberg.table and "
                                 "iceberg.catalog.prefix / warehouse)",
                                 what, uri, st)};
    if (status >= 500 || status == 429) {
        if (commit && status != 501)
            return error{catalog_errc::unknown_outcome, fmt::format("commit to {}: {}", what, st)};
        return error{catalog_errc::unavailable, fmt::format("{} at {}: {}", what, uri, st)};
    }
    return error{catalog_errc::bad_request, fmt::format("{} at {}: {}", what, uri, st)};
}

error classify_transport(catalog_op op, const error& transport, std::string_view what, std::string_view uri) {
    // A request that never left (no address, no connection, no TLS session) cannot have been
    // applied; anything later (reset, timeout waiting for the answer) may have been.
    const auto& c = transport.code();
    const bool never_sent = c == http::errc::invalid_url || c == http::errc::resolve_failed ||
                            c == http::errc::connect_failed || c == http::errc::tls_handshake_failed ||
                            c == http::errc::certificate_rejected || c == http::errc::tls_setup_failed;
    if (c == http::errc::invalid_url)
        return error{catalog_errc::bad_uri, fmt::format("{} at {}: {}", what, uri, transport.message())};
    if (op == catalog_op::commit && !never_sent)
        return error{catalog_errc::unknown_outcome, fmt::format("commit to {}: {}", what, transport.message())};
    return error{catalog_errc::unavailable, fmt::format("{} at {}: {}", what, uri, transport.message())};
}

result<std::vector<sigv4::owned_header>> sign_catalog_request(std::string_view method, std::string_view target,
                                                              std::string_view host, std::string_view content_type,
                                                              std::string_view body, const sigv4::credentials& creds,
                                                              std::string_view signing_name, std::string_view region,
                                                              std::chrono::system_clock::time_point now) {
    const auto q = target.find('?');
    const std::string_view path = target.substr(0, q);
    std::vector<sigv4::owned_query_param> owned;
    if (q != std::string_view::npos) {
        auto parsed = sigv4::parse_query(target.substr(q + 1));
        if (!parsed) return error{catalog_errc::auth_failed, fmt::format("sigv4: {}", parsed.error().message())};
        owned = std::move(*parsed);
    }
    std::vector<sigv4::query_param> query;
    for (const auto& p : owned) query.push_back(p.view());
    std::vector<sigv4::header> hs{{"Host", host}};
    if (!content_type.empty()) hs.push_back({"Content-Type", content_type});
    sigv4::request_view view{};
    view.method = method;
    view.path = path;
    view.form = sigv4::path_form::encoded;
    view.query = query;
    view.headers = hs;
    view.body = body;
    sigv4::signing_params sp;
    sp.service = std::string{signing_name};
    sp.region = std::string{region};
    sp.normalize_path = true;
    sp.double_encode_path = true;
    sp.add_content_sha256_header = true;
    auto s = sigv4::sign(view, creds, sp, now);
    if (!s)
        return error{catalog_errc::auth_failed,
                     fmt::format("sigv4 for {} in {}: {}", signing_name, region, s.error().message())};
    return std::move(s->headers);
}

}  // namespace iss::iceberg

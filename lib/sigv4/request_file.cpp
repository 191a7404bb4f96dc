// SPDX-License-Identifier: Apache-2.0
#include "sigv4/request_file.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <cstdio>
#include <limits>

namespace iss::sigv4 {

namespace {

std::string lower(std::string_view s) {
    std::string out{s};
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

error parse_error(std::string detail) { return error{iss::errc::parse_error, std::move(detail)}; }

}  // namespace

result<request_file> parse_request_file(std::string_view text) {
    request_file out;
    std::size_t pos = 0;
    bool first = true;
    bool blank_seen = false;
    while (pos < text.size()) {
        const auto nl = text.find('\n', pos);
        std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        pos = nl == std::string_view::npos ? text.size() : nl + 1;
        std::string_view content = line;
        if (content.ends_with('\r')) content.remove_suffix(1);
        if (first) {
            first = false;
            const auto sp1 = content.find(' ');
            const auto sp2 = content.rfind(' ');
            if (sp1 == std::string_view::npos || sp2 == sp1 || sp1 == 0) {
                return parse_error("request line '" + std::string{content} + "' (want METHOD TARGET HTTP/1.1)");
            }
            out.method = content.substr(0, sp1);
            out.target = content.substr(sp1 + 1, sp2 - sp1 - 1);
            out.version = content.substr(sp2 + 1);
            const auto q = out.target.find('?');
            out.path = out.target.substr(0, q);
            if (q != std::string::npos) out.query = out.target.substr(q + 1);
            continue;
        }
        if (content.empty()) {
            blank_seen = true;
            break;
        }
        out.header_lines.emplace_back(line);
        if (content.front() == ' ' || content.front() == '\t') {
            // Obsolete line folding (RFC 9110 5.5): the continuation joins the previous value
            // with a single space.
            if (out.headers.empty())
                return parse_error("continuation line before any header: '" + std::string{content} + "'");
            auto& v = out.headers.back().value;
            v.push_back(' ');
            // A continuation of blanks only adds nothing but the joining space.
            if (const auto b = content.find_first_not_of(" \t"); b != std::string_view::npos) v += content.substr(b);
            continue;
        }
        const auto colon = content.find(':');
        if (colon == std::string_view::npos || colon == 0) {
            return parse_error("header line '" + std::string{content} + "' (want Name:value)");
        }
        out.headers.push_back({std::string{content.substr(0, colon)}, std::string{content.substr(colon + 1)}});
    }
    if (first) return parse_error("request file is empty");
    if (blank_seen) out.body = text.substr(pos);
    return out;
}

namespace {

result<std::chrono::system_clock::time_point> parse_timestamp(std::string_view s) {
    // "2015-08-30T12:36:00Z" (RFC 3339, UTC, whole seconds)
    int y = 0;
    unsigned mo = 0, d = 0;
    int h = 0, mi = 0, sec = 0;
    char z = 0;
    const std::string str{s};
    if (std::sscanf(str.c_str(), "%4d-%2u-%2uT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &sec, &z) != 7 || z != 'Z' ||
        str.size() != 20) {
        return parse_error("context.json: timestamp '" + str + "' (want YYYY-MM-DDTHH:MM:SSZ)");
    }
    const std::chrono::year_month_day ymd{std::chrono::year{y}, std::chrono::month{mo}, std::chrono::day{d}};
    if (!ymd.ok() || h > 23 || mi > 59 || sec > 60)
        return parse_error("context.json: timestamp '" + str + "' is not a valid time");
    const std::chrono::sys_seconds t =
        std::chrono::sys_days{ymd} + std::chrono::hours{h} + std::chrono::minutes{mi} + std::chrono::seconds{sec};
    // The system clock counts nanoseconds in 64 bits: 1677-09-21 .. 2262-04-11.
    using clock = std::chrono::system_clock;
    if (t < std::chrono::ceil<std::chrono::seconds>(clock::time_point::min()) ||
        t > std::chrono::floor<std::chrono::seconds>(clock::time_point::max()))
        return parse_error("context.json: timestamp '" + str + "' is outside the clock's range (years 1678 to 2261)");
    return clock::time_point{t};
}

result<std::string> get_string(const boost::json::object& o, std::string_view key, bool required) {
    const auto* v = o.if_contains(key);
    if (v == nullptr || v->is_null()) {
        if (required) return parse_error("context.json: missing key '" + std::string{key} + "'");
        return std::string{};
    }
    if (!v->is_string()) return parse_error("context.json: '" + std::string{key} + "' must be a string");
    return std::string{v->get_string()};
}

result<bool> get_bool(const boost::json::object& o, std::string_view key, bool fallback) {
    const auto* v = o.if_contains(key);
    if (v == nullptr || v->is_null()) return fallback;
    if (!v->is_bool()) return parse_error("context.json: '" + std::string{key} + "' must be true or false");
    return v->get_bool();
}

}  // namespace

result<signing_context> parse_signing_context(std::string_view json) {
    boost::system::error_code ec;
    const boost::json::value root = boost::json::parse(json, ec);
    if (ec) return parse_error("context.json: " + ec.message());
    if (!root.is_object()) return parse_error("context.json: top level must be an object");
    const auto& o = root.get_object();
    signing_context ctx;

    const auto* c = o.if_contains("credentials");
    if (c == nullptr || !c->is_object()) return parse_error("context.json: missing object 'credentials'");
    auto ak = get_string(c->get_object(), "access_key_id", true);
    if (!ak) return ak.error();
    auto sk = get_string(c->get_object(), "secret_access_key", true);
    if (!sk) return sk.error();
    auto tok = get_string(c->get_object(), "token", false);
    if (!tok) return tok.error();
    ctx.creds = {iss::access_key_id{std::move(*ak)}, iss::secret_access_key{std::move(*sk)},
                 iss::session_token{std::move(*tok)}};

    auto region = get_string(o, "region", true);
    if (!region) return region.error();
    auto service = get_string(o, "service", true);
    if (!service) return service.error();
    auto ts = get_string(o, "timestamp", true);
    if (!ts) return ts.error();
    auto t = parse_timestamp(*ts);
    if (!t) return t.error();
    ctx.time = *t;
    ctx.params.region = std::move(*region);
    ctx.params.service = std::move(*service);

    auto normalize = get_bool(o, "normalize", false);
    if (!normalize) return normalize.error();
    auto double_encode = get_bool(o, "double_uri_encode", true);
    if (!double_encode) return double_encode.error();
    auto sign_body = get_bool(o, "sign_body", false);
    if (!sign_body) return sign_body.error();
    auto omit = get_bool(o, "omit_session_token", false);
    if (!omit) return omit.error();
    ctx.params.normalize_path = *normalize;
    ctx.params.double_encode_path = *double_encode;
    ctx.form = *double_encode ? path_form::encoded : path_form::raw;
    ctx.params.omit_session_token = *omit;
    ctx.params.payload = payload_mode::signed_payload;
    ctx.params.add_content_sha256_header = *sign_body;

    auto payload = get_string(o, "payload", false);
    if (!payload) return payload.error();
    if (!payload->empty()) {
        if (*payload == "signed") {
            ctx.params.payload = payload_mode::signed_payload;
        } else if (*payload == unsigned_payload_literal) {
            ctx.params.payload = payload_mode::unsigned_payload;
        } else if (*payload == streaming_payload_literal) {
            ctx.params.payload = payload_mode::streaming;
        } else {
            return parse_error("context.json: payload '" + *payload +
                               "' (want signed, UNSIGNED-PAYLOAD or STREAMING-AWS4-HMAC-SHA256-PAYLOAD)");
        }
        ctx.params.add_content_sha256_header = true;
    }
    auto sha = get_string(o, "payload_sha256", false);
    if (!sha) return sha.error();
    if (!sha->empty() && !is_sha256_hex(*sha))
        return parse_error("context.json: payload_sha256 must be 64 lower-case hex digits");
    ctx.payload_sha256 = std::move(*sha);

    if (const auto* e = o.if_contains("expiration_in_seconds"); e != nullptr && !e->is_null()) {
        // Not to_number<int64_t>(): it throws for a uint64 above INT64_MAX.
        if (!e->is_int64() && !(e->is_uint64() && e->get_uint64() <= std::numeric_limits<std::int64_t>::max()))
            return parse_error("context.json: expiration_in_seconds must be an integer of at most 2^63 - 1");
        ctx.expires = std::chrono::seconds{e->is_int64() ? e->get_int64() : static_cast<std::int64_t>(e->get_uint64())};
    }
    return ctx;
}

namespace {

/// An `x-amz-content-sha256` header the file already has: it must agree with the context's
/// payload mode; with a signed payload it chooses the mode (a literal) or gives the hash.
result<void> adopt_content_sha256(std::string_view value, signing_params& params, std::string& payload_sha) {
    switch (params.payload) {
        case payload_mode::unsigned_payload:
        case payload_mode::streaming: {
            const std::string_view lit =
                params.payload == payload_mode::streaming ? streaming_payload_literal : unsigned_payload_literal;
            if (value != lit)
                return error{iss::errc::invalid_argument, "x-amz-content-sha256 " + std::string{value} +
                                                              " differs from the context payload " + std::string{lit}};
            break;
        }
        case payload_mode::signed_payload:
            if (value == unsigned_payload_literal) {
                params.payload = payload_mode::unsigned_payload;
            } else if (value == streaming_payload_literal) {
                params.payload = payload_mode::streaming;
            } else if (!payload_sha.empty() && value != payload_sha) {
                return error{iss::errc::invalid_argument, "x-amz-content-sha256 differs from payload_sha256"};
            } else {
                payload_sha = std::string{value};
            }
            break;
    }
    params.add_content_sha256_header = true;
    return {};
}

/// The query of a presigned request line: the suite's files keep their own query and append
/// the signing parameters; the AWS documentation lists every parameter in canonical order,
/// then the signature.
void append_presigned_query(std::string& text, const request_file& req, const std::vector<query_param>& qv,
                            const presigned_query& p, output_form form) {
    if (form == output_form::suite) {
        if (req.query && !req.query->empty()) {
            text += *req.query;
            text += '&';
        }
        text += p.query;
        return;
    }
    std::vector<query_param> all = qv;
    for (const auto& x : p.params) {
        if (x.name != "X-Amz-Signature") all.push_back(x.view());
    }
    text += encode_query(all);
    text += "&X-Amz-Signature=";
    text += p.signature;
}

/// `v` without leading and trailing spaces and tabs.
std::string_view trim_blanks(std::string_view v) {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    return v;
}

/// The end of the request line (` HTTP/1.1`) and the file's header lines as written.
void append_version_and_headers(std::string& text, const request_file& req) {
    text += ' ';
    text += req.version;
    text += '\n';
    for (const auto& l : req.header_lines) {
        text += l;
        text += '\n';
    }
}

}  // namespace

result<file_signing_result> sign_request_file(const request_file& req, const signing_context& ctx, bool query_form,
                                              output_form form) {
    const std::string amz_date = format_amz_date(ctx.time);
    signing_params params = ctx.params;
    std::string payload_sha = ctx.payload_sha256;
    bool have_date = false;
    bool have_sha = false;
    bool have_token = false;

    // Headers the signer adds itself: adopt them when the file already has them (s3-docs).
    std::vector<header> hs;
    for (const auto& h : req.headers) {
        const std::string name = lower(h.name);
        const std::string_view value = trim_blanks(h.value);
        if (name == "authorization")
            return error{errc::reserved_header, "the request is already signed (Authorization)"};
        if (name == "x-amz-date") {
            if (value != amz_date) {
                return error{iss::errc::invalid_argument, "x-amz-date " + std::string{value} +
                                                              " differs from the context timestamp (" + amz_date + ")"};
            }
            have_date = true;
            continue;
        }
        if (name == "x-amz-security-token") {
            if (value != ctx.creds.session_token.reveal())
                return error{iss::errc::invalid_argument, "X-Amz-Security-Token differs from credentials.token"};
            have_token = true;
            continue;
        }
        if (name == "x-amz-content-sha256" && !query_form) {
            if (auto a = adopt_content_sha256(value, params, payload_sha); !a) return a.error();
            have_sha = true;
            continue;
        }
        hs.push_back({h.name, h.value});
    }

    std::vector<owned_query_param> query;
    if (req.query) {
        auto q = parse_query(*req.query);
        if (!q) return q.error();
        query = std::move(*q);
    }
    std::vector<query_param> qv;
    qv.reserve(query.size());
    for (const auto& q : query) qv.push_back(q.view());

    request_view view;
    view.method = req.method;
    view.path = req.path;
    view.form = ctx.form;
    view.query = qv;
    view.headers = hs;
    view.body = req.body;
    view.payload_sha256 = payload_sha;

    // The suite prints the request line as written; the AWS documentation prints the wire path.
    const std::string line_path =
        form == output_form::aws_docs && ctx.form == path_form::raw ? encode_path(req.path) : req.path;

    file_signing_result out;
    std::string& text = out.signed_request;
    if (query_form) {
        // A presigned request carries no payload-hash header; a signed body still hashes.
        auto p = presign(view, ctx.creds, params, ctx.time, ctx.expires);
        if (!p) return p.error();
        text += req.method;
        text += ' ';
        text += line_path;
        text += '?';
        append_presigned_query(text, req, qv, *p, form);
        append_version_and_headers(text, req);
        out.canonical_request = std::move(p->canonical_request);
        out.string_to_sign = std::move(p->string_to_sign);
        out.signature = std::move(p->signature);
        out.amz_date = std::move(p->amz_date);
        out.scope = std::move(p->scope);
    } else {
        auto s = sign(view, ctx.creds, params, ctx.time);
        if (!s) return s.error();
        text += req.method;
        text += ' ';
        text += line_path;
        if (req.query) {
            text += '?';
            text += *req.query;
        }
        append_version_and_headers(text, req);
        if (form == output_form::aws_docs) {
            // "Authorization: AWS4-HMAC-SHA256 Credential=...,SignedHeaders=...,Signature=..."
            std::string a = s->authorization;
            for (auto i = a.find(", "); i != std::string::npos; i = a.find(", ", i)) a.erase(i + 1, 1);
            s->authorization = a;
            s->headers.back().value = std::move(a);
        }
        for (const auto& h : s->headers) {
            const std::string name = lower(h.name);
            if ((name == "x-amz-date" && have_date) || (name == "x-amz-content-sha256" && have_sha) ||
                (name == "x-amz-security-token" && have_token)) {
                continue;
            }
            text += h.name;
            text += ':';
            text += h.value;
            text += '\n';
        }
        out.canonical_request = std::move(s->canonical_request);
        out.string_to_sign = std::move(s->string_to_sign);
        out.signature = std::move(s->signature);
        out.authorization = std::move(s->authorization);
        out.key = s->key;
        out.amz_date = std::move(s->amz_date);
        out.scope = std::move(s->scope);
    }
    text += '\n';
    text += req.body;
    return out;
}

}  // namespace iss::sigv4

// SPDX-License-Identifier: Apache-2.0
#include "sigv4/signer.hpp"

#include <algorithm>
#include <cstdio>

namespace iss::sigv4 {

namespace {

// Headers that are never signed even when the caller passes them: hop-by-hop headers and
// headers that proxies and client libraries rewrite. Signing them would make the signature
// depend on the transport. (The same idea as the AWS SDKs' skip lists.)
constexpr std::string_view unsigned_header_names[] = {"connection",       "expect",     "keep-alive",
                                                      "proxy-connection", "te",         "transfer-encoding",
                                                      "upgrade",          "user-agent", "x-amzn-trace-id"};

// Headers the signer adds itself: a request carrying one of them was signed already or would
// be signed twice.
constexpr std::string_view reserved_header_names[] = {"authorization", "x-amz-date", "x-amz-content-sha256",
                                                      "x-amz-security-token"};

// Query parameters presign adds itself.
constexpr std::string_view reserved_query_names[] = {"x-amz-algorithm",     "x-amz-credential",    "x-amz-date",
                                                     "x-amz-expires",       "x-amz-signedheaders", "x-amz-signature",
                                                     "x-amz-security-token"};

bool is_tchar(char c) noexcept {
    // RFC 9110 token characters.
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    return std::string_view{"!#$%&'*+-.^_`|~"}.find(c) != std::string_view::npos;
}

std::string to_lower(std::string_view s) {
    std::string out{s};
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

bool contains(std::span<const std::string_view> list, std::string_view s) noexcept {
    return std::find(list.begin(), list.end(), s) != list.end();
}

bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// "Trim any leading or trailing spaces, and convert sequential spaces to a single space."
// (create-signed-request.html, canonical headers). Obsolete line folding (CRLF + spaces)
// counts as whitespace too.
void append_trimmed_value(std::string& out, std::string_view v) {
    std::size_t b = 0;
    std::size_t e = v.size();
    while (b < e && is_space(v[b])) ++b;
    while (e > b && is_space(v[e - 1])) --e;
    bool in_space = false;
    for (std::size_t i = b; i < e; ++i) {
        if (is_space(v[i])) {
            in_space = true;
            continue;
        }
        if (in_space) out.push_back(' ');
        in_space = false;
        out.push_back(v[i]);
    }
}

struct canonical_header {
    std::string name;   // lower case
    std::string value;  // trimmed, collapsed
};

// Collects the request's headers to sign. Also checks Host, names and reserved headers.
result<std::vector<canonical_header>> collect_headers(std::span<const header> headers) {
    std::vector<canonical_header> out;
    out.reserve(headers.size() + 3);
    bool host = false;
    for (const auto& h : headers) {
        if (h.name.empty() || !std::all_of(h.name.begin(), h.name.end(), is_tchar)) {
            return error{errc::invalid_header_name, std::string{h.name}};
        }
        std::string name = to_lower(h.name);
        if (contains(reserved_header_names, name)) return error{errc::reserved_header, std::string{h.name}};
        if (contains(unsigned_header_names, name)) continue;
        if (name == "host") host = true;
        canonical_header ch{std::move(name), {}};
        append_trimmed_value(ch.value, h.value);
        out.push_back(std::move(ch));
    }
    if (!host) return error{errc::missing_host};
    return out;
}

struct canonical_parts {
    std::string headers;       // "name:value\n" lines
    std::string signed_names;  // "a;b;c"
};

// "CanonicalHeaders = CanonicalHeadersEntry0 + CanonicalHeadersEntry1 + ... where
// CanonicalHeadersEntry = Lowercase(HeaderName) + ':' + Trimall(HeaderValue) + '\n'", sorted
// by name; repeated names are joined with ',' in arrival order (stable sort).
canonical_parts render_headers(std::vector<canonical_header>& hs) {
    std::stable_sort(hs.begin(), hs.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    canonical_parts out;
    for (std::size_t i = 0; i < hs.size(); ++i) {
        if (i > 0 && hs[i].name == hs[i - 1].name) {
            out.headers.back() = ',';  // replace the '\n' of the previous entry
            out.headers += hs[i].value;
            out.headers.push_back('\n');
            continue;
        }
        if (!out.signed_names.empty()) out.signed_names.push_back(';');
        out.signed_names += hs[i].name;
        out.headers += hs[i].name;
        out.headers.push_back(':');
        out.headers += hs[i].value;
        out.headers.push_back('\n');
    }
    return out;
}

result<std::string> payload_hash_for(const request_view& req, payload_mode mode) {
    switch (mode) {
        case payload_mode::unsigned_payload: return std::string{unsigned_payload_literal};
        case payload_mode::streaming: return std::string{streaming_payload_literal};
        case payload_mode::signed_payload: break;
    }
    if (!req.payload_sha256.empty()) {
        if (!is_sha256_hex(req.payload_sha256))
            return error{errc::invalid_payload_hash, std::string{req.payload_sha256}};
        return std::string{req.payload_sha256};
    }
    return sha256_hex(req.body);
}

result<void> check_inputs(const credentials& creds, const signing_params& params) {
    if (creds.access_key_id.get().empty() || creds.secret_access_key.empty()) return error{errc::missing_credentials};
    for (const std::string_view part : {std::string_view{params.region}, std::string_view{params.service}}) {
        if (part.empty() || part.find('/') != std::string_view::npos)
            return error{errc::invalid_scope, std::string{part}};
    }
    return {};
}

std::string make_scope(std::string_view amz_date, const signing_params& params) {
    std::string scope{amz_date.substr(0, 8)};
    scope += '/';
    scope += params.region;
    scope += '/';
    scope += params.service;
    scope += "/aws4_request";
    return scope;
}

std::string make_canonical_request(std::string_view method, std::string_view uri, std::string_view query,
                                   const canonical_parts& hs, std::string_view payload_hash) {
    std::string cr;
    cr.reserve(method.size() + uri.size() + query.size() + hs.headers.size() + hs.signed_names.size() +
               payload_hash.size() + 8);
    cr += method;
    cr += '\n';
    cr += uri;
    cr += '\n';
    cr += query;
    cr += '\n';
    cr += hs.headers;
    cr += '\n';
    cr += hs.signed_names;
    cr += '\n';
    cr += payload_hash;
    return cr;
}

// "StringToSign = Algorithm + \n + RequestDateTime + \n + CredentialScope + \n +
// HashedCanonicalRequest"
std::string make_string_to_sign(std::string_view amz_date, std::string_view scope, std::string_view canonical_request) {
    std::string sts;
    sts.reserve(algorithm.size() + amz_date.size() + scope.size() + 64 + 3);
    sts += algorithm;
    sts += '\n';
    sts += amz_date;
    sts += '\n';
    sts += scope;
    sts += '\n';
    sts += sha256_hex(canonical_request);
    return sts;
}

std::string sign_string(const signing_key& key, std::string_view sts) { return to_hex(hmac_sha256(key.bytes, sts)); }

/// What both the header signature and the presigned URL start from: the request's canonical
/// headers (lower-cased, sorted, before the x-amz-* ones signing adds), its canonical URI and
/// its payload hash. Errors: a bad header, path or payload mode.
struct prepared_request {
    std::vector<canonical_header> headers;
    std::string uri;
    std::string payload_hash;
};

result<prepared_request> prepare(const request_view& req, const signing_params& params) {
    auto headers = collect_headers(req.headers);
    if (!headers) return headers.error();
    auto uri = canonical_uri(req.path, req.form, params);
    if (!uri) return uri.error();
    auto payload = payload_hash_for(req, params.payload);
    if (!payload) return payload.error();
    return prepared_request{std::move(*headers), std::move(*uri), std::move(*payload)};
}

result<signed_headers> sign_impl(const request_view& req, const credentials& creds, const signing_params& params,
                                 std::chrono::system_clock::time_point now, signing_key_cache* cache) {
    if (auto ok = check_inputs(creds, params); !ok) return ok.error();
    auto parts = prepare(req, params);
    if (!parts) return parts.error();
    auto& [headers, uri, payload] = *parts;

    signed_headers out;
    out.amz_date = format_amz_date(now);
    out.scope = make_scope(out.amz_date, params);
    out.payload_hash = std::move(payload);
    const std::string& token = creds.session_token.reveal();
    const bool add_sha = params.payload != payload_mode::signed_payload || params.add_content_sha256_header;

    if (!token.empty() && !params.omit_session_token) headers.push_back({"x-amz-security-token", token});
    headers.push_back({"x-amz-date", out.amz_date});
    if (add_sha) headers.push_back({"x-amz-content-sha256", out.payload_hash});
    const canonical_parts hs = render_headers(headers);
    out.signed_header_names = hs.signed_names;

    out.canonical_request = make_canonical_request(req.method, uri, encode_query(req.query), hs, out.payload_hash);
    out.string_to_sign = make_string_to_sign(out.amz_date, out.scope, out.canonical_request);
    const std::string_view date = std::string_view{out.amz_date}.substr(0, 8);
    out.key = cache != nullptr ? cache->get(creds.secret_access_key, date, params.region, params.service)
                               : derive_signing_key(creds.secret_access_key, date, params.region, params.service);
    out.signature = sign_string(out.key, out.string_to_sign);

    // "Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request,
    // SignedHeaders=content-type;host;x-amz-date, Signature=..." (", " separators as the suite;
    // S3 accepts "," too).
    out.authorization.reserve(algorithm.size() + creds.access_key_id.get().size() + out.scope.size() +
                              out.signed_header_names.size() + 64 + 40);
    out.authorization += algorithm;
    out.authorization += " Credential=";
    out.authorization += creds.access_key_id.get();
    out.authorization += '/';
    out.authorization += out.scope;
    out.authorization += ", SignedHeaders=";
    out.authorization += out.signed_header_names;
    out.authorization += ", Signature=";
    out.authorization += out.signature;

    if (!token.empty()) out.headers.push_back({"X-Amz-Security-Token", token});
    out.headers.push_back({"X-Amz-Date", out.amz_date});
    if (add_sha) out.headers.push_back({"x-amz-content-sha256", out.payload_hash});
    out.headers.push_back({"Authorization", out.authorization});
    return out;
}

result<presigned_query> presign_impl(const request_view& req, const credentials& creds, const signing_params& params,
                                     std::chrono::system_clock::time_point now, std::chrono::seconds expires,
                                     signing_key_cache* cache) {
    if (auto ok = check_inputs(creds, params); !ok) return ok.error();
    if (expires < std::chrono::seconds{1} || expires > std::chrono::seconds{604800}) {
        return error{errc::invalid_expiry, std::to_string(expires.count())};
    }
    if (params.payload == payload_mode::streaming)
        return error{errc::invalid_payload_mode, "presign with streaming payload"};
    for (const auto& q : req.query) {
        if (contains(reserved_query_names, to_lower(q.name)))
            return error{errc::reserved_query_param, std::string{q.name}};
    }
    auto parts = prepare(req, params);
    if (!parts) return parts.error();
    auto& [headers, uri, payload] = *parts;

    presigned_query out;
    out.amz_date = format_amz_date(now);
    out.scope = make_scope(out.amz_date, params);
    out.payload_hash = std::move(payload);
    const canonical_parts hs = render_headers(headers);
    out.signed_header_names = hs.signed_names;
    const std::string& token = creds.session_token.reveal();
    const std::string credential = creds.access_key_id.get() + "/" + out.scope;
    const std::string expires_text = std::to_string(expires.count());

    std::vector<query_param> all{req.query.begin(), req.query.end()};
    all.push_back({"X-Amz-Algorithm", algorithm});
    all.push_back({"X-Amz-Credential", credential});
    all.push_back({"X-Amz-Date", out.amz_date});
    all.push_back({"X-Amz-Expires", expires_text});
    if (!token.empty() && !params.omit_session_token) all.push_back({"X-Amz-Security-Token", token});
    all.push_back({"X-Amz-SignedHeaders", out.signed_header_names});

    out.canonical_request = make_canonical_request(req.method, uri, encode_query(all), hs, out.payload_hash);
    out.string_to_sign = make_string_to_sign(out.amz_date, out.scope, out.canonical_request);
    const std::string_view date = std::string_view{out.amz_date}.substr(0, 8);
    const signing_key key = cache != nullptr
                                ? cache->get(creds.secret_access_key, date, params.region, params.service)
                                : derive_signing_key(creds.secret_access_key, date, params.region, params.service);
    out.signature = sign_string(key, out.string_to_sign);

    out.params.push_back({"X-Amz-Algorithm", std::string{algorithm}});
    out.params.push_back({"X-Amz-Credential", credential});
    out.params.push_back({"X-Amz-Date", out.amz_date});
    out.params.push_back({"X-Amz-SignedHeaders", out.signed_header_names});
    out.params.push_back({"X-Amz-Expires", expires_text});
    if (!token.empty()) out.params.push_back({"X-Amz-Security-Token", token});
    out.params.push_back({"X-Amz-Signature", out.signature});
    for (const auto& p : out.params) {
        if (!out.query.empty()) out.query.push_back('&');
        uri_encode_to(out.query, p.name, false);
        out.query.push_back('=');
        uri_encode_to(out.query, p.value, false);
    }
    return out;
}

}  // namespace

signing_key derive_signing_key(const iss::secret_access_key& secret, std::string_view date, std::string_view region,
                               std::string_view service) {
    // kSecret = your secret access key; kDate = HMAC("AWS4" + kSecret, Date);
    // kRegion = HMAC(kDate, Region); kService = HMAC(kRegion, Service);
    // kSigning = HMAC(kService, "aws4_request")
    std::string k = "AWS4";
    k += secret.reveal();
    const auto* kp = reinterpret_cast<const std::uint8_t*>(k.data());
    const digest k_date = hmac_sha256({kp, k.size()}, date);
    std::fill(k.begin(), k.end(), '\0');
    const digest k_region = hmac_sha256(k_date, region);
    const digest k_service = hmac_sha256(k_region, service);
    return signing_key{hmac_sha256(k_service, "aws4_request")};
}

const signing_key& signing_key_cache::get(const iss::secret_access_key& secret, std::string_view date,
                                          std::string_view region, std::string_view service) {
    const std::string fingerprint = sha256_hex(secret.reveal());
    for (const auto& e : entries_) {
        if (e.date == date && e.region == region && e.service == service && e.secret_fingerprint == fingerprint)
            return e.key;
    }
    ++misses_;
    if (entries_.size() >= capacity) entries_.erase(entries_.begin());
    entries_.push_back({fingerprint, std::string{date}, std::string{region}, std::string{service},
                        derive_signing_key(secret, date, region, service)});
    return entries_.back().key;
}

void signing_key_cache::clear() noexcept { entries_.clear(); }

std::string format_amz_date(std::chrono::system_clock::time_point t) {
    using namespace std::chrono;
    const auto secs = floor<seconds>(t);
    const auto day = floor<days>(secs);
    const year_month_day ymd{day};
    const hh_mm_ss hms{secs - day};
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04d%02u%02uT%02d%02d%02dZ", static_cast<int>(ymd.year()),
                  static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                  static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                  static_cast<int>(hms.seconds().count()));
    return buf;
}

result<std::string> canonical_uri(std::string_view path, path_form form, const signing_params& params) {
    if (path.empty() || path.front() != '/') return error{errc::invalid_path, std::string{path}};
    std::string p = params.normalize_path ? normalize_path(path) : std::string{path};
    if (form == path_form::raw) p = encode_path(p);  // now the wire form
    // S3: "Do not normalize URI paths for requests to Amazon S3" and the wire path is signed
    // as it is; other services URI-encode the (already encoded) path a second time.
    if (params.double_encode_path) p = uri_encode(p, true);
    return p;
}

std::string wire_target(const request_view& req) {
    std::string t = req.form == path_form::raw ? encode_path(req.path) : std::string{req.path};
    if (!req.query.empty()) {
        t.push_back('?');
        t += encode_query(req.query);
    }
    return t;
}

std::string presigned_target(const request_view& req, const presigned_query& p) {
    std::string t = wire_target(req);
    t.push_back(req.query.empty() ? '?' : '&');
    t += p.query;
    return t;
}

result<signed_headers> sign(const request_view& req, const credentials& creds, const signing_params& params,
                            std::chrono::system_clock::time_point now) {
    return sign_impl(req, creds, params, now, nullptr);
}

result<signed_headers> sign(const request_view& req, const credentials& creds, const signing_params& params,
                            std::chrono::system_clock::time_point now, signing_key_cache& cache) {
    return sign_impl(req, creds, params, now, &cache);
}

result<presigned_query> presign(const request_view& req, const credentials& creds, const signing_params& params,
                                std::chrono::system_clock::time_point now, std::chrono::seconds expires) {
    return presign_impl(req, creds, params, now, expires, nullptr);
}

result<presigned_query> presign(const request_view& req, const credentials& creds, const signing_params& params,
                                std::chrono::system_clock::time_point now, std::chrono::seconds expires,
                                signing_key_cache& cache) {
    return presign_impl(req, creds, params, now, expires, &cache);
}

}  // namespace iss::sigv4

// SPDX-License-Identifier: Apache-2.0
#include "s3/request.hpp"

#include "common/base64.hpp"
#include "s3/error.hpp"
#include "sigv4/encoding.hpp"
#include "sigv4/hash.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>

namespace iss::s3 {

namespace {
error invalid(std::string what) { return error{errc::invalid_argument, std::move(what)}; }

result<void> check_bucket(std::string_view bucket) {
    if (bucket.size() < 3 || bucket.size() > 63)
        return invalid(fmt::format("bucket name '{}' must be 3 to 63 characters", bucket));
    return {};
}
result<void> check_key(std::string_view key) {
    if (key.empty()) return invalid("empty object key");
    if (key.size() > 1024) return invalid("object key longer than 1024 bytes");
    return {};
}
request_spec object_spec(std::string op, std::string method, std::string_view bucket, std::string_view key) {
    request_spec s;
    s.op = std::move(op);
    s.method = std::move(method);
    s.bucket = std::string{bucket};
    s.key = std::string{key};
    s.object = true;
    return s;
}
request_spec bucket_spec(std::string op, std::string method, std::string_view bucket) {
    request_spec s;
    s.op = std::move(op);
    s.method = std::move(method);
    s.bucket = std::string{bucket};
    return s;
}
/// The body checksum `sum` (from `known` when the caller computed it) and, when known, the
/// payload hash a signed request carries (prepare() computes it otherwise).
void add_checksum(request_spec& s, checksum_kind sum, const iss::body_digests& known) {
    if (sum == checksum_kind::md5)
        s.headers.emplace_back("Content-MD5", known.md5 ? content_md5_value(*known.md5) : content_md5(s.body));
    if (sum == checksum_kind::crc32c)
        s.headers.emplace_back("x-amz-checksum-crc32c",
                               known.crc32c ? crc32c_header_value(*known.crc32c) : crc32c_base64(s.body));
    if (known.sha256) s.payload_sha256 = sigv4::to_hex(*known.sha256);
}
result<void> add_metadata(request_spec& s, const put_options& o) {
    for (const auto& [name, value] : o.metadata) {
        if (name.empty()) return invalid("empty metadata name");
        for (char c : name) {
            const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
            if (!ok)
                return invalid(fmt::format("metadata name '{}': use lower-case letters, digits, '-', '_', '.'", name));
        }
        s.headers.emplace_back("x-amz-meta-" + name, encode_metadata_value(value));
    }
    if (!o.content_type.empty()) s.headers.emplace_back("Content-Type", o.content_type);
    if (o.if_none_match) s.headers.emplace_back("If-None-Match", "*");
    return {};
}
bool printable_ascii(std::string_view v) {
    if (!v.empty() && (v.front() == ' ' || v.back() == ' ' || v.front() == '\t' || v.back() == '\t')) return false;
    for (unsigned char c : v)
        if (c < 0x20 || c > 0x7e) return false;
    return true;
}
}  // namespace

payload_signing automatic_payload_signing(std::string_view endpoint) noexcept {
    if (endpoint.empty()) return payload_signing::unsigned_payload;  // AWS: always https
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    constexpr std::string_view https = "https://";
    if (endpoint.size() < https.size()) return payload_signing::signed_payload;
    for (std::size_t i = 0; i < https.size(); ++i)
        if (lower(endpoint[i]) != https[i]) return payload_signing::signed_payload;
    return payload_signing::unsigned_payload;
}

result<void> validate(const client_options& o) {
    std::string problems;
    if (o.part_size < (5ULL << 20) || o.part_size > (5ULL << 30)) problems += "s3.part_size: must be 5 MiB .. 5 GiB; ";
    if (o.retry.attempts < 1) problems += "s3.retry.attempts: must be >= 1; ";
    if (o.region.empty()) problems += "s3.region: must be set; ";
    if (o.endpoint.empty() && o.region == "auto") problems += "s3.endpoint: region 'auto' needs an endpoint; ";
    if (!o.endpoint.empty()) {
        auto ep = http::parse_url(o.endpoint);
        if (!ep) problems += "s3.endpoint: " + ep.error().message() + "; ";
    }
    if (!problems.empty()) return invalid(problems.substr(0, problems.size() - 2));
    return {};
}

sigv4::credentials credentials_from_environment() {
    auto env = [](const char* n) {
        const char* v = std::getenv(n);
        return std::string{v != nullptr ? v : ""};
    };
    return sigv4::credentials{access_key_id{env("AWS_ACCESS_KEY_ID")}, secret_access_key{env("AWS_SECRET_ACCESS_KEY")},
                              session_token{env("AWS_SESSION_TOKEN")}};
}

std::string encode_metadata_value(std::string_view v) {
    // A printable value shaped like an encoded word ("=?UTF-8?B?...?=") is encoded too: sent as
    // it is, it would read back decoded, not as written.
    if (printable_ascii(v) && !(v.starts_with("=?") && v.ends_with("?="))) return std::string{v};
    std::span<const std::uint8_t> bytes{reinterpret_cast<const std::uint8_t*>(v.data()), v.size()};
    return "=?UTF-8?B?" + iss::base64_encode(bytes) + "?=";
}

std::string decode_metadata_value(std::string_view v) {
    constexpr std::string_view pre = "=?UTF-8?B?";
    constexpr std::string_view pre_lower = "=?utf-8?b?";
    if (v.size() < pre.size() + 2 || !v.ends_with("?=")) return std::string{v};
    const auto head = v.substr(0, pre.size());
    bool match = true;
    for (std::size_t i = 0; i < pre.size(); ++i)
        if (head[i] != pre[i] && head[i] != pre_lower[i]) match = false;
    if (!match) return std::string{v};
    auto decoded = iss::base64_decode(v.substr(pre.size(), v.size() - pre.size() - 2));
    return decoded ? std::move(*decoded) : std::string{v};
}

user_metadata metadata_from_headers(const http::header_list& h) {
    user_metadata m;
    constexpr std::string_view prefix = "x-amz-meta-";
    for (const auto& [name, value] : h) {
        if (name.size() <= prefix.size() || !http::iequals(name.substr(0, prefix.size()), prefix)) continue;
        std::string n = name.substr(prefix.size());
        for (char& c : n)
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        m[n] = decode_metadata_value(value);
    }
    return m;
}

bool dns_compatible(std::string_view b, bool allow_dots) noexcept {
    if (b.size() < 3 || b.size() > 63) return false;
    char prev = '.';
    for (char c : b) {
        const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (c == '.') {
            if (!allow_dots || prev == '.' || prev == '-') return false;
        } else if (c == '-') {
            if (prev == '.') return false;
        } else if (!alnum) {
            return false;
        }
        prev = c;
    }
    return prev != '-' && prev != '.';
}

result<target> resolve_target(const client_options& o, std::string_view bucket) {
    target t;
    if (o.endpoint.empty()) {
        if (o.region == "auto") return invalid("region 'auto' needs an endpoint (s3.endpoint)");
        t.ep = http::endpoint{true, "s3." + o.region + ".amazonaws.com", 443};
    } else {
        auto ep = http::parse_url(o.endpoint);
        if (!ep) return ep.error();
        t.ep = std::move(*ep);
    }
    t.ep.connect_host = o.connect_address;
    if (bucket.empty()) return t;
    bool vhost = false;
    const bool ip_host =
        t.ep.host.find_first_not_of("0123456789.") == std::string::npos || t.ep.host.find(':') != std::string::npos;
    if (ip_host) {
        t.path_prefix = "/" + std::string{bucket};
        return t;
    }
    if (o.style == addressing::virtual_hosted) vhost = dns_compatible(bucket, /*allow_dots=*/!t.ep.tls);
    else if (o.style == addressing::automatic && o.endpoint.empty()) vhost = dns_compatible(bucket, false);
    if (vhost) {
        t.ep.host = std::string{bucket} + "." + t.ep.host;
        t.virtual_hosted = true;
        // Keep connecting to the endpoint's own host: the bucket name need not resolve.
        if (t.ep.connect_host.empty() && !o.endpoint.empty()) {
            auto base = http::parse_url(o.endpoint);
            if (base) t.ep.connect_host = base->host;
        }
    } else {
        t.path_prefix = "/" + std::string{bucket};
    }
    return t;
}

void add_object_headers(request_spec& spec, const object_options& o, object_request kind) {
    const auto& s = o.sse;
    if (s.type == sse_type::customer) {
        // SSE-C: exactly these three, on every request that writes or reads the object's data;
        // never x-amz-server-side-encryption.
        const auto key = iss::base64_decode(s.customer_key.reveal()).value_or("");
        spec.headers.emplace_back("x-amz-server-side-encryption-customer-algorithm", "AES256");
        spec.headers.emplace_back("x-amz-server-side-encryption-customer-key", s.customer_key.reveal());
        const std::array<std::string_view, 1> parts{key};
        spec.headers.emplace_back("x-amz-server-side-encryption-customer-key-MD5", content_md5(parts));
    }
    if (kind != object_request::create) return;
    if (s.type == sse_type::aes256) spec.headers.emplace_back("x-amz-server-side-encryption", "AES256");
    if (s.type == sse_type::kms || s.type == sse_type::kms_dsse) {
        spec.headers.emplace_back("x-amz-server-side-encryption", s.type == sse_type::kms ? "aws:kms" : "aws:kms:dsse");
        if (!s.kms_key_id.empty())
            spec.headers.emplace_back("x-amz-server-side-encryption-aws-kms-key-id", s.kms_key_id);
        if (!s.kms_context.empty())
            spec.headers.emplace_back("x-amz-server-side-encryption-context", iss::base64_encode(s.kms_context));
        if (s.bucket_key_enabled) spec.headers.emplace_back("x-amz-server-side-encryption-bucket-key-enabled", "true");
    }
    if (!o.storage_class.empty()) spec.headers.emplace_back("x-amz-storage-class", o.storage_class);
    if (!o.acl.empty()) spec.headers.emplace_back("x-amz-acl", o.acl);
    if (!o.tags.empty()) {
        std::string t;
        for (const auto& [k, v] : o.tags) {
            if (!t.empty()) t += '&';
            t += sigv4::uri_encode(k, false) + "=" + sigv4::uri_encode(v, false);
        }
        spec.headers.emplace_back("x-amz-tagging", t);
    }
    for (const auto& [k, v] : o.metadata) {
        bool present = false;
        for (const auto& [n, _] : spec.headers)
            if (http::iequals(n, "x-amz-meta-" + k)) present = true;
        if (!present) spec.headers.emplace_back("x-amz-meta-" + k, v);
    }
}

result<request_spec> build_create_bucket(std::string_view bucket, std::string_view region) {
    if (auto c = check_bucket(bucket); !c) return c.error();
    auto s = bucket_spec("CreateBucket", "PUT", bucket);
    if (!region.empty() && region != "us-east-1" && region != "auto") {
        auto body = std::make_shared<std::string>(
            "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><LocationConstraint>" +
            xml_escape(region) + "</LocationConstraint></CreateBucketConfiguration>");
        s.owned_body = body;
        s.body.emplace_back(*body);
    }
    return s;
}

result<request_spec> build_head_bucket(std::string_view bucket) {
    if (auto c = check_bucket(bucket); !c) return c.error();
    return bucket_spec("HeadBucket", "HEAD", bucket);
}

result<request_spec> build_list_buckets() { return bucket_spec("ListBuckets", "GET", ""); }

result<request_spec> build_put_object(std::string_view bucket, std::string_view key, std::vector<std::string_view> body,
                                      const put_options& o, checksum_kind sum) {
    if (auto c = check_bucket(bucket); !c) return c.error();
    if (auto c = check_key(key); !c) return c.error();
    auto s = object_spec("PutObject", "PUT", bucket, key);
    s.body = std::move(body);
    if (auto m = add_metadata(s, o); !m) return m.error();
    if (!o.crc32c_value.empty()) s.headers.emplace_back("x-amz-checksum-crc32c", o.crc32c_value);
    else add_checksum(s, sum, o.known);
    s.bad_digest_expected = o.bad_digest_expected;
    return s;
}

result<request_spec> build_head_object(std::string_view bucket, std::string_view key) {
    if (auto c = check_bucket(bucket); !c) return c.error();
    if (auto c = check_key(key); !c) return c.error();
    return object_spec("HeadObject", "HEAD", bucket, key);
}

result<request_spec> build_get_object(std::string_view bucket, std::string_view key) {
    if (auto c = check_bucket(bucket); !c) return c.error();
    if (auto c = check_key(key); !c) return c.error();
    return object_spec("GetObject", "GET", bucket, key);
}

result<request_spec> build_delete_object(std::string_view bucket, std::string_view key) {
    if (auto c = check_bucket(bucket); !c) return c.error();
    if (auto c = check_key(key); !c) return c.error();
    return object_spec("DeleteObject", "DELETE", bucket, key);
}

result<request_spec> build_create_multipart(std::string_view bucket, std::string_view key, const put_options& o,
                                            checksum_kind sum) {
    if (auto c = check_bucket(bucket); !c) return c.error();
    if (auto c = check_key(key); !c) return c.error();
    auto s = object_spec("CreateMultipartUpload", "POST", bucket, key);
    s.query.push_back({"uploads", ""});
    put_options without_condition = o;
    without_condition.if_none_match = false;
    without_condition.crc32c_value.clear();  // the condition belongs on Complete
    if (auto m = add_metadata(s, without_condition); !m) return m.error();
    if (sum == checksum_kind::crc32c) s.headers.emplace_back("x-amz-checksum-algorithm", "CRC32C");
    return s;
}

result<request_spec> build_upload_part(std::string_view bucket, std::string_view key, std::string_view upload_id,
                                       int part_number, std::vector<std::string_view> body, checksum_kind sum,
                                       const iss::body_digests& known) {
    if (auto c = check_bucket(bucket); !c) return c.error();
    if (auto c = check_key(key); !c) return c.error();
    if (part_number < 1 || part_number > 10000) return invalid("part number must be 1 .. 10000");
    if (upload_id.empty()) return invalid("empty upload id");
    auto s = object_spec("UploadPart", "PUT", bucket, key);
    s.query.push_back({"partNumber", std::to_string(part_number)});
    s.query.push_back({"uploadId", std::string{upload_id}});
    s.body = std::move(body);
    add_checksum(s, sum, known);
    return s;
}

result<request_spec> build_complete_multipart(std::string_view bucket, std::string_view key, std::string_view upload_id,
                                              const std::vector<completed_part>& parts, bool if_none_match) {
    if (auto c = check_bucket(bucket); !c) return c.error();
    if (auto c = check_key(key); !c) return c.error();
    if (parts.empty()) return invalid("CompleteMultipartUpload needs at least one part");
    for (std::size_t i = 0; i < parts.size(); ++i)
        if (parts[i].number != static_cast<int>(i) + 1 || parts[i].etag.empty())
            return invalid("parts must be numbered 1..N in order, each with its ETag");
    auto s = object_spec("CompleteMultipartUpload", "POST", bucket, key);
    s.query.push_back({"uploadId", std::string{upload_id}});
    auto body = std::make_shared<std::string>(complete_body(parts));
    s.owned_body = body;
    s.body.emplace_back(*body);
    s.headers.emplace_back("Content-Type", "application/xml");
    if (if_none_match) s.headers.emplace_back("If-None-Match", "*");
    return s;
}

result<request_spec> build_abort_multipart(std::string_view bucket, std::string_view key, std::string_view upload_id) {
    if (auto c = check_bucket(bucket); !c) return c.error();
    if (auto c = check_key(key); !c) return c.error();
    auto s = object_spec("AbortMultipartUpload", "DELETE", bucket, key);
    s.query.push_back({"uploadId", std::string{upload_id}});
    return s;
}

result<request_spec> build_list_parts(std::string_view bucket, std::string_view key, std::string_view upload_id,
                                      std::string_view marker) {
    if (auto c = check_bucket(bucket); !c) return c.error();
    if (auto c = check_key(key); !c) return c.error();
    auto s = object_spec("ListParts", "GET", bucket, key);
    s.query.push_back({"uploadId", std::string{upload_id}});
    if (!marker.empty()) s.query.push_back({"part-number-marker", std::string{marker}});
    return s;
}

result<request_spec> build_list_uploads(std::string_view bucket, std::string_view prefix, std::string_view key_marker,
                                        std::string_view upload_id_marker) {
    if (auto c = check_bucket(bucket); !c) return c.error();
    auto s = bucket_spec("ListMultipartUploads", "GET", bucket);
    s.query.push_back({"uploads", ""});
    if (!prefix.empty()) s.query.push_back({"prefix", std::string{prefix}});
    if (!key_marker.empty()) s.query.push_back({"key-marker", std::string{key_marker}});
    if (!upload_id_marker.empty()) s.query.push_back({"upload-id-marker", std::string{upload_id_marker}});
    return s;
}

result<request_spec> build_list_objects_v2(std::string_view bucket, const list_options& o) {
    if (auto c = check_bucket(bucket); !c) return c.error();
    auto s = bucket_spec("ListObjectsV2", "GET", bucket);
    s.query.push_back({"list-type", "2"});
    s.query.push_back({"encoding-type", "url"});
    if (!o.prefix.empty()) s.query.push_back({"prefix", o.prefix});
    if (!o.delimiter.empty()) s.query.push_back({"delimiter", o.delimiter});
    if (!o.continuation_token.empty()) s.query.push_back({"continuation-token", o.continuation_token});
    if (!o.start_after.empty()) s.query.push_back({"start-after", o.start_after});
    if (o.max_keys > 0) s.query.push_back({"max-keys", std::to_string(o.max_keys)});
    return s;
}

result<prepared> prepare(request_spec& spec, const client_options& o, std::chrono::system_clock::time_point now,
                         sigv4::signing_key_cache& keys) {
    return prepare(spec, o, now, keys, o.credentials);
}

result<prepared> prepare(request_spec& spec, const client_options& o, std::chrono::system_clock::time_point now,
                         sigv4::signing_key_cache& keys, const sigv4::credentials& creds) {
    auto t = resolve_target(o, spec.bucket);
    if (!t) return t.error();
    std::string path = t->path_prefix;
    if (spec.object) path += "/" + spec.key;
    if (path.empty()) path = "/";

    const std::string host = t->ep.host_header();
    std::vector<sigv4::header> hs;
    hs.reserve(spec.headers.size() + 1);
    hs.push_back({"Host", host});
    for (const auto& [n, v] : spec.headers) hs.push_back({n, v});
    std::vector<sigv4::query_param> qs;
    qs.reserve(spec.query.size());
    for (const auto& q : spec.query) qs.push_back(q.view());

    sigv4::signing_params params;
    params.region = o.region;
    if (o.payload == payload_signing::unsigned_payload) {
        params.payload = sigv4::payload_mode::unsigned_payload;
    } else if (spec.payload_sha256.empty()) {
        sigv4::sha256_hasher h;
        for (auto b : spec.body) h.update(b);
        spec.payload_sha256 = h.finish_hex();
    }
    sigv4::request_view view{};
    view.method = spec.method;
    view.path = path;
    view.form = sigv4::path_form::raw;
    view.query = qs;
    view.headers = hs;
    view.payload_sha256 = spec.payload_sha256;
    auto signed_ = sigv4::sign(view, creds, params, now, keys);
    if (!signed_) return signed_.error();

    prepared p;
    p.ep = t->ep;
    p.req.method = spec.method;
    p.req.target = sigv4::wire_target(view);  // the same encoder the signer used
    p.req.headers.add("Host", host);
    for (const auto& [n, v] : spec.headers) p.req.headers.add(n, v);
    for (const auto& h : signed_->headers) p.req.headers.add(h.name, h.value);
    p.req.body = spec.body;
    p.req.body_sent = spec.body_sent;
    return p;
}

}  // namespace iss::s3

// SPDX-License-Identifier: Apache-2.0
// validate(), the `s3` section: every rule of s3.* with its YAML path (lib/config/validate.cpp
// runs it with the other sections).
#include "common/base64.hpp"
#include "config/validate_internal.hpp"

#include <array>
#include <cctype>

namespace iss::config::detail {

namespace {

using namespace std::chrono_literals;

/// The host[:port] part of s3.endpoint (after the scheme, before any path), with the rules of
/// the HTTP client's URL parser: no user info, [IPv6] closed, a host, a port 1..65535.
void check_endpoint_authority(collector& add, const std::string& endpoint, std::string_view a) {
    const std::string path = "s3.endpoint";
    if (a.find('@') != std::string_view::npos) {  // `endpoint` is printed masked (it may hold a password)
        add(path,
            "'{}': user info (user@host) is not allowed; credentials go in s3.access_key_id and "
            "s3.secret_access_key",
            without_user_info(endpoint));
        return;
    }
    std::string_view host;
    std::string_view port;
    bool has_port = false;
    if (a.front() == '[') {
        const auto close = a.find(']');
        if (close == std::string_view::npos) {
            add(path, "'{}': the IPv6 address has no closing ']'", endpoint);
            return;
        }
        host = a.substr(1, close - 1);
        const auto rest = a.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':') {
                add(path, "'{}': write an IPv6 endpoint as [addr]:port", endpoint);
                return;
            }
            has_port = true;
            port = rest.substr(1);
        }
    } else {
        const auto colon = a.rfind(':');
        host = a.substr(0, colon);
        if (colon != std::string_view::npos) {
            has_port = true;
            port = a.substr(colon + 1);
        }
    }
    if (host.empty()) {
        add(path, "'{}' has no host", endpoint);
        return;
    }
    if (!has_port) return;
    unsigned long p = 0;
    bool ok = !port.empty() && port.size() <= 5;
    for (char c : port) {
        ok = ok && c >= '0' && c <= '9';
        if (ok) p = p * 10 + static_cast<unsigned long>(c - '0');
    }
    if (!ok || p == 0 || p > 65535)
        add(path, "'{}': the port must be 1..65535 (or left out: 443 for https, 80 for http)", endpoint);
}

bool is_ip_literal(std::string_view host) {
    if (!host.empty() && host.front() == '[') return true;
    return !host.empty() &&
           std::all_of(host.begin(), host.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}
/// 32 bytes in canonical base64: 44 characters, the last one `=`.
bool is_base64_key256(std::string_view k) {
    const auto key = iss::base64_decode(k);
    return key && key->size() == 32;
}

bool printable_ascii(std::string_view v) {
    for (unsigned char c : v)
        if (c < 0x20 || c > 0x7e) return false;
    return true;
}

/// s3.assume_role, s3.sts_endpoint, s3.proxy, s3.sse, s3.storage_class, s3.acl, s3.tags, s3.metadata.
void check_aws_access(collector& add, const s3_section& s) {
    const auto& r = s.assume_role;
    if (r.role_arn.empty()) {
        if (!r.session_name.empty()) add("s3.assume_role.session_name", "is set but s3.assume_role.role_arn is empty");
        if (!r.external_id.empty()) add("s3.assume_role.external_id", "is set but s3.assume_role.role_arn is empty");
    } else if (!r.role_arn.starts_with("arn:")) {
        add("s3.assume_role.role_arn", "'{}' must be a role ARN (arn:aws:iam::ACCOUNT:role/NAME)", r.role_arn);
    }
    if (r.duration < 900s || r.duration > 43200s || r.duration.count() % 1000 != 0)
        add("s3.assume_role.duration", "must be whole seconds from 15m to 12h, not {}", format_duration(r.duration));
    if (!r.session_name.empty()) {
        bool ok = r.session_name.size() >= 2 && r.session_name.size() <= 64;
        for (char c : r.session_name)
            if (!(std::isalnum(static_cast<unsigned char>(c)) ||
                  std::string_view{"_+=,.@-"}.find(c) != std::string_view::npos))
                ok = false;
        if (!ok) add("s3.assume_role.session_name", "must be 2 to 64 of letters, digits and _+=,.@-");
    }
    if (!s.sts_endpoint.empty() && !s.sts_endpoint.starts_with("https://") && !s.sts_endpoint.starts_with("http://"))
        add("s3.sts_endpoint", "'{}' must start with http:// or https://", s.sts_endpoint);
    if (!s.proxy.empty() && !s.proxy.reveal().starts_with("http://"))
        add("s3.proxy", "must be http://[user:password@]host:port (an https:// proxy is not supported)");
    const auto& e = s.sse;
    const bool kms = e.type == s3::sse_type::kms || e.type == s3::sse_type::kms_dsse;
    if (!kms && !e.kms_key_id.empty()) add("s3.sse.kms_key_id", "applies only to type aws:kms or aws:kms:dsse");
    if (!kms && !e.kms_context.empty()) add("s3.sse.kms_context", "applies only to type aws:kms or aws:kms:dsse");
    if (!kms && e.bucket_key_enabled) add("s3.sse.bucket_key_enabled", "applies only to type aws:kms or aws:kms:dsse");
    if (!e.kms_context.empty() && (e.kms_context.front() != '{' || e.kms_context.back() != '}'))
        add("s3.sse.kms_context", "must be a JSON object ({{\"key\": \"value\"}})");
    if (e.type == s3::sse_type::customer) {
        if (e.customer_key.empty())
            add("s3.sse.customer_key", "is required with type customer (a 256-bit key, base64)");
        else if (!is_base64_key256(e.customer_key.reveal()))
            add("s3.sse.customer_key", "must be 32 bytes, base64-encoded (44 characters ending in '=')");
    } else if (!e.customer_key.empty()) {
        add("s3.sse.customer_key", "applies only to type customer");
    }
    static constexpr std::array<std::string_view, 8> acls{
        "private",       "public-read",       "public-read-write",         "authenticated-read",
        "aws-exec-read", "bucket-owner-read", "bucket-owner-full-control", "log-delivery-write"};
    if (!s.acl.empty() && std::find(acls.begin(), acls.end(), s.acl) == acls.end())
        add("s3.acl",
            "'{}' is not a canned ACL (private, public-read, public-read-write, authenticated-read, aws-exec-read, "
            "bucket-owner-read, bucket-owner-full-control, log-delivery-write)",
            s.acl);
    for (char c : s.storage_class) {
        if (!(std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_')) {
            add("s3.storage_class",
                "'{}' must be an S3 storage class in upper case (STANDARD, STANDARD_IA, GLACIER_IR, ...)",
                s.storage_class);
            break;
        }
    }
    if (s.tags.size() > 10) add("s3.tags", "at most 10 tags per object, not {}", s.tags.size());
    for (const auto& [k, v] : s.tags) {
        if (k.empty() || k.size() > 128) add("s3.tags", "tag name '{}' must be 1 to 128 characters", k);
        if (v.size() > 256) add("s3.tags." + k, "value longer than 256 characters");
        if (!valid_utf8(k) || !valid_utf8(v)) add("s3.tags." + k, "must be valid UTF-8");
    }
    for (const auto& [k, v] : s.metadata) {
        bool ok = !k.empty();
        for (char c : k)
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.')) ok = false;
        if (!ok) add("s3.metadata", "name '{}': use lower-case letters, digits, '-', '_', '.'", k);
        else if (k.starts_with("iggy-")) add("s3.metadata." + k, "names starting with iggy- are the sink's own");
        if (!printable_ascii(v))
            add("s3.metadata." + k, "the value must be printable ASCII (no control or non-ASCII characters)");
    }
}
}  // namespace

void check_s3(collector& add, const sink_config& c) {
    const auto& s = c.s3;
    const std::string& bucket = s.bucket.get();
    std::string_view endpoint_host;
    bool endpoint_https = true;
    if (!s.endpoint.empty()) {
        std::string_view e = s.endpoint;
        if (e.starts_with("https://")) e.remove_prefix(8);
        else if (e.starts_with("http://")) {
            e.remove_prefix(7);
            endpoint_https = false;
        } else {
            add("s3.endpoint", "'{}' must start with http:// or https://", without_user_info(s.endpoint));
            e = {};
        }
        if (e.ends_with('/')) e.remove_suffix(1);
        if (const auto slash = e.find_first_of("/?#"); slash != std::string_view::npos) {
            add("s3.endpoint", "'{}' must have no path: the bucket goes in s3.bucket and key prefixes in s3.prefix",
                without_user_info(s.endpoint));
            e = e.substr(0, slash);
        }
        if (!e.empty()) endpoint_host = e.substr(0, e.front() == '[' ? e.find(']') + 1 : e.find(':'));
        if (!s.endpoint.empty() && e.empty() && s.endpoint.find("://") != std::string::npos)
            add("s3.endpoint", "'{}' has no host", without_user_info(s.endpoint));
        else if (!e.empty()) check_endpoint_authority(add, s.endpoint, e);
    }
    if (bucket.empty()) {
        add("s3.bucket", "is required");
    } else if (!s.endpoint.empty() && (bucket.size() < 3 || bucket.size() > 63)) {
        // Every S3 request builder refuses these (and S3-compatible stores do as well).
        add("s3.bucket", "'{}' is {} characters; a bucket name has 3 to 63", bucket, bucket.size());
    } else if (s.endpoint.empty()) {
        // AWS bucket naming rules (general purpose buckets).
        const bool chars_ok = std::all_of(bucket.begin(), bucket.end(), [](char ch) {
            return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '-';
        });
        const auto alnum = [](char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'); };
        if (bucket.size() < 3 || bucket.size() > 63 || !chars_ok || !alnum(bucket.front()) || !alnum(bucket.back()) ||
            bucket.find("..") != std::string::npos)
            add("s3.bucket",
                "'{}' is not a valid AWS bucket name (3-63 characters: lower-case letters, digits, '.', '-'; starting "
                "and ending with a letter or digit)",
                bucket);
    } else if (bucket.find_first_of("/ \t") != std::string::npos || has_control(bucket)) {
        add("s3.bucket", "'{}' must not contain '/', spaces or control characters", bucket);
    }
    if (s.region.get().empty()) add("s3.region", "is required (us-east-1 for most S3-compatible stores)");
    else if (s.endpoint.empty() && s.region.get() == "auto")
        add("s3.region", "'auto' needs s3.endpoint (it is the region of stores such as Cloudflare R2, not of AWS)");
    else if (s.region.get().find_first_of(" /\t") != std::string::npos)
        add("s3.region", "'{}' is not a region name", s.region.get());
    if (s.path_style == s3::addressing::virtual_hosted && is_ip_literal(endpoint_host))
        add("s3.path_style", "false (virtual-hosted) cannot work with an IP-address endpoint; use true or auto");
    else if (s.path_style == s3::addressing::virtual_hosted && endpoint_https && bucket.find('.') != std::string::npos)
        add("s3.path_style",
            "false (virtual-hosted) with the dotted bucket '{}' over https fails TLS: a wildcard certificate "
            "(*.host) does not match {}.host; use true or auto",
            bucket, bucket);
    if (has_control(s.prefix)) add("s3.prefix", "must not contain control characters");
    if (!valid_utf8(s.prefix)) add("s3.prefix", "must be valid UTF-8");
    // Credentials: with `auto` the chain finds them at start (and says what it tried);
    // static keys are checked here.
    const bool pinned_static = s.credentials.source == aws::source_kind::static_keys;
    if (s.access_key_id.get().empty()) {
        if (pinned_static) {
            add("s3.access_key_id", "is required with s3.credentials.source static (set it, or env AWS_ACCESS_KEY_ID)");
            if (s.secret_access_key.empty())
                add("s3.secret_access_key",
                    "is required with s3.credentials.source static (set it, or env AWS_SECRET_ACCESS_KEY)");
        } else if (!s.secret_access_key.empty())
            add("s3.access_key_id", "is required with s3.secret_access_key (set it, or env AWS_ACCESS_KEY_ID)");
    } else if (s.secret_access_key.empty()) {
        add("s3.secret_access_key", "is required with s3.access_key_id (set it, or env AWS_SECRET_ACCESS_KEY)");
    }
    if (!s.keys_from_env && !s.access_key_id.get().empty() && s.credentials.source != aws::source_kind::automatic &&
        !pinned_static)
        add("s3.access_key_id", "is set but s3.credentials.source is not static or auto: the keys would be ignored");
    check_aws_access(add, s);
    if (!s.endpoint.empty() && !endpoint_https) {
        if (!s.tls.ca_file.empty()) add("s3.tls.ca_file", "is set but s3.endpoint is http:// (no TLS)");
        if (s.tls.insecure) add("s3.tls.insecure", "is set but s3.endpoint is http:// (no TLS)");
        if (s.payload_signing == s3::payload_signing::unsigned_payload)
            add("s3.payload_signing", "unsigned needs https: over http:// the body must be signed");
    }
    if (s.part_size < 5 * mib)
        add("s3.part_size", "must be >= 5MiB (S3's smallest multipart part), not {}", format_size(s.part_size));
    if (s.part_size > 5 * gib)
        add("s3.part_size", "must be <= 5GiB (S3's largest part), not {}", format_size(s.part_size));
    if (s.timeouts.connect <= 0ms) add("s3.timeouts.connect", "must be > 0");
    if (s.timeouts.request <= 0ms) add("s3.timeouts.request", "must be > 0");
    const auto& r = s.retry;
    if (r.attempts == 0) add("s3.retry.attempts", "must be >= 1");
    if (r.base <= 0ms) add("s3.retry.base", "must be > 0");
    if (r.cap < r.base) add("s3.retry.cap", "must be >= s3.retry.base ({})", format_duration(r.base));
    if (c.iggy.group_mode()) {
        if (r.deadline <= 0ms)
            add("s3.retry.deadline",
                "must be > 0 in group mode: the server hands a partition over after 30s, so every S3 operation "
                "needs a bound");
        else if (r.deadline > group_deadline_max)
            add("s3.retry.deadline",
                "must be <= {} in group mode (the server forces a partition hand-over after {}; the rest is left to "
                "finish and commit), not {}",
                format_duration(group_deadline_max), format_duration(group_handover), format_duration(r.deadline));
    }
    if (r.deadline > 0ms) {
        if (s.timeouts.request > r.deadline)
            add("s3.timeouts.request", "({}) must be <= s3.retry.deadline ({})", format_duration(s.timeouts.request),
                format_duration(r.deadline));
        if (s.timeouts.connect > r.deadline)
            add("s3.timeouts.connect", "({}) must be <= s3.retry.deadline ({})", format_duration(s.timeouts.connect),
                format_duration(r.deadline));
    }
}

}  // namespace iss::config::detail

// SPDX-License-Identifier: Apache-2.0
#include "daemon/s3_wiring.hpp"

#include <fmt/format.h>

namespace iss::app {

s3::client_options s3_options(const config::sink_config& c) {
    const auto& s = c.s3;
    s3::client_options o;
    o.endpoint = s.endpoint;
    o.region = s.region.get();
    o.style = s.path_style;
    o.credentials = {s.access_key_id, s.secret_access_key, s.session_token};
    // auto: Content-MD5 until the probe shows the store verifies CRC-32C (daemon/s3_setup.cpp).
    o.checksum = s.checksum.value_or(s3::checksum_kind::md5);
    // auto leans on the body checksum: with s3.checksum: none only the signature is left.
    if (s.payload_signing) o.payload = *s.payload_signing;
    else if (s.checksum == s3::checksum_kind::none) o.payload = s3::payload_signing::signed_payload;
    else o.payload = s3::automatic_payload_signing(s.endpoint);
    o.part_size = s.part_size;
    o.retry.attempts = s.retry.attempts;
    o.retry.base = s.retry.base;
    o.retry.cap = s.retry.cap;
    o.retry.deadline = s.retry.deadline;
    o.http.tls.ca_file = s.tls.ca_file;
    o.http.tls.insecure = s.tls.insecure;
    o.http.timeout.connect = s.timeouts.connect;
    o.http.timeout.handshake = s.timeouts.connect;
    o.http.timeout.resolve = s.timeouts.connect;
    o.http.timeout.write = s.timeouts.request;
    o.http.timeout.read = s.timeouts.request;
    o.objects.sse.type = s.sse.type;
    o.objects.sse.kms_key_id = s.sse.kms_key_id;
    o.objects.sse.kms_context = s.sse.kms_context;
    o.objects.sse.bucket_key_enabled = s.sse.bucket_key_enabled;
    o.objects.sse.customer_key = s.sse.customer_key;
    o.objects.storage_class = s.storage_class;
    o.objects.acl = s.acl;
    o.objects.tags = s.tags;
    o.objects.metadata = s.metadata;
    return o;
}

std::string describe_checksum(const config::sink_config& c, s3::capability crc32c_verified, std::string_view detail) {
    if (c.s3.checksum) {
        switch (*c.s3.checksum) {
            case s3::checksum_kind::md5: return "md5 (set in the configuration)";
            case s3::checksum_kind::crc32c: return "crc32c (set in the configuration)";
            case s3::checksum_kind::none: return "none (set in the configuration: no body checksum)";
        }
    }
    if (s3::automatic_checksum(crc32c_verified) == s3::checksum_kind::crc32c)
        return "auto: crc32c (the store refused a wrong x-amz-checksum-crc32c)";
    return fmt::format("auto: md5 ({})", detail.empty() ? "the store's CRC-32C check is unknown" : detail);
}

std::string describe_payload_signing(const config::sink_config& c) {
    const bool unsigned_payload = s3_options(c).payload == s3::payload_signing::unsigned_payload;
    const std::string_view what = unsigned_payload ? "UNSIGNED-PAYLOAD" : "signed (the body's SHA-256)";
    if (c.s3.payload_signing) return fmt::format("{} (set in the configuration)", what);
    if (unsigned_payload)
        return fmt::format("auto: {} ({}: TLS and the body checksum protect the body)", what,
                           c.s3.endpoint.empty() ? "AWS, over https" : "https endpoint");
    if (c.s3.checksum == s3::checksum_kind::none)
        return fmt::format("auto: {} (s3.checksum: none: only the signature protects the body)", what);
    return fmt::format("auto: {} (plain http endpoint: only the signature protects the body in transit)", what);
}

http::proxy_options proxy_options(const config::sink_config& c, const aws::env_lookup& env) {
    auto get = [&](std::string_view upper, std::string_view lower) -> std::string {
        if (!env) return {};
        if (auto v = env(upper); v && !v->empty()) return *v;
        if (auto v = env(lower); v && !v->empty()) return *v;
        return {};
    };
    http::proxy_options p;
    if (!c.s3.proxy.empty()) {
        p.http_url = c.s3.proxy.reveal();
        p.https_url = c.s3.proxy.reveal();
    } else {
        p.https_url = get("HTTPS_PROXY", "https_proxy");
        p.http_url = get("HTTP_PROXY", "http_proxy");
    }
    p.no_proxy = get("NO_PROXY", "no_proxy");
    return p;
}

aws::chain_options credentials_options(const config::sink_config& c, aws::env_lookup env) {
    const auto& s = c.s3;
    aws::chain_options o;
    o.source = s.credentials.source;
    // Keys the loader took from AWS_* are the chain's `env` step, so logs name the right source.
    if (!s.keys_from_env || o.source == aws::source_kind::static_keys)
        o.static_keys = {s.access_key_id, s.secret_access_key, s.session_token};
    o.region = s.region.get();
    o.sts_endpoint = s.sts_endpoint;
    o.assume_role.role_arn = s.assume_role.role_arn;
    o.assume_role.session_name = s.assume_role.session_name;
    o.assume_role.external_id = s.assume_role.external_id;
    o.assume_role.duration = std::chrono::duration_cast<std::chrono::seconds>(s.assume_role.duration);
    o.env = std::move(env);
    o.timeout = s.timeouts.request;
    return o;
}

}  // namespace iss::app

// validate(): every rule a well-typed sink_config can break, each with its YAML path.
#include "config/config.hpp"
#include "format/key_fields.hpp"
#include "format/key_template.hpp"
#include "format/schema.hpp"

#include <date/tz.h>
#include <fmt/format.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <set>
#include <utility>

namespace iss::config {

namespace {

using namespace std::chrono_literals;

constexpr std::size_t max_name_bytes = 255;             // Iggy names: 1..255 bytes
constexpr milliseconds group_handover{30'000};          // Iggy 0.8 forces a hand-over after 30 s
constexpr milliseconds group_deadline_max{25'000};      // leaves 5 s to finish and commit
constexpr std::uint64_t max_parts = 10'000;             // S3 multipart limit
constexpr std::uint64_t max_object = 5ULL * 1024 * gib; // S3 object limit (5 TiB)
constexpr std::size_t max_key_bytes = 1024;             // S3 key limit

struct collector {
    std::vector<problem> out;
    template <class... A>
    void operator()(std::string path, fmt::format_string<A...> f, A&&... a) {
        out.push_back(problem{std::move(path), fmt::format(f, std::forward<A>(a)...), 0});
    }
};

bool valid_utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (n == 0 || i + n > s.size()) return false;
        for (std::size_t j = 1; j < n; ++j)
            if ((static_cast<unsigned char>(s[i + j]) & 0xC0) != 0x80) return false;
        i += n;
    }
    return true;
}

bool has_control(std::string_view s) {
    return std::any_of(s.begin(), s.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u < 0x20 || u == 0x7f;
    });
}

void check_name(collector& add, const std::string& path, const std::string& name, std::string_view what) {
    if (name.empty()) {
        add(path, "{} name is required", what);
        return;
    }
    if (name.size() > max_name_bytes) add(path, "{} name is {} bytes; Iggy allows at most {}", what, name.size(), max_name_bytes);
    if (!valid_utf8(name)) add(path, "{} name is not valid UTF-8", what);
}

/// host:port, with [v6]:port.
void check_address(collector& add, const std::string& a) {
    const std::string path = "iggy.address";
    if (a.empty()) {
        add(path, "is required (host:port)");
        return;
    }
    if (a.find("://") != std::string::npos) {
        add(path, "'{}': write host:port without a scheme (TLS is iggy.tls.enabled)", a);
        return;
    }
    std::string_view host;
    std::string_view port;
    if (a.front() == '[') {
        const auto close = a.find(']');
        if (close == std::string::npos || close + 1 >= a.size() || a[close + 1] != ':') {
            add(path, "'{}': write an IPv6 address as [addr]:port", a);
            return;
        }
        host = std::string_view{a}.substr(1, close - 1);
        port = std::string_view{a}.substr(close + 2);
    } else {
        const auto colon = a.rfind(':');
        if (colon == std::string::npos) {
            add(path, "'{}' has no port (host:port, e.g. 127.0.0.1:8090)", a);
            return;
        }
        if (a.find(':') != colon) {
            add(path, "'{}': write an IPv6 address as [addr]:port", a);
            return;
        }
        host = std::string_view{a}.substr(0, colon);
        port = std::string_view{a}.substr(colon + 1);
    }
    if (host.empty()) add(path, "'{}' has no host", a);
    unsigned long p = 0;
    bool ok = !port.empty() && port.size() <= 5;
    for (char c : port) {
        ok = ok && c >= '0' && c <= '9';
        p = p * 10 + static_cast<unsigned long>(c - '0');
    }
    if (!ok || p == 0 || p > 65535) add(path, "'{}': the port must be 1..65535", a);
}

/// The host[:port] part of s3.endpoint (after the scheme, before any path), with the rules of
/// the HTTP client's URL parser: no user info, [IPv6] closed, a host, a port 1..65535.
void check_endpoint_authority(collector& add, const std::string& endpoint, std::string_view a) {
    const std::string path = "s3.endpoint";
    if (a.find('@') != std::string_view::npos) {
        add(path, "'{}': user info (user@host) is not allowed; credentials go in s3.access_key_id and "
                  "s3.secret_access_key", endpoint);
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
    return !host.empty() && std::all_of(host.begin(), host.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

void check_iggy(collector& add, const iggy_section& i) {
    check_address(add, i.address);
    if (!i.password.empty() && !i.token.empty())
        add("iggy.token", "set either iggy.password or iggy.token, not both");
    if (i.password.empty() && i.token.empty())
        add("iggy.password", "Iggy needs a login: set iggy.password (or env IGGY_PASSWORD) with iggy.username, or iggy.token");
    if (!i.password.empty() && i.username.empty()) add("iggy.username", "is required with iggy.password");
    if (!i.tls.enabled && !i.tls.ca_file.empty())
        add("iggy.tls.ca_file", "is set but iggy.tls.enabled is false (set enabled: true to use TLS)");
    if (!i.tls.enabled && !i.tls.server_name.empty())
        add("iggy.tls.server_name", "is set but iggy.tls.enabled is false (set enabled: true to use TLS)");
    if (i.group_mode()) check_name(add, "iggy.consumer_group", i.consumer_group, "consumer group");
    else check_name(add, "iggy.consumer", i.consumer, "consumer");
    if (i.poll.messages == 0) add("iggy.poll.messages", "must be > 0");
    if (i.poll.messages > 1'000'000) add("iggy.poll.messages", "must be <= 1000000 (one reply is held in memory)");
    if (i.poll.interval <= 0ms) add("iggy.poll.interval", "must be > 0 (0 would poll an empty partition in a busy loop)");
    if (i.poll.interval > 60s) add("iggy.poll.interval", "must be <= 1m");
    if (i.max_response_bytes < 64 * kib) add("iggy.max_response_bytes", "must be >= 64KiB");
    if (i.max_response_bytes > 4 * gib - 1) add("iggy.max_response_bytes", "must be < 4GiB (a frame length is 32 bits)");
}

void check_sources(collector& add, const sink_config& c) {
    if (c.sources.empty()) {
        add("sources", "at least one source is required (- stream: NAME, topics: [NAME])");
        return;
    }
    std::set<std::pair<std::string, std::string>> seen;
    for (std::size_t n = 0; n < c.sources.size(); ++n) {
        const auto& s = c.sources[n];
        const std::string base = fmt::format("sources[{}]", n);
        check_name(add, base + ".stream", s.stream, "stream");
        if (s.topics.empty()) add(base + ".topics", "at least one topic is required");
        for (std::size_t t = 0; t < s.topics.size(); ++t) {
            const std::string tpath = fmt::format("{}.topics[{}]", base, t);
            check_name(add, tpath, s.topics[t], "topic");
            if (!seen.emplace(s.stream, s.topics[t]).second)
                add(tpath, "{}/{} is listed twice: it would be consumed twice", s.stream, s.topics[t]);
        }
        if (!s.all_partitions) {
            if (c.iggy.group_mode()) {
                add(base + ".partitions",
                    "a partition list needs single-consumer mode (iggy.consumer: NAME); in a consumer group the server "
                    "assigns partitions (use partitions: all)");
            }
            if (s.partitions.empty()) add(base + ".partitions", "an empty list reads nothing (use all, or list ids)");
            std::set<std::uint32_t> ids;
            for (auto id : s.partitions)
                if (!ids.insert(id).second) add(base + ".partitions", "partition {} is listed twice", id);
        }
    }
}

bool is_base64_key256(std::string_view k) {
    if (k.size() != 44 || k[43] != '=' || k[42] == '=') return false;
    for (std::size_t i = 0; i < 43; ++i) {
        const char c = k[i];
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/')) return false;
    }
    return true;
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
            if (!(std::isalnum(static_cast<unsigned char>(c)) || std::string_view{"_+=,.@-"}.find(c) != std::string_view::npos)) ok = false;
        if (!ok) add("s3.assume_role.session_name", "must be 2 to 64 of letters, digits and _+=,.@-");
    }
    if (!s.sts_endpoint.empty() && !s.sts_endpoint.starts_with("https://") && !s.sts_endpoint.starts_with("http://"))
        add("s3.sts_endpoint", "'{}' must start with http:// or https://", s.sts_endpoint);
    if (!s.proxy.empty() && !s.proxy.reveal().starts_with("http://"))
        add("s3.proxy", "must be http://[user:password@]host:port (an https:// proxy is not supported)");
    const auto& e = s.sse;
    const bool kms = e.type == sse_type::kms || e.type == sse_type::kms_dsse;
    if (!kms && !e.kms_key_id.empty()) add("s3.sse.kms_key_id", "applies only to type aws:kms or aws:kms:dsse");
    if (!kms && !e.kms_context.empty()) add("s3.sse.kms_context", "applies only to type aws:kms or aws:kms:dsse");
    if (!kms && e.bucket_key_enabled) add("s3.sse.bucket_key_enabled", "applies only to type aws:kms or aws:kms:dsse");
    if (!e.kms_context.empty() && (e.kms_context.front() != '{' || e.kms_context.back() != '}'))
        add("s3.sse.kms_context", "must be a JSON object ({{\"key\": \"value\"}})");
    if (e.type == sse_type::customer) {
        if (e.customer_key.empty()) add("s3.sse.customer_key", "is required with type customer (a 256-bit key, base64)");
        else if (!is_base64_key256(e.customer_key.reveal()))
            add("s3.sse.customer_key", "must be 32 bytes, base64-encoded (44 characters ending in '=')");
    } else if (!e.customer_key.empty()) {
        add("s3.sse.customer_key", "applies only to type customer");
    }
    static constexpr std::array<std::string_view, 8> acls{"private", "public-read", "public-read-write", "authenticated-read",
                                                          "aws-exec-read", "bucket-owner-read", "bucket-owner-full-control",
                                                          "log-delivery-write"};
    if (!s.acl.empty() && std::find(acls.begin(), acls.end(), s.acl) == acls.end())
        add("s3.acl", "'{}' is not a canned ACL (private, public-read, public-read-write, authenticated-read, aws-exec-read, "
                      "bucket-owner-read, bucket-owner-full-control, log-delivery-write)", s.acl);
    for (char c : s.storage_class) {
        if (!(std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_')) {
            add("s3.storage_class", "'{}' must be an S3 storage class in upper case (STANDARD, STANDARD_IA, GLACIER_IR, ...)",
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
        if (!printable_ascii(v)) add("s3.metadata." + k, "the value must be printable ASCII (no control or non-ASCII characters)");
    }
}

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
            add("s3.endpoint", "'{}' must start with http:// or https://", s.endpoint);
            e = {};
        }
        if (e.ends_with('/')) e.remove_suffix(1);
        if (const auto slash = e.find_first_of("/?#"); slash != std::string_view::npos) {
            add("s3.endpoint", "'{}' must have no path: the bucket goes in s3.bucket and key prefixes in s3.prefix",
                s.endpoint);
            e = e.substr(0, slash);
        }
        if (!e.empty()) endpoint_host = e.substr(0, e.front() == '[' ? e.find(']') + 1 : e.find(':'));
        if (!s.endpoint.empty() && e.empty() && s.endpoint.find("://") != std::string::npos)
            add("s3.endpoint", "'{}' has no host", s.endpoint);
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
        if (bucket.size() < 3 || bucket.size() > 63 || !chars_ok || !alnum(bucket.front()) || !alnum(bucket.back())
            || bucket.find("..") != std::string::npos)
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
    else if (s.region.get().find_first_of(" /\t") != std::string::npos) add("s3.region", "'{}' is not a region name", s.region.get());
    if (s.path_style == path_style::virtual_hosted && is_ip_literal(endpoint_host))
        add("s3.path_style", "false (virtual-hosted) cannot work with an IP-address endpoint; use true or auto");
    else if (s.path_style == path_style::virtual_hosted && endpoint_https && bucket.find('.') != std::string::npos)
        add("s3.path_style",
            "false (virtual-hosted) with the dotted bucket '{}' over https fails TLS: a wildcard certificate "
            "(*.host) does not match {}.host; use true or auto",
            bucket, bucket);
    if (has_control(s.prefix)) add("s3.prefix", "must not contain control characters");
    if (!valid_utf8(s.prefix)) add("s3.prefix", "must be valid UTF-8");
    // Credentials: with `auto` the chain finds them at start (and says what it tried);
    // static keys are checked here.
    const bool pinned_static = s.credentials.source == credentials_source::static_keys;
    if (s.access_key_id.get().empty()) {
        if (pinned_static) {
            add("s3.access_key_id", "is required with s3.credentials.source static (set it, or env AWS_ACCESS_KEY_ID)");
            if (s.secret_access_key.empty())
                add("s3.secret_access_key", "is required with s3.credentials.source static (set it, or env AWS_SECRET_ACCESS_KEY)");
        } else if (!s.secret_access_key.empty()) add("s3.access_key_id", "is required with s3.secret_access_key (set it, or env AWS_ACCESS_KEY_ID)");
    } else if (s.secret_access_key.empty()) {
        add("s3.secret_access_key", "is required with s3.access_key_id (set it, or env AWS_SECRET_ACCESS_KEY)");
    }
    if (!s.keys_from_env && !s.access_key_id.get().empty() && s.credentials.source != credentials_source::automatic &&
        !pinned_static)
        add("s3.access_key_id", "is set but s3.credentials.source is not static or auto: the keys would be ignored");
    check_aws_access(add, s);
    if (!s.endpoint.empty() && !endpoint_https) {
        if (!s.tls.ca_file.empty()) add("s3.tls.ca_file", "is set but s3.endpoint is http:// (no TLS)");
        if (s.tls.insecure) add("s3.tls.insecure", "is set but s3.endpoint is http:// (no TLS)");
        if (s.payload_signing == payload_signing::unsigned_payload)
            add("s3.payload_signing", "unsigned needs https: over http:// the body must be signed");
    }
    if (s.part_size < 5 * mib) add("s3.part_size", "must be >= 5MiB (S3's smallest multipart part), not {}", format_size(s.part_size));
    if (s.part_size > 5 * gib) add("s3.part_size", "must be <= 5GiB (S3's largest part), not {}", format_size(s.part_size));
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

void check_format(collector& add, const format_section& f) {
    if (f.type != format_type::raw && f.separator != "\n")
        add("format.separator", "applies only to format.type raw (JSON records are separated by the format itself)");
    if (f.compression == compression::none && f.compression_level != 0)
        add("format.compression_level", "is set but format.compression is none");
    if (f.compression == compression::gzip && f.compression_level > 9)
        add("format.compression_level", "must be 0 (default) or 1..9 for gzip, not {}", f.compression_level);
    if (f.compression == compression::zstd && f.compression_level > 19)
        add("format.compression_level", "must be 0 (default) or 1..19 for zstd, not {}", f.compression_level);
    if (f.type == format_type::raw && f.payload != payload_mode::automatic)
        add("format.payload", "applies only to the JSON types; raw writes payload bytes as they are");
    const bool typed = f.type == format_type::csv || f.type == format_type::parquet || f.type == format_type::avro;
    if (f.type == format_type::parquet && f.compression != compression::none)
        add("format.compression", "is refused for format.type parquet, which compresses inside the file: set "
                                  "format.parquet.compression (snappy, zstd, gzip, none) and leave format.compression none");
    if (f.type == format_type::avro && f.compression != compression::none)
        add("format.compression", "is refused for format.type avro, which compresses inside the file: set "
                                  "format.avro.codec (null, deflate, snappy) and leave format.compression none");
    if (!typed && !f.schema.empty())
        add("format.schema", "applies only to format.type csv, parquet and avro");
    std::vector<format::column> cols;
    for (std::size_t i = 0; i < f.schema.size(); ++i) {
        const auto& c = f.schema[i];
        format::column col;
        col.name = c.name;  // kept for the duplicate check when the column has other problems
        for (const std::string& p : format::make_column(c.name, c.type, c.from, c.nullable, col)) {
            // make_column's problems start with the key they are about ("type: ...").
            const auto colon = p.find(": ");
            add(fmt::format("format.schema[{}].{}", i, p.substr(0, colon)), "{}", p.substr(colon + 2));
        }
        cols.push_back(std::move(col));
    }
    for (const std::string& p : format::check_schema(cols)) add("format.schema", "{}", p);
    if (f.type == format_type::avro)
        for (std::size_t i = 0; i < f.schema.size(); ++i) {
            const std::string& n = f.schema[i].name;
            const bool ok = !n.empty() && (std::isalpha(static_cast<unsigned char>(n[0])) != 0 || n[0] == '_')
                         && std::all_of(n.begin(), n.end(), [](char ch) {
                                return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_';
                            });
            if (!ok)
                add(fmt::format("format.schema[{}].name", i),
                    "{:?} is not an Avro name (letters, digits and _, not starting with a digit)", n);
        }
    if (f.csv.delimiter.size() != 1 || f.csv.delimiter == "\"" || f.csv.delimiter == "\r" || f.csv.delimiter == "\n")
        add("format.csv.delimiter", "must be one character other than a quote, CR or LF, not {:?}", f.csv.delimiter);
    if (f.csv.null.find_first_of("\"\r\n") != std::string::npos || f.csv.null.find(f.csv.delimiter) != std::string::npos)
        add("format.csv.null", "must not contain a quote, CR, LF or the delimiter");
    if (f.parquet.row_group_size < 64 * kib || f.parquet.row_group_size > gib)
        add("format.parquet.row_group_size", "must be 64KiB to 1GiB, not {}", format_size(f.parquet.row_group_size));
}

void check_rotation(collector& add, const sink_config& c) {
    const auto& r = c.rotation;
    if (r.max_records == 0) add("rotation.max_records", "must be > 0");
    if (r.max_bytes == 0) add("rotation.max_bytes", "must be > 0");
    if (r.max_bytes > max_object) add("rotation.max_bytes", "must be <= 5TiB (S3's largest object)");
    else if (c.s3.part_size >= 5 * mib && r.max_bytes > c.s3.part_size * max_parts)
        add("rotation.max_bytes",
            "({}) is more than {} parts of s3.part_size ({}): S3 allows at most {} parts per object", format_size(r.max_bytes),
            max_parts, format_size(c.s3.part_size), max_parts);
    if (r.max_span < 0ms) add("rotation.max_span", "must be >= 0");
    if (r.idle < 0ms) add("rotation.idle", "must be >= 0");
    if (r.schedule < 0ms) add("rotation.schedule", "must be >= 0");
    if (r.schedule > 0ms) {
        constexpr milliseconds day{86'400'000};
        if (r.schedule < 1s || r.schedule % 1000 != 0ms || (r.schedule < day && day % r.schedule != 0ms)
            || (r.schedule > day && r.schedule % day != 0ms))
            add("rotation.schedule",
                "({}) must divide a day evenly (1m, 5m, 15m, 1h, 6h, 1d) or be whole days, so boundaries align",
                format_duration(r.schedule));
    }
    if (r.idle == 0ms && r.schedule == 0ms)
        add("rotation.idle",
            "rotation.idle and rotation.schedule are both 0: a partition that goes quiet would never upload (or "
            "commit) what it holds; set idle (e.g. 1m)");
    if (r.timezone.empty()) {
        add("rotation.timezone", "is required (an IANA name such as UTC or Europe/Berlin)");
    } else {
        try {
            (void)date::locate_zone(r.timezone);
        } catch (const std::exception&) {
            add("rotation.timezone", "'{}' is not a known IANA time zone (e.g. UTC, Europe/Berlin)", r.timezone);
        }
    }
}

void check_memory(collector& add, const sink_config& c) {
    if (c.memory.max_buffered < mib)
        add("memory.max_buffered", "must be >= 1MiB (a poll batch and one object's buffer), not {}", format_size(c.memory.max_buffered));
}

void check_record_naming(collector& add, const sink_config& c) {
    if (c.rotation.max_open_objects == 0) add("rotation.max_open_objects", "must be >= 1");
    if (c.rotation.max_open_objects > 100'000)
        add("rotation.max_open_objects", "must be <= 100000 (each open object holds up to one part in memory)");
    if (auto ts = format::parse_time_source(c.naming.time_source); !ts) {
        add("naming.time_source", "{}", ts.error().detail());
    }
    if (c.naming.timezone.empty()) {
        add("naming.timezone", "is required (an IANA name such as UTC or Europe/Berlin)");
    } else {
        try {
            (void)date::locate_zone(c.naming.timezone);
        } catch (const std::exception&) {
            add("naming.timezone", "'{}' is not a known IANA time zone (e.g. UTC, Europe/Berlin)", c.naming.timezone);
        }
    }
    if (c.naming.missing_value.empty())
        add("naming.missing_value", "must not be empty (an empty path level is not a Hive partition value)");
}

void check_naming(collector& add, const sink_config& c) {
    check_record_naming(add, c);
    check_memory(add, c);
    const auto problems = format::key_template::check(c.naming.key);
    for (const auto& p : problems) add("naming.key", "{}", p);
    if (!problems.empty()) return;
    const auto t = format::key_template::parse(c.naming.key).value();
    if (!c.s3.prefix.empty() && !t.uses(format::placeholder::prefix))
        add("naming.key", "has no {{prefix}} but s3.prefix is '{}' (add {{prefix}} or set s3.prefix: \"\")", c.s3.prefix);
    // Two sources whose keys render alike would overwrite nothing (If-None-Match) but be taken
    // as already written: their messages would be skipped, i.e. lost.
    const bool by_stream = t.uses(format::placeholder::stream);
    const bool by_topic = t.uses(format::placeholder::topic);
    std::set<std::pair<std::string, std::string>> projected;
    std::set<std::pair<std::string, std::string>> pairs;
    for (const auto& s : c.sources)
        for (const auto& topic : s.topics) pairs.emplace(s.stream, topic);
    for (const auto& [stream, topic] : pairs) {
        auto key = std::make_pair(by_stream ? stream : std::string{}, by_topic ? topic : std::string{});
        if (!projected.insert(key).second) {
            add("naming.key",
                "lacks {} but sources include several {}: their objects would get the same keys, and the later ones "
                "would be taken as already written (lost)",
                by_stream ? "{topic}" : by_topic ? "{stream}" : "{stream} and {topic}",
                by_stream ? "topics of one stream" : "streams/topics");
            break;
        }
    }
    // The longest key this config can produce must fit S3's 1024-byte limit.
    std::size_t longest_stream = 0;
    std::size_t longest_topic = 0;
    for (const auto& [stream, topic] : pairs) {
        std::string e;
        format::append_name_encoded(e, stream);
        longest_stream = std::max(longest_stream, e.size());
        e.clear();
        format::append_name_encoded(e, topic);
        longest_topic = std::max(longest_topic, e.size());
    }
    const std::string s(longest_stream, 's');
    const std::string tp(longest_topic, 't');
    // Record placeholders: not bounded by the config; count the missing value (the README
    // says that long values make long keys, and S3 refuses keys over 1024 bytes).
    format::record_values rv;
    rv.time = format::local_time{9999, 12, 31, 23, 59};
    rv.missing = c.naming.missing_value;
    rv.args.assign(t.record_args().size(), std::nullopt);
    format::key_values kv{c.s3.prefix, s, tp, 4'294'967'295U, 18'446'744'073'709'551'615ULL, "jsonl.gz"};
    kv.record = &rv;
    const auto key = t.render(kv);
    if (key.size() > max_key_bytes)
        add("naming.key", "renders keys of up to {} bytes; S3 allows {} (shorten s3.prefix or the template)", key.size(),
            max_key_bytes);
}

/// admin.listen: empty (off) or IP:PORT with an IP literal ([v6]:port), port 0..65535 (0: the
/// OS picks one, which the daemon logs).
void check_admin(collector& add, const admin_section& a) {
    const std::string& v = a.listen;
    if (v.empty()) return;
    const std::string path = "admin.listen";
    const char* shape = "write IP:PORT such as 127.0.0.1:9464, 0.0.0.0:9464 or [::]:9464, or \"\" to turn the admin server off";
    std::string host;
    std::string_view port;
    int family = AF_INET;
    if (v.front() == '[') {
        const auto close = v.find(']');
        if (close == std::string::npos || close + 1 >= v.size() || v[close + 1] != ':') {
            add(path, "'{}': {}", v, shape);
            return;
        }
        host = v.substr(1, close - 1);
        port = std::string_view{v}.substr(close + 2);
        family = AF_INET6;
    } else {
        const auto colon = v.rfind(':');
        if (colon == std::string::npos || v.find(':') != colon) {
            add(path, "'{}': {}", v, shape);
            return;
        }
        host = v.substr(0, colon);
        port = std::string_view{v}.substr(colon + 1);
    }
    unsigned char buf[sizeof(in6_addr)];
    if (inet_pton(family, host.c_str(), buf) != 1)
        add(path, "'{}': '{}' is not an IP address (host names are not resolved); {}", v, host, shape);
    unsigned long p = 0;
    bool ok = !port.empty() && port.size() <= 5;
    for (char ch : port) {
        ok = ok && ch >= '0' && ch <= '9';
        p = p * 10 + static_cast<unsigned long>(ch - '0');
    }
    if (!ok || p > 65535) add(path, "'{}': the port must be 0..65535", v);
}

void check_delivery(collector& add, const sink_config& c) {
    const auto& d = c.delivery;
    if (d.on_bad_message == bad_message_policy::dead_letter) {
        check_name(add, "delivery.dead_letter.stream", d.dead_letter.stream, "stream");
        check_name(add, "delivery.dead_letter.topic", d.dead_letter.topic, "topic");
    } else if (!d.dead_letter.empty() && (d.dead_letter.stream.empty() || d.dead_letter.topic.empty())) {
        add("delivery.dead_letter", "needs both stream and topic");
    }
    for (const auto& s : c.sources) {
        if (s.stream != d.dead_letter.stream) continue;
        if (std::find(s.topics.begin(), s.topics.end(), d.dead_letter.topic) != s.topics.end()) {
            add("delivery.dead_letter.topic",
                "{}/{} is one of the sources: a bad message would be read back and fail again, forever",
                d.dead_letter.stream, d.dead_letter.topic);
        }
    }
}

std::string_view unit_name(format::time_unit u) {
    switch (u) {
        case format::time_unit::minute: return "minute";
        case format::time_unit::hour: return "hour";
        case format::time_unit::day: return "day";
        case format::time_unit::month: return "month";
        case format::time_unit::year: return "year";
        case format::time_unit::none: break;
    }
    return "?";
}

std::vector<problem> naming_warnings(const sink_config& c) {
    std::vector<problem> out;
    auto t = format::key_template::parse(c.naming.key);
    if (!t) return out;
    const auto unit = t->finest_time();
    milliseconds bucket{0};
    switch (unit) {
        case format::time_unit::minute: bucket = 60s; break;
        case format::time_unit::hour: bucket = 3600s; break;
        default: return out;  // days and coarser: never finer than a sensible rotation
    }
    // Every object holds one time bucket at most. When the time triggers would let an object
    // run longer than a bucket, the bucket is what closes objects: one (small) object per
    // bucket and encoded partition, which is how other sinks ended with a file per second.
    milliseconds fill{0};
    for (const milliseconds d : {c.rotation.max_span, c.rotation.schedule})
        if (d > 0ms && (fill == 0ms || d < fill)) fill = d;
    if ((fill == 0ms && unit == format::time_unit::minute) || (fill > 0ms && bucket < fill)) {
        out.push_back(problem{
          "naming.key",
          fmt::format("its finest time field is the {} (one object per {} of record time and encoded partition at "
                      "least), finer than the rotation would fill ({}max_records {}): expect many small objects; "
                      "use a coarser field ({{HH}} or {{date}}) or rotate sooner",
                      unit_name(unit), unit_name(unit),
                      fill == 0ms ? std::string{} : fmt::format("max_span/schedule {} s, ", fill.count() / 1000),
                      c.rotation.max_records),
          0});
    }
    if (c.memory.max_buffered < c.s3.part_size)
        out.push_back(problem{"memory.max_buffered",
                              fmt::format("is less than s3.part_size ({} < {}): objects are closed before they fill one part, "
                                          "so none is uploaded in parts; raise it or lower s3.part_size",
                                          format_size(c.memory.max_buffered), format_size(c.s3.part_size)),
                              0});
    return out;
}

void memory_warnings(std::vector<problem>& out, const sink_config& c) {
    if (c.memory.max_buffered >= mib && c.memory.max_buffered < c.s3.part_size)
        out.push_back(problem{"memory.max_buffered",
                              fmt::format("is less than s3.part_size ({} < {}): objects are closed before they fill one "
                                          "part, so none is uploaded in parts; raise it or lower s3.part_size",
                                          format_size(c.memory.max_buffered), format_size(c.s3.part_size)),
                              0});
}

}  // namespace

std::vector<problem> warnings(const sink_config& c) {
    auto out = naming_warnings(c);
    memory_warnings(out, c);
    return out;
}

std::vector<problem> validate(const sink_config& c) {
    collector add;
    check_iggy(add, c.iggy);
    check_sources(add, c);
    check_s3(add, c);
    check_format(add, c.format);
    check_rotation(add, c);
    check_naming(add, c);
    check_delivery(add, c);
    if (c.shutdown.grace <= 0ms) add("shutdown.grace", "must be > 0");
    check_admin(add, c.admin);
    return std::move(add.out);
}

}  // namespace iss::config

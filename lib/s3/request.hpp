// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Pure S3 request building (docs/architecture.md §8.4.2: no I/O, `result<T>`, never throws on bad input):
/// client options, endpoint and addressing rules, user-metadata encoding, one builder per
/// operation (`request_spec`), and `prepare()`, which resolves the endpoint, encodes the wire
/// target with sigv4's encoder (so canonical and wire agree) and signs.
///
/// Addressing rules (`resolve_target`):
/// - No endpoint (AWS): `https://s3.<region>.amazonaws.com`, virtual-hosted
///   (`BUCKET.s3.<region>.amazonaws.com`) unless `addressing::path`, or the bucket name is not
///   a valid DNS label sequence without dots (dotted names break the `*.s3...` wildcard
///   certificate; upper case and `_` are not DNS names): those go path-style.
/// - A custom endpoint (RGW, MinIO, R2...): path-style (`ENDPOINT/BUCKET/KEY`) unless
///   `addressing::virtual_hosted` (then `BUCKET.<endpoint host>`; dotted names over TLS still
///   go path-style).
/// - `connect_address` sends TCP there while Host (and the certificate check) keep the name.
/// - Region `auto` (Cloudflare R2) is signed as given and needs an endpoint.

#include "common/error.hpp"
#include "common/types.hpp"
#include "http/types.hpp"
#include "s3/checksum.hpp"
#include "s3/xml.hpp"
#include "sigv4/signer.hpp"

namespace iss::aws {
class credentials_source;
}
namespace iss {
class sleeper;  // common/net/sleeper.hpp (Asio): the request builders stay free of it
}

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iss::s3 {

enum class addressing : std::uint8_t { automatic, path, virtual_hosted };
enum class payload_signing : std::uint8_t { signed_payload, unsigned_payload };

/// Retry policy of every operation (docs/architecture.md §8.4.7).
struct retry_options {
    unsigned attempts = 10;                      ///< attempts per operation, >= 1
    std::chrono::milliseconds base{200};         ///< first backoff ceiling
    std::chrono::milliseconds cap{5'000};        ///< largest backoff ceiling
    std::chrono::milliseconds deadline{15'000};  ///< bound on one operation with its retries; 0: none
};

/// Server-side encryption of new objects.
/// https://docs.aws.amazon.com/AmazonS3/latest/userguide/specifying-kms-encryption.html,
/// https://docs.aws.amazon.com/AmazonS3/latest/userguide/ServerSideEncryptionCustomerKeys.html
enum class sse_type : std::uint8_t { none, aes256, kms, kms_dsse, customer };
/// The customer key of SSE-C (secret: prints as `****`).
using iss::sse_customer_key;

struct sse_options {
    sse_type type = sse_type::none;
    std::string kms_key_id;           ///< aws:kms / aws:kms:dsse: key id or ARN; empty: the account's default key
    std::string kms_context;          ///< aws:kms / aws:kms:dsse: encryption context, a JSON object (sent base64)
    bool bucket_key_enabled = false;  ///< aws:kms: S3 Bucket Keys
    sse_customer_key customer_key;    ///< customer: the 256-bit key, base64 (44 characters)
};

/// Settings applied to every object written (PutObject and CreateMultipartUpload; SSE-C
/// also on UploadPart, HeadObject and GetObject, which need the key to read the object).
/// Validated with the configuration (lib/config: s3.sse, s3.acl, s3.tags, s3.metadata).
struct object_options {
    sse_options sse;
    std::string storage_class;                                 ///< x-amz-storage-class ("" = the bucket's default)
    std::string acl;                                           ///< canned ACL, x-amz-acl ("" = not sent)
    std::map<std::string, std::string, std::less<>> tags;      ///< x-amz-tagging
    std::map<std::string, std::string, std::less<>> metadata;  ///< extra x-amz-meta-* (names lower-case)
};

/// Everything the S3 client needs, resolved once by the daemon (docs/architecture.md §8.6.4).
struct client_options {
    std::string endpoint;  ///< "" = AWS; else http(s)://host[:port]
    std::string region = "us-east-1";
    addressing style = addressing::automatic;
    std::string connect_address;     ///< connect here instead of the endpoint host (tests, proxies)
    sigv4::credentials credentials;  ///< used when `credentials_source` is null
    /// Where credentials come from (lib/aws: the chain, renewed before expiry); null: `credentials`.
    std::shared_ptr<aws::credentials_source> credentials_source;
    object_options objects;
    checksum_kind checksum = checksum_kind::md5;
    payload_signing payload = payload_signing::signed_payload;
    std::uint64_t part_size = 8ULL << 20;  ///< multipart part size, 5 MiB .. 5 GiB
    retry_options retry;
    http::client_options http;
    /// The waits between retries; null = the client's own `iss::asio_sleeper`. Outlives the
    /// client. Tests pass one that advances the manual clock the client measures its deadline on.
    iss::sleeper* sleeper = nullptr;
};

/// `s3.payload_signing: auto`: UNSIGNED-PAYLOAD where the body travels inside TLS (an https
/// endpoint, or no endpoint: AWS over https), as the AWS SDKs do, since TLS and the body
/// checksum protect it; a signed payload over plain http, where nothing else does.
[[nodiscard]] payload_signing automatic_payload_signing(std::string_view endpoint) noexcept;

/// Checks the options (part size, region/endpoint, retry attempts). Every problem is named.
[[nodiscard]] result<void> validate(const client_options& o);

/// Reads AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN (the standard
/// variables) into credentials; empty fields when unset.
[[nodiscard]] sigv4::credentials credentials_from_environment();

/// User metadata: names lower-case without `x-amz-meta-`, values decoded.
using user_metadata = std::map<std::string, std::string, std::less<>>;

/// A metadata value as sent: printable ASCII unchanged; anything else (non-ASCII, control
/// characters, leading/trailing blanks, and text that is itself shaped `=?...?=`) as RFC 2047
/// `=?UTF-8?B?<base64>?=`, the form AWS SDKs use, so it is never rejected and
/// `decode_metadata_value` gives back exactly `v`.
[[nodiscard]] std::string encode_metadata_value(std::string_view v);
/// The inverse (values that are not RFC 2047 encoded words come back unchanged).
[[nodiscard]] std::string decode_metadata_value(std::string_view v);
/// The user metadata among response headers.
[[nodiscard]] user_metadata metadata_from_headers(const http::header_list& h);

/// Where a request for `bucket` goes: the endpoint and the path prefix ("/bucket" or "").
struct target {
    http::endpoint ep;
    std::string path_prefix;
    bool virtual_hosted = false;
};
[[nodiscard]] result<target> resolve_target(const client_options& o, std::string_view bucket);
/// True when `bucket` can be a DNS host label sequence for virtual-hosted style.
[[nodiscard]] bool dns_compatible(std::string_view bucket, bool allow_dots) noexcept;

/// One S3 request before signing. The body views point into the caller's memory or into
/// `owned_body`.
struct request_spec {
    std::string op;  ///< "PutObject", for logs
    std::string method;
    std::string bucket;   ///< "" for ListBuckets
    std::string key;      ///< raw key; empty for bucket operations
    bool object = false;  ///< the path names an object (key may still be "")
    std::vector<sigv4::owned_query_param> query;
    std::vector<std::pair<std::string, std::string>> headers;  ///< besides Host and signing headers
    std::vector<std::string_view> body;
    std::shared_ptr<const std::string> owned_body;    ///< when the builder made the body (XML)
    std::function<void(std::string_view)> body_sent;  ///< passed on as http::request::body_sent
    std::string payload_sha256;                       ///< filled by prepare() once (signed payload)
    bool bad_digest_expected = false;                 ///< put_options::bad_digest_expected: BadDigest logged at debug
};

/// Which request the object options go on.
enum class object_request : std::uint8_t { create, upload_part, read };
/// Adds the headers of `o` for `kind` to `spec` (create: all; upload_part and read: the three
/// SSE-C headers only). Pure.
void add_object_headers(request_spec& spec, const object_options& o, object_request kind);

/// Options of PutObject / CreateMultipartUpload.
/// Not an aggregate (coroutines take it by value; see lib/http/README.md on GCC 12).
struct put_options {
    put_options() = default;
    user_metadata metadata;      ///< names without `x-amz-meta-`
    std::string content_type;    ///< "" = not sent
    bool if_none_match = false;  ///< `If-None-Match: *`: fail with 412 when the key exists
    /// PutObject: an `x-amz-checksum-crc32c` value (base64 of the big-endian CRC-32C) sent
    /// INSTEAD of the checksum the client's `checksum` would compute, whatever that is: a
    /// CRC-32C the caller computed while it produced the body, or the capability probe's
    /// deliberately wrong one. Empty: the client's own checksum.
    std::string crc32c_value;
    /// The body's digests, computed by the caller while it produced the body, used instead of
    /// reading the body again: `crc32c` when the client's checksum is CRC-32C, `md5` when it
    /// is MD5 (`Content-MD5`), `sha256` as the signed payload's hash (`x-amz-content-sha256`;
    /// unused with UNSIGNED-PAYLOAD). The others are computed as usual.
    iss::body_digests known;
    /// A BadDigest answer is the outcome the caller expects (the probe's deliberately wrong
    /// checksum): the client logs it at debug instead of as an error. The result is the same.
    bool bad_digest_expected = false;
};

/// Options of ListObjectsV2.
/// Not an aggregate (coroutines take it by value; see lib/http/README.md on GCC 12).
struct list_options {
    list_options() = default;
    std::string prefix;
    std::string delimiter;
    std::string continuation_token;
    std::string start_after;
    unsigned max_keys = 0;  ///< 0 = server default (1000)
};

[[nodiscard]] result<request_spec> build_create_bucket(std::string_view bucket, std::string_view region);
[[nodiscard]] result<request_spec> build_head_bucket(std::string_view bucket);
[[nodiscard]] result<request_spec> build_list_buckets();
[[nodiscard]] result<request_spec> build_put_object(std::string_view bucket, std::string_view key,
                                                    std::vector<std::string_view> body, const put_options& o,
                                                    checksum_kind sum);
[[nodiscard]] result<request_spec> build_head_object(std::string_view bucket, std::string_view key);
[[nodiscard]] result<request_spec> build_get_object(std::string_view bucket, std::string_view key);
[[nodiscard]] result<request_spec> build_delete_object(std::string_view bucket, std::string_view key);
[[nodiscard]] result<request_spec> build_create_multipart(std::string_view bucket, std::string_view key,
                                                          const put_options& o, checksum_kind sum);
[[nodiscard]] result<request_spec> build_upload_part(std::string_view bucket, std::string_view key,
                                                     std::string_view upload_id, int part_number,
                                                     std::vector<std::string_view> body, checksum_kind sum,
                                                     const iss::body_digests& known = {});
[[nodiscard]] result<request_spec> build_complete_multipart(std::string_view bucket, std::string_view key,
                                                            std::string_view upload_id,
                                                            const std::vector<completed_part>& parts,
                                                            bool if_none_match);
[[nodiscard]] result<request_spec> build_abort_multipart(std::string_view bucket, std::string_view key,
                                                         std::string_view upload_id);
[[nodiscard]] result<request_spec> build_list_parts(std::string_view bucket, std::string_view key,
                                                    std::string_view upload_id, std::string_view marker);
[[nodiscard]] result<request_spec> build_list_uploads(std::string_view bucket, std::string_view prefix,
                                                      std::string_view key_marker, std::string_view upload_id_marker);
[[nodiscard]] result<request_spec> build_list_objects_v2(std::string_view bucket, const list_options& o);

/// A signed request, ready for http::client::send.
struct prepared {
    http::endpoint ep;
    http::request req;
};

/// Resolves, encodes and signs `spec` at `now` (the caller's clock plus any skew correction).
/// Fills `spec.payload_sha256` on first use so retries do not hash again.
[[nodiscard]] result<prepared> prepare(request_spec& spec, const client_options& o,
                                       std::chrono::system_clock::time_point now, sigv4::signing_key_cache& keys);
/// Same, signed with `creds` instead of `o.credentials`.
[[nodiscard]] result<prepared> prepare(request_spec& spec, const client_options& o,
                                       std::chrono::system_clock::time_point now, sigv4::signing_key_cache& keys,
                                       const sigv4::credentials& creds);

}  // namespace iss::s3

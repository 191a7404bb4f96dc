// SPDX-License-Identifier: Apache-2.0
#include "s3/probe.hpp"

#include "http/types.hpp"

#include <random>

namespace iss::s3 {

std::string_view to_string(capability c) noexcept {
    switch (c) {
        case capability::yes: return "yes";
        case capability::no: return "no";
        case capability::unknown: return "unknown";
    }
    return "?";
}

std::string probe_key(std::string_view prefix, std::uint64_t rng_seed) {
    std::mt19937_64 rng{rng_seed};
    std::string p{prefix};
    while (!p.empty() && p.back() == '/') p.pop_back();
    std::string key = p.empty() ? std::string{} : p + "/";
    return key + fmt::format(".iggy-s3-sink/probe-{:016x}", rng());
}

namespace {
bool is_transport(const error& e) { return e.code().category() == http::http_category(); }
bool is_auth(const error& e) {
    return e == errc::invalid_access_key || e == errc::signature_mismatch || e == errc::clock_skew;
}
/// Marks the report interrupted when a step got no answer at all (a reset, a refused or timed
/// out connection, the deadline): a later try may get one. An HTTP answer, even a 5xx after
/// every retry, is the store's: 501 NotImplemented is how some stores refuse If-None-Match.
void note(probe_report& rep, const error& e) {
    if (status_of(e) == status::retryable && (is_transport(e) || e == iss::errc::timeout)) rep.interrupted = true;
}
}  // namespace

checksum_kind automatic_checksum(capability crc32c_verified) noexcept {
    return crc32c_verified == capability::yes ? checksum_kind::crc32c : checksum_kind::md5;
}

task<crc32c_probe> probe_crc32c(client& c, std::string bucket, std::string key) {
    crc32c_probe out;
    const std::string body = "iggy-s3-sink checksum probe\n";
    const std::uint32_t right = crc32c(body);
    put_options o;
    o.content_type = "text/plain";
    o.metadata["iggy-s3-sink-probe"] = "1";
    o.crc32c_value = crc32c_header_value(~right);  // well-formed, and wrong in every bit
    o.bad_digest_expected = true;                  // a store that checks refuses it: no error line at every start
    std::vector<std::string_view> v1{body};
    auto wrong = co_await c.put_object(bucket, key, std::move(v1), o);
    if (wrong) {
        out.verified = capability::no;
        out.detail = "PutObject with a wrong x-amz-checksum-crc32c answered 200 (the store does not check it)";
        (void)co_await c.delete_object(bucket, key);
        co_return out;
    }
    if (wrong.error() != errc::bad_digest) {
        out.detail = "PutObject with a wrong x-amz-checksum-crc32c: " + wrong.error().message();
        co_return out;
    }
    o.crc32c_value = crc32c_header_value(right);
    o.bad_digest_expected = false;
    std::vector<std::string_view> v2{body};
    auto ok = co_await c.put_object(bucket, key, std::move(v2), o);
    if (!ok) {
        out.detail = "a wrong x-amz-checksum-crc32c was refused, but the right one too: " + ok.error().message();
        co_return out;
    }
    out.verified = capability::yes;
    (void)co_await c.delete_object(bucket, key);
    co_return out;
}

task<probe_report> probe_store(client& c, std::string bucket, std::string key) {
    probe_report rep;
    rep.probe_key = key;

    // 1. Reachability and authentication: ListObjectsV2 on the bucket (max-keys 1) answers
    //    with the most telling error codes (HEAD has no body to tell them apart).
    list_options lo;
    lo.max_keys = 1;
    lo.prefix = key;
    auto l = co_await c.list_objects_v2(bucket, lo);
    if (!l && l.error() == errc::invalid_argument) {  // refused before sending: nothing measured
        rep.not_sent_detail = l.error().message();
        co_return rep;
    }
    if (!l && is_transport(l.error())) {
        rep.reachability_detail = l.error().message();
        rep.certificate_rejected =
            l.error() == http::errc::certificate_rejected || l.error() == http::errc::tls_setup_failed;
        co_return rep;
    }
    rep.reachable = true;
    if (!l && is_auth(l.error())) {
        rep.auth_detail = l.error().message();
        rep.auth_code = l.error().code();
        co_return rep;
    }
    rep.authenticated = true;
    if (!l) {
        rep.bucket_detail = l.error().message();
        rep.bucket_code = l.error().code();
        co_return rep;
    }

    // 2. Bucket access: write (conditionally), read back.
    const std::string body = "iggy-s3-sink capability probe\n";
    put_options cond;
    cond.if_none_match = true;
    cond.content_type = "text/plain";
    cond.metadata["iggy-s3-sink-probe"] = "1";
    std::vector<std::string_view> v1{body};
    auto p = co_await c.put_object(bucket, key, std::move(v1), cond);
    // The key is fresh (64 random bits), so a 412 here means an earlier attempt of this same
    // write reached the store and its answer was lost (a reset, a timeout), and the client's
    // retry found the object: written. The HEAD below confirms it.
    if (!p && p.error() != errc::precondition_failed) {
        rep.bucket_detail = "PutObject: " + p.error().message();
        rep.bucket_code = p.error().code();
        note(rep, p.error());
        co_return rep;
    }
    auto h = co_await c.head_object(bucket, key);
    if (!h) {
        rep.bucket_detail = "HeadObject: " + h.error().message();
        rep.bucket_code = h.error().code();
        note(rep, h.error());
    } else {
        rep.bucket_access = true;
    }

    // 3. Conditional PutObject: a second conditional put of the same key must get 412.
    std::vector<std::string_view> v2{body};
    auto p2 = co_await c.put_object(bucket, key, std::move(v2), cond);
    if (!p2 && p2.error() == errc::precondition_failed) {
        rep.conditional_put = capability::yes;
    } else if (p2) {
        rep.conditional_put = capability::no;
        rep.put_detail = "PutObject with If-None-Match: * over an existing key answered 200 (overwrote it)";
    } else {
        rep.put_detail = p2.error().message();
        note(rep, p2.error());
    }

    // 4. Conditional CompleteMultipartUpload over the existing key (one small part: the last
    //    part may be under 5 MiB).
    put_options plain;
    plain.content_type = "text/plain";
    auto id = co_await c.create_multipart(bucket, key, plain);
    if (!id) {
        rep.complete_detail = "CreateMultipartUpload: " + id.error().message();
        note(rep, id.error());
    } else {
        std::vector<std::string_view> v3{body};
        auto part = co_await c.upload_part(bucket, key, *id, 1, std::move(v3));
        if (!part) {
            rep.complete_detail = "UploadPart: " + part.error().message();
            note(rep, part.error());
            (void)co_await c.abort_multipart(bucket, key, *id);
        } else {
            std::vector<completed_part> parts{*part};
            auto done = co_await c.complete_multipart(bucket, key, *id, std::move(parts), true);
            if (!done && done.error() == errc::precondition_failed) {
                rep.conditional_complete = capability::yes;
            } else if (done) {
                rep.conditional_complete = capability::no;
                rep.complete_detail =
                    "CompleteMultipartUpload with If-None-Match: * over an existing key answered 200 (overwrote it)";
            } else {
                rep.complete_detail = done.error().message();
                note(rep, done.error());
            }
            if (!done) (void)co_await c.abort_multipart(bucket, key, *id);
        }
    }

    // 5. CRC-32C verification, on a key of its own.
    auto crc = co_await probe_crc32c(c, bucket, key + "-crc32c");
    rep.crc32c_verified = crc.verified;
    rep.crc32c_detail = std::move(crc.detail);

    // 6. Clean up.
    auto d = co_await c.delete_object(bucket, key);
    if (d) rep.cleaned_up = true;
    else rep.cleanup_detail = d.error().message();
    co_return rep;
}

}  // namespace iss::s3

// SPDX-License-Identifier: Apache-2.0
#include "s3/client.hpp"

#include "aws/credentials.hpp"
#include "common/backoff.hpp"
#include "common/log.hpp"
#include "common/net/sleeper.hpp"
#include "http/client.hpp"

#include <charconv>
#include <ctime>

namespace iss::s3 {

namespace net = boost::asio;
using namespace std::chrono_literals;

namespace {

const log::logger& logger() {
    static const log::logger l{"s3"};
    return l;
}

/// Parses an RFC 7231 IMF-fixdate ("Mon, 30 Nov 2026 03:02:38 GMT").
std::optional<std::chrono::system_clock::time_point> parse_http_date(std::string_view d) {
    std::tm tm{};
    const std::string s{d};
    const char* end = strptime(s.c_str(), "%a, %d %b %Y %H:%M:%S", &tm);
    if (end == nullptr) return std::nullopt;
    return std::chrono::system_clock::from_time_t(timegm(&tm));
}

bool is_2xx(unsigned s) { return s >= 200 && s < 300; }

/// What `classify` reads from an answer that is not a success: the status and the `<Code>` of
/// its error document. A HEAD answer has no body; AWS names the bucket's region in a header
/// instead, read as a redirect when it is not the configured one.
failure failure_of(const http::response& r, const std::optional<error_document>& doc, std::string_view region) {
    failure f;
    f.status = r.status;
    if (doc) f.code = doc->code;
    const auto bucket_region = r.headers.get("x-amz-bucket-region");
    if (!doc && !bucket_region.empty() && bucket_region != region &&
        (r.status == 301 || r.status == 400 || r.status == 403))
        f.code = "PermanentRedirect";
    return f;
}

/// ", attempt N/M" for an answer the client retries or one that came after retries; "" for a
/// final answer to the first attempt (no count that suggests retries that never came).
std::string attempt_count(const verdict& v, unsigned attempt, unsigned max_attempts) {
    if (v.what == outcome::fail && attempt == 1) return {};
    return fmt::format(", attempt {}/{}", attempt, max_attempts);
}

/// The error text of an attempt without an answer: the transport error's own detail (its
/// code's message, the advice, is appended once by error::message wherever it is shown).
std::string transport_detail(const request_spec& spec, const error& e, const std::string& count) {
    std::string d = fmt::format("{} {}/{}", spec.op, spec.bucket, spec.key);
    if (!e.detail().empty()) d += ": " + e.detail();
    if (!count.empty()) d += " (" + count.substr(2) + ")";
    return d;
}

/// The log line and error text of an attempt answered with a failure.
std::string attempt_detail(const request_spec& spec, const http::response& r, const std::optional<error_document>& doc,
                           const verdict& v, unsigned attempt, unsigned max_attempts) {
    const std::string request_id{r.headers.get("x-amz-request-id")};
    std::string detail =
        fmt::format("{} {}/{}: HTTP {}{}{}{} (request id {}{}){}{}", spec.op, spec.bucket, spec.key, r.status,
                    doc ? " " + doc->code : std::string{}, doc && !doc->message.empty() ? ": " : "",
                    doc ? doc->message : std::string{}, request_id.empty() ? "-" : request_id,
                    attempt_count(v, attempt, max_attempts), v.hint.empty() ? "" : "; ", v.hint);
    if (v.code == errc::wrong_region) {
        std::string region = doc ? doc->region : std::string{};
        if (region.empty()) region = std::string{r.headers.get("x-amz-bucket-region")};
        if (!region.empty()) detail += fmt::format("; the bucket is in region '{}'", region);
    }
    return detail;
}

}  // namespace

struct client::impl {
    net::any_io_executor ex;
    client_options opts;
    const iss::clock& clk;
    iss::asio_sleeper own_sleeper;
    iss::sleeper& sleep;  ///< the backoff waits: `opts.sleeper`, else `own_sleeper`
    http::client http;
    sigv4::signing_key_cache keys;
    std::mt19937_64 rng;
    client_stats stats;
    std::chrono::milliseconds skew{0};
    std::uint64_t cred_generation = 0;  ///< of the credentials the key cache was filled with

    impl(net::any_io_executor e, client_options o, const iss::clock& c, std::uint64_t seed)
        : ex{e},
          opts{std::move(o)},
          clk{c},
          own_sleeper{e},
          sleep{opts.sleeper ? *opts.sleeper : own_sleeper},
          http{e, opts.http},
          rng{seed} {}

    /// Sends `spec` with the retry policy. Returns the 2xx response, or the final error.
    /// `attempts` receives the number of attempts made.
    /// A paged listing: `request()` builds the next page's request; `take(body)` keeps a page's
    /// entries and says whether another page follows. The first error ends it.
    template <class Build, class Take>
    task<result<void>> pages(Build request, Take take) {
        for (;;) {
            auto spec = request();
            if (!spec) co_return spec.error();
            unsigned n = 0;
            auto r = co_await execute(*spec, n);
            if (!r) co_return r.error();
            auto more = take(r->body);
            if (!more) co_return more.error();
            if (!*more) co_return result<void>{};
        }
    }

    task<result<http::response>> execute(request_spec& spec, unsigned& attempts) {
        ++stats.operations;
        const unsigned max_attempts = std::max(1U, opts.retry.attempts);
        // The attempts and the time of this operation, on the injected clock (common/backoff.hpp).
        retry_budget budget{
            {{opts.retry.base, opts.retry.cap}, max_attempts, std::max(opts.retry.deadline, 0ms)}, clk, rng};
        bool resigned = false;
        bool renewed = false;  // one credentials renewal per operation after ExpiredToken
        sigv4::credentials creds = opts.credentials;
        std::uint64_t generation = 0;
        const log::fields ctx{log::kv("op", spec.op), log::kv("bucket", spec.bucket), log::kv("key", spec.key)};
        error last{errc::unavailable, "no attempt made"};
        attempts = 0;
        while (budget.try_attempt()) {
            ++attempts;
            ++stats.attempts;
            if (opts.credentials_source) {
                auto c = co_await opts.credentials_source->current();  // a cancellation throws
                if (!c) {
                    const auto d = fmt::format("{} {}/{}: no valid credentials: {}", spec.op, spec.bucket, spec.key,
                                               c.error().message());
                    logger().error(ctx, "{}", d);
                    co_return error{errc::unavailable, d};
                }
                creds = std::move(c->keys);
                generation = c->generation;
                // New credentials: the derived signing keys of the old secret are of no use.
                if (generation != cred_generation) {
                    keys.clear();
                    cred_generation = generation;
                }
            }
            auto p = prepare(spec, opts, clk.system_now() + skew, keys, creds);
            if (!p) co_return p.error();  // a request that cannot be built never improves
            stats.bytes_sent += p->req.body_size();
            auto& op_stats = stats.by_operation[std::string{spec.op}];
            const auto sent_at = clk.steady_now();
            // Every network step ends by the operation's deadline: the time left on the injected
            // clock (the HTTP client's steps run on the event loop's). A cancellation throws.
            auto r = co_await http.send(p->ep, std::move(p->req), budget.left());
            op_stats.duration.observe(std::chrono::duration<double>(clk.steady_now() - sent_at).count());
            note_answer(op_stats, spec, r);

            failure f;
            std::optional<error_document> doc;
            if (!r) {
                f.transport = r.error().code();
            } else {
                doc = parse_error(r->body);
                // A 2xx whose body is an <Error> (CompleteMultipartUpload can do this) failed.
                if (is_2xx(r->status) && !doc) co_return std::move(*r);
                f = failure_of(*r, doc, opts.region);
            }
            const verdict v = classify(f);
            // A transport error's own detail only: its code's message (the advice) is appended
            // once, by error::message(), wherever the error is shown.
            const std::string detail = r ? attempt_detail(spec, *r, doc, v, attempts, max_attempts)
                                         : transport_detail(spec, r.error(), attempt_count(v, attempts, max_attempts));
            if (r) last = error{v.code, detail};
            else last = error{r.error().code(), detail};
            // What the log lines say: an answer's text (its hint gives the advice), or a transport
            // error's with its code's message.
            const std::string shown = r ? detail : last.message();

            if (v.what == outcome::resign) {
                if (resigned) co_return error{errc::clock_skew, detail};
                resigned = true;
                ++stats.resigns;
                if (auto d = parse_http_date(r->headers.get("date"))) {
                    skew = std::chrono::duration_cast<std::chrono::milliseconds>(*d - clk.system_now());
                    stats.clock_offset = skew;
                    logger().warn(ctx, "clock skew: server time differs by {} ms; re-signing (check NTP)",
                                  skew.count());
                }
                budget.refund();  // the re-sign does not consume the attempt budget
                continue;
            }
            if (v.what == outcome::refresh) {
                if (!renewed && opts.credentials_source && opts.credentials_source->refreshable()) {
                    renewed = true;
                    logger().warn(ctx, "{}; renewing the credentials and sending again", detail);
                    auto c = co_await opts.credentials_source->refresh_rejected(generation);
                    if (!c) {
                        logger().error(ctx, "{}; renewal failed: {}", detail, c.error().message());
                        co_return error{errc::expired_token,
                                        fmt::format("{}; renewal failed: {}", detail, c.error().message())};
                    }
                    budget.refund();  // the renewal does not consume the attempt budget
                    continue;
                }
                logger().error(ctx, "{}", shown);
                co_return last;
            }
            if (v.what == outcome::fail || v.what == outcome::not_found) {
                const bool expected =
                    v.code == errc::precondition_failed || (v.code == errc::bad_digest && spec.bad_digest_expected);
                if (v.what == outcome::fail && !expected) logger().error(ctx, "{}", shown);
                else logger().debug(ctx, "{}", shown);
                co_return last;
            }
            // retry
            const auto next = budget.next_wait();
            if (!next) break;
            const auto wait = *next;
            note_retry(op_stats, wait);
            logger().warn(ctx, "retrying in {} ms: {}", wait.count(), shown);
            co_await sleep.sleep_for(wait);  // a cancellation throws (docs/architecture.md §8.4.5)
        }
        co_return gave_up(last, attempts, budget.expired(), ctx);
    }

    /// Counts one request by its answer (HTTP status, or `error` when none came); no answer also
    /// counts its reason and marks the store unreachable until the next answer.
    void note_answer(operation_stats& op_stats, const request_spec& spec, const result<http::response>& r) {
        if (r) {
            op_stats.requests[std::to_string(r->status)] += 1;
            stats.unreachable.reset();
            return;
        }
        if (r.error() == net::error::operation_aborted) return;
        op_stats.requests["error"] += 1;
        const std::string_view why = connection_error_reason(r.error());
        stats.connection_errors[std::string{why}] += 1;
        stats.unreachable = client_stats::unreachable_state{
            std::string{why}, fmt::format("{} {}/{}: {}", spec.op, spec.bucket, spec.key, r.error().message())};
    }

    /// Counts a retry of an operation and its backoff wait.
    void note_retry(operation_stats& op_stats, std::chrono::milliseconds wait) {
        ++stats.retries;
        ++op_stats.retries;
        stats.waited += wait;
        if (stats.recent_waits.size() >= 64) stats.recent_waits.erase(stats.recent_waits.begin());
        stats.recent_waits.push_back(wait);
    }

    /// Out of attempts or time: the last error, marked as given up (status stays retryable).
    static error gave_up(const error& last, unsigned attempts, bool timed_out, const log::fields& ctx) {
        error final{last.code(), fmt::format("{}; gave up after {} attempts{}", last.detail(), attempts,
                                             timed_out ? " (s3.retry.deadline reached)" : "")};
        if (final.code().category() == s3_category() && status_of(final) == status::fatal) return final;
        if (final.code().category() == s3_category()) final = error{errc::unavailable, final.detail()};
        logger().error(ctx, "{}", final.code().category() == s3_category() ? final.detail() : final.message());
        return final;
    }
};

client::client(net::any_io_executor ex, client_options opts, const iss::clock& clk, std::uint64_t seed)
    : impl_{std::make_unique<impl>(std::move(ex), std::move(opts), clk, seed)} {}
client::~client() = default;

const client_stats& client::stats() const noexcept { return impl_->stats; }
const client_options& client::options() const noexcept { return impl_->opts; }
void client::use_checksum(checksum_kind k) noexcept { impl_->opts.checksum = k; }
checksum_kind client::checksum() const noexcept { return impl_->opts.checksum; }

digest_set client::digests_needed() const noexcept {
    return {.crc32c = impl_->opts.checksum == checksum_kind::crc32c,
            .md5 = impl_->opts.checksum == checksum_kind::md5,
            .sha256 = impl_->opts.payload == payload_signing::signed_payload};
}
std::chrono::milliseconds client::clock_offset() const noexcept { return impl_->skew; }
http::client_stats client::http_stats() const { return impl_->http.stats(); }

task<result<void>> client::create_bucket(std::string bucket) {
    auto spec = build_create_bucket(bucket, impl_->opts.region);
    if (!spec) co_return spec.error();
    unsigned n = 0;
    auto r = co_await impl_->execute(*spec, n);
    if (!r) co_return r.error();
    co_return result<void>{};
}

task<result<void>> client::head_bucket(std::string bucket) {
    auto spec = build_head_bucket(bucket);
    if (!spec) co_return spec.error();
    unsigned n = 0;
    auto r = co_await impl_->execute(*spec, n);
    if (!r) {
        // HEAD has no body: a 404 on a bucket is NoSuchBucket, not NoSuchKey.
        if (r.error() == errc::no_such_key)
            co_return error{errc::no_such_bucket, r.error().detail() + "; check s3.bucket"};
        co_return r.error();
    }
    co_return result<void>{};
}

task<result<std::vector<std::string>>> client::list_buckets() {
    auto spec = build_list_buckets();
    if (!spec) co_return spec.error();
    unsigned n = 0;
    auto r = co_await impl_->execute(*spec, n);
    if (!r) co_return r.error();
    co_return parse_list_buckets(r->body);
}

task<result<put_result>> client::put_object(std::string bucket, std::string key, std::vector<std::string_view> body,
                                            put_options o) {
    auto spec = build_put_object(bucket, key, std::move(body), o, impl_->opts.checksum);
    if (!spec) co_return spec.error();
    add_object_headers(*spec, impl_->opts.objects, object_request::create);
    unsigned n = 0;
    auto r = co_await impl_->execute(*spec, n);
    if (!r) co_return r.error();
    co_return put_result{std::string{r->headers.get("etag")}};
}

task<result<head_result>> client::head_object(std::string bucket, std::string key) {
    auto spec = build_head_object(bucket, key);
    if (!spec) co_return spec.error();
    add_object_headers(*spec, impl_->opts.objects, object_request::read);
    unsigned n = 0;
    auto r = co_await impl_->execute(*spec, n);
    if (!r) co_return r.error();
    head_result h;
    const auto len = r->headers.get("content-length");
    std::from_chars(len.data(), len.data() + len.size(), h.size);
    h.etag = std::string{r->headers.get("etag")};
    h.content_type = std::string{r->headers.get("content-type")};
    h.last_modified = std::string{r->headers.get("last-modified")};
    h.metadata = metadata_from_headers(r->headers);
    co_return h;
}

task<result<get_result>> client::get_object(std::string bucket, std::string key) {
    auto spec = build_get_object(bucket, key);
    if (!spec) co_return spec.error();
    add_object_headers(*spec, impl_->opts.objects, object_request::read);
    unsigned n = 0;
    auto r = co_await impl_->execute(*spec, n);
    if (!r) co_return r.error();
    get_result g;
    g.etag = std::string{r->headers.get("etag")};
    g.metadata = metadata_from_headers(r->headers);
    g.body = std::move(r->body);
    co_return g;
}

task<result<void>> client::delete_object(std::string bucket, std::string key) {
    auto spec = build_delete_object(bucket, key);
    if (!spec) co_return spec.error();
    unsigned n = 0;
    auto r = co_await impl_->execute(*spec, n);
    if (!r) co_return r.error();
    co_return result<void>{};
}

task<result<std::string>> client::create_multipart(std::string bucket, std::string key, put_options o) {
    auto spec = build_create_multipart(bucket, key, o, impl_->opts.checksum);
    if (!spec) co_return spec.error();
    add_object_headers(*spec, impl_->opts.objects, object_request::create);
    unsigned n = 0;
    auto r = co_await impl_->execute(*spec, n);
    if (!r) co_return r.error();
    co_return parse_upload_id(r->body);
}

task<result<completed_part>> client::upload_part(std::string bucket, std::string key, std::string upload_id,
                                                 int part_number, std::vector<std::string_view> body,
                                                 iss::body_digests known, std::function<void(std::string_view)> sent) {
    auto spec = build_upload_part(bucket, key, upload_id, part_number, std::move(body), impl_->opts.checksum, known);
    if (!spec) co_return spec.error();
    spec->body_sent = std::move(sent);
    add_object_headers(*spec, impl_->opts.objects, object_request::upload_part);
    std::string crc;
    for (const auto& [name, value] : spec->headers)
        if (name == "x-amz-checksum-crc32c") crc = value;
    unsigned n = 0;
    auto r = co_await impl_->execute(*spec, n);
    if (!r) co_return r.error();
    completed_part p;
    p.number = part_number;
    p.etag = std::string{r->headers.get("etag")};  // case-insensitive: `etag` or `ETag`
    p.crc32c = crc;
    if (p.etag.empty()) co_return error{errc::bad_response, "UploadPart answered without an ETag"};
    co_return p;
}

task<result<complete_result>> client::complete_multipart(std::string bucket, std::string key, std::string upload_id,
                                                         std::vector<completed_part> parts, bool if_none_match) {
    auto spec = build_complete_multipart(bucket, key, upload_id, parts, if_none_match);
    if (!spec) co_return spec.error();
    unsigned n = 0;
    auto r = co_await impl_->execute(*spec, n);
    if (!r) {
        if (r.error() == errc::no_such_upload && n > 1) {
            // An earlier attempt may have completed the upload and lost its response: the
            // upload is gone because it became the object. HEAD tells.
            auto h = co_await head_object(bucket, key);
            if (h) {
                logger().warn({log::kv("bucket", bucket), log::kv("key", key)},
                              "CompleteMultipartUpload answered NoSuchUpload on retry; the object exists: "
                              "the earlier attempt completed it");
                co_return complete_result{h->etag, true};
            }
        }
        co_return r.error();
    }
    auto etag = parse_complete_etag(r->body);
    if (!etag) co_return etag.error();
    co_return complete_result{*etag, false};
}

task<result<void>> client::abort_multipart(std::string bucket, std::string key, std::string upload_id) {
    auto spec = build_abort_multipart(bucket, key, upload_id);
    if (!spec) co_return spec.error();
    unsigned n = 0;
    auto r = co_await impl_->execute(*spec, n);
    if (!r) {
        if (r.error() == errc::no_such_upload && n > 1) co_return result<void>{};  // an earlier attempt aborted it
        co_return r.error();
    }
    co_return result<void>{};
}

task<result<std::vector<part_info>>> client::list_parts(std::string bucket, std::string key, std::string upload_id) {
    std::vector<part_info> all;
    std::string marker;
    auto request = [&] { return build_list_parts(bucket, key, upload_id, marker); };
    auto take = [&](const std::string& body) -> result<bool> {
        auto page = parse_list_parts(body);
        if (!page) return page.error();
        all.insert(all.end(), page->parts.begin(), page->parts.end());
        if (!page->truncated || page->next_marker.empty() || page->next_marker == marker) return false;
        marker = page->next_marker;
        return true;
    };
    if (auto r = co_await impl_->pages(std::move(request), std::move(take)); !r) co_return r.error();
    co_return all;
}

task<result<std::vector<upload_info>>> client::list_uploads(std::string bucket, std::string prefix) {
    std::vector<upload_info> all;
    std::string key_marker, id_marker;
    auto request = [&] { return build_list_uploads(bucket, prefix, key_marker, id_marker); };
    auto take = [&](const std::string& body) -> result<bool> {
        auto page = parse_list_uploads(body);
        if (!page) return page.error();
        all.insert(all.end(), page->uploads.begin(), page->uploads.end());
        if (!page->truncated || (page->next_key_marker == key_marker && page->next_upload_id_marker == id_marker))
            return false;
        key_marker = page->next_key_marker;
        id_marker = page->next_upload_id_marker;
        return true;
    };
    if (auto r = co_await impl_->pages(std::move(request), std::move(take)); !r) co_return r.error();
    co_return all;
}

task<result<list_objects_page>> client::list_objects_v2(std::string bucket, list_options o) {
    auto spec = build_list_objects_v2(bucket, o);
    if (!spec) co_return spec.error();
    unsigned n = 0;
    auto r = co_await impl_->execute(*spec, n);
    if (!r) co_return r.error();
    co_return parse_list_objects_v2(r->body);
}

task<result<complete_result>> client::upload(std::string bucket, std::string key, std::string_view body,
                                             put_options o) {
    const std::uint64_t part = impl_->opts.part_size;
    if (body.size() <= part) {
        std::vector<std::string_view> views{body};
        auto r = co_await put_object(bucket, key, std::move(views), o);
        if (!r) co_return r.error();
        co_return complete_result{r->etag, false};
    }
    part_reader read = [body](std::uint64_t off, std::size_t len) -> result<std::string_view> {
        return body.substr(static_cast<std::size_t>(off), len);
    };
    co_return co_await upload_multipart(std::move(bucket), std::move(key), body.size(), part, std::move(read),
                                        std::move(o));
}

task<result<complete_result>> client::upload_multipart(std::string bucket, std::string key, std::uint64_t size,
                                                       std::uint64_t part_size, part_reader read, put_options o) {
    auto id = co_await create_multipart(bucket, key, o);
    if (!id) co_return id.error();
    std::vector<completed_part> parts;
    std::optional<error> failed;
    for (std::uint64_t off = 0; off < size; off += part_size) {
        auto bytes = read(off, static_cast<std::size_t>(std::min(part_size, size - off)));
        if (!bytes) {
            failed = bytes.error();
            break;
        }
        std::vector<std::string_view> views{bytes->bytes};
        auto p = co_await upload_part(bucket, key, *id, static_cast<int>(parts.size() + 1), std::move(views),
                                      bytes->digests, std::move(bytes->sent));
        if (!p) {
            failed = p.error();
            break;
        }
        parts.push_back(std::move(*p));
    }
    if (!failed) {
        auto c = co_await complete_multipart(bucket, key, *id, std::move(parts), o.if_none_match);
        if (c) co_return std::move(*c);
        failed = c.error();
    }
    // Not completed (failed, or 412): abort, so no parts are left behind in the store (a failed
    // abort is logged, the first error returned).
    auto a = co_await abort_multipart(bucket, key, *id);
    if (!a && a.error() != errc::no_such_upload)
        logger().warn({log::kv("bucket", bucket), log::kv("key", key)}, "abort after failed upload failed: {}",
                      a.error().message());
    co_return *failed;
}

}  // namespace iss::s3

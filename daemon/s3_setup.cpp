// SPDX-License-Identifier: Apache-2.0
#include "daemon/s3_setup.hpp"

#include "common/log.hpp"
#include "daemon/s3_wiring.hpp"
#include "http/client.hpp"
#include "pipeline/adapters/s3_store.hpp"
#include "s3/probe.hpp"

#include <boost/asio/awaitable.hpp>

#include <random>

namespace iss::app {

namespace {

struct s3_owner {
    s3_owner(boost::asio::any_io_executor ex, s3::client_options o, std::string bucket)
        : client{ex, std::move(o)}, store{client, std::move(bucket)} {}
    ~s3_owner() {
        // Ends the background renewal, so no timer keeps the event loop running.
        if (auto* r = dynamic_cast<aws::refreshing_source*>(client.options().credentials_source.get())) r->stop();
    }
    s3_owner(const s3_owner&) = delete;
    s3_owner& operator=(const s3_owner&) = delete;
    s3::client client;
    pipeline::s3_store store;
};

}  // namespace

void log_proxy(const http::proxy_options& p) {
    const iss::log::logger log{"s3"};
    if (p.https_url.empty() && p.http_url.empty()) return;
    log.info("s3 proxy: https via {}, http via {}{}", p.https_url.empty() ? "direct" : http::redact_url(p.https_url),
             p.http_url.empty() ? "direct" : http::redact_url(p.http_url),
             p.no_proxy.empty() ? "" : fmt::format(", direct for {}", p.no_proxy));
}

boost::asio::awaitable<result<std::shared_ptr<aws::refreshing_source>>> start_credentials(
    boost::asio::any_io_executor ex, aws::chain_options o, http::client_options http) {
    const iss::log::logger log{"s3"};
    auto client = std::make_shared<http::client>(ex, std::move(http));
    auto provider = aws::make_provider(ex, client, std::move(o));
    auto source = std::make_shared<aws::refreshing_source>(ex, provider);
    auto id = co_await source->start();
    if (!id) {
        source->stop();
        co_return id.error();
    }
    log.info("s3 credentials: {}", id->describe());
    co_return source;
}

boost::asio::awaitable<result<s3::client_options>> s3_client_options(boost::asio::any_io_executor ex,
                                                                     const config::sink_config& c) {
    auto opts = s3_options(c);
    opts.http.proxy = proxy_options(c, config::process_environment());
    log_proxy(opts.http.proxy);
    if (auto v = s3::validate(opts); !v) co_return v.error();
    auto creds = co_await start_credentials(ex, credentials_options(c, config::process_environment()), opts.http);
    if (!creds) co_return error{creds.error().code(), fmt::format("s3 credentials: {}", creds.error().message())};
    opts.credentials_source = std::move(*creds);
    co_return opts;
}

boost::asio::awaitable<result<s3_setup>> make_s3(boost::asio::any_io_executor ex, const config::sink_config& c,
                                                 pipeline::consumer_mode) {
    const iss::log::logger log{"s3"};
    // s3.retry.deadline bounds every operation (docs/architecture.md §3.5: in group mode well under the
    // 30 s hand-over timeout); in single-consumer mode the pipeline retries on top of it.
    auto opts = co_await s3_client_options(ex, c);
    if (!opts) co_return opts.error();
    auto owner = std::make_shared<s3_owner>(ex, std::move(*opts), c.s3.bucket.get());
    s3_setup out;
    out.store = &owner->store;
    out.client = &owner->client;
    if (c.s3.conditional_writes == pipeline::conditional_writes::off) {
        log.warn("s3.conditional_writes: off: no capability probe, no If-None-Match");
    } else {
        const auto key = s3::probe_key(c.s3.prefix, std::random_device{}());
        const s3::probe_report r = co_await s3::probe_store(owner->client, c.s3.bucket.get(), key);
        if (!r.not_sent_detail.empty())  // a request that cannot be built: no use waiting
            co_return error{iss::errc::invalid_argument,
                            fmt::format("{} (check s3.bucket and s3.endpoint)", r.not_sent_detail)};
        if (!r.reachable)  // errc::timeout: the caller waits and probes again
            co_return error{iss::errc::timeout,
                            fmt::format("{}: {}", r.certificate_rejected ? "TLS certificate rejected" : "unreachable",
                                        r.reachability_detail)};
        // The store's own code (access_denied, signature_mismatch ...): its text ends the detail once.
        if (!r.authenticated)
            co_return error{r.auth_code ? r.auth_code : make_error_code(iss::errc::io_error),
                            fmt::format("authentication: {}", r.auth_detail)};
        // A step that got no answer (resets, timeouts, the deadline) says nothing about the
        // store: the caller waits and probes again (acting on it would exit, or run without
        // conditional writes for the whole process).
        if (r.interrupted) {
            const auto& why = !r.bucket_detail.empty() ? r.bucket_detail
                              : !r.put_detail.empty()  ? r.put_detail
                                                       : r.complete_detail;
            co_return error{iss::errc::timeout,
                            fmt::format("bucket {}: capability probe interrupted: {}", c.s3.bucket, why)};
        }
        if (!r.bucket_access)
            co_return error{r.bucket_code ? r.bucket_code : make_error_code(iss::errc::io_error),
                            fmt::format("bucket {}: {}", c.s3.bucket, r.bucket_detail)};
        out.caps.conditional_put = r.conditional_put == s3::capability::yes;
        out.caps.conditional_complete = r.conditional_complete == s3::capability::yes;
        log.info(
            {iss::log::kv("bucket", c.s3.bucket), iss::log::kv("conditional_put", s3::to_string(r.conditional_put)),
             iss::log::kv("conditional_complete", s3::to_string(r.conditional_complete))},
            "store capabilities probed");
        if (!r.cleaned_up)
            log.warn({iss::log::kv("key", r.probe_key)}, "probe object not deleted: {}", r.cleanup_detail);
        out.crc32c_verified = r.crc32c_verified;
        out.crc32c_detail = r.crc32c_detail;
    }
    if (!c.s3.checksum) {
        // conditional_writes: off means no probe at start (the store is not asked anything
        // before the first upload): MD5, which every store checks.
        if (c.s3.conditional_writes == pipeline::conditional_writes::off)
            out.crc32c_detail = "s3.conditional_writes: off: the store is not probed";
        owner->client.use_checksum(s3::automatic_checksum(out.crc32c_verified));
    }
    log.info({iss::log::kv("bucket", c.s3.bucket), iss::log::kv("crc32c_verified", s3::to_string(out.crc32c_verified))},
             "s3.checksum {}", describe_checksum(c, out.crc32c_verified, out.crc32c_detail));
    log.info("s3.payload_signing {}", describe_payload_signing(c));
    out.owner = std::move(owner);
    co_return out;
}

}  // namespace iss::app

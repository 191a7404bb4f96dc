#include "daemon/s3_setup.hpp"

#include "common/log.hpp"
#include "pipeline/adapters/s3_store.hpp"
#include "s3/probe.hpp"

#include <boost/asio/awaitable.hpp>

#include <random>

namespace iss::app {

namespace {

s3::client_options client_options(const config::sink_config& c) {
    s3::client_options o;
    o.endpoint = c.s3.endpoint;
    o.region = c.s3.region.get();
    switch (c.s3.path_style) {
        case config::path_style::automatic: o.style = s3::addressing::automatic; break;
        case config::path_style::path: o.style = s3::addressing::path; break;
        case config::path_style::virtual_hosted: o.style = s3::addressing::virtual_hosted; break;
    }
    o.credentials.access_key_id = c.s3.access_key_id;
    o.credentials.secret_access_key = c.s3.secret_access_key;
    o.credentials.session_token = c.s3.session_token;
    if (o.credentials.access_key_id.get().empty() && o.credentials.secret_access_key.empty())
        o.credentials = s3::credentials_from_environment();
    switch (c.s3.checksum) {
        case config::checksum_kind::md5: o.checksum = s3::checksum_kind::md5; break;
        case config::checksum_kind::crc32c: o.checksum = s3::checksum_kind::crc32c; break;
        case config::checksum_kind::none: o.checksum = s3::checksum_kind::none; break;
    }
    o.payload = c.s3.payload_signing == config::payload_signing::unsigned_payload ? s3::payload_signing::unsigned_payload
                                                                                  : s3::payload_signing::signed_payload;
    o.part_size = c.s3.part_size;
    // The per-operation deadline bounds every S3 operation (design.md §3.5: in group mode well
    // under the 30 s hand-over timeout). In single-consumer mode the pipeline retries a failed
    // operation without end on top of it.
    o.retry.attempts = c.s3.retry.attempts;
    o.retry.base = c.s3.retry.base;
    o.retry.cap = c.s3.retry.cap;
    o.retry.deadline = c.s3.retry.deadline;
    o.http.timeout.resolve = c.s3.timeouts.connect;
    o.http.timeout.connect = c.s3.timeouts.connect;
    o.http.timeout.handshake = c.s3.timeouts.connect;
    o.http.timeout.read = c.s3.timeouts.request;
    o.http.timeout.write = c.s3.timeouts.request;
    o.http.tls.ca_file = c.s3.tls.ca_file;
    o.http.tls.insecure = c.s3.tls.insecure;
    return o;
}

struct s3_owner {
    s3_owner(boost::asio::any_io_executor ex, s3::client_options o, std::string bucket)
        : client{ex, std::move(o)}, store{client, std::move(bucket)} {}
    s3::client client;
    pipeline::s3_store store;
};

}  // namespace

boost::asio::awaitable<result<s3_setup>> make_s3(boost::asio::any_io_executor ex, const config::sink_config& c,
                                                 pipeline::consumer_mode) {
    const iss::log::logger log{"s3"};
    auto opts = client_options(c);
    if (auto v = s3::validate(opts); !v) co_return v.error();
    auto owner = std::make_shared<s3_owner>(ex, std::move(opts), c.s3.bucket.get());
    s3_setup out;
    out.store = &owner->store;
    if (c.s3.conditional_writes == config::conditional_writes::off) {
        log.warn("s3.conditional_writes: off: no capability probe, no If-None-Match");
    } else {
        const auto key = s3::probe_key(c.s3.prefix, std::random_device{}());
        const s3::probe_report r = co_await s3::probe_store(owner->client, c.s3.bucket.get(), key);
        if (!r.reachable) co_return error{iss::errc::io_error, fmt::format("unreachable: {} (check s3.endpoint)", r.reachability_detail)};
        if (!r.authenticated) co_return error{iss::errc::io_error, fmt::format("authentication: {}", r.auth_detail)};
        if (!r.bucket_access) co_return error{iss::errc::io_error, fmt::format("bucket {}: {}", c.s3.bucket, r.bucket_detail)};
        out.caps.conditional_put = r.conditional_put == s3::capability::yes;
        out.caps.conditional_complete = r.conditional_complete == s3::capability::yes;
        log.info({iss::log::kv("bucket", c.s3.bucket), iss::log::kv("conditional_put", s3::to_string(r.conditional_put)),
                  iss::log::kv("conditional_complete", s3::to_string(r.conditional_complete))},
                 "store capabilities probed");
        if (!r.cleaned_up) log.warn({iss::log::kv("key", r.probe_key)}, "probe object not deleted: {}", r.cleanup_detail);
    }
    out.owner = std::move(owner);
    co_return out;
}

}  // namespace iss::app

// SPDX-License-Identifier: Apache-2.0
// `iggy-s3-sink probe --config FILE` (or flags): checks the S3 side, one line per fact:
// reachability, authentication, bucket access, conditional PutObject, conditional
// CompleteMultipartUpload, cleanup. Exit 0 when the store is usable, 1 when not, 69 when it
// (or Iggy) cannot be reached, 64 usage, 78 invalid configuration. With --config it then
// checks the Iggy side (daemon/iggy_probe.cpp): reachability, login, streams/topics/partitions,
// the consumer group, the dead-letter topic.
#include "daemon/cli.hpp"
#include "daemon/commands.hpp"
#include "daemon/iggy_probe.hpp"
#include "daemon/s3_setup.hpp"
#include "daemon/s3_wiring.hpp"
#include "daemon/wiring.hpp"
#include "s3/probe.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <random>

namespace iss::app {

namespace {
namespace net = boost::asio;

struct probe_args {
    s3::client_options opts;
    std::string bucket;
    std::string prefix = "iggy";
    bool create_bucket = false;
};

/// The command line: `--config FILE`, or the store given by flags.
struct probe_command_line {
    probe_args a;
    std::string config_file;
};

std::string yes_no(bool b) { return b ? "yes" : "no"; }

net::awaitable<int> probe(s3::client& c, probe_args a) {
    if (a.create_bucket) {
        auto cb = co_await c.create_bucket(a.bucket);
        if (!cb && cb.error().detail().find("BucketAlreadyOwnedByYou") == std::string::npos &&
            cb.error().detail().find("BucketAlreadyExists") == std::string::npos)
            print_error("probe", "create bucket: {}", cb.error().message());
    }
    const auto key = s3::probe_key(a.prefix, std::random_device{}());
    auto rep = co_await s3::probe_store(c, a.bucket, key);
    const auto target = a.opts.endpoint.empty() ? fmt::format("AWS {}", a.opts.region) : a.opts.endpoint;
    if (!rep.not_sent_detail.empty()) {  // say only what was measured: nothing
        fmt::print("s3 request: NOT SENT ({}) - {}\n", target, rep.not_sent_detail);
        co_return exit_config;
    }
    if (rep.certificate_rejected) {  // the endpoint answered the TLS handshake: not an outage, exit 1
        fmt::print("s3 reachable: yes ({})\ns3 TLS certificate: REJECTED - {}\n", target, rep.reachability_detail);
        co_return exit_failure;
    }
    fmt::print("s3 reachable: {} ({}){}\n", yes_no(rep.reachable), target,
               rep.reachable ? "" : " - " + rep.reachability_detail);
    if (rep.reachable) fmt::print("s3 authentication: {}\n", rep.authenticated ? "ok" : "FAILED - " + rep.auth_detail);
    if (rep.authenticated)
        fmt::print("s3 bucket access: {}\n", rep.bucket_access
                                                 ? fmt::format("ok (bucket {}, write/read/delete)", a.bucket)
                                                 : "FAILED - " + rep.bucket_detail);
    if (rep.bucket_access) {
        auto cap = [](s3::capability v, const std::string& detail, std::string_view consequence) {
            switch (v) {
                case s3::capability::yes: return std::string{"honoured"};
                case s3::capability::no: return fmt::format("NOT honoured ({})", consequence);
                case s3::capability::unknown: break;
            }
            return "unknown - " + detail;
        };
        fmt::print("s3 conditional PutObject: {}\n",
                   cap(rep.conditional_put, rep.put_detail, "a forced rebalance may duplicate, never lose, data"));
        fmt::print("s3 conditional CompleteMultipartUpload: {}\n",
                   cap(rep.conditional_complete, rep.complete_detail,
                       "objects are written with PutObject only, rotating at s3.part_size"));
        fmt::print("s3 CRC-32C verified: {} (s3.checksum auto uses {})\n",
                   rep.crc32c_verified == s3::capability::yes
                       ? std::string{"yes"}
                       : fmt::format("{} - {}", s3::to_string(rep.crc32c_verified), rep.crc32c_detail),
                   s3::automatic_checksum(rep.crc32c_verified) == s3::checksum_kind::crc32c ? "x-amz-checksum-crc32c"
                                                                                            : "Content-MD5");
        fmt::print("s3 payload signing: {}\n",
                   a.opts.payload == s3::payload_signing::unsigned_payload ? "UNSIGNED-PAYLOAD" : "signed (SHA-256)");
        fmt::print("s3 probe object cleanup: {}\n",
                   rep.cleaned_up ? fmt::format("deleted {}", rep.probe_key)
                                  : fmt::format("NOT deleted {} - {} (not fatal)", rep.probe_key, rep.cleanup_detail));
    }
    if (rep.usable()) co_return exit_ok;
    co_return rep.reachable ? exit_failure : exit_unavailable;
}

int run_probe(probe_command_line line) {
    probe_args& a = line.a;
    const std::string& config_file = line.config_file;
    std::optional<config::sink_config> cfg_kept;  // --config: the Iggy half runs too
    aws::chain_options chain;                     // without --config: the chain over the environment
    if (!config_file.empty()) {
        auto cfg = load_config_or_report("probe", config_file);
        if (!cfg) return exit_config;
        cfg_kept = *cfg;
        const bool create = a.create_bucket;
        a = probe_args{s3_options(*cfg), cfg->s3.bucket.get(), cfg->s3.prefix, create};
        chain = credentials_options(*cfg, config::process_environment());
        a.opts.http.proxy = proxy_options(*cfg, config::process_environment());
    } else {
        a.opts.http.proxy = proxy_options(config::sink_config{}, config::process_environment());
        chain.region = a.opts.region;
        chain.env = config::process_environment();
    }
    if (a.bucket.empty()) return usage_error("probe", "--bucket (or --config) is required");
    // A probe answers quickly: a few attempts within 20 s.
    a.opts.retry.attempts = std::min(a.opts.retry.attempts, 3U);
    if (a.opts.retry.deadline == std::chrono::milliseconds{0} || a.opts.retry.deadline > std::chrono::seconds{20})
        a.opts.retry.deadline = std::chrono::seconds{20};
    if (auto v = s3::validate(a.opts); !v) {
        print_error("probe", "{}", v.error().message());
        return exit_config;
    }
    log_proxy(a.opts.http.proxy);
    try {
        // Every object that holds an I/O object of `ioc` (the credential source, whose HTTP
        // client keeps the STS, container or IMDS connection open for the next renewal; the
        // S3 client and its connections) lives in the coroutine's frame, so it is gone when
        // `ioc.run()` returns and before `ioc` is destroyed. (Kept in `a`, which outlives
        // `ioc`, the pooled STS connection was closed through the freed reactor at exit:
        // heap corruption, then SIGSEGV in OpenSSL's exit handler; issue 41.)
        net::io_context ioc{1};
        int rc = exit_failure;
        auto both = [&]() -> net::awaitable<int> {
            auto creds = co_await start_credentials(ioc.get_executor(), chain, a.opts.http);
            if (!creds) {
                fmt::print("s3 credentials: FAILED - {}\n", creds.error().message());
                co_return exit_failure;
            }
            fmt::print("s3 credentials: {}\n", (*creds)->last().describe());
            s3::client_options opts = a.opts;
            opts.credentials_source = *creds;
            s3::client c{ioc.get_executor(), std::move(opts)};
            int r = co_await probe(c, a);
            (*creds)->stop();
            if (cfg_kept) {
                const int iggy_rc = co_await probe_iggy(*cfg_kept);
                if (r == exit_ok) r = iggy_rc;
            }
            co_return r;
        };
        net::co_spawn(ioc, both(), [&](std::exception_ptr e, int r) {
            if (e) {
                try {
                    std::rethrow_exception(e);
                } catch (const std::exception& ex) {
                    print_error("probe", "{}", ex.what());
                }
                rc = exit_failure;
            } else {
                rc = r;
            }
        });
        ioc.run();
        return rc;
    } catch (const std::exception& e) {
        print_error("probe", "{}", e.what());
        return exit_failure;
    }
}

}  // namespace

command_main define_probe(CLI::App& sub) {
    auto line = std::make_shared<probe_command_line>();
    auto& a = line->a;
    add_config_option(sub, line->config_file, false);
    sub.add_option("--endpoint", a.opts.endpoint, "http(s)://host[:port]; omitted: AWS for --region")->type_name("URL");
    sub.add_option("--region", a.opts.region, "default us-east-1")->type_name("NAME");
    sub.add_option("--bucket", a.bucket, "the bucket")->type_name("NAME");
    sub.add_option("--prefix", a.prefix, "key prefix of the probe object (default iggy)")->type_name("P");
    auto* path = sub.add_flag_callback(
        "--path-style", [&a] { a.opts.style = s3::addressing::path; }, "path-style addressing (default: auto)");
    sub.add_flag_callback(
           "--virtual-hosted", [&a] { a.opts.style = s3::addressing::virtual_hosted; },
           "virtual-hosted-style addressing (default: auto)")
        ->excludes(path);
    sub.add_option("--connect-address", a.opts.connect_address, "connect here instead of resolving the endpoint host")
        ->type_name("A");
    sub.add_option("--ca-file", a.opts.http.tls.ca_file, "PEM CA bundle for TLS")->type_name("FILE");
    sub.add_flag("--insecure", a.opts.http.tls.insecure, "skip TLS certificate verification (test stores only)");
    sub.add_flag("--create-bucket", a.create_bucket, "create the bucket first (test stores)");
    set_help_text(sub,
                  "Checks the S3 store: reachability, authentication, bucket access, and whether it honours\n"
                  "If-None-Match: * on PutObject and on CompleteMultipartUpload (needed for exactly-once\n"
                  "after a forced rebalance). Writes and deletes {prefix}/.iggy-s3-sink/probe-<random>.\n"
                  "With --config it then checks Iggy: reachability, login, streams, topics, partitions, the\n"
                  "consumer group. Without --config the credentials come from the AWS chain: AWS_* variables,\n"
                  "web identity, profile, container, IMDSv2.",
                  "  0   usable\n"
                  "  1   not usable (credentials refused, no bucket access, ...)\n"
                  "  64  usage error\n"
                  "  69  the store or Iggy cannot be reached\n"
                  "  78  invalid configuration");
    return [line] { return run_probe(*line); };
}

}  // namespace iss::app

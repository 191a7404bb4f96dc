// SPDX-License-Identifier: Apache-2.0
// Micro-benchmark of lib/sigv4 (issue 5). Wall-clock timing is fine here: this is a benchmark,
// not a test. Usage: bench_sigv4 [seconds per measurement, default 1].
#include "sigv4/chunked.hpp"
#include "sigv4/signer.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

namespace sv = iss::sigv4;
using bench_clock = std::chrono::steady_clock;

namespace {

double seconds_per_run = 1.0;

// Runs `f` in growing batches until `seconds_per_run` have passed; returns calls per second.
template <class F>
double rate(F&& f) {
    std::uint64_t calls = 0;
    std::uint64_t batch = 1;
    const auto start = bench_clock::now();
    double elapsed = 0;
    while (elapsed < seconds_per_run) {
        for (std::uint64_t i = 0; i < batch; ++i) f();
        calls += batch;
        batch *= 2;
        elapsed = std::chrono::duration<double>(bench_clock::now() - start).count();
    }
    return static_cast<double>(calls) / elapsed;
}

volatile std::size_t sink = 0;  // keeps results alive

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1) seconds_per_run = std::atof(argv[1]);
    if (seconds_per_run <= 0) seconds_per_run = 1.0;

    const sv::credentials creds{iss::access_key_id{"AKIAIOSFODNN7EXAMPLE"},
                                iss::secret_access_key{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
                                {}};
    const auto now = std::chrono::sys_days{std::chrono::year{2026} / 11 / 30} + std::chrono::hours{3};
    // A typical sink upload: conditional PUT of a part with the offset range in user metadata.
    const sv::header hs[] = {{"Host", "my-bucket.s3.eu-west-1.amazonaws.com"},
                             {"Content-Length", "8388608"},
                             {"Content-Type", "application/x-ndjson"},
                             {"If-None-Match", "*"},
                             {"x-amz-meta-iggy-first-offset", "00000000000000123456"},
                             {"x-amz-meta-iggy-last-offset", "00000000000000129999"},
                             {"x-amz-meta-iggy-count", "6544"}};
    const sv::query_param qs[] = {{"partNumber", "3"},
                                  {"uploadId", "VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA"}};
    sv::request_view req;
    req.method = "PUT";
    req.path = "/stream=orders/topic=events/partition=1/00000000000000123456.jsonl.zst";
    req.query = qs;
    req.headers = hs;
    req.payload_sha256 = sv::empty_payload_sha256;  // precomputed hash: measures signing only
    sv::signing_params params;
    params.region = "eu-west-1";
    sv::signing_key_cache cache;

    fmt::print("lib/sigv4 micro-benchmark ({} s per measurement)\n", seconds_per_run);
    const double s_cached = rate([&] { sink = sink + sv::sign(req, creds, params, now, cache)->signature.size(); });
    fmt::print("  sign (header form, key cache)          {:>12.0f} signatures/s\n", s_cached);
    const double s_uncached = rate([&] { sink = sink + sv::sign(req, creds, params, now)->signature.size(); });
    fmt::print("  sign (header form, key derived each)   {:>12.0f} signatures/s\n", s_uncached);
    params.payload = sv::payload_mode::unsigned_payload;
    const double p_cached = rate(
        [&] { sink = sink + sv::presign(req, creds, params, now, std::chrono::hours{1}, cache)->signature.size(); });
    fmt::print("  presign (query form, key cache)        {:>12.0f} signatures/s\n", p_cached);

    // Signed payload hashing: SHA-256 of an 8 MiB part, one shot and incremental in 64 KiB.
    const std::string part(8u << 20, 'x');
    const double one_shot = rate([&] { sink = sink + sv::sha256(part)[0]; });
    fmt::print("  sha256 one-shot (8 MiB parts)          {:>12.2f} GB/s\n",
               one_shot * static_cast<double>(part.size()) / 1e9);
    const double incremental = rate([&] {
        sv::sha256_hasher h;
        for (std::size_t off = 0; off < part.size(); off += 65536) h.update(std::string_view{part}.substr(off, 65536));
        sink = sink + h.finish()[0];
    });
    fmt::print("  sha256 incremental (64 KiB updates)    {:>12.2f} GB/s\n",
               incremental * static_cast<double>(part.size()) / 1e9);

    // aws-chunked: 8 MiB body in 64 KiB chunks (hash + HMAC per chunk).
    params.payload = sv::payload_mode::streaming;
    req.payload_sha256 = {};
    const auto seed = sv::sign(req, creds, params, now, cache);
    const double chunked = rate([&] {
        sv::chunk_signer cs{*seed};
        for (std::size_t off = 0; off < part.size(); off += 65536)
            sink = sink + cs.chunk_header(std::string_view{part}.substr(off, 65536))->size();
        sink = sink + cs.chunk_header({})->size();
    });
    fmt::print("  aws-chunked signing (64 KiB chunks)    {:>12.2f} GB/s\n",
               chunked * static_cast<double>(part.size()) / 1e9);

    // URI encoding of object keys (the wire path).
    const std::string key = "/stream=orders/topic=events/partition=1/00000000000000123456 +$&=.jsonl.zst";
    const double enc = rate([&] { sink = sink + sv::encode_path(key).size(); });
    fmt::print("  encode_path ({} B key)                 {:>12.0f} keys/s\n", key.size(), enc);
    return 0;
}

// SPDX-License-Identifier: Apache-2.0
// bench_s3: upload every regular file of --dir to s3://BUCKET/PREFIX/<name> with lib/s3.
//   bench_s3 --env RGW_ENV_FILE --dir DIR --bucket B [--prefix P] [--payload signed|unsigned]
//            [--checksum md5|crc32c|none] [--concurrency N]
// RGW_CA_FILE in the env file: the CA of an https endpoint (e.g. discard-s3 --tls-cert).
// Prints {"files":..,"bytes":..,"seconds":..,"cpu_user":..,"cpu_sys":..,"retries":..,"connections":..}.
#include "s3/client.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace iss;
namespace net = boost::asio;

namespace {

double cpu_seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; }

std::map<std::string, std::string> read_env(const std::string& path) {
    std::map<std::string, std::string> env;
    std::ifstream in{path};
    std::string line;
    while (std::getline(in, line)) {
        const auto eq = line.find('=');
        if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return env;
}

std::string read_file(const std::filesystem::path& p) {
    std::ifstream in{p, std::ios::binary};
    std::string s;
    in.seekg(0, std::ios::end);
    s.resize(static_cast<std::size_t>(in.tellg()));
    in.seekg(0);
    in.read(s.data(), static_cast<std::streamsize>(s.size()));
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    std::map<std::string, std::string> a{
        {"--payload", "signed"}, {"--checksum", "md5"}, {"--concurrency", "8"}, {"--prefix", "bench"}};
    for (int i = 1; i + 1 < argc; i += 2) a[argv[i]] = argv[i + 1];
    if (!a.contains("--env") || !a.contains("--dir") || !a.contains("--bucket")) {
        fmt::print(stderr,
                   "usage: bench_s3 --env FILE --dir DIR --bucket B [--prefix P] [--payload signed|unsigned] "
                   "[--checksum md5|crc32c|none] [--concurrency N]\n");
        return 2;
    }
    const auto env = read_env(a["--env"]);
    s3::client_options o;
    o.endpoint = env.at("RGW_ENDPOINT");
    o.region = env.at("RGW_REGION");
    o.credentials = {access_key_id{env.at("RGW_ACCESS_KEY")}, secret_access_key{env.at("RGW_SECRET_KEY")}, {}};
    o.payload =
        a["--payload"] == "unsigned" ? s3::payload_signing::unsigned_payload : s3::payload_signing::signed_payload;
    o.checksum = a["--checksum"] == "crc32c" ? s3::checksum_kind::crc32c
                 : a["--checksum"] == "none" ? s3::checksum_kind::none
                                             : s3::checksum_kind::md5;
    if (env.contains("RGW_CA_FILE")) o.http.tls.ca_file = env.at("RGW_CA_FILE");  // an https endpoint's CA
    o.retry.deadline = std::chrono::seconds{120};
    o.http.max_idle_per_endpoint = 64;
    const int concurrency = std::max(1, std::stoi(a["--concurrency"]));

    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator{a["--dir"]})
        if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());

    net::io_context ioc{1};
    s3::client c{ioc.get_executor(), o};
    {
        bool created = false;
        net::co_spawn(ioc, c.create_bucket(a["--bucket"]),
                      [&](std::exception_ptr, result<void> r) { created = r.has_value(); });
        ioc.run();
        ioc.restart();
        (void)created;  // an existing bucket is fine
    }

    rusage r0{};
    getrusage(RUSAGE_SELF, &r0);
    const auto t0 = std::chrono::steady_clock::now();
    std::size_t next = 0;
    std::uint64_t bytes = 0;
    int failures = 0;
    for (int w = 0; w < concurrency; ++w) {
        net::co_spawn(
            ioc,
            [&]() -> net::awaitable<void> {
                while (next < files.size()) {
                    const auto& path = files[next++];
                    const std::string body = read_file(path);
                    bytes += body.size();
                    std::string key = a["--prefix"] + "/" + path.filename().string();
                    auto r = co_await c.upload(a["--bucket"], std::move(key), body, s3::put_options{});
                    if (!r) {
                        ++failures;
                        fmt::print(stderr, "upload {}: {}\n", path.string(), r.error().message());
                    }
                }
            },
            [&](std::exception_ptr e) {
                if (e) ++failures;
            });
    }
    ioc.run();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rusage r1{};
    getrusage(RUSAGE_SELF, &r1);
    fmt::print(
        "{{\"files\":{},\"bytes\":{},\"seconds\":{:.3f},\"cpu_user\":{:.3f},\"cpu_sys\":{:.3f},\"retries\":{},"
        "\"connections\":{},\"failures\":{}}}\n",
        files.size(), bytes, secs, cpu_seconds(r1.ru_utime) - cpu_seconds(r0.ru_utime),
        cpu_seconds(r1.ru_stime) - cpu_seconds(r0.ru_stime), c.stats().retries, c.http_stats().connections_opened,
        failures);
    return failures == 0 ? 0 : 1;
}

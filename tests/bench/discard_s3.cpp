// SPDX-License-Identifier: Apache-2.0
// discard-s3: an S3 endpoint that throws every body away, for measuring the daemon and not
// the store (tests/bench/e2e_bench.py). It answers, path-style and without checking
// signatures, the requests the daemon and its capability probe send:
//   PutObject (honours `If-None-Match: *` for keys it has seen: 412 PreconditionFailed),
//   HeadObject (the stored size, ETag, Content-Type and x-amz-meta-* of the key, or 404),
//   CreateMultipartUpload / UploadPart / CompleteMultipartUpload (also honouring
//   `If-None-Match: *`) / AbortMultipartUpload, DeleteObject, ListObjectsV2 (keys under the
//   prefix, at most max-keys), HeadBucket / CreateBucket / GetObject (empty body).
// It keeps only keys and their metadata, never bodies (read through a 256 KiB scratch). As
// AWS does, it checks `x-amz-checksum-crc32c` where a request carries one (a mismatch is 400
// BadDigest, and nothing is stored), so `s3.checksum: auto` picks CRC-32C against it; it does
// not check Content-MD5 (the daemon still computes it).
//
//   discard-s3 [--listen 127.0.0.1:0] [--tls-cert FILE --tls-key FILE]
// With a PEM certificate and key it serves https instead of http.
// prints `listening on HOST:PORT` as its first line; on SIGTERM/SIGINT it prints one JSON
// line of counters (requests, puts, parts, completes, heads, lists, bytes, objects,
// precondition_failed) and exits 0. One thread, one io_context.
#include "s3/checksum.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;

namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);

struct object_meta {
    std::uint64_t size = 0;
    std::string etag;
    std::string content_type;
    std::vector<std::pair<std::string, std::string>> meta;  // x-amz-meta-* as received
};

struct upload_state {
    std::string key;
    object_meta meta;
    std::uint64_t size = 0;
};

struct counters {
    std::uint64_t requests = 0, puts = 0, parts = 0, completes = 0, heads = 0, lists = 0, bytes = 0,
                  precondition_failed = 0, connections = 0, bad_digest = 0;
};

struct store {
    std::map<std::string, object_meta> objects;  // "bucket/key" (decoded)
    std::map<std::string, upload_state> uploads;
    std::uint64_t next_id = 1;
    counters n;
};

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

std::string percent_decode(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size()) {
            const int h = hex_value(s[i + 1]), l = hex_value(s[i + 2]);
            if (h >= 0 && l >= 0) {
                out += static_cast<char>(h * 16 + l);
                i += 2;
                continue;
            }
        }
        out += s[i];  // '+' is literal in S3 paths; SigV4 encodes a query's '+' as %2B
    }
    return out;
}

std::string xml_escape(std::string_view s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            default: out += c;
        }
    }
    return out;
}

struct parsed_target {
    std::string bucket;
    std::string key;  // empty: a bucket request
    std::map<std::string, std::string> query;
};

parsed_target parse_target(std::string_view target) {
    parsed_target t;
    std::string_view path = target, q;
    if (auto pos = target.find('?'); pos != std::string_view::npos) {
        path = target.substr(0, pos);
        q = target.substr(pos + 1);
    }
    while (!path.empty() && path.front() == '/') path.remove_prefix(1);
    const auto slash = path.find('/');
    t.bucket = percent_decode(path.substr(0, slash));
    if (slash != std::string_view::npos) t.key = percent_decode(path.substr(slash + 1));
    while (!q.empty()) {
        const auto amp = q.find('&');
        const std::string_view kv = q.substr(0, amp);
        const auto eq = kv.find('=');
        t.query[percent_decode(kv.substr(0, eq))] =
            eq == std::string_view::npos ? std::string{} : percent_decode(kv.substr(eq + 1));
        if (amp == std::string_view::npos) break;
        q.remove_prefix(amp + 1);
    }
    return t;
}

struct reply {
    unsigned status = 200;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    std::uint64_t head_length = 0;  // Content-Length of a HEAD answer
};

reply error_reply(unsigned status, std::string_view code, std::string_view message) {
    reply r;
    r.status = status;
    r.headers.emplace_back("Content-Type", "application/xml");
    r.body = fmt::format(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>{}</Code><Message>{}</Message>"
        "<RequestId>discard</RequestId></Error>",
        code, message);
    return r;
}

std::string_view reason(unsigned status) {
    switch (status) {
        case 200: return "OK";
        case 204: return "No Content";
        case 404: return "Not Found";
        case 412: return "Precondition Failed";
        default: return "Status";
    }
}

object_meta meta_from(const bhttp::request_header<>& h) {
    object_meta m;
    for (const auto& f : h) {
        const std::string name{f.name_string()};
        if (name.size() > 11 && beast::iequals(std::string_view{name}.substr(0, 11), "x-amz-meta-"))
            m.meta.emplace_back(name, std::string{f.value()});
        else if (beast::iequals(name, "content-type")) m.content_type = std::string{f.value()};
    }
    return m;
}

bool if_none_match_star(const bhttp::request_header<>& h) {
    const auto it = h.find(bhttp::field::if_none_match);
    return it != h.end() && it->value() == "*";
}

reply handle(store& s, const bhttp::request_header<>& h, std::uint64_t body_bytes) {
    const auto t = parse_target(std::string_view{h.target().data(), h.target().size()});
    const auto method = h.method();
    const std::string full = t.bucket + "/" + t.key;
    const bool has_upload = t.query.count("uploadId") != 0;
    reply r;
    if (t.key.empty()) {
        if (method == bhttp::verb::get && t.query.count("list-type") != 0) {
            ++s.n.lists;
            const std::string prefix = t.query.count("prefix") ? t.query.at("prefix") : std::string{};
            std::size_t max_keys = 1000;
            if (auto it = t.query.find("max-keys"); it != t.query.end()) max_keys = std::stoul(it->second);
            std::string start = t.bucket + "/" + prefix;
            if (auto it = t.query.find("start-after"); it != t.query.end())
                start = std::max(start, t.bucket + "/" + it->second + std::string(1, '\0'));
            if (auto it = t.query.find("continuation-token"); it != t.query.end())
                start = std::max(start, t.bucket + "/" + it->second + std::string(1, '\0'));
            std::string contents;
            std::size_t count = 0;
            bool truncated = false;
            std::string last;
            const std::string full_prefix = t.bucket + "/" + prefix;
            for (auto it = s.objects.lower_bound(start); it != s.objects.end(); ++it) {
                if (it->first.compare(0, full_prefix.size(), full_prefix) != 0) break;
                if (count == max_keys) {
                    truncated = true;
                    break;
                }
                last = it->first.substr(t.bucket.size() + 1);
                contents += fmt::format(
                    "<Contents><Key>{}</Key><Size>{}</Size><ETag>{}</ETag>"
                    "<LastModified>2026-01-01T00:00:00.000Z</LastModified></Contents>",
                    xml_escape(last), it->second.size, xml_escape(it->second.etag));
                ++count;
            }
            r.headers.emplace_back("Content-Type", "application/xml");
            r.body = fmt::format(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult><Name>{}</Name><Prefix>{}</Prefix>"
                "<KeyCount>{}</KeyCount><MaxKeys>{}</MaxKeys><IsTruncated>{}</IsTruncated>{}{}</ListBucketResult>",
                xml_escape(t.bucket), xml_escape(prefix), count, max_keys, truncated ? "true" : "false",
                truncated ? fmt::format("<NextContinuationToken>{}</NextContinuationToken>", xml_escape(last))
                          : std::string{},
                contents);
            return r;
        }
        if (method == bhttp::verb::get && t.query.count("uploads") != 0) {
            r.headers.emplace_back("Content-Type", "application/xml");
            r.body = fmt::format(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListMultipartUploadsResult><Bucket>{}</Bucket>"
                "<IsTruncated>false</IsTruncated></ListMultipartUploadsResult>",
                xml_escape(t.bucket));
            return r;
        }
        if (method == bhttp::verb::get && t.bucket.empty()) {
            r.headers.emplace_back("Content-Type", "application/xml");
            r.body =
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListAllMyBucketsResult><Buckets/></ListAllMyBucketsResult>";
            return r;
        }
        return r;  // HeadBucket, CreateBucket, GetBucketLocation...: 200, empty
    }
    switch (method) {
        case bhttp::verb::put: {
            if (has_upload) {
                auto it = s.uploads.find(t.query.at("uploadId"));
                if (it == s.uploads.end()) return error_reply(404, "NoSuchUpload", "unknown upload id");
                ++s.n.parts;
                it->second.size += body_bytes;
                r.headers.emplace_back("ETag", fmt::format("\"part-{}\"", s.next_id++));
                return r;
            }
            ++s.n.puts;
            if (if_none_match_star(h) && s.objects.count(full) != 0) {
                ++s.n.precondition_failed;
                return error_reply(412, "PreconditionFailed",
                                   "At least one of the pre-conditions you specified did not hold");
            }
            object_meta m = meta_from(h);
            m.size = body_bytes;
            m.etag = fmt::format("\"obj-{}\"", s.next_id++);
            r.headers.emplace_back("ETag", m.etag);
            s.objects[full] = std::move(m);
            return r;
        }
        case bhttp::verb::post: {
            if (t.query.count("uploads") != 0) {
                const std::string id = fmt::format("upload-{}", s.next_id++);
                s.uploads[id] = upload_state{full, meta_from(h), 0};
                r.headers.emplace_back("Content-Type", "application/xml");
                r.body = fmt::format(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><InitiateMultipartUploadResult><Bucket>{}</Bucket>"
                    "<Key>{}</Key><UploadId>{}</UploadId></InitiateMultipartUploadResult>",
                    xml_escape(t.bucket), xml_escape(t.key), id);
                return r;
            }
            if (has_upload) {
                auto it = s.uploads.find(t.query.at("uploadId"));
                if (it == s.uploads.end()) return error_reply(404, "NoSuchUpload", "unknown upload id");
                ++s.n.completes;
                if (if_none_match_star(h) && s.objects.count(full) != 0) {
                    ++s.n.precondition_failed;
                    return error_reply(412, "PreconditionFailed",
                                       "At least one of the pre-conditions you specified did not hold");
                }
                object_meta m = std::move(it->second.meta);
                m.size = it->second.size;
                m.etag = fmt::format("\"mpu-{}-1\"", s.next_id++);
                s.uploads.erase(it);
                r.headers.emplace_back("Content-Type", "application/xml");
                r.body = fmt::format(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><CompleteMultipartUploadResult><Bucket>{}</Bucket>"
                    "<Key>{}</Key><ETag>{}</ETag></CompleteMultipartUploadResult>",
                    xml_escape(t.bucket), xml_escape(t.key), xml_escape(m.etag));
                s.objects[full] = std::move(m);
                return r;
            }
            return error_reply(400, "InvalidRequest", "unsupported POST");
        }
        case bhttp::verb::head:
        case bhttp::verb::get: {
            ++s.n.heads;
            auto it = s.objects.find(full);
            if (it == s.objects.end()) {
                if (method == bhttp::verb::head) return reply{404, {}, {}, 0};
                return error_reply(404, "NoSuchKey", "The specified key does not exist.");
            }
            r.headers.emplace_back("ETag", it->second.etag);
            r.headers.emplace_back("Last-Modified", "Thu, 01 Jan 2026 00:00:00 GMT");
            if (!it->second.content_type.empty()) r.headers.emplace_back("Content-Type", it->second.content_type);
            for (const auto& kv : it->second.meta) r.headers.push_back(kv);
            r.head_length = method == bhttp::verb::head ? it->second.size : 0;
            return r;
        }
        case bhttp::verb::delete_: {
            if (has_upload) s.uploads.erase(t.query.at("uploadId"));
            else s.objects.erase(full);
            r.status = 204;
            return r;
        }
        default: return error_reply(400, "InvalidRequest", "unsupported method");
    }
}

std::string serialize(const reply& r, bool head, bool keep_alive) {
    std::string out = fmt::format("HTTP/1.1 {} {}\r\nx-amz-request-id: discard\r\n", r.status, reason(r.status));
    for (const auto& [name, value] : r.headers) out += fmt::format("{}: {}\r\n", name, value);
    out += fmt::format("Content-Length: {}\r\n", head ? r.head_length : r.body.size());
    if (!keep_alive) out += "Connection: close\r\n";
    out += "\r\n";
    if (!head) out += r.body;
    return out;
}

template <class Stream>
net::awaitable<void> session(store& s, Stream& sock) {
    beast::flat_buffer buf;
    std::vector<char> scratch(256 * 1024);
    for (;;) {
        bhttp::request_parser<bhttp::buffer_body> p;
        p.body_limit(boost::none);
        p.header_limit(64 * 1024);
        auto [hec, hn] = co_await bhttp::async_read_header(sock, buf, p, use_tuple);
        if (hec) co_return;
        if (p.get()[bhttp::field::expect] == "100-continue") {
            static constexpr std::string_view cont = "HTTP/1.1 100 Continue\r\n\r\n";
            auto [cec, cn] = co_await net::async_write(sock, net::buffer(cont), use_tuple);
            if (cec) co_return;
        }
        std::uint64_t body_bytes = 0;
        const auto crc_field = p.get().find("x-amz-checksum-crc32c");
        const bool check_crc = crc_field != p.get().end();
        const std::string want_crc = check_crc ? std::string{crc_field->value()} : std::string{};
        std::uint32_t crc = 0;
        while (!p.is_done()) {
            p.get().body().data = scratch.data();
            p.get().body().size = scratch.size();
            auto [bec, bn] = co_await bhttp::async_read(sock, buf, p, use_tuple);
            if (bec == bhttp::error::need_buffer) bec = {};
            if (bec) co_return;
            const std::size_t got = scratch.size() - p.get().body().size;
            if (check_crc) crc = iss::s3::crc32c(std::string_view{scratch.data(), got}, crc);
            body_bytes += got;
        }
        ++s.n.requests;
        const auto& h = p.get();
        if (check_crc && iss::s3::crc32c_header_value(crc) != want_crc) {
            ++s.n.bad_digest;
            const reply bad =
                error_reply(400, "BadDigest", "The CRC32C you specified did not match the calculated checksum.");
            const std::string wire = serialize(bad, false, h.keep_alive());
            auto [wec, wn] = co_await net::async_write(sock, net::buffer(wire), use_tuple);
            if (wec || !h.keep_alive()) co_return;
            continue;
        }
        // aws-chunked bodies carry their decoded length in a header: that is the object size.
        if (auto it = h.find("x-amz-decoded-content-length"); it != h.end())
            body_bytes = std::stoull(std::string{it->value()});
        s.n.bytes += body_bytes;
        const reply r = handle(s, h, body_bytes);
        const bool keep = h.keep_alive();
        const std::string wire = serialize(r, h.method() == bhttp::verb::head, keep);
        auto [wec, wn] = co_await net::async_write(sock, net::buffer(wire), use_tuple);
        if (wec || !keep) co_return;
    }
}

net::awaitable<void> serve(store& s, tcp::socket sock, net::ssl::context* tls) {
    ++s.n.connections;
    boost::system::error_code ec;
    sock.set_option(tcp::no_delay{true}, ec);
    if (tls == nullptr) {
        co_await session(s, sock);
        co_return;
    }
    net::ssl::stream<tcp::socket> stream{std::move(sock), *tls};
    auto [hec] = co_await stream.async_handshake(net::ssl::stream_base::server, use_tuple);
    if (!hec) co_await session(s, stream);
}

net::awaitable<void> accept_loop(store& s, tcp::acceptor& acceptor, net::ssl::context* tls) {
    for (;;) {
        auto [ec, sock] = co_await acceptor.async_accept(use_tuple);
        if (ec) co_return;
        net::co_spawn(acceptor.get_executor(), serve(s, std::move(sock), tls), net::detached);
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::string listen = "127.0.0.1:0";
    std::string cert, key;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--listen" && i + 1 < argc) listen = argv[++i];
        else if (a == "--tls-cert" && i + 1 < argc) cert = argv[++i];
        else if (a == "--tls-key" && i + 1 < argc) key = argv[++i];
        else {
            std::fprintf(stderr, "usage: discard-s3 [--listen HOST:PORT] [--tls-cert FILE --tls-key FILE]\n");
            return 2;
        }
    }
    if (cert.empty() != key.empty()) {
        std::fprintf(stderr, "discard-s3: --tls-cert and --tls-key go together\n");
        return 2;
    }
    std::optional<net::ssl::context> tls;
    if (!cert.empty()) {
        tls.emplace(net::ssl::context::tls_server);
        tls->use_certificate_chain_file(cert);
        tls->use_private_key_file(key, net::ssl::context::pem);
    }
    const auto colon = listen.rfind(':');
    if (colon == std::string::npos) {
        std::fprintf(stderr, "discard-s3: --listen wants HOST:PORT\n");
        return 2;
    }
    net::io_context ioc{1};
    store s;
    tcp::acceptor acceptor{ioc, tcp::endpoint{net::ip::make_address(listen.substr(0, colon)),
                                              static_cast<unsigned short>(std::stoul(listen.substr(colon + 1)))}};
    const auto ep = acceptor.local_endpoint();
    std::printf("listening on %s:%u\n", ep.address().to_string().c_str(), static_cast<unsigned>(ep.port()));
    std::fflush(stdout);
    net::signal_set signals{ioc, SIGINT, SIGTERM};
    signals.async_wait([&](const boost::system::error_code&, int) { ioc.stop(); });
    net::co_spawn(ioc, accept_loop(s, acceptor, tls ? &*tls : nullptr), net::detached);
    ioc.run();
    std::printf(
        "{\"requests\":%llu,\"puts\":%llu,\"parts\":%llu,\"completes\":%llu,\"heads\":%llu,\"lists\":%llu,"
        "\"bytes\":%llu,\"objects\":%zu,\"precondition_failed\":%llu,\"connections\":%llu,\"bad_digest\":%llu}\n",
        static_cast<unsigned long long>(s.n.requests), static_cast<unsigned long long>(s.n.puts),
        static_cast<unsigned long long>(s.n.parts), static_cast<unsigned long long>(s.n.completes),
        static_cast<unsigned long long>(s.n.heads), static_cast<unsigned long long>(s.n.lists),
        static_cast<unsigned long long>(s.n.bytes), s.objects.size(),
        static_cast<unsigned long long>(s.n.precondition_failed), static_cast<unsigned long long>(s.n.connections),
        static_cast<unsigned long long>(s.n.bad_digest));
    std::fflush(stdout);
    return 0;
}

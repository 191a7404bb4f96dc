// SPDX-License-Identifier: Apache-2.0
// lib/s3 + lib/http against a real Ceph RGW (the `rgw` CTest fixture: RGW_DIR/env), directly
// and through the fault front, and the pipeline's store layer over them (pipeline::s3_store).
// Each test case uses its own bucket.
#include "daemon/s3_setup.hpp"
#include "daemon/s3_wiring.hpp"
#include "pipeline/adapters/s3_store.hpp"
#include "s3/client.hpp"
#include "s3/fault_front.hpp"
#include "s3/probe.hpp"
#include "sigv4/hash.hpp"
#include "tests/support/fixture_env.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "catch2_compat.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>

using namespace iss;
namespace net = boost::asio;
using namespace std::chrono_literals;

namespace {

const std::map<std::string, std::string>& rgw() {
    static const auto env = test::fixture_env("RGW_DIR", "rgw", ISS_BINARY_DIR "/rgw");
    return env;
}

s3::client_options base_options() {
    s3::client_options o;
    o.endpoint = rgw().at("RGW_ENDPOINT");
    o.region = rgw().at("RGW_REGION");
    o.credentials = {access_key_id{rgw().at("RGW_ACCESS_KEY")}, secret_access_key{rgw().at("RGW_SECRET_KEY")}, {}};
    o.retry.base = 20ms;
    o.retry.cap = 200ms;
    o.retry.attempts = 6;
    o.retry.deadline = 60s;
    o.part_size = 5ULL << 20;
    return o;
}

std::string unique_bucket(std::string_view what) {
    static std::mt19937_64 rng{std::random_device{}()};
    return fmt::format("t-{}-{:08x}", what, static_cast<std::uint32_t>(rng()));
}

/// Options for RGW's https endpoint (or `endpoint`, a front before it) as AWS users get them
/// there: UNSIGNED-PAYLOAD and CRC-32C.
s3::client_options tls_options(std::string endpoint) {
    auto o = base_options();
    o.endpoint = std::move(endpoint);
    o.http.tls.ca_file = rgw().at("RGW_CA_FILE");
    o.payload = s3::payload_signing::unsigned_payload;
    o.checksum = s3::checksum_kind::crc32c;
    return o;
}

/// A front serving https with the fixture's certificate before RGW's plain endpoint.
std::unique_ptr<test::fault_front> tls_front_to_rgw(net::io_context& ioc) {
    const auto upstream = http::parse_url(rgw().at("RGW_ENDPOINT")).value();
    return std::make_unique<test::fault_front>(
        ioc.get_executor(), upstream, test::tls_files{rgw().at("RGW_TLS_CERT_FILE"), rgw().at("RGW_TLS_KEY_FILE")});
}

template <class T>
T run(net::io_context& ioc, std::function<net::awaitable<T>()> task) {
    std::optional<T> out;
    std::exception_ptr err;
    net::co_spawn(ioc, task(), [&](std::exception_ptr e, T v) {
        err = e;
        if (!e) out = std::move(v);
        ioc.stop();
    });
    ioc.restart();
    ioc.run();
    if (err) std::rethrow_exception(err);
    return std::move(*out);
}

/// A bucket of its own for one test case.
void make_bucket(net::io_context& ioc, s3::client& c, const std::string& bucket) {
    auto r = run<result<void>>(ioc, [&]() { return c.create_bucket(bucket); });
    INFO(bucket);
    REQUIRE(r.has_value());
}

/// PUTs `views` (together `bytes`) as `key`, then GETs it and compares every byte.
void put_then_compare(net::io_context& ioc, s3::client& c, const std::string& bucket, const std::string& key,
                      std::vector<std::string_view> views, const std::string& bytes) {
    INFO(key);
    auto put = run<result<s3::put_result>>(
        ioc, [&]() { return c.put_object(bucket, key, std::move(views), s3::put_options{}); });
    INFO((put.has_value() ? std::string{} : put.error().message()));
    REQUIRE(put.has_value());
    auto got = run<result<s3::get_result>>(ioc, [&]() { return c.get_object(bucket, key); });
    REQUIRE(got.has_value());
    CHECK(got->body.size() == bytes.size());
    CHECK(got->body == bytes);
}

std::string pattern(std::size_t n, unsigned seed) {
    std::string s(n, '\0');
    std::mt19937 rng{seed};
    for (auto& c : s) c = static_cast<char>(rng());
    return s;
}

}  // namespace

TEST_CASE("objects with awkward keys round-trip with metadata", "[s3][rgw]") {
    net::io_context ioc{1};
    s3::client c{ioc.get_executor(), base_options()};
    const auto bucket = unique_bucket("keys");
    make_bucket(ioc, c, bucket);
    const std::vector<std::string> keys{"plain.txt",
                                        "with space",
                                        "plus+sign",
                                        "equals=sign",
                                        "percent%25and%",
                                        "tilde~",
                                        "bang!",
                                        "quote'",
                                        "paren(s)",
                                        "star*",
                                        "unicode-caf\xc3\xa9-\xe2\x9c\x93",
                                        "/leading-slash",
                                        "double//slash",
                                        "a/b/c/",
                                        std::string(1000, 'k')};
    for (const auto& key : keys) {
        INFO(key);
        const std::string body = "body of " + key;
        s3::put_options po;
        po.metadata["iggy-first-offset"] = "42";
        po.metadata["note"] = "caf\xc3\xa9 \xe2\x9c\x93";
        po.content_type = "text/plain";
        auto put = run<result<s3::put_result>>(ioc, [&]() {
            std::vector<std::string_view> v{body};
            return c.put_object(bucket, key, std::move(v), po);
        });
        REQUIRE(put.has_value());
        CHECK(put->etag.starts_with("\""));
        auto get = run<result<s3::get_result>>(ioc, [&]() { return c.get_object(bucket, key); });
        REQUIRE(get.has_value());
        CHECK(get->body == body);
        auto head = run<result<s3::head_result>>(ioc, [&]() { return c.head_object(bucket, key); });
        REQUIRE(head.has_value());
        CHECK(head->size == body.size());
        CHECK(head->metadata["iggy-first-offset"] == "42");
        CHECK(head->metadata["note"] == "caf\xc3\xa9 \xe2\x9c\x93");
    }
    s3::list_options lo;
    auto list = run<result<s3::list_objects_page>>(ioc, [&]() { return c.list_objects_v2(bucket, lo); });
    REQUIRE(list.has_value());
    std::vector<std::string> listed;
    for (const auto& o : list->objects) listed.push_back(o.key);
    for (const auto& key : keys) CHECK(std::find(listed.begin(), listed.end(), key) != listed.end());
    auto buckets = run<result<std::vector<std::string>>>(ioc, [&]() { return c.list_buckets(); });
    REQUIRE(buckets.has_value());
    CHECK(std::find(buckets->begin(), buckets->end(), bucket) != buckets->end());
    CHECK(c.stats().retries == 0);
    CHECK(c.http_stats().connections_opened == 1);  // keep-alive across the whole test
}

TEST_CASE("a conditional put of an existing key gets 412 (exists), unconditional overwrites", "[s3][rgw]") {
    net::io_context ioc{1};
    s3::client c{ioc.get_executor(), base_options()};
    const auto bucket = unique_bucket("cond");
    make_bucket(ioc, c, bucket);
    s3::put_options cond;
    cond.if_none_match = true;
    auto put = [&](std::string body, s3::put_options o) {
        return run<result<s3::put_result>>(ioc, [&]() {
            std::vector<std::string_view> v{body};
            return c.put_object(bucket, "k", std::move(v), o);
        });
    };
    REQUIRE(put("first", cond).has_value());
    auto second = put("second", cond);
    REQUIRE_FALSE(second.has_value());
    CHECK(s3::status_of(second.error()) == s3::status::exists);
    CHECK(c.stats().retries == 0);
    auto get = run<result<s3::get_result>>(ioc, [&]() { return c.get_object(bucket, "k"); });
    CHECK(get->body == "first");
    REQUIRE(put("third", s3::put_options{}).has_value());
}

TEST_CASE("a wrong secret gives one clear error and no retry storm", "[s3][rgw]") {
    net::io_context ioc{1};
    auto o = base_options();
    o.credentials.secret_access_key = secret_access_key{"wrong-secret"};
    s3::client c{ioc.get_executor(), o};
    auto r = run<result<void>>(ioc, [&]() { return c.create_bucket(unique_bucket("auth")); });
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == s3::errc::signature_mismatch);
    CHECK(r.error().message().find("s3.secret_access_key") != std::string::npos);
    CHECK(r.error().message().find("wrong-secret") == std::string::npos);
    CHECK(c.stats().attempts == 1);
    auto o2 = base_options();
    o2.credentials.access_key_id = access_key_id{"NOSUCHKEY0000000"};
    s3::client c2{ioc.get_executor(), o2};
    auto r2 = run<result<void>>(ioc, [&]() { return c2.head_bucket("any-bucket"); });
    REQUIRE_FALSE(r2.has_value());
    CHECK(s3::status_of(r2.error()) == s3::status::fatal);
    CHECK(c2.stats().attempts == 1);
}

TEST_CASE(
    "a clock stepped 1 h forward, then 1 h back: RGW answers RequestTimeTooSkewed, the client corrects by "
    "its Date and the writes go through",
    "[s3][rgw][clock]") {
    net::io_context ioc{1};
    const auto real_now = std::chrono::system_clock::now();
    iss::manual_clock clk{real_now + std::chrono::hours{1}};  // NTP stepped the wall clock 1 h forward
    s3::client c{ioc.get_executor(), base_options(), clk, 11};
    const auto bucket = unique_bucket("skew");
    make_bucket(ioc, c, bucket);
    const auto near = [](std::chrono::milliseconds got, std::chrono::seconds want) {
        return std::chrono::abs(got - want) < std::chrono::seconds{120};
    };
    CHECK(c.stats().resigns == 1);
    CHECK(near(c.clock_offset(), -std::chrono::hours{1}));
    const std::string first = "written with the offset learnt";
    put_then_compare(ioc, c, bucket, "after-forward", {first}, first);
    CHECK(c.stats().resigns == 1);  // the offset is kept: no further refusal
    // Stepped back by 2 h (1 h behind the store): refused once more, corrected again.
    clk.set_system(real_now - std::chrono::hours{1});
    const std::string second = "written with the new offset";
    put_then_compare(ioc, c, bucket, "after-back", {second}, second);
    CHECK(c.stats().resigns == 2);
    CHECK(near(c.clock_offset(), std::chrono::hours{1}));
    CHECK(c.stats().clock_offset == c.clock_offset());
}

TEST_CASE("multipart: three parts and a tail, list parts, abort, EntityTooSmall", "[s3][rgw][multipart]") {
    net::io_context ioc{1};
    s3::client c{ioc.get_executor(), base_options()};
    const auto bucket = unique_bucket("mpu");
    make_bucket(ioc, c, bucket);
    const std::string body = pattern(3 * (5U << 20) + 1234, 7);
    s3::put_options po;
    po.metadata["iggy-count"] = "4";
    po.if_none_match = true;
    auto up = run<result<s3::complete_result>>(ioc, [&]() { return c.upload(bucket, "big/object", body, po); });
    REQUIRE(up.has_value());
    auto head = run<result<s3::head_result>>(ioc, [&]() { return c.head_object(bucket, "big/object"); });
    REQUIRE(head.has_value());
    CHECK(head->size == body.size());
    CHECK(head->etag.ends_with("-4\""));
    CHECK(head->metadata["iggy-count"] == "4");
    auto get = run<result<s3::get_result>>(ioc, [&]() { return c.get_object(bucket, "big/object"); });
    REQUIRE(get.has_value());
    CHECK(get->body == body);

    // An upload in progress: parts listed, then aborted, then gone.
    auto id = run<result<std::string>>(ioc, [&]() { return c.create_multipart(bucket, "aborted", s3::put_options{}); });
    REQUIRE(id.has_value());
    const std::string_view part1{body.data(), 5U << 20};
    auto p1 = run<result<s3::completed_part>>(ioc, [&]() {
        std::vector<std::string_view> v{part1};
        return c.upload_part(bucket, "aborted", *id, 1, std::move(v));
    });
    REQUIRE(p1.has_value());
    auto parts = run<result<std::vector<s3::part_info>>>(ioc, [&]() { return c.list_parts(bucket, "aborted", *id); });
    REQUIRE(parts.has_value());
    REQUIRE(parts->size() == 1);
    CHECK(parts->at(0).etag == p1->etag);
    CHECK(parts->at(0).size == (5U << 20));
    auto uploads = run<result<std::vector<s3::upload_info>>>(ioc, [&]() { return c.list_uploads(bucket, ""); });
    REQUIRE(uploads.has_value());
    CHECK(uploads->size() == 1);
    REQUIRE(run<result<void>>(ioc, [&]() { return c.abort_multipart(bucket, "aborted", *id); }).has_value());
    auto after = run<result<s3::completed_part>>(ioc, [&]() {
        std::vector<std::string_view> v{"x"};
        return c.upload_part(bucket, "aborted", *id, 2, std::move(v));
    });
    REQUIRE_FALSE(after.has_value());
    CHECK(s3::status_of(after.error()) == s3::status::not_found);
    uploads = run<result<std::vector<s3::upload_info>>>(ioc, [&]() { return c.list_uploads(bucket, ""); });
    CHECK(uploads->empty());

    // Two small parts: Complete refuses the first one (EntityTooSmall), surfaced as such.
    auto id2 = run<result<std::string>>(ioc, [&]() { return c.create_multipart(bucket, "small", s3::put_options{}); });
    REQUIRE(id2.has_value());
    std::vector<s3::completed_part> small;
    for (int n = 1; n <= 2; ++n) {
        auto p = run<result<s3::completed_part>>(ioc, [&]() {
            std::vector<std::string_view> v{"tiny part"};
            return c.upload_part(bucket, "small", *id2, n, std::move(v));
        });
        REQUIRE(p.has_value());
        small.push_back(*p);
    }
    auto done = run<result<s3::complete_result>>(
        ioc, [&]() { return c.complete_multipart(bucket, "small", *id2, small, false); });
    REQUIRE_FALSE(done.has_value());
    CHECK(done.error() == s3::errc::entity_too_small);
    CHECK(done.error().message().find("5 MiB") != std::string::npos);
    run<result<void>>(ioc, [&]() { return c.abort_multipart(bucket, "small", *id2); });
}

TEST_CASE("crc32c and no-checksum modes work for PutObject and multipart", "[s3][rgw][checksum]") {
    for (auto kind : {s3::checksum_kind::crc32c, s3::checksum_kind::none}) {
        net::io_context ioc{1};
        auto o = base_options();
        o.checksum = kind;
        s3::client c{ioc.get_executor(), o};
        const auto bucket = unique_bucket("sum");
        make_bucket(ioc, c, bucket);
        const std::string small = "small body";
        const std::string big = pattern((5U << 20) + 77, 11);
        auto p = run<result<s3::complete_result>>(
            ioc, [&]() { return c.upload(bucket, "small", small, s3::put_options{}); });
        REQUIRE(p.has_value());
        auto m =
            run<result<s3::complete_result>>(ioc, [&]() { return c.upload(bucket, "big", big, s3::put_options{}); });
        INFO((m.has_value() ? std::string{} : m.error().message()));
        REQUIRE(m.has_value());
        auto g = run<result<s3::get_result>>(ioc, [&]() { return c.get_object(bucket, "big"); });
        REQUIRE(g.has_value());
        CHECK(g->body == big);
    }
}

TEST_CASE("ListObjectsV2 pages over 2500 keys with prefix and delimiter", "[s3][rgw][list]") {
    net::io_context ioc{1};
    auto o = base_options();
    o.http.max_idle_per_endpoint = 32;
    s3::client c{ioc.get_executor(), o};
    const auto bucket = unique_bucket("list");
    make_bucket(ioc, c, bucket);
    constexpr int total = 2500;
    constexpr int workers = 24;
    int done = 0;
    int failed = 0;
    for (int w = 0; w < workers; ++w) {
        net::co_spawn(
            ioc,
            [&, w]() -> net::awaitable<void> {
                for (int i = w; i < total; i += workers) {
                    const std::string key = fmt::format("{}/obj-{:05}", i % 2 == 0 ? "even" : "odd", i);
                    std::vector<std::string_view> v{"x"};
                    auto r = co_await c.put_object(bucket, key, std::move(v), s3::put_options{});
                    if (!r) ++failed;
                }
            },
            [&](std::exception_ptr) {
                if (++done == workers) ioc.stop();
            });
    }
    ioc.restart();
    ioc.run();
    REQUIRE(failed == 0);

    std::vector<std::string> keys;
    int pages = 0;
    s3::list_options lo;
    lo.prefix = "even/";
    lo.max_keys = 400;
    for (;;) {
        auto page = run<result<s3::list_objects_page>>(ioc, [&]() { return c.list_objects_v2(bucket, lo); });
        REQUIRE(page.has_value());
        ++pages;
        for (const auto& obj : page->objects) keys.push_back(obj.key);
        if (!page->truncated) break;
        REQUIRE_FALSE(page->next_continuation_token.empty());
        lo.continuation_token = page->next_continuation_token;
    }
    CHECK(keys.size() == total / 2);
    CHECK(pages == 4);
    CHECK(std::is_sorted(keys.begin(), keys.end()));
    CHECK(std::adjacent_find(keys.begin(), keys.end()) == keys.end());

    s3::list_options all;  // default page size 1000: 3 pages for 2500
    int all_count = 0;
    for (;;) {
        auto page = run<result<s3::list_objects_page>>(ioc, [&]() { return c.list_objects_v2(bucket, all); });
        REQUIRE(page.has_value());
        all_count += static_cast<int>(page->objects.size());
        if (!page->truncated) break;
        all.continuation_token = page->next_continuation_token;
    }
    CHECK(all_count == total);

    s3::list_options delim;
    delim.delimiter = "/";
    auto top = run<result<s3::list_objects_page>>(ioc, [&]() { return c.list_objects_v2(bucket, delim); });
    REQUIRE(top.has_value());
    CHECK(top->objects.empty());
    CHECK(top->common_prefixes == std::vector<std::string>{"even/", "odd/"});

    s3::list_options after;
    after.prefix = "odd/";
    after.start_after = "odd/obj-02497";
    auto tail = run<result<s3::list_objects_page>>(ioc, [&]() { return c.list_objects_v2(bucket, after); });
    REQUIRE(tail.has_value());
    REQUIRE(tail->objects.size() == 1);
    CHECK(tail->objects[0].key == "odd/obj-02499");
}

TEST_CASE("virtual-hosted requests: Host names the bucket, TCP goes to 127.0.0.1", "[s3][rgw][vhost]") {
    net::io_context ioc{1};
    const auto path_client_opts = base_options();
    s3::client path_client{ioc.get_executor(), path_client_opts};
    const auto bucket = unique_bucket("vhost");
    make_bucket(ioc, path_client, bucket);
    auto o = base_options();
    o.endpoint = fmt::format("http://{}:{}", rgw().at("RGW_DNS_NAME"), rgw().at("RGW_PORT"));
    o.connect_address = "127.0.0.1";
    o.style = s3::addressing::virtual_hosted;
    s3::client c{ioc.get_executor(), o};
    auto put = run<result<s3::put_result>>(ioc, [&]() {
        std::vector<std::string_view> v{"vhost body"};
        return c.put_object(bucket, "dir/key with space", std::move(v), s3::put_options{});
    });
    REQUIRE(put.has_value());
    auto get = run<result<s3::get_result>>(ioc, [&]() { return path_client.get_object(bucket, "dir/key with space"); });
    REQUIRE(get.has_value());
    CHECK(get->body == "vhost body");
    auto list =
        run<result<s3::list_objects_page>>(ioc, [&]() { return c.list_objects_v2(bucket, s3::list_options{}); });
    REQUIRE(list.has_value());
    CHECK(list->objects.size() == 1);
}

TEST_CASE("TLS with the self-signed CA file works; without it the certificate is refused, not retried",
          "[s3][rgw][tls]") {
    net::io_context ioc{1};
    auto o = base_options();
    o.endpoint = rgw().at("RGW_TLS_ENDPOINT");
    o.http.tls.ca_file = rgw().at("RGW_CA_FILE");
    o.payload = s3::payload_signing::unsigned_payload;  // over TLS
    s3::client c{ioc.get_executor(), o};
    const auto bucket = unique_bucket("tls");
    make_bucket(ioc, c, bucket);
    auto put = run<result<s3::put_result>>(ioc, [&]() {
        std::vector<std::string_view> v{"over tls"};
        return c.put_object(bucket, "k", std::move(v), s3::put_options{});
    });
    REQUIRE(put.has_value());
    auto get = run<result<s3::get_result>>(ioc, [&]() { return c.get_object(bucket, "k"); });
    REQUIRE(get.has_value());
    CHECK(get->body == "over tls");

    auto bare = base_options();
    bare.endpoint = rgw().at("RGW_TLS_ENDPOINT");  // system trust store: the test CA is not in it
    s3::client refused{ioc.get_executor(), bare};
    auto r = run<result<void>>(ioc, [&]() { return refused.head_bucket(bucket); });
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == http::errc::certificate_rejected);
    CHECK(s3::status_of(r.error()) == s3::status::fatal);
    CHECK(refused.stats().attempts == 1);

    // A host name the certificate does not list is refused too (host-name verification).
    auto wrong_name = base_options();
    wrong_name.endpoint = fmt::format("https://wrong.example:{}", rgw().at("RGW_TLS_PORT"));
    wrong_name.connect_address = "127.0.0.1";
    wrong_name.http.tls.ca_file = rgw().at("RGW_CA_FILE");
    s3::client wrong{ioc.get_executor(), wrong_name};
    auto w = run<result<void>>(ioc, [&]() { return wrong.head_bucket(bucket); });
    REQUIRE_FALSE(w.has_value());
    CHECK(w.error() == http::errc::certificate_rejected);
}

TEST_CASE(
    "TLS: a body of several views across 256 KiB record batches arrives byte for byte; the connection serves "
    "the next request",
    "[s3][rgw][tls]") {
    // Over https the client seals a body into TLS records itself, 256 KiB of plaintext per
    // socket write (lib/http/client.cpp, tls_record_writer), between the TLS engine's own
    // writes (the header) and reads (the response). RGW checks the body's CRC-32C; the GET
    // compares every byte; the second PUT and GET on the same pooled connection would fail
    // its record MAC if the record sequence had been lost.
    net::io_context ioc{1};
    s3::client c{ioc.get_executor(), tls_options(rgw().at("RGW_TLS_ENDPOINT"))};
    const auto bucket = unique_bucket("tlsbig");
    make_bucket(ioc, c, bucket);
    std::mt19937_64 rng{18};
    std::string bytes(3 * (1U << 20) + 12345, '\0');
    for (auto& ch : bytes) ch = static_cast<char>(rng());
    // Views of 1 byte, an odd size that straddles the first batch, and the rest.
    const std::string_view all{bytes};
    for (const std::string key : {"first", "second"})
        put_then_compare(ioc, c, bucket, key, {all.substr(0, 1), all.substr(1, 300001), all.substr(300002)}, bytes);
    CHECK(c.stats().retries == 0);
    CHECK(c.http_stats().connections_reused >= 3);  // one connection carried all four requests
}

TEST_CASE(
    "TLS: a body the server does not read for a while (full socket buffers) still arrives byte for byte; the "
    "connection serves the next request",
    "[s3][rgw][faults][tls]") {
    // The record writer sends each record straight from OpenSSL's buffer while the socket
    // takes it, and keeps the rest, in order, for an Asio write that waits for room
    // (lib/http/client.cpp, tls_record_writer). A front that reads the headers and then
    // stalls 300 ms before the body makes the socket refuse: 24 MiB is more than the
    // kernel's loopback send and receive buffers hold together (4 + 6 MiB at most by
    // default), so the rest of the body must go through the waiting write.
    net::io_context ioc{1};
    const auto front_owner = tls_front_to_rgw(ioc);
    test::fault_front& front = *front_owner;
    front.add_rule({"PUT", "", test::fault::stall_body, 0, 1, std::chrono::milliseconds{300}});
    s3::client c{ioc.get_executor(), tls_options(front.url())};
    const auto bucket = unique_bucket("tlsstall");
    make_bucket(ioc, c, bucket);
    std::mt19937_64 rng{24};
    std::string bytes(24 * (1U << 20) + 777, '\0');
    for (std::size_t i = 0; i + 8 <= bytes.size(); i += 8) {
        const std::uint64_t x = rng();
        std::memcpy(bytes.data() + i, &x, 8);
    }
    const std::string_view all{bytes};
    for (const std::string key : {"stalled", "next"})
        put_then_compare(ioc, c, bucket, key, {all.substr(0, 5 * (1U << 20) + 3), all.substr(5 * (1U << 20) + 3)},
                         bytes);
    // A part told what was sent (how a part mapped from the spool lets its pages go):
    // every stretch once, in order, as views of the part itself (sealed, not copied).
    auto id = run<result<std::string>>(ioc, [&]() { return c.create_multipart(bucket, "part", s3::put_options{}); });
    REQUIRE(id.has_value());
    std::vector<std::string_view> sent;
    auto part = run<result<s3::completed_part>>(ioc, [&]() {
        return c.upload_part(bucket, "part", *id, 1, {all}, {}, [&](std::string_view s) { sent.push_back(s); });
    });
    INFO((part.has_value() ? std::string{} : part.error().message()));
    REQUIRE(part.has_value());
    std::string joined;
    for (const auto s : sent) {
        CHECK((s.data() >= all.data() && s.data() + s.size() <= all.data() + all.size()));
        joined += s;
    }
    CHECK(sent.size() >= all.size() / (256 << 10));
    CHECK(joined == bytes);
    CHECK(run<result<void>>(ioc, [&]() { return c.abort_multipart(bucket, "part", *id); }).has_value());
    const auto& seen = front.requests();
    REQUIRE(std::count_if(seen.begin(), seen.end(),
                          [](const auto& r) { return r.applied == test::fault::stall_body; }) == 1);
    for (const auto& r : seen)
        if (r.method == "PUT" && r.target.find("stalled") != std::string::npos) CHECK(r.body_size == bytes.size());
    CHECK(c.stats().retries == 0);
    CHECK(c.http_stats().connections_reused >= 3);
    // The stalled body took the path under test: records the socket refused, kept in order
    // and written once it had room.
    CHECK(c.http_stats().body_waits >= 1);
}

TEST_CASE("the capability probe finds RGW 16 honours conditional Put but not conditional Complete",
          "[s3][rgw][probe]") {
    net::io_context ioc{1};
    s3::client c{ioc.get_executor(), base_options()};
    const auto bucket = unique_bucket("probe");
    make_bucket(ioc, c, bucket);
    const auto key = s3::probe_key("pre/fix", 99);
    CHECK(key.starts_with("pre/fix/.iggy-s3-sink/probe-"));
    auto rep = run<s3::probe_report>(ioc, [&]() { return s3::probe_store(c, bucket, key); });
    CHECK(rep.reachable);
    CHECK(rep.authenticated);
    CHECK(rep.bucket_access);
    CHECK(rep.usable());
    CHECK(rep.conditional_put == s3::capability::yes);
    CHECK(rep.conditional_complete == s3::capability::no);
    CHECK(rep.cleaned_up);
    // RGW 16 accepts a PutObject whose x-amz-checksum-crc32c is wrong: `s3.checksum: auto`
    // stays with Content-MD5 there.
    CHECK(rep.crc32c_verified == s3::capability::no);
    CHECK(rep.crc32c_detail.find("answered 200") != std::string::npos);
    CHECK(s3::automatic_checksum(rep.crc32c_verified) == s3::checksum_kind::md5);
    auto listed = run<result<s3::list_objects_page>>(ioc, [&]() {
        s3::list_options lo;
        lo.prefix = "pre/fix/";
        return c.list_objects_v2(bucket, lo);
    });
    REQUIRE(listed.has_value());
    CHECK(listed->objects.empty());  // the probe deleted what it wrote, the checksum object too
    auto missing = run<s3::probe_report>(ioc, [&]() { return s3::probe_store(c, "no-such-bucket-x1", key); });
    CHECK(missing.reachable);
    CHECK(missing.authenticated);
    CHECK_FALSE(missing.bucket_access);
    CHECK(missing.bucket_detail.find("s3.bucket") != std::string::npos);
}

TEST_CASE("s3_store: write once, 412 as exists, adopt the range from HEAD, multipart", "[s3][rgw][store]") {
    namespace pl = iss::pipeline;
    net::io_context ioc{1};
    s3::client c{ioc.get_executor(), base_options()};
    const auto bucket = unique_bucket("store");
    make_bucket(ioc, c, bucket);
    pl::s3_store store{c, bucket};
    const pl::object_range range{100, 199, 100};
    const pl::user_metadata range_metadata{
        {"iggy-first-offset", "100"}, {"iggy-last-offset", "199"}, {"iggy-count", "100"}};
    // The port's arguments are references that must outlive each call: named here.
    const iss::object_key key{"p0/00000000000000000100.jsonl"};
    const iss::object_key none_key{"p0/none"};
    const iss::object_key mp_key{"mp"};
    const iss::object_key mp2_key{"mp2"};
    const pl::object_range no_range{};
    const std::string body = "records 100..199";
    auto first = run<pl::store_result<pl::none>>(
        ioc, [&]() { return store.put_object(key, body, range, "application/x-ndjson", true, {}); });
    CHECK(first.status == pl::store_status::ok);
    auto again =
        run<pl::store_result<pl::none>>(ioc, [&]() { return store.put_object(key, "other", no_range, "", true, {}); });
    CHECK(again.status == pl::store_status::exists);
    auto head = run<pl::store_result<pl::user_metadata>>(ioc, [&]() { return store.head_object(key); });
    REQUIRE(head.status == pl::store_status::ok);
    CHECK(head.value == range_metadata);
    auto raw_head = run<result<s3::head_result>>(ioc, [&]() { return c.head_object(bucket, key.get()); });
    REQUIRE(raw_head.has_value());
    CHECK(raw_head->content_type == "application/x-ndjson");
    auto missing = run<pl::store_result<pl::user_metadata>>(ioc, [&]() { return store.head_object(none_key); });
    CHECK(missing.status == pl::store_status::not_found);

    // Multipart: a 5 MiB part and a tail, read through the part reader.
    const std::string object = pattern(5U << 20, 1) + "tail";
    const std::uint64_t part_size = 5U << 20;
    pl::part_reader read = [&](std::uint64_t off, std::size_t len) -> result<std::string_view> {
        return std::string_view{object}.substr(static_cast<std::size_t>(off), len);
    };
    auto done = run<pl::store_result<pl::none>>(
        ioc, [&]() { return store.put_multipart(mp_key, object.size(), part_size, read, range, "text/plain", false); });
    REQUIRE(done.status == pl::store_status::ok);
    auto mh = run<result<s3::head_result>>(ioc, [&]() { return c.head_object(bucket, "mp"); });
    REQUIRE(mh.has_value());
    CHECK(mh->size == object.size());
    CHECK(pl::user_metadata{mh->metadata.begin(), mh->metadata.end()} == range_metadata);
    auto mp_head = run<pl::store_result<pl::user_metadata>>(ioc, [&]() { return store.head_object(mp_key); });
    CHECK(mp_head.value == range_metadata);

    // A part that cannot be read ends the upload as fatal, and the upload is aborted.
    pl::part_reader broken = [&](std::uint64_t off, std::size_t len) -> result<std::string_view> {
        if (off > 0) return iss::error{iss::errc::io_error, "spool read: injected"};
        return std::string_view{object}.substr(0, len);
    };
    auto failed = run<pl::store_result<pl::none>>(
        ioc, [&]() { return store.put_multipart(mp2_key, object.size(), part_size, broken, range, "", false); });
    CHECK(failed.status == pl::store_status::fatal);
    CHECK(failed.detail.find("injected") != std::string::npos);
    auto uploads = run<result<std::vector<s3::upload_info>>>(ioc, [&]() { return c.list_uploads(bucket, ""); });
    REQUIRE(uploads.has_value());
    CHECK(uploads->empty());
}

// ---- through the fault front (forwards Host and body unchanged: signatures stay valid) ----

namespace {
struct fronted {
    net::io_context ioc{1};
    test::fault_front front;
    s3::client c;
    std::string bucket;
    explicit fronted(std::string_view what, s3::client_options o = base_options())
        : front{ioc.get_executor(), http::parse_url(rgw().at("RGW_ENDPOINT")).value()},
          c{ioc.get_executor(), with_endpoint(std::move(o), front.url()), real_clock::instance(), 7},
          bucket{unique_bucket(what)} {
        // The bucket is created through the front too: Host is the front's, as signed.
        auto r = run<result<void>>(ioc, [&]() { return c.create_bucket(bucket); });
        REQUIRE(r.has_value());
    }
    static s3::client_options with_endpoint(s3::client_options o, std::string url) {
        o.endpoint = std::move(url);
        return o;
    }
    result<s3::put_result> put(std::string key, std::string body) {
        return run<result<s3::put_result>>(ioc, [&]() {
            std::vector<std::string_view> v{body};
            return c.put_object(bucket, key, std::move(v), s3::put_options{});
        });
    }
};
}  // namespace

TEST_CASE("front: 503 SlowDown twice then success, with jittered waits", "[s3][rgw][faults]") {
    fronted f{"slow"};
    f.front.add_rule({"PUT", "/k", test::fault::slow_down_503, 0, 2});
    const auto before = f.c.stats();
    auto r = f.put("k", "v");
    REQUIRE(r.has_value());
    CHECK(f.c.stats().attempts - before.attempts == 3);
    CHECK(f.c.stats().retries - before.retries == 2);
    const auto& waits = f.c.stats().recent_waits;
    REQUIRE(waits.size() >= 2);
    CHECK(waits[waits.size() - 2] <= 20ms);
    CHECK(waits[waits.size() - 1] <= 40ms);
}

TEST_CASE("front: 500 with an empty body, reset mid-upload and truncated response are retried", "[s3][rgw][faults]") {
    fronted f{"resets"};
    f.front.add_rule({"PUT", "/a", test::fault::internal_500_empty, 0, 1});
    REQUIRE(f.put("a", "one").has_value());
    const std::string big = pattern(3U << 20, 3);
    f.front.add_rule({"PUT", "/b", test::fault::reset_mid_request, 0, 1});
    REQUIRE(f.put("b", big).has_value());
    f.front.add_rule({"GET", "/b", test::fault::truncate_response, 0, 1});
    auto get = run<result<s3::get_result>>(f.ioc, [&]() { return f.c.get_object(f.bucket, "b"); });
    REQUIRE(get.has_value());
    CHECK(get->body == big);
    CHECK(f.c.stats().retries == 3);
}

TEST_CASE("front: an answer slower than the deadline gives up as retryable", "[s3][rgw][faults]") {
    auto o = base_options();
    o.retry.deadline = 500ms;
    fronted f{"deadline", o};
    f.front.add_rule({"HEAD", "/", test::fault::delay, 0, 100, 20000ms});
    const auto t0 = std::chrono::steady_clock::now();
    auto h = run<result<s3::head_result>>(f.ioc, [&]() { return f.c.head_object(f.bucket, "nothing"); });
    REQUIRE_FALSE(h.has_value());
    CHECK(s3::status_of(h.error()) == s3::status::retryable);
    CHECK(h.error().message().find("s3.retry.deadline") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - t0 < 15000ms);  // bounded by the 0.5 s deadline, not the 20 s answer
}

TEST_CASE("front: lower-case etag headers, a lost Complete response, and a corrupted body", "[s3][rgw][faults]") {
    fronted f{"quirks"};
    const std::string body = pattern((5U << 20) + 10, 9);
    f.front.add_rule({"PUT", "uploadId", test::fault::lowercase_headers, 0, 100});
    // The first Complete reaches RGW (the object is created) but its response is lost.
    f.front.add_rule({"POST", "uploadId", test::fault::drop_response, 0, 1});
    auto up = run<result<s3::complete_result>>(
        f.ioc, [&]() { return f.c.upload(f.bucket, "lost-complete", body, s3::put_options{}); });
    REQUIRE(up.has_value());
    // RGW answers the retried Complete of an upload it already completed with 200 (or, like
    // AWS, NoSuchUpload, which the client checks with HEAD): either way the object is there.
    int completes = 0;
    for (const auto& rq : f.front.requests())
        completes += rq.method == "POST" && rq.target.find("uploadId") != std::string::npos;
    CHECK(completes == 2);
    auto get = run<result<s3::get_result>>(f.ioc, [&]() { return f.c.get_object(f.bucket, "lost-complete"); });
    REQUIRE(get.has_value());
    CHECK(get->body == body);

    // A byte flipped on the way: RGW checks Content-MD5 and refuses (BadDigest), no retry.
    f.front.add_rule({"PUT", "/corrupt", test::fault::corrupt_body, 0, 1});
    auto bad = f.put("corrupt", "some body that gets corrupted");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error() == s3::errc::bad_digest);
    auto head = run<result<s3::head_result>>(f.ioc, [&]() { return f.c.head_object(f.bucket, "corrupt"); });
    CHECK_FALSE(head.has_value());  // nothing was stored

    // With UNSIGNED-PAYLOAD only Content-MD5 protects the body: RGW answers BadDigest.
    auto o = base_options();
    o.payload = s3::payload_signing::unsigned_payload;
    fronted u{"md5", o};
    u.front.add_rule({"PUT", "/corrupt", test::fault::corrupt_body, 0, 1});
    auto bad2 = u.put("corrupt", "another body that gets corrupted");
    REQUIRE_FALSE(bad2.has_value());
    CHECK(bad2.error() == s3::errc::bad_digest);
    CHECK(bad2.error().detail().find("BadDigest") != std::string::npos);
    CHECK(u.c.stats().retries == 0);
}

TEST_CASE("front: the probe picks CRC-32C for s3.checksum auto where the store refuses a wrong one",
          "[s3][rgw][faults][probe][checksum]") {
    fronted f{"crc-probe"};
    // The front checks x-amz-checksum-crc32c as AWS does; RGW 16 behind it does not.
    f.front.add_rule({"PUT", "", test::fault::verify_crc32c, 0, 1000});
    const auto key = s3::probe_key("p", 5);
    auto rep = run<s3::probe_report>(f.ioc, [&]() { return s3::probe_store(f.c, f.bucket, key); });
    CHECK(rep.usable());
    CHECK(rep.crc32c_verified == s3::capability::yes);
    CHECK(rep.crc32c_detail.empty());
    CHECK(s3::automatic_checksum(rep.crc32c_verified) == s3::checksum_kind::crc32c);
    // The wrong value was refused (400, not retried), the right one then accepted.
    std::vector<unsigned> crc_puts;
    for (const auto& rq : f.front.requests())
        if (rq.method == "PUT" && rq.target.find("-crc32c") != std::string::npos) crc_puts.push_back(1);
    CHECK(crc_puts.size() == 2);
    CHECK(f.c.stats().by_operation.at("PutObject").requests.at("400") == 1);

    // Uploads with the CRC-32C the client then uses pass the same front.
    f.c.use_checksum(s3::checksum_kind::crc32c);
    auto ok = f.put("after-probe", "a body with a right CRC-32C");
    CHECK(ok.has_value());
    const std::string mp_body = pattern((5U << 20) + 3, 4);  // upload() takes a view: it must outlive the task
    auto up = run<result<s3::complete_result>>(
        f.ioc, [&]() { return f.c.upload(f.bucket, "after-probe-mp", mp_body, s3::put_options{}); });
    CHECK(up.has_value());
}

TEST_CASE("start-up with s3.checksum auto (the default): CRC-32C where a wrong one is refused, Content-MD5 on RGW 16",
          "[s3][rgw][faults][checksum]") {
    for (const bool store_checks_crc32c : {true, false}) {
        INFO((store_checks_crc32c ? "store refuses a wrong CRC-32C" : "RGW 16 alone"));
        net::io_context ioc{1};
        test::fault_front front{ioc.get_executor(), http::parse_url(rgw().at("RGW_ENDPOINT")).value()};
        // A store that checks x-amz-checksum-crc32c as AWS does, in front of RGW 16, which does not.
        if (store_checks_crc32c) front.add_rule({"PUT", "", test::fault::verify_crc32c, 0, 1000});
        config::sink_config cfg;
        REQUIRE(cfg.s3.checksum == std::nullopt);
        cfg.s3.bucket = bucket_name{unique_bucket("auto-sum")};
        cfg.s3.endpoint = front.url();
        cfg.s3.region = region_name{rgw().at("RGW_REGION")};
        cfg.s3.access_key_id = access_key_id{rgw().at("RGW_ACCESS_KEY")};
        cfg.s3.secret_access_key = secret_access_key{rgw().at("RGW_SECRET_KEY")};
        s3::client direct{ioc.get_executor(), base_options()};
        make_bucket(ioc, direct, cfg.s3.bucket.get());

        std::vector<std::string> lines;  // what an operator reads at start
        struct restore_sink {
            ~restore_sink() { log::set_sink({}); }
        } restore;
        log::set_sink([&](std::string_view l) { lines.emplace_back(l); });
        auto setup = run<result<app::s3_setup>>(
            ioc, [&]() { return app::make_s3(ioc.get_executor(), cfg, pipeline::consumer_mode::single); });
        log::set_sink({});
        INFO((setup.has_value() ? std::string{} : setup.error().message()));
        REQUIRE(setup.has_value());
        // The probe's refused wrong CRC-32C is expected: no error line; the choice and its reason are logged.
        const auto logged = [&](std::string_view what) {
            return std::any_of(lines.begin(), lines.end(),
                               [&](const std::string& l) { return l.find(what) != std::string::npos; });
        };
        CHECK_FALSE(logged(" error "));
        CHECK(logged(store_checks_crc32c
                         ? "s3.checksum auto: crc32c (the store refused a wrong x-amz-checksum-crc32c)"
                         : "s3.checksum auto: md5 (PutObject with a wrong x-amz-checksum-crc32c answered 200"));
        CHECK(setup->crc32c_verified == (store_checks_crc32c ? s3::capability::yes : s3::capability::no));
        REQUIRE(setup->client != nullptr);
        CHECK(setup->client->options().checksum ==
              (store_checks_crc32c ? s3::checksum_kind::crc32c : s3::checksum_kind::md5));

        // The pipeline's first object after start: the request carries the checksum picked.
        const iss::object_key key{"p0/00000000000000000000.jsonl"};
        const std::string body = "{\"n\":1}\n{\"n\":2}\n";
        const pipeline::object_range range{0, 1, 2};
        auto put = run<pipeline::store_result<pipeline::none>>(
            ioc, [&]() { return setup->store->put_object(key, body, range, "application/x-ndjson", true, {}); });
        CHECK(put.status == pipeline::store_status::ok);
        const test::recorded_request* sent = nullptr;
        for (const auto& rq : front.requests())
            if (rq.method == "PUT" && rq.target.find(key.get()) != std::string::npos) sent = &rq;
        REQUIRE(sent != nullptr);
        if (store_checks_crc32c) {
            CHECK(sent->headers.get("x-amz-checksum-crc32c") == s3::crc32c_header_value(s3::crc32c(body)));
            CHECK_FALSE(sent->headers.contains("content-md5"));
        } else {
            const std::vector<std::string_view> parts{body};
            CHECK(sent->headers.get("content-md5") == s3::content_md5(parts));
            CHECK_FALSE(sent->headers.contains("x-amz-checksum-crc32c"));
        }
        setup = result<app::s3_setup>{};  // the client and its credential renewal go before the loop
    }
}

TEST_CASE(
    "payload_signing auto (the default): UNSIGNED-PAYLOAD inside https, the body's SHA-256 over plain http, as sent",
    "[s3][rgw][faults][tls][payload]") {
    net::io_context ioc{1};
    // Two fronts before RGW's plain endpoint, one serving https with the fixture's certificate:
    // each records the x-amz-content-sha256 header the client sent it (inside TLS for one).
    const auto upstream = http::parse_url(rgw().at("RGW_ENDPOINT")).value();
    const auto tls_front_owner = tls_front_to_rgw(ioc);
    test::fault_front& tls_front = *tls_front_owner;
    test::fault_front plain_front{ioc.get_executor(), upstream};
    CHECK(tls_front.url().rfind("https://127.0.0.1:", 0) == 0);
    const std::string body = "a body whose hash is signed only over plain http";
    const auto bucket = unique_bucket("sign");
    for (auto* front : {&tls_front, &plain_front}) {
        const bool https = front == &tls_front;
        INFO((https ? "https" : "http"));
        config::sink_config cfg;  // s3.payload_signing and s3.checksum keep their defaults (auto)
        REQUIRE(cfg.s3.payload_signing == std::nullopt);
        cfg.s3.endpoint = front->url();
        cfg.s3.region = region_name{rgw().at("RGW_REGION")};
        cfg.s3.access_key_id = access_key_id{rgw().at("RGW_ACCESS_KEY")};
        cfg.s3.secret_access_key = secret_access_key{rgw().at("RGW_SECRET_KEY")};
        if (https) cfg.s3.tls.ca_file = rgw().at("RGW_CA_FILE");
        s3::client c{ioc.get_executor(), app::s3_options(cfg)};
        if (https) make_bucket(ioc, c, bucket);
        const std::string key = https ? "over-https" : "over-http";
        auto put = run<result<s3::put_result>>(ioc, [&]() {
            std::vector<std::string_view> v{body};
            return c.put_object(bucket, key, std::move(v), s3::put_options{});
        });
        INFO((put.has_value() ? std::string{} : put.error().message()));
        REQUIRE(put.has_value());  // RGW checked the signature over what was sent
        const test::recorded_request* sent = nullptr;
        for (const auto& rq : front->requests())
            if (rq.method == "PUT" && rq.target.find(key) != std::string::npos) sent = &rq;
        REQUIRE(sent != nullptr);
        CHECK(sent->headers.get("x-amz-content-sha256") == (https ? "UNSIGNED-PAYLOAD" : sigv4::sha256_hex(body)));
        auto got = run<result<s3::get_result>>(ioc, [&]() { return c.get_object(bucket, key); });
        REQUIRE(got.has_value());
        CHECK(got->body == body);
    }
}

TEST_CASE("front: the probe's first write, whose answer was lost, is retried into a 412: still usable",
          "[s3][rgw][faults][probe]") {
    fronted f{"lost-probe"};
    // The first PUT of the probe object reaches RGW, then the connection is dropped: the
    // retry of the same conditional write gets 412 (the object is there, written by it).
    f.front.add_rule({"PUT", "/.iggy-s3-sink/probe-", test::fault::drop_response, 0, 1});
    const auto key = s3::probe_key("p", 11);
    auto rep = run<s3::probe_report>(f.ioc, [&]() { return s3::probe_store(f.c, f.bucket, key); });
    CHECK(rep.bucket_detail.empty());
    CHECK(rep.bucket_access);
    CHECK(rep.usable());
    CHECK(rep.conditional_put == s3::capability::yes);
    CHECK(rep.cleaned_up);
    REQUIRE_FALSE(f.front.requests().empty());
    unsigned dropped = 0;
    for (const auto& rq : f.front.requests()) dropped += rq.applied == test::fault::drop_response;
    CHECK(dropped == 1);
    CHECK(f.c.stats().by_operation.at("PutObject").requests.at("412") >= 2);  // the retry, then step 3
}

TEST_CASE("front: a probe step that gets no answer is interrupted (probe again); an answer is the store's",
          "[s3][rgw][faults][probe]") {
    auto o = base_options();
    o.retry.attempts = 3;
    {
        // The write of bucket access: every attempt reset before an answer.
        fronted f{"probe-reset-write", o};
        f.front.add_rule({"PUT", "/.iggy-s3-sink/probe-", test::fault::reset_before_response, 0, 1000});
        auto rep =
            run<s3::probe_report>(f.ioc, [&]() { return s3::probe_store(f.c, f.bucket, s3::probe_key("p", 12)); });
        CHECK(rep.authenticated);
        CHECK_FALSE(rep.bucket_access);
        CHECK(rep.interrupted);
    }
    {
        // Bucket access passes; the conditional PutObject over the existing key gets no answer.
        fronted f{"probe-reset-cond", o};
        f.front.add_rule({"PUT", "/.iggy-s3-sink/probe-", test::fault::reset_before_response, 1, 1000});
        auto rep =
            run<s3::probe_report>(f.ioc, [&]() { return s3::probe_store(f.c, f.bucket, s3::probe_key("p", 13)); });
        CHECK(rep.bucket_access);
        CHECK(rep.conditional_put == s3::capability::unknown);
        CHECK(rep.interrupted);
    }
    {
        // An HTTP answer every time (here 503) is the store's answer, as a 501 NotImplemented
        // refusing If-None-Match would be: not interrupted.
        fronted f{"probe-503-cond", o};
        f.front.add_rule({"PUT", "/.iggy-s3-sink/probe-", test::fault::slow_down_503, 1, 1000});
        auto rep =
            run<s3::probe_report>(f.ioc, [&]() { return s3::probe_store(f.c, f.bucket, s3::probe_key("p", 14)); });
        CHECK(rep.bucket_access);
        CHECK(rep.conditional_put == s3::capability::unknown);
        CHECK_FALSE(rep.interrupted);
    }
    {
        // A refusal is the store's answer: not interrupted.
        fronted f{"probe-missing", o};
        auto rep = run<s3::probe_report>(
            f.ioc, [&]() { return s3::probe_store(f.c, "no-such-bucket-x2", s3::probe_key("p", 15)); });
        CHECK_FALSE(rep.bucket_access);
        CHECK_FALSE(rep.interrupted);
    }
}

TEST_CASE("front: an upload that gives up aborts its multipart upload", "[s3][rgw][faults]") {
    auto o = base_options();
    o.retry.attempts = 2;
    fronted f{"giveup", o};
    f.front.add_rule({"PUT", "partNumber=2", test::fault::slow_down_503, 0, 100});
    const std::string body = pattern((5U << 20) * 2, 5);
    auto up = run<result<s3::complete_result>>(
        f.ioc, [&]() { return f.c.upload(f.bucket, "gives-up", body, s3::put_options{}); });
    REQUIRE_FALSE(up.has_value());
    CHECK(s3::status_of(up.error()) == s3::status::retryable);
    CHECK(up.error().message().find("gave up after 2 attempts") != std::string::npos);
    bool aborted = false;
    for (const auto& rq : f.front.requests())
        aborted |= rq.method == "DELETE" && rq.target.find("uploadId") != std::string::npos;
    CHECK(aborted);
    auto uploads = run<result<std::vector<s3::upload_info>>>(f.ioc, [&]() { return f.c.list_uploads(f.bucket, ""); });
    REQUIRE(uploads.has_value());
    CHECK(uploads->empty());
}

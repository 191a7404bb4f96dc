// SPDX-License-Identifier: Apache-2.0
#pragma once
// Fakes of the pipeline's ports for unit tests: an in-memory S3 with switchable conditional
// behaviour and scripted failures, an in-memory offset store, a line encoder, a namer, a
// sleeper that advances a manual clock. All record their calls in one shared event log, so
// tests can assert on ORDER (commit after durability).

#include "common/clock.hpp"
#include "pipeline/delivery.hpp"
#include "pipeline/ports.hpp"
#include "pipeline/router.hpp"
#include "s3/checksum.hpp"
#include "tests/support/clock_sleeper.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace fakes {

namespace pl = iss::pipeline;

/// Runs an awaitable to completion on a fresh io_context.
template <class T>
T run(boost::asio::awaitable<T> t) {
    boost::asio::io_context io;
    std::optional<T> out;
    std::exception_ptr ep;
    boost::asio::co_spawn(io, std::move(t), [&](std::exception_ptr e, T v) {
        ep = e;
        if (!e) out = std::move(v);
    });
    io.run();
    if (ep) std::rethrow_exception(ep);
    return std::move(*out);
}
inline void run(boost::asio::awaitable<void> t) {
    boost::asio::io_context io;
    std::exception_ptr ep;
    boost::asio::co_spawn(io, std::move(t), [&](std::exception_ptr e) { ep = e; });
    io.run();
    if (ep) std::rethrow_exception(ep);
}

using event_log = std::vector<std::string>;

struct stored_object {
    std::string body;
    pl::object_range range;
    std::string content_type;
    bool multipart = false;
};

struct fake_store final : pl::object_store {
    explicit fake_store(event_log& log) : log_{log} {}
    bool honours_put = true;       ///< If-None-Match on PutObject
    bool honours_complete = true;  ///< If-None-Match on CompleteMultipartUpload
    int fail_next = 0;             ///< the next N writes (put/part/complete) answer `failure`
    pl::store_status failure = pl::store_status::retryable;
    std::string failure_code;  ///< the store's error code of `failure` (store_result::code)
    int fail_heads = 0;
    int fail_completes = 0;       ///< the next N CompleteMultipartUploads answer `failure` (after every part went up)
    bool strip_metadata = false;  ///< HEAD answers without the iggy-* metadata
    std::map<std::string, stored_object> objects;
    int puts = 0, creates = 0, parts = 0, completes = 0, aborts = 0, heads = 0, overwrites = 0;
    std::size_t largest_part = 0;
    std::vector<bool> complete_conditions;
    /// Bodies (puts and parts) that came with the writer's digests, and those with any digest
    /// wrong (answered as S3 does: BadDigest, fatal). Every digest given is checked.
    int checksums_given = 0, bad_checksums = 0;
    bool checksum_ok(std::string_view body, const iss::body_digests& given) {
        if (given.empty()) return true;
        ++checksums_given;
        iss::s3::body_digester d{iss::s3::digest_set{.crc32c = true, .md5 = true, .sha256 = true}};
        d.update(body);
        const auto right = d.finish();
        if ((!given.crc32c || given.crc32c == right.crc32c) && (!given.md5 || given.md5 == right.md5) &&
            (!given.sha256 || given.sha256 == right.sha256))
            return true;
        ++bad_checksums;
        log_.push_back("bad-digest");
        return false;
    }
    /// When set, the first PutObject of a key with this prefix waits until another key's
    /// PutObject starts (or 5 s of real time, a safety valve); `hold_released_by_other` says
    /// which (the consumer's partitions must upload concurrently).
    std::string hold_prefix;
    std::optional<boost::asio::steady_timer> hold;
    bool hold_done = false;
    bool hold_released_by_other = false;

    struct upload {
        std::string key;
        pl::object_range range;
        std::string content_type;
        std::map<int, std::string> parts;
    };
    std::map<std::string, upload> uploads;
    int next_upload = 1;

    pl::task<pl::store_result<pl::none>> put_object(const iss::object_key& key, std::string_view body,
                                                    const pl::object_range& range, std::string_view ct,
                                                    bool if_none_match, iss::body_digests digests) override {
        if (!checksum_ok(body, digests)) co_return pl::store_result<pl::none>{pl::store_status::fatal, {}, "BadDigest"};
        if (!hold_prefix.empty()) {
            if (!hold_done && key.get().rfind(hold_prefix, 0) == 0) {
                hold_done = true;
                hold.emplace(co_await boost::asio::this_coro::executor);
                hold->expires_after(std::chrono::seconds{5});
                boost::system::error_code ec;
                co_await hold->async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
                hold_released_by_other = ec == boost::asio::error::operation_aborted;
                // The timer belongs to this run's io_context, which goes before the store does
                // (fakes::run): destroying it later would touch the freed timer service (ASan).
                hold.reset();
            } else if (hold && key.get().rfind(hold_prefix, 0) != 0) {
                hold->cancel();
            }
        }
        ++puts;
        if (fail_next > 0) {
            --fail_next;
            log_.push_back("put-failed " + key.get());
            co_return pl::store_result<pl::none>{failure, {}, "injected", failure_code};
        }
        if (objects.count(key.get())) {
            if (if_none_match && honours_put) {
                log_.push_back("put-412 " + key.get());
                co_return pl::store_result<pl::none>{pl::store_status::exists, {}, "412"};
            }
            ++overwrites;
        }
        objects[key.get()] = stored_object{std::string{body}, range, std::string{ct}, false};
        log_.push_back(fmt::format("put {} {}..{}", key.get(), range.first_offset, range.last_offset));
        co_return pl::store_result<pl::none>{};
    }
    /// The multipart sequence as a store sees it: Create, the parts in order, Complete, and
    /// Abort when not completed (each counted; `fail_next` fails a part or the Complete).
    pl::task<pl::store_result<pl::none>> put_multipart(const iss::object_key& key, std::uint64_t size,
                                                       std::uint64_t part_size, pl::part_reader read,
                                                       const pl::object_range& range, std::string_view ct,
                                                       bool if_none_match) override {
        ++creates;
        const std::string id = "up" + std::to_string(next_upload++);
        uploads[id] = upload{key.get(), range, std::string{ct}, {}};
        auto res = complete_parts(key, id, size, part_size, read, if_none_match);
        if (res.status != pl::store_status::ok) {
            ++aborts;
            uploads.erase(id);
        }
        co_return res;
    }
    pl::store_result<pl::none> complete_parts(const iss::object_key& key, const std::string& id, std::uint64_t size,
                                              std::uint64_t part_size, const pl::part_reader& read,
                                              bool if_none_match) {
        int n = 1;
        for (std::uint64_t off = 0; off < size; off += part_size, ++n) {
            auto body = read(off, static_cast<std::size_t>(std::min(part_size, size - off)));
            if (!body) return {pl::store_status::fatal, {}, body.error().message()};
            if (!checksum_ok(body->bytes, body->digests)) return {pl::store_status::fatal, {}, "BadDigest"};
            ++parts;
            largest_part = std::max(largest_part, body->bytes.size());
            if (fail_next > 0) {
                --fail_next;
                return {failure, {}, "injected"};
            }
            uploads.at(id).parts[n] = std::string{body->bytes};
        }
        ++completes;
        complete_conditions.push_back(if_none_match);
        if (fail_next > 0 || fail_completes > 0) {
            --(fail_next > 0 ? fail_next : fail_completes);
            return {failure, {}, "injected"};
        }
        if (objects.count(key.get())) {
            if (if_none_match && honours_complete) {
                log_.push_back("complete-412 " + key.get());
                return {pl::store_status::exists, {}, "412"};
            }
            ++overwrites;
        }
        auto& u = uploads.at(id);
        std::string body;
        for (const auto& [number, bytes] : u.parts) body += bytes;
        objects[key.get()] = stored_object{body, u.range, u.content_type, true};
        log_.push_back(fmt::format("complete {} {}..{}", key.get(), u.range.first_offset, u.range.last_offset));
        uploads.erase(id);
        return {};
    }
    pl::task<pl::store_result<pl::user_metadata>> head_object(const iss::object_key& key) override {
        ++heads;
        if (fail_heads > 0) {
            --fail_heads;
            co_return pl::store_result<pl::user_metadata>{pl::store_status::retryable, {}, "injected"};
        }
        auto it = objects.find(key.get());
        if (it == objects.end()) co_return pl::store_result<pl::user_metadata>{pl::store_status::not_found, {}, "404"};
        pl::user_metadata m;
        if (!strip_metadata)
            for (auto& [k, v] : pl::to_user_metadata(it->second.range)) m[k] = v;
        co_return pl::store_result<pl::user_metadata>{pl::store_status::ok, m, {}};
    }

private:
    event_log& log_;
};

struct fake_offsets final : pl::offset_store {
    explicit fake_offsets(event_log& log) : log_{log} {}
    std::map<pl::partition_ref, std::uint64_t> stored;
    int fail_next = 0;
    pl::offset_status failure = pl::offset_status::retryable;
    bool not_owner = false;
    int stores = 0;

    /// Called with each offset about to be stored (tests assert durability there).
    std::function<void(std::uint64_t)> audit;

    pl::task<pl::offset_result> store_offset(const pl::partition_ref& p, std::uint64_t off) override {
        ++stores;
        if (audit) audit(off);
        if (not_owner) {
            log_.push_back(fmt::format("commit-refused {} {}", p.partition, off));
            co_return pl::offset_result{pl::offset_status::not_owner, {}, "3022"};
        }
        if (fail_next > 0) {
            --fail_next;
            co_return pl::offset_result{failure, {}, "injected"};
        }
        stored[p] = off;
        log_.push_back(fmt::format("commit {} {}", p.partition, off));
        co_return pl::offset_result{pl::offset_status::ok, off, {}};
    }
    /// Partitions whose load answers an offset reset (offset_result::reset) with this text, as
    /// the Iceberg resume point does for a table of an earlier topic.
    std::map<pl::partition_ref, std::string> resets;
    int loads = 0;

    pl::task<pl::offset_result> load_offset(const pl::partition_ref& p) override {
        ++loads;
        pl::offset_result r;
        if (auto it = stored.find(p); it != stored.end()) r.offset = it->second;
        if (auto it = resets.find(p); it != resets.end()) r.reset = it->second;
        co_return r;
    }

private:
    event_log& log_;
};

/// "offset:payload\n" per record; a payload "BAD" is a bad message. begin/finish write
/// nothing (so an object body is exactly its records).
struct line_encoder final : pl::record_encoder {
    /// Encoders alive now and at most, counted when `live` is set (line_encoders::live).
    struct counts {
        std::atomic<int> now{0};
        std::atomic<int> peak{0};
    };
    explicit line_encoder(counts* live = nullptr, std::uint64_t state = 0) : live_{live}, state_{state} {
        if (!live_) return;
        const int n = ++live_->now;
        for (int p = live_->peak.load(); n > p && !live_->peak.compare_exchange_weak(p, n);) {}
    }
    ~line_encoder() override {
        if (live_) --live_->now;
    }
    line_encoder(const line_encoder&) = delete;
    line_encoder& operator=(const line_encoder&) = delete;
    void begin(std::string&) override {}
    iss::result<void> append(const pl::message& m, const pl::partition_ref&, std::string& out) override {
        std::string_view payload{reinterpret_cast<const char*>(m.payload.data()), m.payload.size()};
        if (payload == "BAD") return iss::error{iss::errc::parse_error, "payload is not JSON"};
        out += fmt::format("{}:{}\n", m.offset, payload);
        return {};
    }
    void finish(std::string&) override {}
    std::uint64_t memory() const override { return state_; }

private:
    counts* live_;
    std::uint64_t state_;
};
struct line_encoders final : pl::encoder_factory {
    std::unique_ptr<pl::record_encoder> make() const override { return std::make_unique<line_encoder>(&live, state); }
    std::string content_type() const override { return "application/x-ndjson"; }
    std::uint64_t state_bytes() const override { return state; }
    /// What each encoder holds beyond its output from the start (as a zstd context does once
    /// its first block is compressed).
    std::uint64_t state = 0;
    mutable line_encoder::counts live;
};

struct offset_namer final : pl::key_namer {
    iss::object_key key(const pl::partition_ref& p, std::uint64_t first) const override {
        return iss::object_key{fmt::format("{}/{}/partition={}/{:020}.jsonl", p.stream, p.topic, p.partition, first)};
    }
    /// With a topic generation (as `{topic_created}` renders it): `.../g=GEN/partition=...`.
    iss::object_key key_in(const pl::partition_ref& p, std::uint64_t first, std::uint64_t gen) const override {
        if (gen == 0) return key(p, first);
        return iss::object_key{
            fmt::format("{}/{}/g={}/partition={}/{:020}.jsonl", p.stream, p.topic, gen, p.partition, first)};
    }
    iss::object_key key_for(const pl::partition_ref& p, const pl::message& first) const override {
        return key_in(p, first.offset, first.topic_created_us);
    }
};

/// Keys by tenant: payload "A:..." belongs to tenant A, the encoded partition is the text
/// before ':' (record-dependent keys: several objects open per partition).
struct tenant_namer final : pl::key_namer {
    static std::string tenant_of(const pl::message& m) {
        std::string_view s{reinterpret_cast<const char*>(m.payload.data()), m.payload.size()};
        return std::string{s.substr(0, s.find(':'))};
    }
    iss::object_key key(const pl::partition_ref& p, std::uint64_t first) const override {
        return iss::object_key{fmt::format("{}/t=?/{:020}", p.partition, first)};
    }
    iss::result<pl::encoded_partition> encode(const pl::partition_ref&, const pl::message& m) const override {
        ++encodes;
        return pl::encoded_partition{tenant_of(m), std::nullopt};
    }
    iss::object_key key_for(const pl::partition_ref& p, const pl::message& first) const override {
        return iss::object_key{fmt::format("{}/t={}/{:020}", p.partition, tenant_of(first), first.offset)};
    }
    bool record_dependent() const override { return true; }
    mutable std::atomic<int> encodes{0};  ///< encode calls (a key parse each, on a real namer)
};

using clock_sleeper = iss::test::clock_sleeper;

struct fake_dead_letters final : pl::dead_letter_sink {
    explicit fake_dead_letters(event_log& log) : log_{log} {}
    int fail_next = 0;
    std::vector<std::pair<std::uint64_t, std::string>> sent;
    pl::task<pl::source_status> send(const pl::message& m, const pl::partition_ref& src, std::string reason) override {
        if (fail_next > 0) {
            --fail_next;
            co_return pl::source_status::retryable;
        }
        sent.emplace_back(m.offset, reason);
        log_.push_back(fmt::format("dead-letter {} {}", src.partition, m.offset));
        co_return pl::source_status::ok;
    }

private:
    event_log& log_;
};

/// A table step (invariant 7) that records each call ("table <partition> <through> <key>,..."
/// in the event log) and can fail its next calls.
struct fake_table final : pl::table_step {
    explicit fake_table(event_log& log) : log_{log} {}
    int fail_next = 0;
    pl::table_status failure = pl::table_status::retryable;
    std::vector<std::vector<pl::durable_object>> calls;  ///< every call's objects, failed ones too
    std::vector<pl::durable_object> taken;               ///< the objects of the calls that succeeded
    pl::task<pl::table_result> commit(const pl::partition_ref& p, std::span<const pl::durable_object> objects,
                                      std::uint64_t through) override {
        calls.emplace_back(objects.begin(), objects.end());
        std::string keys;
        for (const auto& o : objects) keys += (keys.empty() ? "" : ",") + o.key.get();
        if (batching && !handing.contains(p)) {
            log_.push_back(fmt::format("table-deferred {} {} {}", p.partition, through, keys));
            co_return pl::table_result{pl::table_status::deferred, "batching"};
        }
        if (fail_next > 0) {
            --fail_next;
            log_.push_back(fmt::format("table-failed {} {} {}", p.partition, through, keys));
            co_return pl::table_result{failure, "injected"};
        }
        taken.insert(taken.end(), objects.begin(), objects.end());
        log_.push_back(fmt::format("table {} {} {}", p.partition, through, keys));
        co_return pl::table_result{};
    }
    void handing_over(const pl::partition_ref& p, bool on) override {
        log_.push_back(fmt::format("handing-over {} {}", p.partition, on ? "on" : "off"));
        if (on) handing.insert(p);
        else handing.erase(p);
    }
    bool batching = false;  ///< defer every call except those of a partition being handed over
    std::set<pl::partition_ref> handing;

private:
    event_log& log_;
};

/// Messages with owned payloads (the views point into `payloads`).
struct batch {
    std::deque<std::string> payloads;
    std::vector<pl::message> messages;
    /// offsets [from, to], record time `ts0 + i * step_us`, payload "m<offset>" unless given.
    static batch range(std::uint64_t from, std::uint64_t to, std::uint64_t ts0 = 1'000'000,
                       std::uint64_t step_us = 1000) {
        batch b;
        for (std::uint64_t o = from; o <= to; ++o) b.add(o, ts0 + (o - from) * step_us, fmt::format("m{}", o));
        return b;
    }
    void add(std::uint64_t offset, std::uint64_t ts, std::string payload) {
        payloads.push_back(std::move(payload));
        pl::message m;
        m.offset = offset;
        m.timestamp_us = ts;
        m.payload = std::as_bytes(std::span{payloads.back().data(), payloads.back().size()});
        messages.push_back(m);
    }
    std::span<const pl::message> span() const { return messages; }
};

/// One writer's world: fakes, options, clock.
/// Part hashers computing CRC-32C, MD5 and SHA-256 (the daemon asks for what its client needs).
inline pl::part_hasher_factory all_digests() {
    struct hasher final : pl::part_hasher {
        iss::s3::body_digester d{iss::s3::digest_set{.crc32c = true, .md5 = true, .sha256 = true}};
        void update(std::string_view b) noexcept override { d.update(b); }
        iss::body_digests finish() noexcept override { return d.finish(); }
    };
    return [] { return std::make_unique<hasher>(); };
}

struct world {
    event_log events;
    iss::manual_clock clock;
    fake_store store{events};
    fake_offsets offsets{events};
    line_encoders encoders;
    offset_namer namer;
    clock_sleeper sleeper{clock};
    fake_dead_letters dead_letters{events};
    fake_table table{events};
    pl::delivery_health health;  ///< the writers' (and routers') delivery_health
    bool with_table = false;     ///< plug `table` in as the writers' table step
    pl::writer_options options;
    pl::rotation_options rotation;
    pl::partition_ref p{"app", "requests", 1};

    world() {
        options.plan = *pl::plan_delivery({true, true}, pl::conditional_writes::auto_detect, pl::consumer_mode::single);
        options.part_size = 64;
        options.retry_backoff = {std::chrono::milliseconds{10}, std::chrono::milliseconds{100}};
        rotation.max_records = 0;
        rotation.max_bytes = 0;
        rotation.max_span = {};
        rotation.schedule = {};
        rotation.idle = {};
    }
    pl::writer_ports ports() {
        pl::writer_ports p{store, offsets, encoders, namer, sleeper, clock, &dead_letters};
        p.workers = test_workers();
        p.part_hashers = all_digests();  // (the fake store checks every digest it is given)
        p.health = &health;
        if (with_table) p.table = &table;
        return p;
    }
    /// performance.workers for every writer of the tests: ISS_TEST_WORKERS threads (unset or
    /// 1: none, formatting inline). CTest runs the pipeline tests both ways.
    static iss::worker_pool* test_workers() {
        static iss::worker_pool pool{[] {
            const char* v = std::getenv("ISS_TEST_WORKERS");
            const std::size_t n = v ? std::strtoul(v, nullptr, 10) : 0;
            return n > 1 ? n : std::size_t{0};
        }()};
        return &pool;
    }
    pl::rotation_policy policy() const { return *pl::rotation_policy::make(rotation); }
    std::unique_ptr<pl::router> make_router() { return std::make_unique<pl::router>(options, policy(), ports()); }
    /// Every (offset) held by the bucket, from the objects' bodies: offset -> times present.
    std::map<std::uint64_t, int> bucket_offsets() const {
        std::map<std::uint64_t, int> out;
        for (const auto& [k, o] : store.objects) {
            std::string_view b = o.body;
            while (!b.empty()) {
                auto nl = b.find('\n');
                auto line = b.substr(0, nl);
                out[std::stoull(std::string{line.substr(0, line.find(':'))})] += 1;
                b.remove_prefix(nl + 1);
            }
        }
        return out;
    }
    /// Every (partition key prefix, offset) held by the bucket -> times present.
    std::map<std::pair<std::string, std::uint64_t>, int> bucket_records() const {
        std::map<std::pair<std::string, std::uint64_t>, int> out;
        for (const auto& [k, o] : store.objects) {
            auto part = k.substr(0, k.rfind('/'));
            std::string_view b = o.body;
            while (!b.empty()) {
                auto nl = b.find('\n');
                auto line = b.substr(0, nl);
                out[{part, std::stoull(std::string{line.substr(0, line.find(':'))})}] += 1;
                b.remove_prefix(nl + 1);
            }
        }
        return out;
    }
    std::size_t index_of(std::string_view prefix) const {
        for (std::size_t i = 0; i < events.size(); ++i)
            if (events[i].rfind(prefix, 0) == 0) return i;
        return events.size();
    }
};

/// A partition writer on the world's fakes, for partition `w.p`, with `committed` stored.
inline std::unique_ptr<iss::pipeline::partition_writer> make_writer(world& w, const iss::pipeline::rotation_policy& rp,
                                                                    std::optional<std::uint64_t> committed = {}) {
    return std::make_unique<iss::pipeline::partition_writer>(w.p, w.options, rp, w.ports(), committed);
}

}  // namespace fakes

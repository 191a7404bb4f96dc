// SPDX-License-Identifier: Apache-2.0
// performance.workers (delivery.cpp feed_run / encode_run): records formatted on a worker pool
// give exactly the objects, keys, ranges, store calls and commits of formatting inline, for
// every rotation and bad-message rule on the way; and the formatting does run on the pool.
#include "fakes.hpp"

#include "catch2_compat.hpp"

#include <mutex>
#include <set>
#include <thread>

namespace pl = iss::pipeline;
using fakes::batch;
using fakes::run;
using fakes::world;

namespace {

/// line_encoder that notes the threads it ran on.
struct thread_noting_encoders final : pl::encoder_factory {
    struct encoder final : pl::record_encoder {
        explicit encoder(const thread_noting_encoders& f) : f_{f} {}
        void begin(std::string& out) override { inner_.begin(out); }
        iss::result<void> append(const pl::message& m, const pl::partition_ref& p, std::string& out) override {
            {
                const std::lock_guard lock{f_.mu};
                f_.threads.insert(std::this_thread::get_id());
            }
            return inner_.append(m, p, out);
        }
        void finish(std::string& out) override { inner_.finish(out); }

    private:
        const thread_noting_encoders& f_;
        fakes::line_encoder inner_;
    };
    std::unique_ptr<pl::record_encoder> make() const override { return std::make_unique<encoder>(*this); }
    std::string content_type() const override { return "application/x-ndjson"; }
    mutable std::mutex mu;
    mutable std::set<std::thread::id> threads;
};

using fakes::tenant_namer;

/// 1 000 messages in batches of 100, with bad messages (BAD) here and there, fed to one
/// writer whose formatting runs on `pool`; then a clean stop.
struct outcome {
    std::map<std::string, fakes::stored_object> objects;
    std::vector<std::string> events;
    std::optional<std::uint64_t> committed;
    pl::writer_counters counters;
    std::set<std::thread::id> threads;
};

/// Object limits: the defaults rotate often; `parts` makes objects of several parts (each
/// spooled, on the pool thread when a run fills it).
struct limits {
    std::uint64_t part_size = 1024;
    std::uint64_t max_records = 37;
    std::uint64_t max_bytes = 700;
};
constexpr limits parts{256, 150, 5000};

outcome feed_all(iss::worker_pool& pool, bool single_part, pl::bad_message_policy bad, bool by_tenant = false,
                 limits l = {}) {
    world w;
    w.options.part_size = l.part_size;
    if (single_part)
        w.options.plan =
            *pl::plan_delivery({true, false}, pl::conditional_writes::auto_detect, pl::consumer_mode::single);
    w.options.on_bad_message = bad;
    w.rotation.max_records = l.max_records;
    w.rotation.max_bytes = l.max_bytes;
    w.rotation.max_span = std::chrono::milliseconds{90};  // record times 1 ms apart: every 90 messages
    auto rp = w.policy();
    thread_noting_encoders enc;
    tenant_namer tenants;
    const pl::key_namer& namer = by_tenant ? static_cast<const pl::key_namer&>(tenants) : w.namer;
    pl::writer_ports ports{w.store, w.offsets, enc, namer, w.sleeper, w.clock, &w.dead_letters};
    ports.workers = &pool;
    pl::partition_writer wr{w.p, w.options, rp, ports, std::nullopt};
    for (std::uint64_t from = 0; from < 1000; from += 100) {
        batch b;
        for (std::uint64_t o = from; o < from + 100; ++o) {
            const bool bad_one = o % 97 == 13 || o % 250 == 249;
            // By tenant: runs of 30 messages of A, 20 of B, 10 of C, in turn (C's runs are
            // short enough to be formatted inline, the others go to the pool).
            const char* tenant = o % 60 < 30 ? "A:" : o % 60 < 50 ? "B:" : "C:";
            std::string payload = bad_one
                                      ? std::string{"BAD"}
                                      : fmt::format("{}m{}{}", by_tenant ? tenant : "", o, std::string(o % 23, 'x'));
            b.add(o, 1'000'000 + o * 1000, std::move(payload));
        }
        const auto st = run(wr.feed(b.span()));
        if (st != pl::feed_status::ok) break;
    }
    run(wr.flush(pl::rotate_reason::stop));
    return outcome{w.store.objects, w.events, wr.committed(), wr.counters(), enc.threads};
}

void check_same(const outcome& a, const outcome& b) {
    REQUIRE(a.objects.size() == b.objects.size());
    for (const auto& [key, o] : a.objects) {
        INFO(key);
        REQUIRE(b.objects.count(key) == 1);
        CHECK(b.objects.at(key).body == o.body);
        CHECK(b.objects.at(key).range == o.range);
    }
    CHECK(a.events == b.events);  // the same store calls and commits, in the same order
    CHECK(a.committed == b.committed);
    CHECK(a.counters.records_written == b.counters.records_written);
    CHECK(a.counters.bad_skipped == b.counters.bad_skipped);
    CHECK(a.counters.bad_dead_lettered == b.counters.bad_dead_lettered);
}

}  // namespace

TEST_CASE("workers: a pool writes the same objects and commits as formatting inline", "[pipeline][workers]") {
    const auto single_part = GENERATE(false, true);
    const auto bad =
        GENERATE(pl::bad_message_policy::skip, pl::bad_message_policy::dead_letter, pl::bad_message_policy::fail);
    INFO("single_part " << single_part << ", policy " << static_cast<int>(bad));
    iss::worker_pool inline_pool{0};
    iss::worker_pool pool{4};
    const outcome a = feed_all(inline_pool, single_part, bad);
    const outcome b = feed_all(pool, single_part, bad);
    check_same(a, b);
    // The rules above did rotate, many times (fail: the partition stops at offset 13).
    CHECK(a.objects.size() > (bad == pl::bad_message_policy::fail ? 0u : 20u));
    // Inline: only this thread formatted. With the pool, most records were formatted on its
    // threads (feed_one, on this thread, takes the first of each run).
    CHECK(a.threads == std::set<std::thread::id>{std::this_thread::get_id()});
    std::set<std::thread::id> others = b.threads;
    others.erase(std::this_thread::get_id());
    CHECK_FALSE(others.empty());
}

TEST_CASE("workers: objects of several parts (spooled on the pool thread) come out the same", "[pipeline][workers]") {
    const auto bad = GENERATE(pl::bad_message_policy::skip, pl::bad_message_policy::dead_letter);
    iss::worker_pool inline_pool{0};
    iss::worker_pool pool{4};
    const outcome a = feed_all(inline_pool, false, bad, false, parts);
    const outcome b = feed_all(pool, false, bad, false, parts);
    check_same(a, b);
    std::size_t multipart = 0;
    for (const auto& [key, o] : b.objects) {
        if (!o.multipart) continue;
        ++multipart;
        CHECK(b.objects.at(key).body == a.objects.at(key).body);
    }
    CHECK(multipart >= 4);
}

TEST_CASE("workers: a run stops where an object rotates, so no object passes its limits", "[pipeline][workers]") {
    iss::worker_pool pool{2};
    const outcome b = feed_all(pool, false, pl::bad_message_policy::skip);
    for (const auto& [key, o] : b.objects) {
        INFO(key);
        CHECK(o.range.count <= 37);  // rotation.max_records
        // rotation.max_bytes closes the object once it holds 700 bytes: the last record appended
        // (at most ~40 bytes here) may cross it, never more.
        CHECK(o.body.size() < 700 + 64);
    }
}

TEST_CASE("workers: keys from the records (several objects open) come out the same with a pool",
          "[pipeline][workers]") {
    const auto single_part = GENERATE(false, true);
    iss::worker_pool inline_pool{0};
    iss::worker_pool pool{4};
    const outcome a = feed_all(inline_pool, single_part, pl::bad_message_policy::skip, true);
    const outcome b = feed_all(pool, single_part, pl::bad_message_policy::skip, true);
    check_same(a, b);
    std::set<std::string> tenants;
    for (const auto& [key, o] : a.objects) tenants.insert(key.substr(0, key.rfind('/')));
    CHECK(tenants.size() == 3);  // A, B and C each had objects
    std::set<std::thread::id> others = b.threads;
    others.erase(std::this_thread::get_id());
    CHECK_FALSE(others.empty());
}

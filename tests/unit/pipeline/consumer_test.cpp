// SPDX-License-Identifier: Apache-2.0
#include "pipeline/consumer.hpp"

#include "common/log.hpp"
#include "fakes.hpp"

#include <boost/asio/post.hpp>

#include "catch2_compat.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace pl = iss::pipeline;
using namespace std::chrono_literals;
using fakes::run;
using fakes::world;

namespace {

/// An Iggy topic with group semantics as in docs/protocol.md §7.1, reduced to what the loop
/// sees: owned partitions, pending revocations, the round-robin cursor, the (0,0,0) answer.
struct fake_source final : pl::message_source {
    pl::topic_ref topic{"app", "requests"};
    std::map<std::uint32_t, std::vector<std::string>> logs;  // offset = index
    bool group = false;
    std::vector<std::uint32_t> owned;
    std::set<std::uint32_t> pending;  // pending revocation: skipped by partition-less polls
    std::size_t cursor = 0;
    std::uint64_t session_no = 1;
    int joins = 0, leaves = 0;
    pl::source_status join_answer = pl::source_status::ok;
    std::vector<std::tuple<std::optional<std::uint32_t>, std::optional<std::uint64_t>, std::uint32_t>> polls;
    std::deque<std::string> keep;
    std::set<std::string> missing;               // topics that do not exist (fatal answers)
    std::set<std::uint32_t> missing_partitions;  // partitions whose polls answer fatal
    std::map<std::string, int> lookups;          // partitions() calls per topic
    int fatal_polls = 0;
    std::map<std::uint32_t, int> slow;  // partition -> event-loop turns each of its polls takes
    std::uint64_t created_at = 1000;    // the topic's creation time (GetTopic), µs

    void fill(std::uint32_t partition, std::size_t n) {
        auto& l = logs[partition];
        for (std::size_t i = 0; i < n; ++i) l.push_back(fmt::format("p{}-{}", partition, l.size()));
    }
    bool owns(std::uint32_t p) const { return std::find(owned.begin(), owned.end(), p) != owned.end(); }

    pl::task<pl::poll_result> poll(const pl::topic_ref& t, std::optional<std::uint32_t> partition,
                                   std::optional<std::uint64_t> from, std::uint32_t count) override {
        pl::poll_result r;
        if (missing.count(t.topic) || (partition && missing_partitions.count(*partition))) {
            ++fatal_polls;
            r.status = pl::source_status::fatal;
            r.detail = "not found";
            co_return r;
        }
        polls.emplace_back(partition, from, count);
        if (partition && slow.count(*partition)) {
            // A slow answer: other coroutines run meanwhile.
            auto ex = co_await boost::asio::this_coro::executor;
            for (int i = 0; i < slow.at(*partition); ++i) co_await boost::asio::post(ex, boost::asio::use_awaitable);
        }
        std::uint32_t p = 0;
        if (!partition) {
            std::vector<std::uint32_t> pollable;
            for (auto o : owned)
                if (!pending.count(o)) pollable.push_back(o);
            if (pollable.empty()) co_return r;  // 0, 0, no messages
            p = pollable[cursor++ % pollable.size()];
        } else {
            p = *partition;
            if (group && !owns(p)) co_return r;
        }
        r.reply.partition = p;
        const auto& l = logs[p];
        r.reply.current_offset = l.empty() ? 0 : l.size() - 1;
        for (std::uint64_t o = from.value_or(0); o < l.size() && r.reply.messages.size() < count; ++o) {
            pl::message m;
            m.offset = o;
            m.timestamp_us = 1'000'000 + o;
            m.payload = std::as_bytes(std::span{l[o].data(), l[o].size()});
            r.reply.messages.push_back(m);
        }
        co_return r;
    }
    pl::task<pl::source_status> join(const pl::topic_ref& t) override {
        ++joins;
        if (missing.count(t.topic)) co_return pl::source_status::fatal;  // as Iggy: stream/topic not found
        co_return join_answer;
    }
    pl::task<pl::source_status> leave(const pl::topic_ref&) override {
        ++leaves;
        co_return pl::source_status::ok;
    }
    pl::task<pl::partitions_result> partitions(const pl::topic_ref& t) override {
        pl::partitions_result r;
        ++lookups[t.topic];
        if (missing.count(t.topic)) {
            r.status = pl::source_status::fatal;
            r.detail = "stream or topic not found";
            co_return r;
        }
        for (const auto& [p, l] : logs) r.ids.push_back(p);
        r.created_at = created_at;
        co_return r;
    }
    std::uint64_t session() const override { return session_no; }
};

pl::consumer_options options(pl::consumer_mode mode) {
    pl::consumer_options o;
    o.mode = mode;
    o.sources = {pl::source_topic{{"app", "requests"}, std::nullopt}};
    o.poll_messages = 4;
    o.poll_interval = 100ms;
    o.assignment_interval = 1s;
    return o;
}

/// A single consumer under `iggy.on_offset_reset: earliest` (keys with `{topic_created}`).
pl::consumer_options earliest_options() {
    auto o = options(pl::consumer_mode::single);
    o.topic_generation = true;
    o.on_offset_reset = pl::offset_reset_policy::earliest;
    return o;
}

}  // namespace

TEST_CASE("consumer: single mode polls every partition with explicit offsets and loses nothing",
          "[pipeline][consumer]") {
    world w;
    w.rotation.max_records = 5;
    auto r = w.make_router();
    fake_source src;
    src.fill(0, 12);
    src.fill(1, 3);
    src.fill(2, 0);
    pl::consumer_loop loop{options(pl::consumer_mode::single), src, *r, w.sleeper, w.clock};
    REQUIRE(run(loop.start()));
    for (int i = 0; i < 6; ++i) run(loop.round());
    // The first poll of a partition with nothing committed is First (nullopt); later ones
    // name the offset after what the writer holds, NOT committed + 1 (Next would loop).
    std::vector<std::optional<std::uint64_t>> p0;
    for (auto& [p, from, n] : src.polls)
        if (p == 0u) p0.push_back(from);
    REQUIRE(p0.size() >= 4);
    CHECK_FALSE(p0[0].has_value());
    CHECK(p0[1] == 4u);
    CHECK(p0[2] == 8u);
    CHECK(p0[3] == 12u);
    CHECK(run(loop.shutdown()));
    auto b = w.bucket_records();
    CHECK(b.size() == 15);
    for (const auto& [k, n] : b) CHECK(n == 1);
    CHECK(w.offsets.stored.at({"app", "requests", 0}) == 11);
    CHECK(w.offsets.stored.at({"app", "requests", 1}) == 2);
    CHECK(src.leaves == 0);
}

TEST_CASE("consumer: one partition's upload does not stall the polls and uploads of the others",
          "[pipeline][consumer]") {
    world w;
    w.rotation.max_records = 4;
    auto r = w.make_router();
    fake_source src;
    src.fill(0, 4);
    src.fill(1, 4);
    // Partition 0's upload completes only once partition 1's upload has started: a loop that
    // awaited partition 0's upload before polling partition 1 would wait for the safety valve.
    w.store.hold_prefix = "app/requests/partition=0/";
    pl::consumer_loop loop{options(pl::consumer_mode::single), src, *r, w.sleeper, w.clock};
    REQUIRE(run(loop.start()));
    const std::size_t fed = run(loop.round());
    CHECK(fed == 8);
    CHECK(w.store.hold_released_by_other);
    // Within each partition: upload, then commit.
    const auto put0 = w.index_of("put app/requests/partition=0/");
    const auto put1 = w.index_of("put app/requests/partition=1/");
    REQUIRE(put0 < w.events.size());
    REQUIRE(put1 < w.events.size());
    CHECK(put1 < put0);
    CHECK(put0 < w.index_of("commit 0 "));
    CHECK(put1 < w.index_of("commit 1 "));
    CHECK(w.offsets.stored.at({"app", "requests", 0}) == 3);
    CHECK(w.offsets.stored.at({"app", "requests", 1}) == 3);
    CHECK(run(loop.shutdown()));
    auto b = w.bucket_records();
    CHECK(b.size() == 8);
    for (const auto& [k, n] : b) CHECK(n == 1);
}

TEST_CASE("consumer: max_parallel_partitions bounds a round's concurrency and still polls every partition",
          "[pipeline][consumer]") {
    world w;
    w.rotation.max_records = 4;
    auto r = w.make_router();
    fake_source src;
    for (std::uint32_t p = 0; p < 5; ++p) src.fill(p, 4);
    w.store.hold_prefix = "app/requests/partition=0/";
    auto o = options(pl::consumer_mode::single);
    o.max_parallel_partitions = 2;
    pl::consumer_loop loop{o, src, *r, w.sleeper, w.clock};
    REQUIRE(run(loop.start()));
    const std::size_t fed = run(loop.round());
    CHECK(fed == 20);
    CHECK(w.store.hold_released_by_other);  // partition 1 ran alongside partition 0
    CHECK(src.polls.size() == 5);
    for (std::uint32_t p = 0; p < 5; ++p) CHECK(w.offsets.stored.at({"app", "requests", p}) == 3);
    CHECK(run(loop.shutdown()));
    auto b = w.bucket_records();
    CHECK(b.size() == 20);
    for (const auto& [k, n] : b) CHECK(n == 1);
}

TEST_CASE("consumer: inv5 a partition that group polls stop returning is uploaded and committed at once",
          "[pipeline][consumer][inv5]") {
    world w;
    w.options.mode = pl::consumer_mode::group;
    w.rotation.max_records = 1000;  // nothing would rotate by itself
    auto r = w.make_router();
    fake_source src;
    src.group = true;
    src.fill(0, 6);
    src.fill(1, 6);
    src.owned = {0, 1};
    pl::consumer_loop loop{options(pl::consumer_mode::group), src, *r, w.sleeper, w.clock};
    REQUIRE(run(loop.start()));
    CHECK(src.joins == 1);
    run(loop.round());
    run(loop.round());
    CHECK(w.store.objects.empty());
    CHECK(loop.assignment().size() == 2);
    // A third member joined: partition 1 is pending revocation. Partition-less polls skip it.
    src.pending = {1};
    w.clock.advance(1s);
    run(loop.round());
    CHECK(loop.assignment().size() == 1);
    const pl::partition_ref p1{"app", "requests", 1};
    CHECK(w.offsets.stored.at(p1) == 5);  // committed: the revocation can complete
    CHECK(w.store.objects.at(w.namer.key(p1, 0).get()).range == pl::object_range{0, 5, 6});
    CHECK(r->find(p1) == nullptr);
    CHECK(r->find({"app", "requests", 0})->holds_data());  // partition 0 goes on as before
}

TEST_CASE("consumer: inv5 an explicit poll answered for another partition hands over at once",
          "[pipeline][consumer][inv5]") {
    world w;
    w.options.mode = pl::consumer_mode::group;
    auto r = w.make_router();
    fake_source src;
    src.group = true;
    src.fill(3, 4);
    src.owned = {3};
    pl::consumer_loop loop{options(pl::consumer_mode::group), src, *r, w.sleeper, w.clock};
    run(loop.start());
    run(loop.round());
    src.owned = {};     // revocation completed by timeout: not ours at all any more
    run(loop.round());  // discovery not due: the explicit poll answers 0,0
    CHECK(loop.assignment().empty());
    CHECK(w.offsets.stored.at({"app", "requests", 3}) == 3);
}

TEST_CASE("consumer: group mode, partition 0 holding only offset 0 is counted as assigned and delivered once",
          "[pipeline][consumer][inv5]") {
    // The server answers `0, 0, no messages` both for "nothing to poll" and for a count-0 poll
    // of partition 0 whose newest offset is 0 (docs/protocol.md §5.6).
    auto count1_partitionless = [](const fake_source& s) {
        return std::count_if(s.polls.begin(), s.polls.end(),
                             [](const auto& p) { return !std::get<0>(p) && std::get<2>(p) > 0; });
    };
    world w;
    w.options.mode = pl::consumer_mode::group;
    auto r = w.make_router();
    fake_source src;
    src.group = true;
    SECTION("one message in each of 4 partitions, all owned") {
        for (std::uint32_t p = 0; p < 4; ++p) src.fill(p, 1);
        src.owned = {0, 1, 2, 3};
        pl::consumer_loop loop{options(pl::consumer_mode::group), src, *r, w.sleeper, w.clock};
        REQUIRE(run(loop.start()));
        run(loop.round());
        CHECK(loop.assignment().size() == 4);
        // The other answers tell it: no poll that returns messages (and moves the server's
        // polled-offset record) is spent on learning the assignment.
        CHECK(count1_partitionless(src) == 0);
        CHECK(run(loop.shutdown()));
        auto b = w.bucket_records();
        CHECK(b.size() == 4);
        for (const auto& [k, n] : b) CHECK(n == 1);
        for (std::uint32_t p = 0; p < 4; ++p) CHECK(w.offsets.stored.at({"app", "requests", p}) == 0);
    }
    SECTION("only partition 0 owned, one message") {
        src.fill(0, 1);
        src.fill(1, 1);
        src.owned = {0};
        pl::consumer_loop loop{options(pl::consumer_mode::group), src, *r, w.sleeper, w.clock};
        REQUIRE(run(loop.start()));
        run(loop.round());
        REQUIRE(loop.assignment().size() == 1);
        CHECK(loop.assignment().front().partition == 0);
        CHECK(run(loop.shutdown()));
        auto b = w.bucket_records();
        CHECK(b.size() == 1);
        CHECK(w.offsets.stored.at({"app", "requests", 0}) == 0);
        CHECK(w.offsets.stored.count({"app", "requests", 1}) == 0);
    }
    SECTION("nothing owned, or partition 0 pending revocation: not counted") {
        src.fill(0, 1);
        src.fill(1, 1);
        src.owned = {0};
        pl::consumer_loop loop{options(pl::consumer_mode::group), src, *r, w.sleeper, w.clock};
        REQUIRE(run(loop.start()));
        run(loop.round());
        REQUIRE(loop.assignment().size() == 1);
        src.pending = {0};  // a joiner is to get it: partition-less polls skip it
        w.clock.advance(1s);
        run(loop.round());
        CHECK(loop.assignment().empty());
        CHECK(w.offsets.stored.at({"app", "requests", 0}) == 0);  // handed over: uploaded, committed
        src.pending.clear();
        src.owned = {};
        w.clock.advance(1s);
        run(loop.round());
        CHECK(loop.assignment().empty());
        CHECK(run(loop.shutdown()));
        CHECK(w.bucket_records().size() == 1);
    }
}

TEST_CASE("consumer: inv5 after a reconnect, held data is dropped (not uploaded) and re-read; nothing lost or doubled",
          "[pipeline][consumer][inv5]") {
    world w;
    w.options.mode = pl::consumer_mode::group;
    w.rotation.max_records = 3;
    auto r = w.make_router();
    fake_source src;
    src.group = true;
    src.fill(0, 8);
    src.owned = {0};
    pl::consumer_loop loop{options(pl::consumer_mode::group), src, *r, w.sleeper, w.clock};
    run(loop.start());
    run(loop.round());  // 0..3 polled: 0..2 uploaded+committed, 3 held
    CHECK(w.offsets.stored.at({"app", "requests", 0}) == 2);
    const int puts = w.store.puts;
    src.session_no = 2;  // the connection was lost and re-made: a new member
    run(loop.round());
    CHECK(w.store.puts >= puts);
    CHECK(src.joins == 2);
    for (int i = 0; i < 4; ++i) run(loop.round());
    CHECK(run(loop.shutdown()));
    CHECK(src.leaves == 1);
    auto b = w.bucket_records();
    CHECK(b.size() == 8);
    for (const auto& [k, n] : b) CHECK(n == 1);
    CHECK(r->totals().records_dropped >= 1);
}

TEST_CASE("consumer: a group member without partitions past unassigned_warning says so at warn, at a backoff",
          "[pipeline][consumer]") {
    std::vector<std::string> lines;
    iss::log::set_sink([&](std::string_view l) { lines.emplace_back(l); });
    auto warnings = [&] {
        return std::count_if(lines.begin(), lines.end(), [](const std::string& l) {
            return l.find(" warn ") != std::string::npos && l.find("owned no partition") != std::string::npos;
        });
    };
    world w;
    w.options.mode = pl::consumer_mode::group;
    auto r = w.make_router();
    fake_source src;
    src.group = true;
    src.fill(0, 2);  // the group's partition is someone else's: this member owns nothing
    auto o = options(pl::consumer_mode::group);
    o.unassigned_warning = 30s;
    pl::consumer_loop loop{o, src, *r, w.sleeper, w.clock};
    run(loop.start());
    // One round a second (discovery every second): 200 polls in 200 s of the manual clock.
    std::vector<long> at;
    for (int t = 0; t <= 200; ++t) {
        const auto before = warnings();
        run(loop.round());
        if (warnings() > before) at.push_back(t);
        w.clock.advance(1s);
    }
    // After 30 s without partitions, then 60 s and 120 s later (doubling), not at every poll.
    CHECK(at == std::vector<long>{30, 90});
    // Owning a partition ends it; losing it again starts a new 30 s wait.
    src.owned = {0};
    for (int i = 0; i < 3; ++i) {
        run(loop.round());
        w.clock.advance(1s);
    }
    CHECK(loop.assignment().size() == 1);
    src.owned.clear();
    at.clear();
    for (int t = 0; t <= 40; ++t) {
        const auto before = warnings();
        run(loop.round());
        if (warnings() > before) at.push_back(t);
        w.clock.advance(1s);
    }
    iss::log::set_sink({});
    CHECK(at.size() == 1);
    if (!at.empty()) CHECK(at.front() >= 30);
}

TEST_CASE("consumer: run waits poll_interval when idle, wakes for a due writer, and stops on request",
          "[pipeline][consumer][inv6]") {
    world w;
    w.rotation.idle = 30ms;
    auto r = w.make_router();
    fake_source src;
    src.fill(0, 2);
    struct stopping_sleeper final : pl::sleeper {
        iss::manual_clock& c;
        pl::consumer_loop* loop = nullptr;
        std::vector<std::chrono::milliseconds> waits;
        explicit stopping_sleeper(iss::manual_clock& cl) : c{cl} {}
        pl::task<void> sleep_for(std::chrono::milliseconds d) override {
            waits.push_back(d);
            c.advance(d);
            if (waits.size() == 3) loop->request_stop();
            co_return;
        }
    } sl{w.clock};
    pl::consumer_loop loop{options(pl::consumer_mode::single), src, *r, sl, w.clock};
    sl.loop = &loop;
    run(loop.start());
    run(loop.run());
    REQUIRE(sl.waits.size() == 3);
    CHECK(sl.waits[0] == 30ms);   // the idle timer of the open object, not the 100 ms poll interval
    CHECK(sl.waits[1] == 100ms);  // flushed by then: back to the poll interval
    CHECK(w.store.objects.size() == 1);
    CHECK(run(loop.shutdown()));
}

namespace {
/// Collects log lines while alive.
struct log_capture {
    std::vector<std::string> lines;
    log_capture() {
        iss::log::set_sink([this](std::string_view l) { lines.emplace_back(l); });
    }
    ~log_capture() { iss::log::set_sink({}); }
    [[nodiscard]] std::size_t count(std::string_view a, std::string_view b = {}) const {
        return static_cast<std::size_t>(std::count_if(lines.begin(), lines.end(), [&](const std::string& l) {
            return l.find(a) != std::string::npos && l.find(b) != std::string::npos;
        }));
    }
};
}  // namespace

TEST_CASE("consumer: a missing source topic is logged once, then at a backoff, and is queryable",
          "[pipeline][consumer]") {
    world w;
    w.rotation.max_records = 1000;
    auto r = w.make_router();
    fake_source src;
    src.fill(0, 2);
    src.missing = {"nope"};
    auto o = options(pl::consumer_mode::single);
    o.sources.push_back(pl::source_topic{{"app", "nope"}, std::nullopt});
    pl::consumer_loop loop{o, src, *r, w.sleeper, w.clock};
    log_capture logs;
    REQUIRE(run(loop.start()));
    // 20 s of rounds, one per poll interval (100 ms): 200 rounds.
    const auto start = w.clock.steady_now();
    for (int i = 0; i < 200; ++i) {
        run(loop.round());
        w.clock.advance(100ms);
    }
    // Tries at 0, 1, 3, 7 and 15 s (1 s doubling): five lines and five lookups, not 200.
    CHECK(logs.count("source cannot be read", "nope") == 1);
    CHECK(logs.count("source still cannot be read", "nope") == 4);
    CHECK(logs.count("nope") == 5);
    CHECK(src.lookups["nope"] == 5);
    const auto u = loop.unavailable_sources();
    REQUIRE(u.size() == 1);
    CHECK(u[0].topic == pl::topic_ref{"app", "nope"});
    CHECK_FALSE(u[0].partition.has_value());
    CHECK(u[0].failures == 5);
    CHECK(u[0].since == start);
    CHECK(u[0].next_try == start + 31s);
    CHECK(u[0].reason.find("not found") != std::string::npos);
    // The readable topic was polled all along.
    std::size_t p0 = 0;
    for (auto& [p, from, n] : src.polls) p0 += p == 0u;
    CHECK(p0 == 200);
    // Once the topic exists, the next try picks it up and clears the state.
    src.missing.clear();
    w.clock.advance(31s);
    run(loop.round());
    CHECK(loop.unavailable_sources().empty());
    CHECK(logs.count("source can be read again", "nope") == 1);
    CHECK(src.lookups["nope"] == 6);
    const auto a = loop.assignment();
    CHECK(std::find(a.begin(), a.end(), pl::partition_ref{"app", "nope", 0}) != a.end());
}

TEST_CASE("consumer: a partition whose polls fail is backed off alone; the others keep polling",
          "[pipeline][consumer]") {
    world w;
    w.rotation.max_records = 1000;
    auto r = w.make_router();
    fake_source src;
    src.fill(0, 2);
    src.missing_partitions = {7};
    auto o = options(pl::consumer_mode::single);
    o.sources = {pl::source_topic{{"app", "requests"}, std::vector<std::uint32_t>{0, 7}}};
    pl::consumer_loop loop{o, src, *r, w.sleeper, w.clock};
    log_capture logs;
    REQUIRE(run(loop.start()));
    for (int i = 0; i < 200; ++i) {
        run(loop.round());
        w.clock.advance(100ms);
    }
    CHECK(src.fatal_polls == 5);
    CHECK(logs.count("cannot be read", "partition=7") == 5);
    const auto u = loop.unavailable_sources();
    REQUIRE(u.size() == 1);
    CHECK(u[0].partition == 7u);
    std::size_t p0 = 0;
    for (auto& [p, from, n] : src.polls) p0 += p == 0u;
    CHECK(p0 == 200);
}

TEST_CASE("consumer: joined() is false until the group join succeeds, and after a 5006", "[pipeline][consumer]") {
    world w;
    auto r = w.make_router();
    fake_source src;
    src.group = true;
    src.fill(0, 3);
    src.owned = {0};
    src.join_answer = pl::source_status::retryable;
    pl::consumer_loop loop{options(pl::consumer_mode::group), src, *r, w.sleeper, w.clock};
    CHECK_FALSE(loop.joined());
    REQUIRE(run(loop.start()));  // a retryable join is not fatal...
    CHECK_FALSE(loop.joined());  // ...but the group is not joined
    src.join_answer = pl::source_status::ok;
    src.session_no = 2;  // a reconnect joins again
    run(loop.round());
    CHECK(loop.joined());
    CHECK(loop.rounds() == 1);
    CHECK(loop.heads().at({"app", "requests", 0}) == 2);

    pl::consumer_loop single{options(pl::consumer_mode::single), src, *r, w.sleeper, w.clock};
    CHECK(single.joined());  // nothing to join in single-consumer mode
}

TEST_CASE("consumer: group mode, a source topic missing at start is tried again at a backoff and joined once it exists",
          "[pipeline][consumer]") {
    world w;
    auto r = w.make_router();
    fake_source src;
    src.group = true;
    src.fill(0, 3);
    src.owned = {0};
    src.missing = {"requests"};
    pl::consumer_loop loop{options(pl::consumer_mode::group), src, *r, w.sleeper, w.clock};
    log_capture logs;
    // The daemon keeps running (a missing source is not a reason to exit) but is not joined:
    // /readyz answers "consumer group not joined" meanwhile.
    REQUIRE(run(loop.start()));
    CHECK_FALSE(loop.joined());
    CHECK(src.joins == 1);
    const auto start = w.clock.steady_now();
    for (int i = 0; i < 100; ++i) {  // 10 s of rounds
        run(loop.round());
        w.clock.advance(100ms);
    }
    CHECK_FALSE(loop.joined());
    CHECK(loop.assignment().empty());
    // Tries at 0, 1, 3 and 7 s (1 s doubling), each one line: not one per round.
    CHECK(src.joins == 4);
    CHECK(logs.count("source cannot be read", "requests") == 1);
    CHECK(logs.count("source still cannot be read", "requests") == 3);
    const auto u = loop.unavailable_sources();
    REQUIRE(u.size() == 1);
    CHECK(u[0].since == start);
    CHECK(u[0].reason.find("join") != std::string::npos);
    // The topic appears: the next try (15 s) joins, and its partitions are polled.
    src.missing.clear();
    w.clock.advance(5s);
    run(loop.round());
    CHECK(loop.joined());
    CHECK(src.joins == 5);
    CHECK(loop.unavailable_sources().empty());
    CHECK(logs.count("source can be read again", "requests") == 1);
    run(loop.round());
    CHECK(loop.assignment() == std::vector<pl::partition_ref>{{"app", "requests", 0}});
    CHECK(loop.heads().at({"app", "requests", 0}) == 2);
}

TEST_CASE("consumer: partitions that stay empty are polled at a doubling interval, busy ones every round",
          "[pipeline][consumer]") {
    world w;
    w.rotation.max_records = 1000;
    auto r = w.make_router();
    fake_source src;
    for (std::uint32_t p = 0; p < 10; ++p) src.fill(p, 0);
    auto o = options(pl::consumer_mode::single);
    o.max_idle_interval = 800ms;  // 100, 200, 400, 800, 800 ...
    pl::consumer_loop loop{o, src, *r, w.sleeper, w.clock};
    REQUIRE(run(loop.start()));
    const auto polls_of = [&](std::uint32_t p) {
        return std::count_if(src.polls.begin(), src.polls.end(), [&](const auto& t) { return std::get<0>(t) == p; });
    };
    // 4 s of rounds 10 ms apart: an idle partition is polled at 0, 0.1, 0.3, 0.7, 1.5, 2.3,
    // 3.1, 3.9 s: 8 times instead of 400.
    src.fill(3, 1);  // partition 3 has a message at the start, then gets one every 10 ms
    for (int i = 0; i < 400; ++i) {
        run(loop.round());
        w.clock.advance(10ms);
        src.fill(3, 1);
    }
    CHECK(polls_of(0) >= 7);
    CHECK(polls_of(0) <= 9);
    CHECK(polls_of(3) == 400);
    // A message on an idle partition is polled within max_idle_interval.
    src.fill(5, 1);
    const auto fed_before =
        r->find({"app", "requests", 5}) ? r->find({"app", "requests", 5})->next_offset() : std::nullopt;
    CHECK_FALSE(fed_before.has_value());
    for (int i = 0; i < 80; ++i) {  // 800 ms
        run(loop.round());
        w.clock.advance(10ms);
    }
    REQUIRE(r->find({"app", "requests", 5}));
    CHECK(r->find({"app", "requests", 5})->next_offset() == 1u);
    // ... and from then on it is polled every round again.
    w.clock.advance(800ms);  // it went idle again after that one message: due once more
    const auto before = polls_of(5);
    for (int i = 0; i < 5; ++i) {
        src.fill(5, 1);
        run(loop.round());
    }
    CHECK(polls_of(5) == before + 5);
    // With max_idle_interval 0 (the options' default) every partition is polled every round.
    fake_source src2;
    for (std::uint32_t p = 0; p < 3; ++p) src2.fill(p, 0);
    auto r2 = w.make_router();
    pl::consumer_loop every{options(pl::consumer_mode::single), src2, *r2, w.sleeper, w.clock};
    REQUIRE(run(every.start()));
    for (int i = 0; i < 10; ++i) run(every.round());
    CHECK(src2.polls.size() == 30);
}

TEST_CASE(
    "consumer: partitions run free within a round (reading ahead): one with messages polls on while another "
    "is slow",
    "[pipeline][consumer]") {
    world w;
    w.rotation.max_records = 8;
    auto r = w.make_router();
    fake_source src;
    src.fill(0, 40);  // 10 polls of 4
    src.fill(1, 4);
    src.slow[1] = 200;  // each poll of partition 1 takes 200 turns of the event loop
    struct stopping_sleeper final : pl::sleeper {
        pl::consumer_loop* loop = nullptr;
        pl::task<void> sleep_for(std::chrono::milliseconds) override {
            loop->request_stop();
            co_return;
        }
    } sl;
    pl::consumer_loop loop{options(pl::consumer_mode::single), src, *r, sl, w.clock};
    sl.loop = &loop;
    run(loop.start());
    run(loop.run());
    // One round drained partition 0 (10 polls with messages, one empty) while partition 1's
    // slow polls ran; a second round found nothing and slept. With a barrier after every
    // step, partition 0 would have needed one round per poll.
    CHECK(loop.rounds() == 2);
    std::size_t p0 = 0;
    for (const auto& [part, from, count] : src.polls) p0 += part == 0u ? 1 : 0;
    // Each step reads one batch ahead while it feeds, up to 4 batches: steps of 4, 4 and 3
    // polls (the last one ahead finds nothing at offset 40: caught up, so not queued again),
    // and the second round's empty poll.
    CHECK(p0 == 12);
    CHECK(run(loop.shutdown()));
    CHECK(w.bucket_records().size() == 44);  // every message once
}

TEST_CASE("consumer: single mode, partitions added at run time are polled within metadata_interval",
          "[pipeline][consumer]") {
    world w;
    w.rotation.max_records = 3;
    auto r = w.make_router();
    fake_source src;
    src.fill(0, 3);
    src.fill(1, 3);
    auto o = options(pl::consumer_mode::single);
    o.metadata_interval = 5s;
    pl::consumer_loop loop{o, src, *r, w.sleeper, w.clock};
    log_capture logs;
    REQUIRE(run(loop.start()));
    run(loop.round());
    CHECK(loop.assignment().size() == 2);
    // CreatePartitions: the topic grows from 2 to 4 partitions, with messages in the new ones.
    src.fill(2, 3);
    src.fill(3, 3);
    const int lookups = src.lookups["requests"];
    for (int i = 0; i < 49; ++i) {
        w.clock.advance(100ms);
        run(loop.round());
    }
    CHECK(loop.assignment().size() == 2);  // not listed again before metadata_interval
    CHECK(src.lookups["requests"] == lookups);
    w.clock.advance(100ms);
    run(loop.round());
    run(loop.round());
    CHECK(loop.assignment().size() == 4);
    CHECK(src.lookups["requests"] == lookups + 1);
    CHECK(logs.count("partition added") == 2);
    CHECK(run(loop.shutdown()));
    auto b = w.bucket_records();
    CHECK(b.size() == 12);
    for (const auto& [k, n] : b) CHECK(n == 1);
    CHECK(w.offsets.stored.at({"app", "requests", 2}) == 2);
    CHECK(w.offsets.stored.at({"app", "requests", 3}) == 2);
}

TEST_CASE("consumer: group mode, partitions added at run time and assigned by the server are polled",
          "[pipeline][consumer]") {
    world w;
    w.options.mode = pl::consumer_mode::group;
    w.rotation.max_records = 3;
    auto r = w.make_router();
    fake_source src;
    src.group = true;
    src.fill(0, 3);
    src.fill(1, 3);
    src.owned = {0, 1};
    pl::consumer_loop loop{options(pl::consumer_mode::group), src, *r, w.sleeper, w.clock};
    REQUIRE(run(loop.start()));
    run(loop.round());
    CHECK(loop.assignment().size() == 2);
    // The topic grows to 4 partitions; the server's rebalance gives all four to the only member.
    src.fill(2, 3);
    src.fill(3, 3);
    src.owned = {0, 1, 2, 3};
    w.clock.advance(1s);
    run(loop.round());
    run(loop.round());
    CHECK(loop.assignment().size() == 4);
    CHECK(run(loop.shutdown()));
    auto b = w.bucket_records();
    CHECK(b.size() == 12);
    for (const auto& [k, n] : b) CHECK(n == 1);
}

TEST_CASE("consumer: a topic created again (next offset past the head) stops that partition, once, and says why",
          "[pipeline][consumer]") {
    world w;
    w.rotation.max_records = 4;
    auto r = w.make_router();
    fake_source src;
    src.fill(0, 8);
    src.fill(1, 8);
    pl::consumer_loop loop{options(pl::consumer_mode::single), src, *r, w.sleeper, w.clock};
    log_capture logs;
    REQUIRE(run(loop.start()));
    for (int i = 0; i < 3; ++i) run(loop.round());
    CHECK(w.offsets.stored.at({"app", "requests", 0}) == 7);
    CHECK(loop.offset_resets().empty());
    // The topic is deleted and created again: partition 0 starts over with 2 messages.
    src.logs[0].clear();
    src.fill(0, 2);
    src.fill(1, 4);  // partition 1 goes on as before
    const auto polls_before = src.polls.size();
    for (int i = 0; i < 10; ++i) {
        w.clock.advance(100ms);
        run(loop.round());
    }
    const auto resets = loop.offset_resets();
    REQUIRE(resets.size() == 1);
    CHECK(resets[0].partition == pl::partition_ref{"app", "requests", 0});
    CHECK(resets[0].next_offset == 8);
    CHECK(resets[0].head == 1);
    CHECK(resets[0].stopped_by == "iggy.on_offset_reset: fail stopped the partition");
    CHECK(logs.count("offset reset", "s3.prefix") == 1);
    // Polled once more to find it, then not any more; partition 1 every round.
    std::size_t p0 = 0, p1 = 0;
    for (std::size_t i = polls_before; i < src.polls.size(); ++i) {
        p0 += std::get<0>(src.polls[i]) == 0u;
        p1 += std::get<0>(src.polls[i]) == 1u;
    }
    CHECK(p0 == 1);
    CHECK(p1 == 10);
    CHECK(run(loop.shutdown()));
    // Nothing of the new topic's partition 0 landed; partition 1's 12 messages did, once.
    auto b = w.bucket_records();
    CHECK(b.size() == 20);
    for (const auto& [k, n] : b) CHECK(n == 1);
    CHECK(w.offsets.stored.at({"app", "requests", 0}) == 7);
}

TEST_CASE(
    "consumer: an offset reset found when the offset is loaded (a table of an earlier topic) stops the "
    "partition, once, and the others go on",
    "[pipeline][consumer][iceberg]") {
    world w;
    w.rotation.max_records = 4;
    auto r = w.make_router();
    fake_source src;
    src.fill(0, 8);
    src.fill(1, 8);
    // What the Iceberg resume point answers for a table whose offsets are an older topic's.
    w.offsets.stored[{"app", "requests", 0}] = 299;
    w.offsets.resets[{"app", "requests", 0}] = "table lake.events holds offsets of an earlier topic app/requests";
    pl::consumer_loop loop{options(pl::consumer_mode::single), src, *r, w.sleeper, w.clock};
    log_capture logs;
    REQUIRE(run(loop.start()));
    for (int i = 0; i < 5; ++i) {
        w.clock.advance(100ms);
        run(loop.round());
    }
    const auto resets = loop.offset_resets();
    REQUIRE(resets.size() == 1);
    CHECK(resets[0].partition == pl::partition_ref{"app", "requests", 0});
    CHECK(resets[0].found_at_load == "table lake.events holds offsets of an earlier topic app/requests");
    CHECK(resets[0].stopped_by == "iggy.on_offset_reset: fail stopped the partition");
    CHECK(logs.count("offset reset: table lake.events holds offsets of an earlier topic") == 1);
    // Never polled (not from the table's offset 300, nor from anywhere), its offset loaded once;
    // partition 1 goes on.
    CHECK(r->find({"app", "requests", 0}) == nullptr);
    for (const auto& poll : src.polls) CHECK(std::get<0>(poll) != 0u);
    CHECK(w.offsets.loads == 2);
    CHECK(run(loop.shutdown()));
    auto b = w.bucket_records();
    CHECK(b.size() == 8);  // partition 1's
    CHECK(w.offsets.stored.at({"app", "requests", 0}) == 299);
}

TEST_CASE("consumer: with an Iceberg table, an offset reset's remedy is a new iceberg.table, not s3.prefix",
          "[pipeline][consumer][iceberg]") {
    world w;
    w.rotation.max_records = 4;
    auto r = w.make_router();
    fake_source src;
    src.fill(0, 8);
    auto o = options(pl::consumer_mode::single);
    o.iceberg_table = true;
    pl::consumer_loop loop{o, src, *r, w.sleeper, w.clock};
    log_capture logs;
    REQUIRE(run(loop.start()));
    for (int i = 0; i < 3; ++i) run(loop.round());
    src.logs[0].clear();
    src.fill(0, 2);
    for (int i = 0; i < 3; ++i) {
        w.clock.advance(100ms);
        run(loop.round());
    }
    REQUIRE(loop.offset_resets().size() == 1);
    // s3.prefix is unused with a table, and the table's summary keeps the partition stopped.
    CHECK(logs.count("offset reset", "set iceberg.table to a new table (or drop the table)") == 1);
    CHECK(logs.count("offset reset", "s3.prefix") == 0);
    CHECK(run(loop.shutdown()));
}

TEST_CASE("consumer: a topic created again that already holds more than the old one is found by its creation time",
          "[pipeline][consumer]") {
    world w;
    w.rotation.max_records = 4;
    auto r = w.make_router();
    fake_source src;
    src.fill(0, 8);
    src.fill(1, 8);
    pl::consumer_loop loop{options(pl::consumer_mode::single), src, *r, w.sleeper, w.clock};
    log_capture logs;
    REQUIRE(run(loop.start()));
    for (int i = 0; i < 3; ++i) run(loop.round());
    CHECK(w.offsets.stored.at({"app", "requests", 0}) == 7);
    // Deleted: the polls answer "not found" for a while...
    src.missing.insert("requests");
    for (int i = 0; i < 3; ++i) {
        w.clock.advance(2s);
        run(loop.round());
    }
    REQUIRE_FALSE(loop.unavailable_sources().empty());
    // ...then created again, and 12 messages arrive in partition 0 before the next try: its
    // head (11) is past the old next offset (8), so no head gives it away.
    src.missing.clear();
    src.created_at = 2000;
    src.logs.clear();
    src.fill(0, 12);
    src.fill(1, 8);
    for (int i = 0; i < 10; ++i) {
        w.clock.advance(10s);
        run(loop.round());
    }
    const auto resets = loop.offset_resets();
    REQUIRE(resets.size() == 2);
    CHECK(resets[0].creation_changed);
    CHECK(resets[0].next_offset == 8);
    CHECK(logs.count("creation time changed (1000 -> 2000") == 1);          // the topic, once
    CHECK(logs.count("offset reset", "creation time changed while") == 2);  // each partition
    CHECK(run(loop.shutdown()));
    // Nothing of the new topic was read as if it followed the old one (offsets 8..11 of p0).
    auto b = w.bucket_records();
    CHECK(b.size() == 16);
    CHECK(w.offsets.stored.at({"app", "requests", 0}) == 7);
}

TEST_CASE("consumer: on_offset_reset earliest reads a topic created again from 0 under its new generation",
          "[pipeline][consumer]") {
    world w;
    w.rotation.max_records = 4;
    auto r = w.make_router();
    fake_source src;
    src.fill(0, 8);
    src.fill(1, 8);
    pl::consumer_loop loop{earliest_options(), src, *r, w.sleeper, w.clock};
    log_capture logs;
    REQUIRE(run(loop.start()));
    for (int i = 0; i < 3; ++i) run(loop.round());
    CHECK(w.offsets.stored.at({"app", "requests", 0}) == 7);
    const auto old_objects = w.store.objects;
    REQUIRE(old_objects.size() == 4);
    for (const auto& [k, obj] : old_objects) CHECK(k.find("/g=1000/") != std::string::npos);
    // Deleted and created again (Iggy deletes the consumer offsets with the topic): 6 new
    // messages in partition 0, none in partition 1 yet (its next offset 8 lies past its head too).
    src.created_at = 2000;
    src.logs.clear();
    src.fill(0, 6);
    src.fill(1, 0);
    w.offsets.stored.clear();
    for (int i = 0; i < 10; ++i) {
        w.clock.advance(100ms);
        run(loop.round());
    }
    CHECK(loop.offset_resets().empty());  // nothing stopped
    CHECK(loop.offset_restarts().at({"app", "requests"}) == 2);
    CHECK(loop.generations().at({"app", "requests", 0}) == 2000);
    CHECK(loop.generations().at({"app", "requests", 1}) == 2000);
    CHECK(logs.count("offset reset", "earliest reads the new topic") == 2);
    // The listing every metadata_interval (5 s) then sees the new creation time too: partitions
    // already restarted on it go on (they were stopped as "the same topic" before).
    src.fill(0, 3);
    for (int i = 0; i < 8; ++i) {
        w.clock.advance(1s);
        run(loop.round());
    }
    CHECK(loop.offset_resets().empty());
    CHECK(loop.offset_restarts().at({"app", "requests"}) == 2);
    CHECK(run(loop.shutdown()));
    // The old objects untouched, the new topic's 9 messages once, under its generation.
    for (const auto& [k, obj] : old_objects) {
        REQUIRE(w.store.objects.count(k));
        CHECK(w.store.objects.at(k).body == obj.body);
    }
    auto b = w.bucket_records();
    std::size_t fresh = 0;
    for (const auto& [k, n] : b) {
        CHECK(n == 1);
        fresh += k.first.find("/g=2000/") != std::string::npos;
    }
    CHECK(fresh == 9);
    CHECK(b.size() == 16 + 9);
    CHECK(w.offsets.stored.at({"app", "requests", 0}) == 8);
}

TEST_CASE("consumer: on_offset_reset earliest stops a partition whose topic kept its creation time",
          "[pipeline][consumer]") {
    world w;
    w.rotation.max_records = 4;
    auto r = w.make_router();
    fake_source src;
    src.fill(0, 8);
    pl::consumer_loop loop{earliest_options(), src, *r, w.sleeper, w.clock};
    log_capture logs;
    REQUIRE(run(loop.start()));
    for (int i = 0; i < 3; ++i) run(loop.round());
    src.logs[0].resize(2);  // offsets below the committed one, same topic: not a new generation
    for (int i = 0; i < 5; ++i) {
        w.clock.advance(100ms);
        run(loop.round());
    }
    REQUIRE(loop.offset_resets().size() == 1);
    // /readyz names the policy that stopped it, not `fail`'s
    CHECK_THAT(loop.offset_resets()[0].stopped_by,
               Catch::Matchers::ContainsSubstring("earliest stopped the partition: its topic's creation time"));
    CHECK(loop.offset_restarts().empty());
    CHECK(logs.count("offset reset", "creation time did not change") == 1);
    CHECK(run(loop.shutdown()));
}

TEST_CASE("consumer: group mode, the empty answer for partition 0 not owned is not an offset reset",
          "[pipeline][consumer][inv5]") {
    world w;
    w.options.mode = pl::consumer_mode::group;
    w.rotation.max_records = 1000;
    auto r = w.make_router();
    fake_source src;
    src.group = true;
    src.fill(0, 6);
    src.owned = {0};
    pl::consumer_loop loop{options(pl::consumer_mode::group), src, *r, w.sleeper, w.clock};
    REQUIRE(run(loop.start()));
    run(loop.round());
    run(loop.round());
    // Partition 0 is someone else's now: an explicit poll answers `0, 0, no messages`.
    src.owned = {};
    run(loop.round());
    CHECK(loop.offset_resets().empty());
    CHECK(run(loop.shutdown()));
}

TEST_CASE(
    "consumer: a loop that keeps its groups hands them to the next loop on the same connection, which "
    "neither joins nor leaves them",
    "[pipeline][consumer]") {
    // A reload that keeps the Iggy connection: the first loop drains (uploads and commits
    // what it holds) without leaving; the next one takes the membership over. The group's
    // other members see no leave and no join, so no rebalance.
    world w;
    w.options.mode = pl::consumer_mode::group;
    w.rotation.max_records = 1000;
    auto r = w.make_router();
    fake_source src;
    src.group = true;
    src.fill(0, 6);
    src.owned = {0};
    std::set<pl::topic_ref> kept;
    {
        pl::consumer_loop first{options(pl::consumer_mode::group), src, *r, w.sleeper, w.clock};
        REQUIRE(run(first.start()));
        run(first.round());                   // offsets 0..3 (4 per poll)
        REQUIRE(run(first.shutdown(false)));  // drained: uploaded and committed, still a member
        CHECK(w.offsets.stored.at({"app", "requests", 0}) == 3);
        CHECK(src.leaves == 0);
        kept = first.joined_topics();
    }
    CHECK(kept == std::set<pl::topic_ref>{{"app", "requests"}});
    CHECK(src.joins == 1);

    auto r2 = w.make_router();
    src.fill(0, 3);
    pl::consumer_loop next{options(pl::consumer_mode::group), src, *r2, w.sleeper, w.clock};
    next.take_over(kept);
    REQUIRE(run(next.start()));
    CHECK(next.joined());
    CHECK(src.joins == 1);  // not joined again
    run(next.round());      // from the committed offset on: 4..7
    CHECK(next.assignment() == std::vector<pl::partition_ref>{{"app", "requests", 0}});
    REQUIRE(run(next.shutdown()));  // a stop leaves
    CHECK(w.offsets.stored.at({"app", "requests", 0}) == 7);
    CHECK(src.leaves == 1);
    CHECK(next.joined_topics().empty());

    // A topic the next loop does not read is not taken over: it joins what it lacks.
    pl::consumer_options other = options(pl::consumer_mode::group);
    other.sources = {pl::source_topic{{"app", "audit"}, std::nullopt}};
    pl::consumer_loop third{other, src, *r2, w.sleeper, w.clock};
    third.take_over(kept);
    CHECK_FALSE(third.joined());
    REQUIRE(run(third.start()));
    CHECK(src.joins == 2);
}

// SPDX-License-Identifier: Apache-2.0
#include "admin/metrics.hpp"

#include "../pipeline/fakes.hpp"
#include "admin/readiness.hpp"
#include "admin/server.hpp"
#include "iggy/client.hpp"
#include "pipeline/adapters/iceberg_table.hpp"
#include "pipeline/consumer.hpp"
#include "pipeline/memory.hpp"
#include "pipeline/router.hpp"
#include "s3/client.hpp"

#include "catch2_compat.hpp"

#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>

namespace pl = iss::pipeline;
using Catch::Matchers::ContainsSubstring;
using fakes::run;
using fakes::world;

namespace {

/// Single-consumer source over one partition of `app/requests`: `n` messages, head = n - 1.
struct one_partition_source final : pl::message_source {
    std::vector<std::string> log;
    pl::task<pl::poll_result> poll(const pl::topic_ref&, std::optional<std::uint32_t> partition,
                                   std::optional<std::uint64_t> from, std::uint32_t count) override {
        pl::poll_result r;
        r.reply.partition = partition.value_or(0);
        r.reply.current_offset = log.empty() ? 0 : log.size() - 1;
        for (std::uint64_t o = from.value_or(0); o < log.size() && r.reply.messages.size() < count; ++o) {
            pl::message m;
            m.offset = o;
            m.timestamp_us = 1'000'000 + o;
            m.payload = std::as_bytes(std::span{log[o].data(), log[o].size()});
            r.reply.messages.push_back(m);
        }
        co_return r;
    }
    pl::task<pl::source_status> join(const pl::topic_ref&) override { co_return pl::source_status::ok; }
    pl::task<pl::source_status> leave(const pl::topic_ref&) override { co_return pl::source_status::ok; }
    pl::task<pl::partitions_result> partitions(const pl::topic_ref& t) override {
        pl::partitions_result r;
        if (t.topic == "gone") {  // a source topic that does not exist
            r.status = pl::source_status::fatal;
            r.detail = "stream or topic not found";
            co_return r;
        }
        r.ids = {0};
        co_return r;
    }
    std::uint64_t session() const override { return 1; }
};

/// The value of the sample `series` (name and labels as rendered) in `text`; NaN when absent.
double sample_value(const std::string& text, const std::string& series) {
    const auto at = text.find("\n" + series + " ");
    if (at == std::string::npos) return std::numeric_limits<double>::quiet_NaN();
    return std::stod(text.substr(at + series.size() + 2));
}

}  // namespace

TEST_CASE("metrics: the pipeline's counters, offsets and gauges as they stand", "[admin][metrics]") {
    world w;
    w.rotation.max_records = 4;
    auto r = w.make_router();
    one_partition_source src;
    for (int i = 0; i < 10; ++i) src.log.push_back(fmt::format("m{}", i));  // 2 bytes each
    pl::consumer_options o;
    o.mode = pl::consumer_mode::single;
    o.sources = {pl::source_topic{{"app", "requests"}, std::nullopt}};
    o.poll_messages = 100;
    pl::consumer_loop loop{o, src, *r, w.sleeper, w.clock};
    REQUIRE(run(loop.start()));
    run(loop.round());  // 10 messages: two objects of 4 uploaded and committed, 2 held

    const std::string text = iss::admin::render_metrics({r.get(), &loop, nullptr, nullptr, "1.2.3", "abc123"});
    INFO(text);
    const std::string t = R"({stream="app",topic="requests"})";
    CHECK_THAT(text, ContainsSubstring("# TYPE iggy_s3_sink_messages_total counter"));
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_messages_total" + t + " 8\n"));
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_payload_bytes_total" + t + " 16\n"));
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_bytes_in_total" + t + " 16\n"));  // deprecated duplicate
    CHECK_THAT(
        text, ContainsSubstring("# HELP iggy_s3_sink_bytes_in_total Deprecated: use iggy_s3_sink_payload_bytes_total"));
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_objects_total" + t + " 2\n"));
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_adopted_objects_total" + t + " 0\n"));
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_open_objects" + t + " 1\n"));
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_assigned_partitions" + t + " 1\n"));
    CHECK_THAT(text,
               ContainsSubstring(R"(iggy_s3_sink_bad_messages_total{stream="app",topic="requests",policy="skip"} 0)"));
    const std::string p = R"({stream="app",topic="requests",partition="0"})";
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_committed_offset" + p + " 7\n"));
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_head_offset" + p + " 9\n"));
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_lag_messages" + p + " 2\n"));
    // What the fake store received is what bytes_uploaded_total counts.
    std::uint64_t stored = 0;
    for (const auto& [k, obj] : w.store.objects) stored += obj.body.size();
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_uploaded_bytes_total" + t + " " + std::to_string(stored) + "\n"));
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_bytes_uploaded_total" + t + " " + std::to_string(stored) + "\n"));
    // The commit time is the injected clock's; a running partition is not stopped.
    const std::chrono::duration<double> now = w.clock.system_now().time_since_epoch();
    CHECK(sample_value(text, "iggy_s3_sink_last_commit_timestamp_seconds" + p) ==
          Approx(now.count()).epsilon(0).margin(1e-3));
    CHECK(text.find("iggy_s3_sink_partition_stopped{") == std::string::npos);
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_buffered_bytes" + t + " " +
                                       std::to_string(r->find({"app", "requests", 0})->buffered_bytes()) + "\n"));
    // Histograms: two uploads and two commits, cumulative buckets ending in +Inf.
    CHECK_THAT(text, ContainsSubstring("# TYPE iggy_s3_sink_upload_duration_seconds histogram"));
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_upload_duration_seconds_count 2\n"));
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_upload_duration_seconds_bucket{le="+Inf"} 2)"));
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_commit_duration_seconds_count 2\n"));
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_build_info{version="1.2.3",commit="abc123"} 1)"));
    // No S3 or Iggy stats given: no such families.
    CHECK(text.find("iggy_s3_sink_s3_requests_total") == std::string::npos);
    CHECK(text.find("iggy_s3_sink_iggy_requests_total") == std::string::npos);
}

TEST_CASE("metrics: docs/operations.md documents every metric, and only those", "[admin][metrics][docs]") {
    world w;
    w.rotation.max_records = 4;
    // Every family present: a memory budget (its limits are gauges), S3 and Iggy statistics.
    pl::memory_budget mem{pl::memory_limits{std::uint64_t{64} << 20, std::uint64_t{1} << 30}};
    auto ports = w.ports();
    ports.memory = &mem;
    auto r = std::make_unique<pl::router>(w.options, w.policy(), ports);
    one_partition_source src;
    for (int i = 0; i < 10; ++i) src.log.push_back(fmt::format("m{}", i));
    pl::consumer_options o;
    o.mode = pl::consumer_mode::single;
    o.sources = {pl::source_topic{{"app", "requests"}, std::nullopt}};
    pl::consumer_loop loop{o, src, *r, w.sleeper, w.clock};
    REQUIRE(run(loop.start()));
    run(loop.round());
    iss::s3::client_stats s3;
    s3.by_operation["PutObject"].requests["200"] = 1;
    iss::iggy::client_stats ig;
    ig.requests[{"PollMessages", "0"}] = 1;
    const std::string text = iss::admin::render_metrics({r.get(), &loop, &s3, &ig, "1", ""});

    std::ifstream in{std::string{ISS_SOURCE_DIR} + "/docs/operations.md"};
    REQUIRE(in);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string doc = ss.str();
    // Every family the daemon serves has a row in the metrics table ...
    std::set<std::string> served;
    for (std::size_t at = text.find("# TYPE "); at != std::string::npos; at = text.find("# TYPE ", at + 1)) {
        const auto name_at = at + 7;
        served.insert(text.substr(name_at, text.find(' ', name_at) - name_at));
    }
    CHECK(served.size() >= 26);
    for (const auto& name : served) {
        INFO(name);
        CHECK(doc.find("| `" + name + "` |") != std::string::npos);
    }
    // ... and every row of the metrics table names a family the daemon serves. Families that
    // exist only with their source are served here too, or named with the reason they are not:
    // the reloads counter and the admin server's connections (`run` sources: set below).
    iss::admin::config_reloads reloads;
    iss::admin::server_stats admin;
    admin.closed_limit = 3;
    iss::admin::metric_sources with_reloads{r.get(), &loop, &s3, &ig, "1", ""};
    with_reloads.reloads = &reloads;
    with_reloads.admin = &admin;
    const std::string text2 = iss::admin::render_metrics(with_reloads);
    CHECK_THAT(text2, ContainsSubstring(R"(iggy_s3_sink_admin_connections_closed_total{reason="max_connections"} 3)"));
    for (std::size_t at = text2.find("# TYPE "); at != std::string::npos; at = text2.find("# TYPE ", at + 1)) {
        const auto name_at = at + 7;
        served.insert(text2.substr(name_at, text2.find(' ', name_at) - name_at));
    }
    const std::set<std::string> only_with_their_source = {
        "iggy_s3_sink_partition_stopped",  // only while a partition is stopped ("a partition stopped" case below)
        "iggy_s3_sink_credentials_expiry_timestamp_seconds",  // only with temporary credentials (e2e.monitoring_series)
        "iggy_s3_sink_credentials_fetches_total",             // only with a credentials source (ditto)
        "iggy_s3_sink_credentials_fetch_failures_total",      // ditto
        "iggy_s3_sink_store_refusals_total",  // only once the store refused something (readiness case below)
        // only with an Iceberg table step ("the Iceberg table step's commits" case below)
        "iggy_s3_sink_iceberg_commits_total",
        "iggy_s3_sink_iceberg_commit_duration_seconds",
        "iggy_s3_sink_iceberg_conflicts_total",
        "iggy_s3_sink_iceberg_last_commit_age_seconds",
        "iggy_s3_sink_iceberg_catalog_up",
        "iggy_s3_sink_iceberg_catalog_unreachable_total",
        "iggy_s3_sink_iceberg_catalog_refusing",
    };
    const auto table_at = doc.find("\n## Metrics\n");
    REQUIRE(table_at != std::string::npos);
    const auto table_end = doc.find("\n## ", table_at + 1);
    const std::string table = doc.substr(table_at, table_end - table_at);
    const std::string row = "| `iggy_s3_sink_";
    for (std::size_t at = table.find(row); at != std::string::npos; at = table.find(row, at + 1)) {
        const auto name_at = at + 3;
        const std::string name = table.substr(name_at, table.find('`', name_at) - name_at);
        INFO(name);
        CHECK((served.count(name) == 1 || only_with_their_source.count(name) == 1));
    }
}

TEST_CASE("metrics: a partition stopped by a bad message (on_bad_message: fail) is marked with its reason",
          "[admin][metrics]") {
    world w;
    w.rotation.max_records = 2;
    w.options.on_bad_message = pl::bad_message_policy::fail;
    auto r = w.make_router();
    one_partition_source src;
    src.log = {"a", "b", "c", "BAD", "d"};  // fakes' encoder refuses "BAD"
    pl::consumer_options o;
    o.mode = pl::consumer_mode::single;
    o.sources = {pl::source_topic{{"app", "requests"}, std::nullopt}};
    o.poll_messages = 100;
    pl::consumer_loop loop{o, src, *r, w.sleeper, w.clock};
    REQUIRE(run(loop.start()));
    const auto before = w.clock.system_now();
    w.clock.advance(std::chrono::seconds{30});
    run(loop.round());
    REQUIRE(r->find({"app", "requests", 0})->state() == pl::writer_state::failed);
    const std::string text = iss::admin::render_metrics({r.get(), &loop, nullptr, nullptr, "1", ""});
    INFO(text);
    const std::string p = R"({stream="app",topic="requests",partition="0")";
    CHECK_THAT(text, ContainsSubstring("# TYPE iggy_s3_sink_partition_stopped gauge"));
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_partition_stopped" + p + R"(,reason="bad_message"} 1)"));
    CHECK_THAT(text,
               ContainsSubstring(R"(iggy_s3_sink_bad_messages_total{stream="app",topic="requests",policy="fail"} 1)"));
    // What precedes the bad message was committed (offset 2), 30 s after the writer read the offset.
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_committed_offset" + p + "} 2\n"));
    const std::chrono::duration<double> at = before.time_since_epoch() + std::chrono::seconds{30};
    CHECK(sample_value(text, "iggy_s3_sink_last_commit_timestamp_seconds" + p + "}") >=
          Approx(at.count()).epsilon(0).margin(1e-3));
}

TEST_CASE("metrics: s3 and iggy client statistics by operation, command and code", "[admin][metrics]") {
    iss::s3::client_stats s3;
    auto& put = s3.by_operation["PutObject"];
    put.requests["200"] = 3;
    put.requests["503"] = 1;
    put.retries = 1;
    put.duration.observe(0.003);
    put.duration.observe(0.2);
    put.duration.observe(120);  // above the last bound: only in +Inf
    iss::iggy::client_stats ig;
    ig.reconnects = 2;
    ig.requests[{"PollMessages", "0"}] = 7;
    ig.requests[{"StoreConsumerOffset", "3022"}] = 1;
    const std::string text = iss::admin::render_metrics({nullptr, nullptr, &s3, &ig, "1", ""});
    INFO(text);
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_s3_requests_total{operation="PutObject",code="200"} 3)"));
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_s3_requests_total{operation="PutObject",code="503"} 1)"));
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_s3_retries_total{operation="PutObject"} 1)"));
    CHECK_THAT(text, ContainsSubstring(
                         R"(iggy_s3_sink_s3_request_duration_seconds_bucket{operation="PutObject",le="0.005"} 1)"));
    CHECK_THAT(text, ContainsSubstring(
                         R"(iggy_s3_sink_s3_request_duration_seconds_bucket{operation="PutObject",le="0.25"} 2)"));
    CHECK_THAT(
        text, ContainsSubstring(R"(iggy_s3_sink_s3_request_duration_seconds_bucket{operation="PutObject",le="60"} 2)"));
    CHECK_THAT(text, ContainsSubstring(
                         R"(iggy_s3_sink_s3_request_duration_seconds_bucket{operation="PutObject",le="+Inf"} 3)"));
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_s3_request_duration_seconds_count{operation="PutObject"} 3)"));
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_iggy_reconnects_total 2\n"));
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_iggy_requests_total{command="PollMessages",code="0"} 7)"));
    CHECK_THAT(text,
               ContainsSubstring(R"(iggy_s3_sink_iggy_requests_total{command="StoreConsumerOffset",code="3022"} 1)"));
    // No pipeline yet (the store is being probed): its families are absent, not zero.
    CHECK(text.find("iggy_s3_sink_messages_total") == std::string::npos);
}

TEST_CASE("readiness: one line per unmet condition, none when ready", "[admin][readiness]") {
    using iss::admin::unmet_conditions;
    iss::admin::readiness_inputs in;
    in.group_mode = true;
    auto all = unmet_conditions(in);
    REQUIRE(all.size() == 3);
    CHECK_THAT(all[0], ContainsSubstring("store"));
    CHECK_THAT(all[1], ContainsSubstring("iggy: not connected"));
    CHECK_THAT(all[2], ContainsSubstring("consumer group not joined"));
    in.store_usable = in.iggy_connected = true;
    CHECK(unmet_conditions(in) == std::vector<std::string>{"iggy: consumer group not joined"});
    in.group_joined = true;
    CHECK(unmet_conditions(in).empty());
    in.group_mode = false;
    in.group_joined = false;  // single mode: the group does not matter
    CHECK(unmet_conditions(in).empty());
    CHECK(iss::admin::readiness_notes(in).empty());
    // A reload's drain: still ready (a reload must not get the pod unrouted or restarted), and
    // /readyz says it is reloading, not stopping.
    in.reloading = true;
    CHECK(unmet_conditions(in).empty());
    const auto notes = iss::admin::readiness_notes(in);
    REQUIRE(notes.size() == 1);
    CHECK_THAT(notes[0], ContainsSubstring("reloading: "));
    in.iggy_connected = false;  // what the reload really lacks still counts
    CHECK(unmet_conditions(in) == std::vector<std::string>{"iggy: not connected and logged in"});
    in.iggy_connected = true;
    in.stopping = true;
    CHECK(unmet_conditions(in).size() == 1);
    CHECK_THAT(unmet_conditions(in)[0], ContainsSubstring("stopping"));
    CHECK(iss::admin::readiness_notes(in).empty());  // a stop during a reload's drain is a stop
}

TEST_CASE("config reloads are one counter with a result label, every result always shown", "[admin][metrics]") {
    iss::admin::config_reloads reloads;
    iss::admin::metric_sources src{nullptr, nullptr, nullptr, nullptr, "1", ""};
    src.reloads = &reloads;
    std::string text = iss::admin::render_metrics(src);
    INFO(text);
    CHECK_THAT(text, ContainsSubstring("# TYPE iggy_s3_sink_config_reloads_total counter\n"));
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_config_reloads_total{result="success"} 0)"));
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_config_reloads_total{result="failure"} 0)"));
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_config_reloads_total{result="unchanged"} 0)"));
    reloads.success = 2;
    reloads.failure = 1;
    reloads.unchanged = 3;
    text = iss::admin::render_metrics(src);
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_config_reloads_total{result="success"} 2)"));
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_config_reloads_total{result="failure"} 1)"));
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_config_reloads_total{result="unchanged"} 3)"));
    // Not `run` (no reload there): no family at all.
    CHECK(iss::admin::render_metrics({nullptr, nullptr, nullptr, nullptr, "1", ""}).find("config_reloads") ==
          std::string::npos);
}

TEST_CASE("readiness and metrics: a missing source topic and an offset reset are named", "[admin][readiness]") {
    world w;
    w.rotation.max_records = 4;
    auto r = w.make_router();
    one_partition_source src;
    for (int i = 0; i < 10; ++i) src.log.push_back(fmt::format("m{}", i));
    pl::consumer_options o;
    o.mode = pl::consumer_mode::single;
    o.sources = {pl::source_topic{{"app", "requests"}, std::nullopt}, pl::source_topic{{"app", "gone"}, std::nullopt}};
    o.poll_messages = 100;
    pl::consumer_loop loop{o, src, *r, w.sleeper, w.clock};
    REQUIRE(run(loop.start()));
    run(loop.round());  // 10 messages polled; the next offset is 10
    iss::admin::readiness_inputs in;
    in.store_usable = in.iggy_connected = true;
    in.source_problems = iss::admin::source_problems(loop);
    CHECK(iss::admin::unmet_conditions(in) ==
          std::vector<std::string>{"iggy: source unavailable: app/gone: stream or topic not found"});
    // app/requests is created again with 2 messages: the next offset (10) lies past its head (1).
    src.log = {"n0", "n1"};
    run(loop.round());
    in.source_problems = iss::admin::source_problems(loop);
    const auto unmet = iss::admin::unmet_conditions(in);
    REQUIRE(unmet.size() == 2);
    CHECK_THAT(unmet[1],
               ContainsSubstring("iggy: offset reset: app/requests partition 0: the next offset 10 lies past the "
                                 "newest offset 1"));
    CHECK_THAT(unmet[1], ContainsSubstring("iggy.on_offset_reset: fail"));
    const std::string text = iss::admin::render_metrics({r.get(), &loop, nullptr, nullptr, "1.2.3", "abc123"});
    INFO(text);
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_offset_reset_partitions{stream="app",topic="requests"} 1)"));
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_offset_reset_partitions{stream="app",topic="gone"} 0)"));
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_source_unavailable{stream="app",topic="gone"} 1)"));
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_source_unavailable{stream="app",topic="requests"} 0)"));
}

TEST_CASE("metrics: counters and histograms of rebuilt sources are carried, so no series goes down",
          "[admin][metrics]") {
    // A reload rebuilds the pipeline (and the S3 or Iggy client when their settings changed):
    // what the old objects counted stays in every counter and histogram; gauges do not carry.
    iss::admin::carried_totals carried;
    std::string before;
    {
        world w;
        w.rotation.max_records = 4;
        auto r = w.make_router();
        one_partition_source src;
        for (int i = 0; i < 10; ++i) src.log.push_back(fmt::format("m{}", i));
        pl::consumer_options o;
        o.mode = pl::consumer_mode::single;
        o.sources = {pl::source_topic{{"app", "requests"}, std::nullopt}};
        pl::consumer_loop loop{o, src, *r, w.sleeper, w.clock};
        REQUIRE(run(loop.start()));
        run(loop.round());  // 8 messages in 2 objects
        iss::iggy::client_stats ig;
        ig.requests[{"PollMessages", "0"}] = 5;
        iss::admin::metric_sources live{r.get(), &loop, nullptr, &ig, "1", ""};
        live.carried = &carried;
        before = iss::admin::render_metrics(live);
        carried.carry({r.get(), nullptr, nullptr, &ig, "1", ""});  // then the generation's objects go
    }
    const std::string t = R"({stream="app",topic="requests"})";
    // Between generations: only the carried series, with their numbers.
    iss::admin::metric_sources none{nullptr, nullptr, nullptr, nullptr, "1", ""};
    none.carried = &carried;
    std::string text = iss::admin::render_metrics(none);
    INFO(text);
    CHECK(sample_value(text, "iggy_s3_sink_messages_total" + t) == 8);
    CHECK(sample_value(text, "iggy_s3_sink_objects_total" + t) == 2);
    CHECK(sample_value(text, "iggy_s3_sink_upload_duration_seconds_count") == 2);
    CHECK(sample_value(text, R"(iggy_s3_sink_iggy_requests_total{command="PollMessages",code="0"})") == 5);
    CHECK(text.find("iggy_s3_sink_committed_offset") == std::string::npos);  // a gauge: not carried

    // The next generation's own numbers are added to the carried ones, series by series.
    world w;
    w.rotation.max_records = 4;
    auto r = w.make_router();
    one_partition_source src;
    for (int i = 0; i < 10; ++i) src.log.push_back(fmt::format("m{}", i));
    pl::consumer_options o;
    o.mode = pl::consumer_mode::single;
    o.sources = {pl::source_topic{{"app", "requests"}, std::nullopt}, pl::source_topic{{"app", "audit"}, std::nullopt}};
    pl::consumer_loop loop{o, src, *r, w.sleeper, w.clock};
    REQUIRE(run(loop.start()));
    run(loop.round());  // 8 more on app/requests, 8 on app/audit
    iss::iggy::client_stats ig;
    ig.requests[{"PollMessages", "0"}] = 1;
    iss::admin::metric_sources live{r.get(), &loop, nullptr, &ig, "1", ""};
    live.carried = &carried;
    text = iss::admin::render_metrics(live);
    CHECK(sample_value(text, "iggy_s3_sink_messages_total" + t) == 16);
    // systemd's STATUS= line counts over reloads too: 8 messages in 2 objects carried, 16 in 4
    // written by this generation (the running pipeline alone says 16 in 4).
    CHECK(r->totals().records_written == 16);
    CHECK(iss::admin::totals_since_start(r.get(), carried) == iss::admin::lifetime_totals{24, 6, 0});
    CHECK(iss::admin::totals_since_start(nullptr, carried) == iss::admin::lifetime_totals{8, 2, 0});
    CHECK(sample_value(text, R"(iggy_s3_sink_messages_total{stream="app",topic="audit"})") == 8);
    CHECK(sample_value(text, "iggy_s3_sink_upload_duration_seconds_count") == 6);
    CHECK(sample_value(text, R"(iggy_s3_sink_upload_duration_seconds_bucket{le="+Inf"})") == 6);
    CHECK(sample_value(text, R"(iggy_s3_sink_iggy_requests_total{command="PollMessages",code="0"})") == 6);
    CHECK(sample_value(text, R"(iggy_s3_sink_committed_offset{stream="app",topic="requests",partition="0"})") == 7);
    // Every counter and histogram sample rendered before is still there, and not lower.
    const auto samples = [](const std::string& s) {
        std::map<std::string, double> out;
        std::istringstream in{s};
        for (std::string line; std::getline(in, line);) {
            if (line.empty() || line[0] == '#') continue;
            const auto sp = line.rfind(' ');
            out[line.substr(0, sp)] = std::stod(line.substr(sp + 1));
        }
        return out;
    };
    const auto after = samples(text);
    for (const auto& [series, v] : samples(before)) {
        const bool monotonic = series.find("_total") != std::string::npos ||
                               series.find("_bucket") != std::string::npos ||
                               series.find("_count") != std::string::npos;
        if (!monotonic || series.rfind("process_", 0) == 0) continue;
        INFO(series);
        REQUIRE(after.count(series) == 1);
        CHECK(after.at(series) >= v);
    }
}

TEST_CASE("readiness and metrics: a store that refuses writes and a failing spool are named", "[admin][readiness]") {
    world w;
    auto r = w.make_router();
    iss::admin::readiness_inputs in;
    in.store_usable = in.iggy_connected = true;
    in.delivery_problems = iss::admin::delivery_problems(r->health());
    CHECK(iss::admin::unmet_conditions(in).empty());
    std::string text = iss::admin::render_metrics({r.get(), nullptr, nullptr, nullptr, "1", ""});
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_store_refusing 0\n"));
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_spool_errors_total{reason="no_space"} 0)"));
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_spool_errors_total{reason="missing"} 0)"));

    w.health.store_refused("AccessDenied", "PutObject b/k: HTTP 403 AccessDenied: Access Denied", w.clock.steady_now());
    w.health.store_refused("AccessDenied", "PutObject b/k2: HTTP 403 AccessDenied: Access Denied",
                           w.clock.steady_now());
    w.health.spool_failed(pl::spool_error_reason::read_only, "spool check of /s: Read-only file system",
                          w.clock.steady_now());
    in.delivery_problems = iss::admin::delivery_problems(r->health());
    const auto unmet = iss::admin::unmet_conditions(in);
    REQUIRE(unmet.size() == 2);
    CHECK_THAT(unmet[0], ContainsSubstring("store: refusing writes: AccessDenied: PutObject b/k2: HTTP 403"));
    CHECK_THAT(unmet[0], ContainsSubstring("s3.retry.cap"));
    CHECK_THAT(unmet[1], ContainsSubstring("spool: read_only: spool check of /s: Read-only file system"));
    text = iss::admin::render_metrics({r.get(), nullptr, nullptr, nullptr, "1", ""});
    INFO(text);
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_store_refusing 1\n"));
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_store_refusals_total{code="AccessDenied"} 2)"));
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_spool_errors_total{reason="read_only"} 1)"));

    w.health.store_accepted();
    w.health.spool_ok();
    in.delivery_problems = iss::admin::delivery_problems(r->health());
    CHECK(iss::admin::unmet_conditions(in).empty());
    text = iss::admin::render_metrics({r.get(), nullptr, nullptr, nullptr, "1", ""});
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_store_refusing 0\n"));
    CHECK_THAT(text,
               ContainsSubstring(R"(iggy_s3_sink_store_refusals_total{code="AccessDenied"} 2)"));  // a counter
}

TEST_CASE("metrics: the Iceberg table step's commits, conflicts, duration and last commit's age",
          "[admin][metrics][iceberg]") {
    pl::iceberg_table_stats st;
    iss::admin::metric_sources none;
    none.iceberg = &st;
    const std::string before = iss::admin::render_metrics(none);
    CHECK_THAT(before, ContainsSubstring(R"(iggy_s3_sink_iceberg_commits_total{result="committed"} 0)"));
    CHECK(before.find("iggy_s3_sink_iceberg_last_commit_age_seconds") == std::string::npos);  // none yet

    st.commits_ok = 3;
    st.commits_found = 1;
    st.commits_failed = 2;
    st.conflicts = 4;
    for (const double s : {0.015625, 0.25, 0.25, 0.984375}) st.duration.observe(s);
    st.last_commit = std::chrono::steady_clock::now() - std::chrono::hours{1};
    const std::string text = iss::admin::render_metrics(none);
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_iceberg_commits_total{result="committed"} 3)"));
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_iceberg_commits_total{result="found"} 1)"));
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_iceberg_commits_total{result="failed"} 2)"));
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_iceberg_conflicts_total 4"));
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_iceberg_commit_duration_seconds_count 4"));
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_iceberg_commit_duration_seconds_sum 1.5"));
    // Buckets like the other duration histograms (not only +Inf).
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_iceberg_commit_duration_seconds_bucket{le="0.025"} 1)"));
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_iceberg_commit_duration_seconds_bucket{le="0.5"} 3)"));
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_iceberg_commit_duration_seconds_bucket{le="1"} 4)"));
    // An hour ago, give or take the time this test takes (never less than 3600 s).
    const double age = sample_value(text, "iggy_s3_sink_iceberg_last_commit_age_seconds");
    CHECK(age >= 3600.0);
    CHECK(age < 3600.0 * 24);

    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_iceberg_catalog_up 1"));
    CHECK(iss::admin::catalog_problems(&st).empty());
    CHECK(iss::admin::catalog_problems(nullptr).empty());

    // The catalog unreachable (issue 36): the gauge says so, /readyz names its host.
    st.catalog_unreachable = "127.0.0.1:8181: catalog unavailable: load table at http://127.0.0.1:8181: refused";
    st.catalog_unreachable_total = 3;
    const std::string down = iss::admin::render_metrics(none);
    CHECK_THAT(down, ContainsSubstring("iggy_s3_sink_iceberg_catalog_up 0"));
    CHECK_THAT(down, ContainsSubstring("iggy_s3_sink_iceberg_catalog_unreachable_total 3"));
    const auto lines = iss::admin::catalog_problems(&st);
    REQUIRE(lines.size() == 1);
    CHECK_THAT(lines[0], Catch::Matchers::StartsWith("catalog: unreachable: 127.0.0.1:8181: "));
    iss::admin::readiness_inputs in;
    in.store_usable = in.iggy_connected = true;
    in.delivery_problems = lines;
    CHECK(iss::admin::unmet_conditions(in) == lines);
    st.catalog_unreachable.reset();
    st.catalog_unreachable_total = 0;

    // The catalog refusing commits (issue 36, issue 40's rule): the gauge is 1, /readyz names
    // the code; both clear when a commit is accepted (the step resets it).
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_iceberg_catalog_refusing 0"));
    st.catalog_refusing = "forbidden: commit to ns.events at http://127.0.0.1:8181: HTTP 403: the principal may not";
    CHECK_THAT(iss::admin::render_metrics(none), ContainsSubstring("iggy_s3_sink_iceberg_catalog_refusing 1"));
    const auto refusing = iss::admin::catalog_problems(&st);
    REQUIRE(refusing.size() == 1);
    CHECK_THAT(refusing[0], Catch::Matchers::StartsWith("catalog: refusing commits: forbidden: commit to ns.events"));
    CHECK_THAT(refusing[0], ContainsSubstring("HTTP 403"));
    st.catalog_refusing.reset();

    // A reload rebuilds the step: its counters are carried, never going down.
    iss::admin::carried_totals carried;
    carried.carry(none);
    pl::iceberg_table_stats fresh;
    fresh.commits_ok = 1;
    iss::admin::metric_sources after;
    after.iceberg = &fresh;
    after.carried = &carried;
    CHECK_THAT(iss::admin::render_metrics(after),
               ContainsSubstring(R"(iggy_s3_sink_iceberg_commits_total{result="committed"} 4)"));
}

TEST_CASE("readiness and metrics: a store that gives no answer is named with the reason", "[admin][readiness]") {
    iss::s3::client_stats st;
    CHECK(iss::admin::store_problems(st).empty());
    std::string text = iss::admin::render_metrics({nullptr, nullptr, &st, nullptr, "1", ""});
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_store_unreachable 0\n"));
    for (const auto reason : iss::s3::connection_error_reasons)  // every reason from 0, for alerts
        CHECK_THAT(text, ContainsSubstring(
                             fmt::format("iggy_s3_sink_s3_connection_errors_total{{reason=\"{}\"}} 0\n", reason)));
    st.connection_errors["tls_name"] = 3;
    st.unreachable =
        iss::s3::client_stats::unreachable_state{"tls_name", "PutObject b/k: https://h:1: hostname mismatch"};
    const auto lines = iss::admin::store_problems(st);
    REQUIRE(lines.size() == 1);
    CHECK_THAT(lines[0],
               ContainsSubstring("store: unreachable: tls_name: PutObject b/k: https://h:1: hostname mismatch"));
    CHECK_THAT(lines[0], ContainsSubstring("no data is sent until the certificate verifies"));
    text = iss::admin::render_metrics({nullptr, nullptr, &st, nullptr, "1", ""});
    CHECK_THAT(text, ContainsSubstring("iggy_s3_sink_store_unreachable 1\n"));
    CHECK_THAT(text, ContainsSubstring(R"(iggy_s3_sink_s3_connection_errors_total{reason="tls_name"} 3)"));
    st.unreachable.reset();  // an answer came
    CHECK(iss::admin::store_problems(st).empty());
}

TEST_CASE("metrics: the last Iceberg commit's age is read from the injected clock", "[admin][metrics][iceberg]") {
    iss::manual_clock clk;
    pl::iceberg_table_stats st;
    st.last_commit = clk.steady_now() - std::chrono::hours{1};
    iss::admin::metric_sources src;
    src.iceberg = &st;
    src.clock = &clk;
    CHECK(sample_value(iss::admin::render_metrics(src), "iggy_s3_sink_iceberg_last_commit_age_seconds") == 3600.0);
    clk.advance(std::chrono::seconds{90});
    CHECK(sample_value(iss::admin::render_metrics(src), "iggy_s3_sink_iceberg_last_commit_age_seconds") == 3690.0);
}

TEST_CASE("metrics: the last Iceberg commit's age does not move when the wall clock steps (issue 40 point 5)",
          "[admin][metrics][iceberg]") {
    // A table step commits (on the manual clock), then NTP steps the wall clock an hour
    // forward, then two hours back: the age counts only the time that passed (30 s, then 40 s),
    // never 3630 s (a false "no commit for an hour" alert) nor 0.
    iss::manual_clock clk;
    pl::iceberg_table_stats st;
    st.last_commit = clk.steady_now();
    iss::admin::metric_sources src;
    src.iceberg = &st;
    src.clock = &clk;
    const auto age = [&] {
        return sample_value(iss::admin::render_metrics(src), "iggy_s3_sink_iceberg_last_commit_age_seconds");
    };
    clk.advance(std::chrono::seconds{30});
    CHECK(age() == 30.0);
    clk.set_system(clk.system_now() + std::chrono::hours{1});
    CHECK(age() == 30.0);
    clk.advance(std::chrono::seconds{10});
    clk.set_system(clk.system_now() - std::chrono::hours{2});
    CHECK(age() == 40.0);
}

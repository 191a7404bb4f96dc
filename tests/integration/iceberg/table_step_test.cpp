// SPDX-License-Identifier: Apache-2.0
// The Iceberg table step (lib/pipeline/adapters/iceberg_table.hpp) against the real REST catalog
// of the `iceberg` fixture: objects of several partitions are deferred until the commit
// interval (driven by the injected clock), then go in as one snapshot; the clean stop commits
// at once; a restarted step finds its batch in the table and commits nothing twice. With
// lib/iceberg's manifests and the S3 client: data files of two batches and of a concurrent
// writer, each once in the table as PyIceberg plans its scan; the resume point from the
// table's summary.
#include "http/client.hpp"
#include "iceberg/commit.hpp"
#include "iceberg/partition.hpp"
#include "iceberg/schema.hpp"
#include "pipeline/adapters/iceberg_plan.hpp"
#include "pipeline/adapters/iceberg_resume.hpp"
#include "pipeline/adapters/iceberg_table.hpp"
#include "s3/client.hpp"
#include "s3/fault_front.hpp"
#include "support.hpp"
#include "tests/support/fixture_env.hpp"

#include "catch2_compat.hpp"

using namespace iss;
using namespace iss::test::iceberg_support;
namespace pl = iss::pipeline;
using namespace std::chrono_literals;

namespace {

const std::map<std::string, std::string>& rgw_env() {
    static const auto env = iss::test::fixture_env("RGW_DIR", "rgw");
    return env;
}

// Iggy's stored offsets, as a map.
class map_offsets final : public pl::offset_store {
public:
    task<pl::offset_result> store_offset(const pl::partition_ref& p, std::uint64_t offset) override {
        stored[p] = offset;
        co_return pl::offset_result{};
    }
    task<pl::offset_result> load_offset(const pl::partition_ref& p) override {
        pl::offset_result r;
        if (auto it = stored.find(p); it != stored.end()) r.offset = it->second;
        co_return r;
    }
    std::map<pl::partition_ref, std::uint64_t> stored;
};

// Iggy's topics as GetTopic answers them: only their creation time (`created_at`) is asked.
class topic_times final : public pl::message_source {
public:
    task<pl::poll_result> poll(const pl::topic_ref&, std::optional<std::uint32_t>, std::optional<std::uint64_t>,
                               std::uint32_t) override {
        co_return pl::poll_result{};
    }
    task<pl::source_status> join(const pl::topic_ref&) override { co_return pl::source_status::ok; }
    task<pl::source_status> leave(const pl::topic_ref&) override { co_return pl::source_status::ok; }
    task<pl::partitions_result> partitions(const pl::topic_ref&) override {
        pl::partitions_result r;
        r.created_at = created_at;
        co_return r;
    }
    [[nodiscard]] std::uint64_t session() const override { return 1; }
    std::uint64_t created_at = 1000;
};

class null_writer final : public metadata_writer {
public:
    task<result<void>> put(metadata_file f) override {
        written.push_back(f.location);
        co_return result<void>{};
    }
    std::vector<std::string> written;
};

std::string part_key(const pl::partition_ref& p) { return fmt::format("{}/{}/{}", p.stream, p.topic, p.partition); }

pl::durable_object object(const pl::partition_ref& p, std::uint64_t first, std::uint64_t last) {
    pl::durable_object o;
    o.key = object_key{fmt::format("{}/{}/partition={}/{:020}.parquet", p.stream, p.topic, p.partition, first)};
    o.partition = p;
    o.range = pl::object_range{first, last, last - first + 1};
    o.size = 100;
    return o;
}

struct step_harness {
    net::io_context ioc{1};
    http::client http{ioc.get_executor()};
    // Starts at the real time: the catalog refuses a snapshot older than the table's metadata.
    manual_clock clk{std::chrono::system_clock::now()};
    catalog_client catalog = [this] {
        catalog_options o;
        o.uri = cat().at("ICEBERG_URI");
        o.warehouse = cat().at("ICEBERG_WAREHOUSE");
        return catalog_client{ioc.get_executor(), http, std::move(o), clk};
    }();
    null_writer files;
    std::string ns = fmt::format("step_{:08x}", random32());
    std::vector<pl::iceberg_batch> batches;

    std::unique_ptr<pl::iceberg_table_step> make_step() { return make_step(catalog); }
    std::unique_ptr<pl::iceberg_table_step> make_step(catalog_client& c, iss::backoff_policy retry = {}) {
        pl::iceberg_table_options o;
        o.table_for = [this](const pl::partition_ref& p) { return table_ident{{ns}, p.stream + "_" + p.topic}; };
        o.create.schema_json =
            R"({"type":"struct","schema-id":0,"fields":[{"id":1,"name":"offset","required":true,"type":"long"}]})";
        o.commit_interval = 60s;
        o.retry_backoff = retry;
        o.catalog_host = "the-catalog";
        auto plans = [this](const pl::iceberg_batch& b) -> std::unique_ptr<batch_plan> {
            batches.push_back(b);
            std::map<std::string, std::int64_t> next;
            for (const auto& [p, n] : b.next_offsets) next[part_key(p)] = static_cast<std::int64_t>(n);
            return std::make_unique<test_plan>(b.table, std::move(next));
        };
        return std::make_unique<pl::iceberg_table_step>(ioc.get_executor(), c, files, plans, std::move(o), clk);
    }
    pl::table_status commit(pl::iceberg_table_step& s, const pl::partition_ref& p, pl::durable_object o,
                            std::uint64_t through) {
        std::vector<pl::durable_object> objs{std::move(o)};
        return run<pl::table_result>(ioc, [&]() { return s.commit(p, objs, through); }).status;
    }
    loaded_table load(const pl::partition_ref& p) {
        const table_ident t{{ns}, p.stream + "_" + p.topic};
        auto l = run<result<loaded_table>>(ioc, [&]() { return catalog.load_table(t); });
        REQUIRE(l.has_value());
        return *l;
    }
};

}  // namespace

TEST_CASE("the table step defers objects until the commit interval, then commits every partition in one snapshot",
          "[iceberg]") {
    step_harness h;
    auto step = h.make_step();
    const pl::partition_ref p0{"app", "orders", 0}, p1{"app", "orders", 1};
    CHECK(h.commit(*step, p0, object(p0, 0, 9), 9) == pl::table_status::deferred);
    h.clk.advance(30s);
    CHECK(h.commit(*step, p1, object(p1, 0, 4), 4) == pl::table_status::deferred);
    CHECK(h.batches.empty());

    h.clk.advance(31s);  // 61 s since the batch's first object
    CHECK(h.commit(*step, p0, object(p0, 0, 9), 9) == pl::table_status::ok);
    REQUIRE(h.batches.size() == 1);
    CHECK(h.batches[0].objects.size() == 2);
    CHECK(h.batches[0].next_offsets.at(p0) == 10);
    CHECK(h.batches[0].next_offsets.at(p1) == 5);
    // p1's objects went in with p0's call: its next call is ok without another commit.
    CHECK(h.commit(*step, p1, object(p1, 0, 4), 4) == pl::table_status::ok);
    CHECK(h.batches.size() == 1);
    auto t1 = h.load(p0);
    CHECK(snapshot_count(t1) == 1);
    CHECK(table_offsets(t1) == std::map<std::string, std::int64_t>{{"app/orders/0", 10}, {"app/orders/1", 5}});

    // The clean stop: no waiting for the interval.
    CHECK(h.commit(*step, p0, object(p0, 10, 19), 19) == pl::table_status::deferred);
    step->flush_now();
    CHECK(h.commit(*step, p0, object(p0, 10, 19), 19) == pl::table_status::ok);
    auto t2 = h.load(p0);
    CHECK(snapshot_count(t2) == 2);
    CHECK(table_offsets(t2) == std::map<std::string, std::int64_t>{{"app/orders/0", 20}, {"app/orders/1", 5}});
    CHECK(step->stats().commits_ok == 2);
    CHECK(step->stats().duration.count == 2);
    CHECK(step->stats().last_commit.has_value());

    // A restart before the offset was stored: the same objects again; the table has them.
    auto restarted = h.make_step();
    restarted->flush_now();
    CHECK(h.commit(*restarted, p0, object(p0, 10, 19), 19) == pl::table_status::ok);
    CHECK(restarted->stats().commits_found == 1);
    CHECK(restarted->stats().commits_ok == 0);
    CHECK(snapshot_count(h.load(p0)) == 2);
}

TEST_CASE("an object handed again while its batch is being committed goes into the table once, never in a later batch",
          "[iceberg]") {
    // Issue 36: partitions call the step concurrently (rotation.max_open_objects closes objects
    // while another partition's commit is in flight). p1 hands its object again while the batch
    // holding it is committed; the next batch must not carry it again (a second data file, and
    // the daemon's key namer has forgotten its partition value: the batch was refused forever).
    step_harness h;
    auto step = h.make_step();
    const pl::partition_ref p0{"app", "orders", 0}, p1{"app", "orders", 1};
    CHECK(h.commit(*step, p0, object(p0, 0, 9), 9) == pl::table_status::deferred);
    h.clk.advance(61s);
    CHECK(h.commit(*step, p0, object(p0, 0, 9), 9) == pl::table_status::ok);  // (the table is loaded now)
    CHECK(h.commit(*step, p1, object(p1, 0, 4), 4) == pl::table_status::deferred);
    h.clk.advance(61s);
    // p0's due call takes the batch (p1's object with it) and waits for the catalog; p1's
    // call comes meanwhile with the same object.
    const std::vector<pl::durable_object> a1{object(p0, 10, 19)}, b0{object(p1, 0, 4)};
    std::optional<pl::table_status> first, second;
    net::co_spawn(h.ioc, step->commit(p0, a1, 19), [&](std::exception_ptr, pl::table_result r) { first = r.status; });
    net::co_spawn(h.ioc, step->commit(p1, b0, 4), [&](std::exception_ptr, pl::table_result r) { second = r.status; });
    h.ioc.restart();
    h.ioc.run();
    CHECK(first == pl::table_status::ok);
    REQUIRE(second.has_value());
    REQUIRE(h.batches.size() == 2);
    CHECK(h.batches[1].objects.size() == 2);
    CHECK(h.commit(*step, p1, object(p1, 0, 4), 4) == pl::table_status::ok);  // it is in the table

    CHECK(h.commit(*step, p0, object(p0, 20, 29), 29) == pl::table_status::deferred);
    h.clk.advance(61s);
    CHECK(h.commit(*step, p0, object(p0, 20, 29), 29) == pl::table_status::ok);
    REQUIRE(h.batches.size() == 3);
    REQUIRE(h.batches[2].objects.size() == 1);  // p1's object is not committed a second time
    CHECK(h.batches[2].objects[0].key == object(p0, 20, 29).key);
    CHECK(table_offsets(h.load(p0)) == std::map<std::string, std::int64_t>{{"app/orders/0", 30}, {"app/orders/1", 5}});
}

TEST_CASE("a partition being handed over commits its table's batch at once, not at the commit interval", "[iceberg]") {
    // Issue 36: the revoked partition's offset must be stored as part of the revocation, or
    // the new owner waits for the server's rebalance timeout (30 s).
    step_harness h;
    auto step = h.make_step();
    const pl::partition_ref p0{"app", "orders", 0}, p1{"app", "orders", 1};
    CHECK(h.commit(*step, p0, object(p0, 0, 9), 9) == pl::table_status::deferred);
    CHECK(h.commit(*step, p1, object(p1, 0, 4), 4) == pl::table_status::deferred);
    step->handing_over(p1, true);
    CHECK(h.commit(*step, p1, object(p1, 0, 4), 4) == pl::table_status::ok);  // no time passed
    step->handing_over(p1, false);
    REQUIRE(h.batches.size() == 1);
    CHECK(h.batches[0].objects.size() == 2);  // the table's whole batch, p0's object too
    CHECK(table_offsets(h.load(p1)) == std::map<std::string, std::int64_t>{{"app/orders/0", 10}, {"app/orders/1", 5}});
    CHECK(h.commit(*step, p0, object(p0, 0, 9), 9) == pl::table_status::ok);  // in the table already
    // Over: the next batch waits for the interval again.
    CHECK(h.commit(*step, p1, object(p1, 5, 9), 9) == pl::table_status::deferred);
    CHECK(h.batches.size() == 1);
}

TEST_CASE("a catalog that is down is asked again after a backoff wait up to its cap, not at every call", "[iceberg]") {
    step_harness h;
    catalog_options o;
    o.uri = "http://127.0.0.1:1";  // nothing listens: every request fails at once
    o.warehouse = "w";
    catalog_client down{h.ioc.get_executor(), h.http, std::move(o), h.clk};
    auto step = h.make_step(down, {1000ms, 4000ms});
    const pl::partition_ref p0{"app", "orders", 0};
    CHECK(h.commit(*step, p0, object(p0, 0, 9), 9) == pl::table_status::deferred);
    h.clk.advance(61s);
    CHECK(h.commit(*step, p0, object(p0, 0, 9), 9) == pl::table_status::retryable);
    CHECK(step->stats().commits_failed == 1);
    // Unreachable (/readyz, iggy_s3_sink_iceberg_catalog_up) until the catalog answers.
    REQUIRE(step->stats().catalog_unreachable.has_value());
    CHECK_THAT(*step->stats().catalog_unreachable, Catch::Matchers::StartsWith("the-catalog: "));
    CHECK_THAT(*step->stats().catalog_unreachable, Catch::Matchers::ContainsSubstring("127.0.0.1:1"));
    CHECK(step->stats().catalog_unreachable_total == 1);
    // The writers ask again at every tick: before the wait is over the step only defers.
    // (Full jitter: the wait is in [0, 1 s]; only a wait of 0 ms, once in 1001, lets a call
    // through at once.)
    for (int i = 0; i < 100; ++i) (void)h.commit(*step, p0, object(p0, 0, 9), 9);
    CHECK(step->stats().commits_failed <= 2);
    // Past the cap (4 s) the next call tries again, and only that one.
    for (int attempt = 0; attempt < 4; ++attempt) {
        const auto before = step->stats().commits_failed;
        h.clk.advance(4000ms);
        CHECK(h.commit(*step, p0, object(p0, 0, 9), 9) == pl::table_status::retryable);
        CHECK(step->stats().commits_failed == before + 1);
    }
    CHECK(h.batches.empty());  // never planned: the table was never loaded
    CHECK(step->stats().catalog_unreachable_total == step->stats().commits_failed);
    step->catalog_answered();
    CHECK_FALSE(step->stats().catalog_unreachable.has_value());
}

TEST_CASE("a catalog that refuses commits is named by its code until one is accepted; the attempts are counted",
          "[iceberg]") {
    // Issue 36 (issue 40's rule): a 403 on the commit left /readyz ready and catalog_up 1, and
    // the pipeline's line always said "attempt 1".
    step_harness h;
    test::fault_front front{h.ioc.get_executor(), *http::parse_url(cat().at("ICEBERG_URI"))};
    catalog_options o;
    o.uri = front.url();
    o.warehouse = cat().at("ICEBERG_WAREHOUSE");
    catalog_client fronted{h.ioc.get_executor(), h.http, std::move(o), h.clk};
    test::fault_rule deny{"POST", "/tables/app_orders", test::fault::access_denied_403};
    deny.times = 2;  // the commit, not the table's creation (POST .../tables)
    front.add_rule(deny);
    auto step = h.make_step(fronted, {1000ms, 4000ms});
    const pl::partition_ref p0{"app", "orders", 0};
    const std::vector<pl::durable_object> objs{object(p0, 0, 9)};
    const auto call = [&] { return run<pl::table_result>(h.ioc, [&]() { return step->commit(p0, objs, 9); }); };
    CHECK(call().status == pl::table_status::deferred);
    h.clk.advance(61s);
    for (unsigned attempt = 1; attempt <= 2; ++attempt) {
        const auto r = call();
        CHECK(r.status == pl::table_status::fatal);
        CHECK(r.attempt == attempt);
        REQUIRE(step->stats().catalog_refusing.has_value());
        CHECK_THAT(*step->stats().catalog_refusing, Catch::Matchers::StartsWith("forbidden: "));
        CHECK_THAT(*step->stats().catalog_refusing, Catch::Matchers::ContainsSubstring("HTTP 403"));
        CHECK_FALSE(step->stats().catalog_unreachable.has_value());  // it answers
        h.clk.advance(4000ms);                                       // past the backoff's cap
    }
    // Lifted (the rule's two times are spent): the next attempt goes in and ends the refusal.
    CHECK(call().status == pl::table_status::ok);
    CHECK_FALSE(step->stats().catalog_refusing.has_value());
    CHECK(step->stats().commits_failed == 2);
    CHECK(table_offsets(h.load(p0)) == std::map<std::string, std::int64_t>{{"app/orders/0", 10}});
}

TEST_CASE("a table that is missing without iceberg.create is a fatal step, naming the key", "[iceberg]") {
    step_harness h;
    pl::iceberg_table_options o;
    o.table_for = [&h](const pl::partition_ref&) { return table_ident{{h.ns}, "absent"}; };
    o.create_missing = false;
    o.commit_interval = 0s;
    pl::iceberg_table_step step{h.ioc.get_executor(),
                                h.catalog,
                                h.files,
                                [](const pl::iceberg_batch& b) -> std::unique_ptr<batch_plan> {
                                    return std::make_unique<test_plan>(b.table, "x", 1);
                                },
                                std::move(o),
                                h.clk};
    const pl::partition_ref p{"app", "orders", 0};
    std::vector<pl::durable_object> objs{object(p, 0, 1)};
    auto r = run<pl::table_result>(h.ioc, [&]() { return step.commit(p, objs, 1); });
    CHECK(r.status == pl::table_status::fatal);
    CHECK_THAT(r.detail, Catch::Matchers::ContainsSubstring("iceberg.create: true"));
    CHECK(step.stats().commits_failed == 1);
}

TEST_CASE(
    "with lib/iceberg's manifests: two batches and a concurrent writer's, each data file once, as PyIceberg "
    "plans the scan; the resume point is the larger of Iggy's offset and the table's",
    "[iceberg]") {
    step_harness h;
    s3::client_options so;
    so.endpoint = rgw_env().at("RGW_ENDPOINT");
    so.region = rgw_env().at("RGW_REGION");
    so.credentials = sigv4::credentials{
        access_key_id{rgw_env().at("RGW_ACCESS_KEY")}, secret_access_key{rgw_env().at("RGW_SECRET_KEY")}, {}};
    s3::client s3c{h.ioc.get_executor(), so};
    pl::s3_table_files store{s3c};
    const std::vector<format::column> cols{{"offset", format::column_type::int64}};
    auto schema = iceberg::make_schema(cols);
    REQUIRE(schema.has_value());
    auto spec = iceberg::parse_partition_by({}, *schema);
    REQUIRE(spec.has_value());
    const std::string bucket = cat().at("ICEBERG_BUCKET");

    pl::iceberg_table_options o;
    o.table_for = [&h](const pl::partition_ref& p) { return table_ident{{h.ns}, p.stream + "_" + p.topic}; };
    o.create.schema_json = iceberg::schema_json(*schema);
    o.create.partition_spec_json = spec->json();
    o.commit_interval = 0s;
    std::string location;
    auto plans = [&](const pl::iceberg_batch& b) -> std::unique_ptr<batch_plan> {
        std::vector<iceberg::pending_file> files;
        for (const auto& obj : b.objects) files.push_back(pl::iceberg_data_file(obj, bucket));
        return std::make_unique<pl::iceberg_batch_plan>(*schema, *spec, store, h.clk, b.table, std::move(files),
                                                        pl::iceberg_offsets(b.next_offsets));
    };
    pl::iceberg_table_step step{h.ioc.get_executor(), h.catalog, store, plans, o, h.clk};
    const pl::partition_ref p0{"app", "clicks", 0}, p1{"app", "clicks", 1};
    const table_ident t{{h.ns}, "app_clicks"};
    // The table first (its location names where the data files go).
    create_table_request cr = o.create;
    auto created = run<result<loaded_table>>(h.ioc, [&]() { return h.catalog.ensure_table(t, cr, true); });
    REQUIRE(created.has_value());
    auto loc = pl::split_s3_location(created->location);
    REQUIRE(loc.has_value());
    auto data_object = [&](const pl::partition_ref& p, std::uint64_t first, std::uint64_t last, bool adopted) {
        pl::durable_object d = object(p, first, last);
        d.key = object_key{fmt::format("{}/data/p{}-{:020}.parquet", loc->second, p.partition, first)};
        const std::string body = fmt::format("data file {}..{}", first, last);
        std::vector<std::string_view> parts{body};
        REQUIRE(run<result<s3::put_result>>(h.ioc, [&]() {
                    return s3c.put_object(bucket, d.key.get(), std::move(parts), s3::put_options{});
                }).has_value());
        d.size = adopted ? std::nullopt : std::optional<std::uint64_t>{body.size()};
        d.adopted = adopted;
        return d;
    };
    auto a = data_object(p0, 0, 9, false);
    auto b = data_object(p1, 0, 4, true);  // adopted: its size comes from a HEAD
    CHECK(h.commit(step, p0, a, 9) == pl::table_status::ok);
    CHECK(h.commit(step, p1, b, 4) == pl::table_status::ok);

    // A second daemon commits p2 in between; our next batch is rebuilt on its snapshot.
    pl::iceberg_table_step other{h.ioc.get_executor(), h.catalog, store, plans, o, h.clk};
    const pl::partition_ref p2{"app", "clicks", 2};
    auto c = data_object(p2, 0, 2, false);
    CHECK(h.commit(other, p2, c, 2) == pl::table_status::ok);
    auto d = data_object(p0, 10, 19, false);
    CHECK(h.commit(step, p0, d, 19) == pl::table_status::ok);
    CHECK(step.stats().conflicts == 1);

    const char* py = std::getenv("ICEBERG_PYTHON");
    const char* script = std::getenv("ICEBERG_READ_TABLE");
    REQUIRE(py != nullptr);
    REQUIRE(script != nullptr);
    const std::string cmd = fmt::format(
        "RGW_ENDPOINT='{}' RGW_ACCESS_KEY='{}' RGW_SECRET_KEY='{}' RGW_REGION='{}' '{}' '{}' '{}' '{}' '{}' --files",
        rgw_env().at("RGW_ENDPOINT"), rgw_env().at("RGW_ACCESS_KEY"), rgw_env().at("RGW_SECRET_KEY"),
        rgw_env().at("RGW_REGION"), py, script, cat().at("ICEBERG_URI"), h.ns, "app_clicks");
    FILE* pipe = ::popen(cmd.c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::string out;
    char buf[4096];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
    REQUIRE(::pclose(pipe) == 0);
    INFO(out);
    const auto py_table = json::parse(out).as_object();
    const auto& files = py_table.at("files").as_array();
    REQUIRE(files.size() == 4);  // a, b, c, d: each once
    std::map<std::string, std::int64_t> by_path;
    for (const auto& f : files) by_path[std::string{f.as_array()[0].as_string()}] = f.as_array()[1].as_int64();
    CHECK(by_path.at("s3://" + bucket + "/" + a.key.get()) == 10);
    CHECK(by_path.at("s3://" + bucket + "/" + b.key.get()) == 5);
    CHECK(by_path.at("s3://" + bucket + "/" + c.key.get()) == 3);
    CHECK(by_path.at("s3://" + bucket + "/" + d.key.get()) == 10);
    CHECK(py_table.at("snapshots").as_int64() == 4);
    auto offsets = iceberg::parse_offsets(py_table.at("summary").as_object().at("iggy-s3-sink.offsets").as_string());
    REQUIRE(offsets.has_value());
    CHECK(offsets->at({"app", "clicks", 0}) == 20);
    CHECK(offsets->at({"app", "clicks", 1}) == 5);
    CHECK(offsets->at({"app", "clicks", 2}) == 3);

    // The resume point: the larger of Iggy's stored offset and the table's (next - 1).
    map_offsets iggy;
    iggy.stored[p0] = 9;   // the table is ahead (a crash before the store): 19
    iggy.stored[p1] = 30;  // Iggy is ahead: 30
    topic_times topics;
    pl::topic_generations generations;
    pl::iceberg_resume_offsets resume{iggy, topics, generations, h.catalog, o.table_for};
    auto load = [&](const pl::partition_ref& p) {
        return run<pl::offset_result>(h.ioc, [&]() { return resume.load_offset(p); });
    };
    // A table without iggy-s3-sink.topics (as every table was before it): its offsets stand.
    CHECK(load(p0).offset == 19u);
    CHECK(load(p1).offset == 30u);
    CHECK(load(p2).offset == 2u);
    CHECK_FALSE(load(p2).reset.has_value());
    CHECK_FALSE(load({"app", "clicks", 7}).offset.has_value());  // in neither
    auto missing = load({"app", "views", 0});                    // no table yet
    CHECK(missing.status == pl::offset_status::ok);
    CHECK_FALSE(missing.offset.has_value());
    CHECK(generations.of(p0) == 1000u);  // learnt for the next commit
    CHECK(generations.of({"app", "views", 0}) == 1000u);
}

TEST_CASE(
    "the resume point: a table whose offsets are of an earlier topic (deleted and created again) is an offset "
    "reset, for every partition of the topic",
    "[iceberg]") {
    step_harness h;
    const std::vector<format::column> cols{{"offset", format::column_type::int64}};
    auto schema = iceberg::make_schema(cols);
    REQUIRE(schema.has_value());
    auto spec = iceberg::parse_partition_by({}, *schema);
    REQUIRE(spec.has_value());
    s3::client_options so;
    so.endpoint = rgw_env().at("RGW_ENDPOINT");
    so.region = rgw_env().at("RGW_REGION");
    so.credentials = sigv4::credentials{
        access_key_id{rgw_env().at("RGW_ACCESS_KEY")}, secret_access_key{rgw_env().at("RGW_SECRET_KEY")}, {}};
    s3::client s3c{h.ioc.get_executor(), so};
    pl::s3_table_files files{s3c};
    const std::string bucket = cat().at("ICEBERG_BUCKET");
    pl::iceberg_table_options o;
    o.table_for = [&h](const pl::partition_ref& p) { return table_ident{{h.ns}, p.stream + "_" + p.topic}; };
    o.create.schema_json = iceberg::schema_json(*schema);
    o.create.partition_spec_json = spec->json();
    o.commit_interval = 0s;
    map_offsets iggy;  // Iggy deletes the stored offsets with the topic: none
    topic_times topics;
    topics.created_at = 1'700'000'000'000'000ULL;
    pl::topic_generations generations;
    pl::iceberg_resume_offsets resume{iggy, topics, generations, h.catalog, o.table_for};
    auto load = [&](const pl::partition_ref& p) {
        return run<pl::offset_result>(h.ioc, [&]() { return resume.load_offset(p); });
    };
    const pl::partition_ref p0{"app", "events", 0}, p1{"app", "events", 1};
    CHECK_FALSE(load(p0).offset.has_value());  // no table yet; the creation time is learnt
    // The commit records the creation time the resume point learnt (as iceberg_run's plan does).
    auto plans = [&](const pl::iceberg_batch& b) -> std::unique_ptr<batch_plan> {
        std::vector<iceberg::pending_file> fs;
        iceberg::topic_created_map created;
        for (const auto& obj : b.objects) {
            fs.push_back(pl::iceberg_data_file(obj, bucket));
            if (auto g = generations.of(obj.partition)) created[{obj.partition.stream, obj.partition.topic}] = *g;
        }
        return std::make_unique<pl::iceberg_batch_plan>(*schema, *spec, files, h.clk, b.table, std::move(fs),
                                                        pl::iceberg_offsets(b.next_offsets), std::move(created));
    };
    pl::iceberg_table_step step{h.ioc.get_executor(), h.catalog, files, plans, o, h.clk};
    auto d = object(p0, 0, 299);
    d.key = object_key{"data/p0-00000000000000000000.parquet"};
    d.size = 100;
    CHECK(h.commit(step, p0, d, 299) == pl::table_status::ok);
    // The same topic: resume after the table's offset.
    auto same = load(p0);
    CHECK(same.offset == 299u);
    CHECK_FALSE(same.reset.has_value());
    // The topic deleted and created again (a later creation time), its offsets from 0 again:
    // the table's 0..299 are not the new topic's, so no resume after them, never silently.
    topics.created_at += 60'000'000;
    for (const auto& p : {p0, p1}) {  // p1 has no offset in the table, but the topic's are the old one's
        INFO(p.partition);
        const auto r = load(p);
        CHECK(r.status == pl::offset_status::ok);
        REQUIRE(r.reset.has_value());
        CHECK_THAT(*r.reset, Catch::Matchers::ContainsSubstring("table " + o.table_for(p).to_string()));
        CHECK_THAT(*r.reset, Catch::Matchers::ContainsSubstring("created_at 1700000000000000"));
        CHECK_THAT(*r.reset, Catch::Matchers::ContainsSubstring("created at 1700000060000000"));
        CHECK_THAT(*r.reset, Catch::Matchers::ContainsSubstring("set iceberg.table to a new table"));
    }
    CHECK(generations.of(p1) == std::nullopt);  // not bound to the new topic: nothing of it is committed
}

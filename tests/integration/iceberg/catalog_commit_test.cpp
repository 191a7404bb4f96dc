// SPDX-License-Identifier: Apache-2.0
// The table step's commit loop (lib/iceberg/catalog_commit.hpp) against the real REST catalog
// of the `iceberg` fixture, with faults from the S3 fault front in front of it: every batch
// ends in the table exactly once (one snapshot with its offsets), whatever the catalog
// answered. The plan here is a small stand-in for the module's metadata builders: it names
// its manifest list (the catalog does not read it) and merges the parent's summary offsets,
// which is what the loop's decisions rest on.
#include "iceberg/catalog_commit.hpp"

#include "http/client.hpp"
#include "s3/fault_front.hpp"
#include "support.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include "catch2_compat.hpp"

#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <random>

using namespace iss;
using namespace iss::iceberg;
namespace net = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
using Catch::Matchers::ContainsSubstring;

using namespace iss::test::iceberg_support;

namespace {

class recording_writer final : public metadata_writer {
public:
    task<result<void>> put(metadata_file f) override {
        written.push_back(f.location);
        co_return result<void>{};
    }
    std::vector<std::string> written;
};

struct harness {
    net::io_context ioc{1};
    http::client http{ioc.get_executor()};
    test::fault_front front{ioc.get_executor(), *http::parse_url(cat().at("ICEBERG_URI"))};
    catalog_client direct = make(cat().at("ICEBERG_URI"));
    catalog_client fronted = make(front.url());
    table_ident t{{fmt::format("commit_{:08x}", random32())}, "events"};

    catalog_client make(std::string uri) {
        catalog_options o;
        o.uri = std::move(uri);
        o.warehouse = cat().at("ICEBERG_WAREHOUSE");
        o.request_timeout = 2s;
        return catalog_client{ioc.get_executor(), http, std::move(o), real_clock::instance()};
    }
    template <class T>
    T go(std::function<net::awaitable<T>()> f) {
        return run<T>(ioc, std::move(f));
    }
    loaded_table create() {
        create_table_request r;
        r.schema_json =
            R"({"type":"struct","schema-id":0,"fields":[{"id":1,"name":"offset","required":true,"type":"long"}]})";
        auto l = go<result<loaded_table>>([&] { return direct.ensure_table(t, r, true); });
        REQUIRE(l.has_value());
        return *l;
    }
    loaded_table load() {
        auto l = go<result<loaded_table>>([&] { return direct.load_table(t); });
        REQUIRE(l.has_value());
        return *l;
    }
    result<commit_outcome> commit(catalog_client& c, const loaded_table& base, test_plan& plan, recording_writer& w) {
        return go<result<commit_outcome>>([&] { return commit_batch(c, w, t, base, plan); });
    }
    void wait(std::chrono::milliseconds d) {
        go<int>([&]() -> net::awaitable<int> {
            net::steady_timer timer{ioc, d};
            co_await timer.async_wait(net::use_awaitable);
            co_return 0;
        });
    }
};

}  // namespace

TEST_CASE("a concurrent commit in between: the batch is built again on the new parent; both are in", "[iceberg]") {
    harness h;
    const auto base = h.create();
    // Another daemon commits partition 1 after we loaded the table.
    test_plan other{h.t, "s/t/1", 500};
    recording_writer w;
    REQUIRE(h.commit(h.direct, base, other, w).has_value());

    test_plan ours{h.t, "s/t/0", 100};
    auto r = h.commit(h.direct, base, ours, w);
    REQUIRE(r.has_value());
    CHECK(r->attempts == 2);
    CHECK(r->conflicts == 1);
    CHECK_FALSE(r->found_committed);
    const auto now = h.load();
    CHECK(snapshot_count(now) == 2);
    CHECK(table_offsets(now) == std::map<std::string, std::int64_t>{{"s/t/0", 100}, {"s/t/1", 500}});
    CHECK(w.written.size() == 3);  // the other's list, our first and our rebuilt one
}

TEST_CASE("500 after the catalog applied the commit: the reload finds the batch in; one snapshot", "[iceberg]") {
    harness h;
    const auto base = h.create();
    h.front.add_rule({"POST", "/tables/events", test::fault::internal_500_after_forward});
    test_plan plan{h.t, "s/t/0", 100};
    recording_writer w;
    auto r = h.commit(h.fronted, base, plan, w);
    REQUIRE(r.has_value());
    CHECK(r->found_committed);
    CHECK(r->attempts == 1);
    CHECK(r->unknown_outcomes == 1);
    CHECK(plan.builds == 1);
    CHECK(snapshot_count(h.load()) == 1);
    CHECK(table_offsets(h.load()).at("s/t/0") == 100);
}

TEST_CASE("500 before the catalog saw it: the reload finds nothing; committed once on retry", "[iceberg]") {
    harness h;
    const auto base = h.create();
    h.front.add_rule({"POST", "/tables/events", test::fault::internal_500_empty});
    test_plan plan{h.t, "s/t/0", 100};
    recording_writer w;
    auto r = h.commit(h.fronted, base, plan, w);
    REQUIRE(r.has_value());
    CHECK_FALSE(r->found_committed);
    CHECK(r->attempts == 2);
    CHECK(snapshot_count(h.load()) == 1);
}

TEST_CASE("a lost answer after the commit applied: one snapshot", "[iceberg]") {
    harness h;
    const auto base = h.create();
    h.front.add_rule({"POST", "/tables/events", test::fault::drop_response});
    test_plan plan{h.t, "s/t/0", 100};
    recording_writer w;
    auto r = h.commit(h.fronted, base, plan, w);
    REQUIRE(r.has_value());
    CHECK(r->found_committed);
    CHECK(snapshot_count(h.load()) == 1);
}

TEST_CASE("a timeout, then the catalog gets the late request: still one snapshot", "[iceberg]") {
    harness h;
    const auto base = h.create();
    test::fault_rule slow{"POST", "/tables/events", test::fault::delay};
    slow.delay = 4s;  // past the 2 s request budget: the first commit reaches the catalog late
    h.front.add_rule(slow);
    test_plan plan{h.t, "s/t/0", 100};
    recording_writer w;
    auto r = h.commit(h.fronted, base, plan, w);
    REQUIRE(r.has_value());
    CHECK(r->unknown_outcomes == 1);
    CHECK(r->attempts == 2);
    h.wait(3s);  // the late first request now arrives: its parent is not current any more (409)
    const auto now = h.load();
    CHECK(snapshot_count(now) == 1);
    CHECK(table_offsets(now).at("s/t/0") == 100);
}

TEST_CASE("a batch the table holds already is not committed again; 401 ends the loop", "[iceberg]") {
    harness h;
    const auto base = h.create();
    test_plan plan{h.t, "s/t/0", 100};
    recording_writer w;
    REQUIRE(h.commit(h.direct, base, plan, w).has_value());
    auto again = h.commit(h.direct, h.load(), plan, w);  // a restart before the offset was stored
    REQUIRE(again.has_value());
    CHECK(again->found_committed);
    CHECK(again->attempts == 0);
    CHECK(w.written.size() == 1);

    test_plan next{h.t, "s/t/0", 200};
    h.front.add_rule({"POST", "/tables/events", test::fault::unauthorized_401});
    auto refused = h.commit(h.fronted, h.load(), next, w);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error() == catalog_errc::unauthorized);
    CHECK(next.builds == 1);
    CHECK(table_offsets(h.load()).at("s/t/0") == 100);
}

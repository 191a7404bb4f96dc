// SPDX-License-Identifier: Apache-2.0
// lib/iceberg's REST catalog client against a real catalog: the Apache Iceberg REST catalog
// server of the `iceberg` CTest fixture (tests/support/iceberg/catalog), its tables on the
// `rgw` fixture's Ceph RGW. Namespaces, tables, loads and commits go to the real server;
// the S3 fault front (tests/support/s3/fault_front.hpp) stands between client and catalog
// where a test needs a fault (409, 500 after the commit applied, a lost answer, a timeout)
// or must see the headers the client sent. What was committed is read back by our client
// and by PyIceberg (tests/integration/iceberg/read_table.py). Each test case uses its own
// namespace.
#include "iceberg/catalog.hpp"

#include "http/client.hpp"
#include "s3/fault_front.hpp"
#include "tests/support/fixture_env.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include "catch2_compat.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <random>

using namespace iss;
using namespace iss::iceberg;
namespace net = boost::asio;
using namespace std::chrono_literals;
using Catch::Matchers::ContainsSubstring;

namespace {

const std::map<std::string, std::string>& rgw() {
    static const auto env = iss::test::fixture_env("RGW_DIR", "rgw");
    return env;
}

const std::map<std::string, std::string>& cat() {
    static const auto env = iss::test::fixture_env("ICEBERG_DIR", "iceberg");
    return env;
}

std::string unique(std::string_view what) {
    static std::mt19937_64 rng{std::random_device{}()};
    return fmt::format("{}_{:08x}", what, static_cast<std::uint32_t>(rng()));
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

create_table_request events_table() {
    create_table_request r;
    r.schema_json =
        R"({"type":"struct","schema-id":0,"fields":[{"id":1,"name":"offset","required":true,"type":"long"},)"
        R"({"id":2,"name":"tenant","required":false,"type":"string"},{"id":3,"name":"ts","required":false,"type":"timestamptz"}]})";
    r.partition_spec_json =
        R"({"spec-id":0,"fields":[{"source-id":3,"field-id":1000,"name":"ts_day","transform":"day"},)"
        R"({"source-id":2,"field-id":1001,"name":"tenant","transform":"identity"}]})";
    return r;
}

// A CommitTableRequest appending snapshot `id` on `parent` (nullopt: the table has none),
// with `offsets` as the snapshot summary's iggy-s3-sink.offsets. The manifest list is named,
// not written: the catalog does not read it.
std::string append_body(const table_ident& t, const loaded_table& base, std::int64_t id,
                        std::optional<std::int64_t> parent, std::int64_t seq, const std::string& offsets) {
    namespace json = boost::json;
    json::array ns;
    for (const auto& l : t.ns) ns.emplace_back(l);
    json::object snap{{"snapshot-id", id},
                      {"sequence-number", seq},
                      {"timestamp-ms", std::chrono::duration_cast<std::chrono::milliseconds>(
                                           std::chrono::system_clock::now().time_since_epoch())
                                           .count()},
                      {"manifest-list", fmt::format("{}/metadata/snap-{}-1-test.avro", base.location, id)},
                      {"summary", json::object{{"operation", "append"}, {"iggy-s3-sink.offsets", offsets}}},
                      {"schema-id", 0}};
    if (parent) snap["parent-snapshot-id"] = *parent;
    json::value parent_req = parent ? json::value(*parent) : json::value(nullptr);
    json::object body{
        {"identifier", json::object{{"namespace", ns}, {"name", t.name}}},
        {"requirements",
         json::array{json::object{{"type", "assert-table-uuid"}, {"uuid", base.table_uuid}},
                     json::object{{"type", "assert-ref-snapshot-id"}, {"ref", "main"}, {"snapshot-id", parent_req}}}},
        {"updates",
         json::array{
             json::object{{"action", "add-snapshot"}, {"snapshot", snap}},
             json::object{
                 {"action", "set-snapshot-ref"}, {"ref-name", "main"}, {"type", "branch"}, {"snapshot-id", id}}}}};
    return json::serialize(body);
}

// PyIceberg's view of the table: {"snapshot_id", "summary", "snapshots", "rows"}.
boost::json::object pyiceberg_read(const table_ident& t) {
    const char* py = std::getenv("ICEBERG_PYTHON");
    const char* script = std::getenv("ICEBERG_READ_TABLE");
    REQUIRE(py != nullptr);
    REQUIRE(script != nullptr);
    const std::string cmd = fmt::format(
        "RGW_ENDPOINT='{}' RGW_ACCESS_KEY='{}' RGW_SECRET_KEY='{}' RGW_REGION='{}' '{}' '{}' '{}' '{}' '{}'",
        rgw().at("RGW_ENDPOINT"), rgw().at("RGW_ACCESS_KEY"), rgw().at("RGW_SECRET_KEY"), rgw().at("RGW_REGION"), py,
        script, cat().at("ICEBERG_URI"), namespace_string(t.ns), t.name);
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::string out;
    char buf[4096];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    const int rc = ::pclose(p);
    INFO(out);
    REQUIRE(rc == 0);
    return boost::json::parse(out).as_object();
}

struct harness {
    net::io_context ioc{1};
    http::client http{ioc.get_executor()};

    catalog_client client(std::string uri, catalog_auth_options auth = {}, std::chrono::milliseconds timeout = 30s,
                          const iss::clock& clk = real_clock::instance()) {
        catalog_options o;
        o.uri = std::move(uri);
        o.warehouse = cat().at("ICEBERG_WAREHOUSE");
        o.auth = std::move(auth);
        o.request_timeout = timeout;
        return catalog_client{ioc.get_executor(), http, std::move(o), clk};
    }
    template <class T>
    T go(std::function<net::awaitable<T>()> f) {
        return run<T>(ioc, std::move(f));
    }
};

}  // namespace

TEST_CASE("a namespace and a partitioned table are created under the warehouse and load back", "[iceberg]") {
    harness h;
    auto c = h.client(cat().at("ICEBERG_URI"));
    auto cfg = h.go<result<catalog_config>>([&] { return c.connect(); });
    REQUIRE(cfg.has_value());
    const table_ident t{{unique("ns")}, "events"};

    auto missing = h.go<result<loaded_table>>([&] { return c.ensure_table(t, events_table(), false); });
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error() == catalog_errc::not_found);
    CHECK_THAT(missing.error().message(), ContainsSubstring("does not exist"));

    auto created = h.go<result<loaded_table>>([&] { return c.ensure_table(t, events_table(), true); });
    REQUIRE(created.has_value());
    CHECK(created->format_version == 2);
    CHECK(created->location == cat().at("ICEBERG_WAREHOUSE") + "/" + t.ns[0] + "/events");
    CHECK_FALSE(created->current_snapshot_id.has_value());
    CHECK_THAT(created->metadata_json, ContainsSubstring(R"("transform":"day")"));
    CHECK_THAT(created->metadata_json, ContainsSubstring(R"("name":"tenant")"));

    auto loaded = h.go<result<loaded_table>>([&] { return c.load_table(t); });
    REQUIRE(loaded.has_value());
    CHECK(loaded->table_uuid == created->table_uuid);
    CHECK(loaded->metadata_location == created->metadata_location);

    // A second creator finds it there: create says so, ensure loads it.
    auto again = h.go<result<loaded_table>>([&] {
        return c.create_table(t.ns, [&] {
            auto r = events_table();
            r.name = t.name;
            return r;
        }());
    });
    REQUIRE_FALSE(again.has_value());
    CHECK(again.error() == catalog_errc::already_exists);
    auto ensured = h.go<result<loaded_table>>([&] { return c.ensure_table(t, events_table(), true); });
    REQUIRE(ensured.has_value());
    CHECK(ensured->table_uuid == created->table_uuid);
}

TEST_CASE("a committed snapshot is the table's current one, with its offsets, for us and for PyIceberg", "[iceberg]") {
    harness h;
    auto c = h.client(cat().at("ICEBERG_URI"));
    REQUIRE(h.go<result<catalog_config>>([&] { return c.connect(); }).has_value());
    const table_ident t{{unique("ns")}, "events"};
    auto base = h.go<result<loaded_table>>([&] { return c.ensure_table(t, events_table(), true); });
    REQUIRE(base.has_value());

    const std::string offsets1 = R"({"s/t/0":100,"s/t/1":40})";
    auto first = h.go<result<loaded_table>>([&] { return c.commit(t, append_body(t, *base, 11, {}, 1, offsets1)); });
    INFO((first ? std::string{} : first.error().message()));
    REQUIRE(first.has_value());
    CHECK(first->current_snapshot_id == 11);
    const std::string offsets2 = R"({"s/t/0":250,"s/t/1":40})";
    auto second = h.go<result<loaded_table>>([&] { return c.commit(t, append_body(t, *first, 12, 11, 2, offsets2)); });
    REQUIRE(second.has_value());
    CHECK(second->current_snapshot_id == 12);
    CHECK(second->metadata_location != first->metadata_location);

    auto loaded = h.go<result<loaded_table>>([&] { return c.load_table(t); });
    REQUIRE(loaded.has_value());
    CHECK(loaded->current_snapshot_id == 12);
    auto md = boost::json::parse(loaded->metadata_json).as_object();
    CHECK(md.at("snapshots").as_array().size() == 2);

    auto py = pyiceberg_read(t);
    CHECK(py.at("snapshot_id").as_int64() == 12);
    CHECK(py.at("snapshots").as_int64() == 2);
    CHECK(py.at("summary").as_object().at("iggy-s3-sink.offsets").as_string() == offsets2);
    CHECK(py.at("summary").as_object().at("operation").as_string() == "append");
}

TEST_CASE("a commit on a parent that is no longer current is a conflict (409), and changes nothing", "[iceberg]") {
    harness h;
    auto c = h.client(cat().at("ICEBERG_URI"));
    REQUIRE(h.go<result<catalog_config>>([&] { return c.connect(); }).has_value());
    const table_ident t{{unique("ns")}, "events"};
    auto base = h.go<result<loaded_table>>([&] { return c.ensure_table(t, events_table(), true); });
    REQUIRE(base.has_value());
    REQUIRE(
        h.go<result<loaded_table>>([&] { return c.commit(t, append_body(t, *base, 21, {}, 1, "{}")); }).has_value());
    // A second writer that loaded the table before that commit builds on "no snapshot".
    auto late = h.go<result<loaded_table>>([&] { return c.commit(t, append_body(t, *base, 22, {}, 1, "{}")); });
    REQUIRE_FALSE(late.has_value());
    CHECK(late.error() == catalog_errc::commit_conflict);
    CHECK_THAT(late.error().message(), ContainsSubstring("CommitFailedException"));
    auto now = h.go<result<loaded_table>>([&] { return c.load_table(t); });
    REQUIRE(now.has_value());
    CHECK(now->current_snapshot_id == 21);
}

TEST_CASE("faults in front of the catalog: conflict, 500 after applying, a lost answer, a timeout", "[iceberg]") {
    harness h;
    auto up = http::parse_url(cat().at("ICEBERG_URI"));
    REQUIRE(up.has_value());
    test::fault_front front{h.ioc.get_executor(), *up};
    auto c = h.client(front.url(), {}, 2s);
    REQUIRE(h.go<result<catalog_config>>([&] { return c.connect(); }).has_value());
    const table_ident t{{unique("ns")}, "events"};
    auto base = h.go<result<loaded_table>>([&] { return c.ensure_table(t, events_table(), true); });
    REQUIRE(base.has_value());
    auto current = [&] {
        auto l = h.go<result<loaded_table>>([&] { return c.load_table(t); });
        REQUIRE(l.has_value());
        return l->current_snapshot_id;
    };
    const std::string table_path = "/tables/events";

    SECTION("409 from the front: a conflict; nothing applied") {
        front.add_rule({"POST", table_path, test::fault::conflict_409});
        auto r = h.go<result<loaded_table>>([&] { return c.commit(t, append_body(t, *base, 31, {}, 1, "{}")); });
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error() == catalog_errc::commit_conflict);
        CHECK_FALSE(current().has_value());
    }
    SECTION("500 after the catalog applied it: outcome unknown; the reload shows it applied") {
        front.add_rule({"POST", table_path, test::fault::internal_500_after_forward});
        auto r = h.go<result<loaded_table>>([&] { return c.commit(t, append_body(t, *base, 32, {}, 1, "{}")); });
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error() == catalog_errc::unknown_outcome);
        CHECK_THAT(r.error().message(), ContainsSubstring("CommitStateUnknownException"));
        CHECK(current() == 32);
    }
    SECTION("500 before the catalog saw it: outcome unknown; the reload shows nothing applied") {
        front.add_rule({"POST", table_path, test::fault::internal_500_empty});
        auto r = h.go<result<loaded_table>>([&] { return c.commit(t, append_body(t, *base, 33, {}, 1, "{}")); });
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error() == catalog_errc::unknown_outcome);
        CHECK_FALSE(current().has_value());
    }
    SECTION("the answer is lost after the catalog applied it: a reload is needed; applied once") {
        // lib/http sends a request once more when a pooled connection closes before any
        // answer byte; the second send meets the applied commit: 409. Either error makes the
        // table step reload; the table holds the snapshot once.
        front.add_rule({"POST", table_path, test::fault::drop_response});
        auto r = h.go<result<loaded_table>>([&] { return c.commit(t, append_body(t, *base, 34, {}, 1, "{}")); });
        REQUIRE_FALSE(r.has_value());
        CHECK((r.error() == catalog_errc::unknown_outcome || r.error() == catalog_errc::commit_conflict));
        CHECK(current() == 34);
        auto l = h.go<result<loaded_table>>([&] { return c.load_table(t); });
        REQUIRE(l.has_value());
        CHECK(boost::json::parse(l->metadata_json).at("snapshots").as_array().size() == 1);
    }
    SECTION("the catalog answers after the request budget: outcome unknown (a timeout)") {
        test::fault_rule slow{"POST", table_path, test::fault::delay};
        slow.delay = 4s;
        front.add_rule(slow);
        auto r = h.go<result<loaded_table>>([&] { return c.commit(t, append_body(t, *base, 35, {}, 1, "{}")); });
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error() == catalog_errc::unknown_outcome);
        CHECK_THAT(r.error().message(), ContainsSubstring("deadline passed"));
    }
}

TEST_CASE("bearer and OAuth2 tokens go in the Authorization header; the token is renewed before expiry", "[iceberg]") {
    harness h;
    auto up = http::parse_url(cat().at("ICEBERG_URI"));
    REQUIRE(up.has_value());
    test::fault_front front{h.ioc.get_executor(), *up};
    const table_ident t{{unique("ns")}, "events"};

    catalog_auth_options bearer;
    bearer.kind = auth_kind::bearer;
    bearer.token = catalog_secret{"static-bearer-token"};
    auto b = h.client(front.url(), bearer);
    REQUIRE(h.go<result<loaded_table>>([&] { return b.ensure_table(t, events_table(), true); }).has_value());
    REQUIRE_FALSE(front.requests().empty());
    for (const auto& r : front.requests()) CHECK(r.headers.get("Authorization") == "Bearer static-bearer-token");
    front.clear_requests();

    // The fixture's /v1/oauth/tokens grants client credentials (lifetime: none given, so the
    // renewal below is driven by a 401 and by the injected clock with a server that gives one).
    manual_clock clk;
    catalog_auth_options oauth;
    oauth.kind = auth_kind::oauth2;
    oauth.client_id = "sink";
    oauth.client_secret = catalog_secret{"client-secret-value"};
    auto o = h.client(front.url(), oauth, 30s, clk);
    REQUIRE(h.go<result<catalog_config>>([&] { return o.connect(); }).has_value());
    REQUIRE(h.go<result<loaded_table>>([&] { return o.load_table(t); }).has_value());
    CHECK(o.stats().token_fetches == 1);
    const auto& seen = front.requests();
    REQUIRE(seen.size() == 3);
    CHECK(seen[0].target == "/v1/oauth/tokens");
    const auto token = std::string{seen[1].headers.get("Authorization")};
    CHECK_THAT(token, Catch::Matchers::StartsWith("Bearer "));
    CHECK(token.size() > 7);
    CHECK(seen[2].headers.get("Authorization") == token);
    CHECK_THAT(token, !ContainsSubstring("client-secret-value"));

    // A 401 (token revoked) makes the client fetch a new token and send the request once more.
    front.clear_requests();
    front.add_rule({"GET", "/tables/events", test::fault::unauthorized_401});
    REQUIRE(h.go<result<loaded_table>>([&] { return o.load_table(t); }).has_value());
    CHECK(o.stats().token_fetches == 2);
    REQUIRE(front.requests().size() == 3);  // refused load, token, load
    CHECK(front.requests()[1].target == "/v1/oauth/tokens");

    // A second 401 right after a new token is the catalog's answer: unauthorized, naming the key.
    front.add_rule({"GET", "/tables/events", test::fault::unauthorized_401, 0, 2});
    auto refused = h.go<result<loaded_table>>([&] { return o.load_table(t); });
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error() == catalog_errc::unauthorized);
    CHECK_THAT(refused.error().message(), ContainsSubstring("iceberg.catalog.auth"));
    CHECK_THAT(refused.error().message(), !ContainsSubstring("client-secret-value"));
}

TEST_CASE("an OAuth2 token with a lifetime is fetched again before it expires", "[iceberg]") {
    harness h;
    test::fault_front token_server{h.ioc.get_executor(), std::nullopt};
    token_server.set_fixed_response(200, {{"Content-Type", "application/json"}},
                                    R"({"access_token":"short-lived","token_type":"bearer","expires_in":300})");
    test::fault_front front{h.ioc.get_executor(), *http::parse_url(cat().at("ICEBERG_URI"))};
    manual_clock clk;
    catalog_auth_options oauth;
    oauth.kind = auth_kind::oauth2;
    oauth.client_id = "sink";
    oauth.client_secret = catalog_secret{"client-secret-value"};
    oauth.token_endpoint = token_server.url() + "/realms/iceberg/token";
    auto o = h.client(front.url(), oauth, 30s, clk);
    REQUIRE(h.go<result<catalog_config>>([&] { return o.connect(); }).has_value());
    REQUIRE(token_server.requests().size() == 1);
    CHECK(token_server.requests()[0].target == "/realms/iceberg/token");
    CHECK(token_server.requests()[0].headers.get("Content-Type") == "application/x-www-form-urlencoded");
    CHECK(front.requests().back().headers.get("Authorization") == "Bearer short-lived");

    clk.advance(230s);  // 70 s left: more than a tenth (30 s) of the lifetime, so no renewal yet
    REQUIRE(h.go<result<catalog_config>>([&] { return o.connect(); }).has_value());
    CHECK(o.stats().token_fetches == 1);
    clk.advance(45s);  // 25 s left
    REQUIRE(h.go<result<catalog_config>>([&] { return o.connect(); }).has_value());
    CHECK(o.stats().token_fetches == 2);
}

TEST_CASE("sigv4 signs every catalog request for s3tables with the credential chain's keys", "[iceberg]") {
    harness h;
    test::fault_front front{h.ioc.get_executor(), *http::parse_url(cat().at("ICEBERG_URI"))};
    catalog_auth_options sig;
    sig.kind = auth_kind::sigv4;
    sig.signing_name = "s3tables";
    sig.signing_region = "eu-central-1";
    sig.credentials = std::make_shared<aws::fixed_source>(
        sigv4::credentials{access_key_id{"AKIDCATALOGTEST"}, secret_access_key{"catalog-secret-key"}, {}});
    auto s = h.client(front.url(), sig);
    const table_ident t{{unique("ns")}, "events"};
    REQUIRE(h.go<result<catalog_config>>([&] { return s.connect(); }).has_value());
    REQUIRE(h.go<result<loaded_table>>([&] { return s.ensure_table(t, events_table(), true); }).has_value());
    REQUIRE(front.requests().size() >= 4);  // config, load (404), namespace, table
    for (const auto& r : front.requests()) {
        INFO(r.method << " " << r.target);
        CHECK_THAT(std::string{r.headers.get("Authorization")},
                   ContainsSubstring("Credential=AKIDCATALOGTEST/") &&
                       ContainsSubstring("/eu-central-1/s3tables/aws4_request"));
        CHECK(r.headers.get("x-amz-content-sha256").size() == 64);
        CHECK_FALSE(r.headers.get("X-Amz-Date").empty());
    }
}

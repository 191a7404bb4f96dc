// SPDX-License-Identifier: Apache-2.0
#include "iceberg/names.hpp"

#include "catch2_compat.hpp"

using namespace iss::iceberg;

TEST_CASE("table names render {stream} and {topic}", "[iceberg][names]") {
    CHECK(table_name("{stream}_{topic}", "app", "orders") == "app_orders");
    CHECK(table_name("t_{topic}_{topic}", "app", "orders") == "t_orders_orders");
    CHECK(table_name("{other}", "app", "orders") == "{other}");
    CHECK(namespace_levels("lake") == std::vector<std::string>{"lake"});
    CHECK(namespace_levels("lake.raw.x") == std::vector<std::string>{"lake", "raw", "x"});
}

TEST_CASE("a table location splits into bucket and prefix; data keys go under data/", "[iceberg][names]") {
    const auto l = split_location("s3://lake/wh/iggy/app_orders/").value();
    CHECK(l.bucket == "lake");
    CHECK(l.prefix == "wh/iggy/app_orders");
    CHECK(data_key(l, "ts_day=2026-12-07/tenant=a", "app+orders+0+00000000000000000000.parquet") ==
          "wh/iggy/app_orders/data/ts_day=2026-12-07/tenant=a/app+orders+0+00000000000000000000.parquet");
    CHECK(data_key(l, "", "f.parquet") == "wh/iggy/app_orders/data/f.parquet");
    const auto root = split_location("s3a://b").value();
    CHECK(root.bucket == "b");
    CHECK(root.prefix.empty());
    CHECK(data_key(root, "", "f.parquet") == "data/f.parquet");
    for (const char* bad : {"file:///tmp/t", "s3://", "s3:///x", "lake/wh"}) {
        INFO(bad);
        auto r = split_location(bad);
        REQUIRE_FALSE(r.has_value());
        CHECK_THAT(r.error().detail(), Catch::Matchers::ContainsSubstring("not an s3://bucket/path URI"));
    }
}

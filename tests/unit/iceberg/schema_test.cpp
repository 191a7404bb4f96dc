// SPDX-License-Identifier: Apache-2.0
#include "iceberg/schema.hpp"

#include <boost/json.hpp>

#include "catch2_compat.hpp"

using namespace iss;
using namespace iss::iceberg;

TEST_CASE("field ids are the columns in order, then each map's key and value", "[iceberg][schema]") {
    const auto cols = format::envelope_schema(true, format::envelope_payload::string);
    const auto s = make_schema(cols).value();
    REQUIRE(s.fields.size() == cols.size());
    for (std::size_t i = 0; i < cols.size(); ++i) {
        CHECK(s.fields[i].id == static_cast<int>(i) + 1);
        CHECK(s.fields[i].name == cols[i].name);
        CHECK(s.fields[i].required == !cols[i].nullable);
    }
    const auto* h = s.find("headers");
    REQUIRE(h != nullptr);
    CHECK(h->type == type_id::map);
    CHECK(h->key_id == static_cast<int>(cols.size()) + 1);
    CHECK(h->value_id == static_cast<int>(cols.size()) + 2);
    CHECK(s.last_column_id() == static_cast<int>(cols.size()) + 2);
    CHECK(s.find("timestamp")->type == type_id::timestamptz);
}

TEST_CASE("the schema JSON is Appendix C's struct", "[iceberg][schema]") {
    const auto cols = format::envelope_schema(true, format::envelope_payload::binary);
    const auto s = make_schema(cols).value();
    const auto j = boost::json::parse(schema_json(s)).as_object();
    CHECK(j.at("type") == "struct");
    CHECK(j.at("schema-id") == 0);
    const auto& fields = j.at("fields").as_array();
    REQUIRE(fields.size() == cols.size());
    CHECK(fields[0].at("id") == 1);
    CHECK(fields[0].at("name") == "stream");
    CHECK(fields[0].at("required") == true);
    CHECK(fields[0].at("type") == "string");
    bool saw_map = false;
    for (const auto& f : fields) {
        if (f.at("name") == "payload") CHECK(f.at("type") == "binary");
        if (f.at("name") == "offset") CHECK(f.at("type") == "long");
        if (f.at("name") != "headers") continue;
        saw_map = true;
        const auto& t = f.at("type").as_object();
        CHECK(t.at("type") == "map");
        CHECK(t.at("key") == "string");
        CHECK(t.at("value") == "string");
        CHECK(t.at("value-required") == false);
        CHECK(t.at("key-id").as_int64() == static_cast<std::int64_t>(cols.size()) + 1);
    }
    CHECK(saw_map);
}

TEST_CASE("timestamp_ms has no Iceberg type and is named", "[iceberg][schema]") {
    format::column c;
    c.name = "at";
    c.type = format::column_type::timestamp_ms;
    const std::vector<format::column> cols{c};
    const auto p = unsupported_columns(cols);
    REQUIRE(p.size() == 1);
    CHECK_THAT(p[0], Catch::Matchers::ContainsSubstring("`at`"));
    CHECK_THAT(p[0], Catch::Matchers::ContainsSubstring("timestamp_us"));
    CHECK_FALSE(make_schema(cols).has_value());
}

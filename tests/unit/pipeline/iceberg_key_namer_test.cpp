// SPDX-License-Identifier: Apache-2.0
#include "pipeline/adapters/iceberg_key_namer.hpp"

#include "iceberg/schema.hpp"
#include "proto/message.hpp"

#include "catch2_compat.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace pl = iss::pipeline;
using Catch::Matchers::ContainsSubstring;

namespace {
struct one_message {
    iss::proto::byte_buffer bytes;
    iss::proto::message_view view;
    pl::message msg;
    one_message(std::uint64_t offset, std::string_view payload) {
        iss::proto::message_fields f;
        f.offset = offset;
        f.timestamp = 1'700'000'000'000'000;
        f.payload = std::as_bytes(std::span{payload.data(), payload.size()});
        REQUIRE(iss::proto::append_message(bytes, f, true).has_value());
        auto v = iss::proto::decode_message(bytes);
        REQUIRE(v.has_value());
        view = *v;
        msg.offset = view.offset;
        msg.timestamp_us = view.timestamp;
        msg.payload = view.payload;
        msg.view = &view;
    }
};

std::vector<iss::format::column> columns() {
    std::vector<iss::format::column> cols(2);
    REQUIRE(iss::format::make_column("ts", "timestamp_us", "payload:ts", false, cols[0]).empty());
    REQUIRE(iss::format::make_column("tenant", "string", "payload:tenant", true, cols[1]).empty());
    return cols;
}
}  // namespace

TEST_CASE("iceberg key namer: one encoded partition per partition value, keys under the table's data/",
          "[pipeline][iceberg]") {
    const auto cols = columns();
    const auto schema = iss::iceberg::make_schema(cols).value();
    const std::vector<std::string> by{"day(ts)", "identity(tenant)"};
    const auto spec = iss::iceberg::parse_partition_by(by, schema).value();
    pl::iceberg_key_namer namer{cols, spec, {"lake", "warehouse/iggy/app_events"}};
    const pl::partition_ref p{"app", "events", 2};
    CHECK(namer.record_dependent());

    one_message a1{7, R"({"ts":"2026-12-07T01:00:00Z","tenant":"a"})"};
    one_message a2{8, R"({"ts":"2026-12-07T23:59:59Z","tenant":"a"})"};
    one_message b{9, R"({"ts":"2026-12-07T02:00:00Z","tenant":"b"})"};
    one_message next_day{10, R"({"ts":"2026-12-08T00:00:00Z","tenant":"a"})"};
    const auto ea1 = namer.encode(p, a1.msg);
    REQUIRE(ea1.has_value());
    CHECK(ea1->id == "ts_day=2026-12-07/tenant=a");
    CHECK(namer.encode(p, a2.msg)->id == ea1->id);  // same day, same tenant: same object
    CHECK(namer.encode(p, b.msg)->id == "ts_day=2026-12-07/tenant=b");
    CHECK(namer.encode(p, next_day.msg)->id == "ts_day=2026-12-08/tenant=a");

    const auto k = namer.key_for(p, a1.msg);
    CHECK(k.get() ==
          "warehouse/iggy/app_events/data/ts_day=2026-12-07/tenant=a/app+events+2+00000000000000000007.parquet");
    CHECK(namer.key_for(p, a1.msg) == k);  // a replay renders the same key
    const auto v = namer.values_of(k);
    REQUIRE(v.has_value());
    REQUIRE(v->size() == 2);
    CHECK((*v)[1] == iss::iceberg::value::of_bytes("a"));
    const auto kb = namer.key_for(p, b.msg);
    CHECK((*namer.values_of(kb))[1] == iss::iceberg::value::of_bytes("b"));
    namer.forget(k);
    CHECK_FALSE(namer.values_of(k).has_value());
    CHECK(namer.values_of(iss::object_key{"other/key"}) == std::nullopt);

    // A record whose partition column cannot be read is a bad message naming the column.
    one_message bad{11, R"({"tenant":"a"})"};
    const auto e = namer.encode(p, bad.msg);
    REQUIRE(e.has_error());
    CHECK_THAT(e.error().message(), ContainsSubstring("ts"));
}

TEST_CASE("iceberg key namer: an unpartitioned table has one encoded partition and no path", "[pipeline][iceberg]") {
    const auto cols = columns();
    const iss::iceberg::partition_spec unpartitioned;
    const pl::iceberg_key_namer namer{cols, unpartitioned, {"lake", "t"}};
    const pl::partition_ref p{"app", "events", 0};
    CHECK_FALSE(namer.record_dependent());
    one_message m{3, R"({"ts":"2026-12-07T01:00:00Z"})"};
    CHECK(namer.encode(p, m.msg)->id.empty());
    const auto k = namer.key_for(p, m.msg);
    CHECK(k.get() == "t/data/app+events+0+00000000000000000003.parquet");
    CHECK(namer.values_of(k) == std::vector<iss::iceberg::value>{});
}

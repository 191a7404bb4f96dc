// SPDX-License-Identifier: Apache-2.0
#include "pipeline/adapters/format_encoder.hpp"

#include "iceberg/partition.hpp"
#include "iceberg/schema.hpp"
#include "pipeline/adapters/iceberg_plan.hpp"
#include "pipeline/error.hpp"
#include "proto/message.hpp"

#include "catch2_compat.hpp"

namespace pl = iss::pipeline;

namespace {
struct one_message {
    iss::proto::byte_buffer bytes;
    iss::proto::message_view view;
    pl::message msg;
    explicit one_message(std::string_view payload, bool corrupt = false) {
        iss::proto::message_fields f;
        f.offset = 7;
        f.timestamp = 1'700'000'000'000'000;
        f.payload = std::as_bytes(std::span{payload.data(), payload.size()});
        REQUIRE(iss::proto::append_message(bytes, f, true).has_value());
        if (corrupt) bytes.back() ^= std::byte{1};
        auto v = iss::proto::decode_message(bytes);
        REQUIRE(v.has_value());
        view = *v;
        msg.offset = view.offset;
        msg.timestamp_us = view.timestamp;
        msg.payload = view.payload;
        msg.view = &view;
    }
};
}  // namespace

TEST_CASE("format encoder: writes the record; a checksum mismatch is a bad message when verified",
          "[pipeline][format_encoder]") {
    iss::format::writer_options o;
    pl::format_encoders verified{o, true};
    CHECK(verified.content_type() == "application/x-ndjson");
    CHECK(verified.extension() == "jsonl");
    const pl::partition_ref p{"app", "events", 3};
    auto e = verified.make();
    std::string out;
    e->begin(out);
    one_message good{"{\"a\":1}"};
    REQUIRE(e->append(good.msg, p, out).has_value());
    CHECK(out.find("\"partition_id\":3") != std::string::npos);
    CHECK(out.find("\"payload\":{\"a\":1}") != std::string::npos);
    one_message bad{"{\"a\":2}", true};
    const auto before = out;
    auto r = e->append(bad.msg, p, out);
    REQUIRE(r.has_error());
    CHECK(r.error() == pl::errc::bad_message);
    CHECK(out == before);
    pl::format_encoders unverified{o, false};
    auto e2 = unverified.make();
    std::string out2;
    e2->begin(out2);
    CHECK(e2->append(bad.msg, p, out2).has_value());
}

TEST_CASE("format encoder with a table schema: the object's column statistics reach its data file",
          "[pipeline][format_encoder][iceberg]") {
    // Issue 36: value, null counts, bounds and column sizes flow from the encoder through the
    // durable object into the manifest's data file (iceberg_data_file).
    std::vector<iss::format::column> cols(2);
    REQUIRE(iss::format::make_column("offset", "int64", "offset", false, cols[0]).empty());
    REQUIRE(iss::format::make_column("tenant", "string", "payload:tenant", true, cols[1]).empty());
    iss::format::writer_options o;
    o.format = iss::format::record_format::parquet;
    o.schema = cols;
    auto schema = iss::iceberg::make_schema(cols);
    REQUIRE(schema.has_value());
    pl::format_encoders plain{o, false};
    pl::format_encoders with_stats{o, false, *schema};
    const pl::partition_ref p{"app", "events", 0};
    auto run_object = [&](const pl::format_encoders& f, std::string& out) {
        auto e = f.make();
        e->begin(out);
        one_message a{R"({"tenant":"acme"})"}, b{R"({"tenant":"globex"})"}, c{R"({"x":1})"}, bad{"not json"};
        a.msg.offset = a.view.offset = 12;
        b.msg.offset = b.view.offset = 40;
        c.msg.offset = c.view.offset = 17;
        REQUIRE(e->append(a.msg, p, out).has_value());
        REQUIRE(e->append(b.msg, p, out).has_value());
        REQUIRE(e->append(c.msg, p, out).has_value());  // no tenant: a null
        CHECK(e->append(bad.msg, p, out).has_error());  // refused: not counted
        e->finish(out);
        return e->stats();
    };
    std::string out;
    CHECK(run_object(plain, out) == nullptr);
    out.clear();
    const auto st = run_object(with_stats, out);
    REQUIRE(st != nullptr);
    pl::durable_object d;
    d.key = iss::object_key{"t/data/x.parquet"};
    d.partition = p;
    d.range = pl::object_range{12, 40, 3};
    d.size = out.size();
    d.stats = st;
    const auto f = pl::iceberg_data_file(d, "bucket").file;
    const auto& s = f.stats;
    CHECK(s.value_counts == std::map<int, std::int64_t>{{1, 3}, {2, 3}});
    CHECK(s.null_value_counts == std::map<int, std::int64_t>{{1, 0}, {2, 1}});
    using iss::iceberg::single_value;
    using iss::iceberg::type_id;
    using iss::iceberg::value;
    CHECK(s.lower_bounds.at(1) == single_value(type_id::long_, value::of_int(12)));
    CHECK(s.upper_bounds.at(1) == single_value(type_id::long_, value::of_int(40)));
    CHECK(s.lower_bounds.at(2) == "acme");
    CHECK(s.upper_bounds.at(2) == "globex");
    REQUIRE(s.column_sizes.size() == 2);
    std::int64_t sum = 0;
    for (const auto& [id, n] : s.column_sizes) {
        CHECK(n > 0);
        sum += n;
    }
    CHECK(sum < static_cast<std::int64_t>(out.size()));  // the footer and magic are no column's
    // An adopted object (no stats): the maps stay empty (null in the manifest).
    d.stats.reset();
    CHECK(pl::iceberg_data_file(d, "bucket").file.stats == iss::iceberg::column_stats{});
}

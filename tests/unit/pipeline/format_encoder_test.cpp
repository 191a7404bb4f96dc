// SPDX-License-Identifier: Apache-2.0
#include "pipeline/adapters/format_encoder.hpp"

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

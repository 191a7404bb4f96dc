// SPDX-License-Identifier: Apache-2.0
#include "proto/types.hpp"

#include "test_util.hpp"

#include "catch2_compat.hpp"

using namespace iss::proto;
using proto_test::from_hex;
using proto_test::to_hex;
using proto_test::view;

namespace {

template <class F>
std::string encode_hex(F&& f) {
    byte_buffer b;
    writer w{b};
    f(w);
    return to_hex(view(b));
}

}  // namespace

TEST_CASE("identifiers encode as kind, length, value (Rust get_stream wire_compat, as data)", "[proto][types]") {
    // core/binary_protocol/src/requests/streams/get_stream.rs wire_compat_numeric_byte_layout: [1,4,1,0,0,0]
    CHECK(encode_hex([](writer& w) { REQUIRE(append_identifier(w, identifier::numeric(1)).has_value()); }) ==
          "010401000000");
    CHECK(encode_hex([](writer& w) { REQUIRE(append_identifier(w, identifier::named("sink")).has_value()); }) ==
          "0204"
          "73696e6b");
    CHECK(identifier::numeric(0).wire_size() == 6);
    CHECK(identifier::named("abc").wire_size() == 5);
    CHECK(to_string(identifier::numeric(7)) == "7");
    CHECK(to_string(identifier::named("test")) == "\"test\"");
    // A log field is quoted by the log writer: its text carries no quotes of its own.
    CHECK(field_text(identifier::numeric(7)) == "7");
    CHECK(field_text(identifier::named("test")) == "test");

    byte_buffer b;
    writer w{b};
    CHECK(append_identifier(w, identifier::named(""), "stream_id").error() == errc::invalid_length);
    CHECK(append_identifier(w, identifier::named(std::string(256, 'x')), "stream_id").error() == errc::invalid_length);
    CHECK(b.empty());
}

TEST_CASE("identifier decoding refuses what the server refuses, with its classification", "[proto][types][hostile]") {
    struct hostile_case {
        const char* hex;
        errc code;
        std::uint32_t status;  // what 0.8.0 answers
        const char* detail;
    };
    const hostile_case cases[] = {
        // Rust identifier.rs unknown_kind_returns_error
        {"ff 04 01000000", errc::unknown_kind, 3, "id.kind"},
        // numeric_with_wrong_length_returns_error
        {"01 03 010000", errc::invalid_length, 4, "id.length"},
        // string_with_zero_length_returns_error
        {"02 00", errc::invalid_length, 4, "id.length"},
        {"02 05 6162", errc::truncated, 3, "id.value"},
        {"02 02 c328", errc::invalid_utf8, 3, "id.value"},
        {"01", errc::truncated, 3, "id.length"},
        {"", errc::truncated, 3, "id.kind"},
        {"01 04 0100", errc::truncated, 3, "id.value"},
    };
    for (const auto& c : cases) {
        INFO(c.hex);
        const auto b = from_hex(c.hex);
        reader r{view(b)};
        auto id = read_identifier(r, "id");
        REQUIRE(id.has_error());
        CHECK(id.error() == c.code);
        CHECK(id.error().detail() == c.detail);
        CHECK(server_status_for_decode_error(id.error()) == c.status);
    }
    const auto ok = from_hex("020a746573742d67726f7570");
    reader r{view(ok)};
    CHECK(read_identifier(r).value() == identifier::named("test-group"));
    CHECK(r.empty());
}

TEST_CASE("consumer kinds 1 and 2 round-trip; others are refused", "[proto][types]") {
    CHECK(encode_hex(
              [](writer& w) { REQUIRE(append_consumer(w, consumer::group(identifier::named("sink"))).has_value()); }) ==
          "02"
          "0204"
          "73696e6b");
    CHECK(encode_hex(
              [](writer& w) { REQUIRE(append_consumer(w, consumer::single(identifier::numeric(42))).has_value()); }) ==
          "01"
          "0104"
          "2a000000");
    const auto bad = from_hex("03 0104 2a000000");
    reader r{view(bad)};
    auto c = read_consumer(r);
    REQUIRE(c.has_error());
    CHECK(c.error() == errc::unknown_kind);
    CHECK(c.error().detail() == "consumer.kind");
}

TEST_CASE("the optional partition is always 5 bytes (Rust partition_none_encodes_zero_bytes)", "[proto][types]") {
    CHECK(encode_hex([](writer& w) { append_optional_partition(w, std::nullopt); }) == "0000000000");
    CHECK(encode_hex([](writer& w) { append_optional_partition(w, 0u); }) == "0100000000");
    CHECK(encode_hex([](writer& w) { append_optional_partition(w, 123u); }) == "017b000000");
    // The 0.8.0 server reads any flag other than 1 as absent.
    const auto two = from_hex("02 07000000");
    reader r{view(two)};
    CHECK_FALSE(read_optional_partition(r).value().has_value());
    const auto cut = from_hex("01 0700");
    reader r2{view(cut)};
    CHECK(read_optional_partition(r2).error() == errc::truncated);
}

TEST_CASE("polling strategies are kind + u64 (Rust polling_strategy wire_compat_layout)", "[proto][types]") {
    CHECK(encode_hex([](writer& w) { append_polling_strategy(w, polling_strategy::at_offset(1)); }) ==
          "01"
          "0100000000000000");
    CHECK(encode_hex([](writer& w) { append_polling_strategy(w, polling_strategy::next()); }) ==
          "05"
          "0000000000000000");
    CHECK(encode_hex([](writer& w) { append_polling_strategy(w, polling_strategy::first()); }) ==
          "03"
          "0000000000000000");
    for (const char* hex : {"ff 0000000000000000", "00 0000000000000000", "06 0000000000000000"}) {
        const auto b = from_hex(hex);
        reader r{view(b)};
        CHECK(read_polling_strategy(r).error() == errc::unknown_kind);
    }
    // truncated_buffer: every prefix of an encoded strategy is an error.
    const auto full = from_hex("01 0100000000000000");
    for (std::size_t n = 0; n < full.size(); ++n) {
        reader r{bytes_view{full}.first(n)};
        CHECK(read_polling_strategy(r).error() == errc::truncated);
    }
}

TEST_CASE("partitioning layouts (Rust partitioning wire_compat tests, as data)", "[proto][types]") {
    CHECK(encode_hex([](writer& w) { REQUIRE(append_partitioning(w, partitioning::balanced()).has_value()); }) ==
          "0100");
    CHECK(encode_hex([](writer& w) { REQUIRE(append_partitioning(w, partitioning::to_partition(1)).has_value()); }) ==
          "020401000000");
    CHECK(
        encode_hex([](writer& w) { REQUIRE(append_partitioning(w, partitioning::by_key("order-42")).has_value()); }) ==
        "0308"
        "6f726465722d3432");
    byte_buffer b;
    writer w{b};
    CHECK(append_partitioning(w, partitioning::by_key("")).error() == errc::invalid_length);
    CHECK(append_partitioning(w, partitioning::by_key(std::string(256, '\xab'))).error() == errc::invalid_length);
    CHECK(append_partitioning(w, partitioning::by_key(std::string(255, '\xab'))).has_value());

    struct hostile_case {
        const char* hex;
        errc code;
    };
    const hostile_case cases[] = {
        {"ff 00", errc::unknown_kind},          // unknown_kind_rejected
        {"01 01 00", errc::invalid_value},      // balanced_with_nonzero_length_rejected
        {"02 03 000000", errc::invalid_value},  // partition_id_with_wrong_length_rejected
        {"03 05 6162", errc::truncated},
    };
    for (const auto& c : cases) {
        INFO(c.hex);
        const auto bytes = from_hex(c.hex);
        reader r{view(bytes)};
        auto p = read_partitioning(r);
        REQUIRE(p.has_error());
        CHECK(p.error() == c.code);
        CHECK(server_status_for_decode_error(p.error()) == 3);
    }
    // truncated_buffer
    const auto full = from_hex("020401000000");
    for (std::size_t n = 0; n < full.size(); ++n) {
        reader r{bytes_view{full}.first(n)};
        CHECK(read_partitioning(r).has_error());
    }
    // The server accepts an empty messages key.
    const auto empty_key = from_hex("03 00");
    reader r{view(empty_key)};
    auto p = read_partitioning(r);
    REQUIRE(p.has_value());
    CHECK(p->kind == partitioning_kind::messages_key);
    CHECK(p->key.empty());
}

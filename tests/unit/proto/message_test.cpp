// SPDX-License-Identifier: Apache-2.0
#include "proto/message.hpp"

#include "test_util.hpp"

#include "catch2_compat.hpp"

using namespace iss::proto;
using proto_test::from_hex;
using proto_test::to_hex;
using proto_test::view;

namespace {

// V3 of docs/protocol.md §11: the one message of the reply (79 + 8 bytes), checksum included.
constexpr std::string_view v3_message =
    "6b ba fe cb 23 a2 e1 ef"
    "2a 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
    "05 00 00 00 00 00 00 00"
    "00 40 20 46 48 47 06 00"
    "18 3c 20 46 48 47 06 00"
    "12 00 00 00"
    "05 00 00 00"
    "00 00 00 00 00 00 00 00"
    "68 65 6c 6c 6f"
    "02 04 00 00 00 74 79 70 65"
    "02 04 00 00 00 6a 73 6f 6e";

}  // namespace

TEST_CASE("header kinds carry the wire codes 1..15 with their fixed sizes", "[proto][message]") {
    CHECK(static_cast<int>(header_kind::raw) == 1);
    CHECK(static_cast<int>(header_kind::string) == 2);
    CHECK(static_cast<int>(header_kind::boolean) == 3);
    CHECK(static_cast<int>(header_kind::int128) == 8);
    CHECK(static_cast<int>(header_kind::uint8) == 9);
    CHECK(static_cast<int>(header_kind::float64) == 15);
    CHECK_FALSE(is_valid_header_kind(0));
    CHECK_FALSE(is_valid_header_kind(16));
    const std::pair<header_kind, std::size_t> sizes[] = {
        {header_kind::raw, 0},      {header_kind::string, 0},  {header_kind::boolean, 1}, {header_kind::int8, 1},
        {header_kind::int16, 2},    {header_kind::int32, 4},   {header_kind::int64, 8},   {header_kind::int128, 16},
        {header_kind::uint8, 1},    {header_kind::uint16, 2},  {header_kind::uint32, 4},  {header_kind::uint64, 8},
        {header_kind::uint128, 16}, {header_kind::float32, 4}, {header_kind::float64, 8}};
    for (auto [k, n] : sizes) CHECK(header_kind_size(k) == n);
    CHECK(header_kind_name(header_kind::boolean) == "bool");
    CHECK(header_kind_name(header_kind::float32) == "float32");
}

TEST_CASE("V3 message decodes and its XXH3-64 checksum matches", "[proto][message][vector]") {
    const auto bytes = from_hex(v3_message);
    REQUIRE(bytes.size() == 87);
    auto m = decode_message(view(bytes));
    REQUIRE(m.has_value());
    CHECK(m->checksum == 0xefe1a223cbfeba6bULL);
    CHECK(m->id == 42);
    CHECK(m->offset == 5);
    CHECK(m->timestamp == 1767225600000000ULL);
    CHECK(m->origin_timestamp == 1767225599999000ULL);
    CHECK(m->reserved == 0);
    CHECK(as_text(m->payload) == "hello");
    CHECK(m->user_headers.size() == 18);
    CHECK(m->raw.size() == 87);
    CHECK(m->compute_checksum() == 0xefe1a223cbfeba6bULL);
    CHECK(m->checksum_ok());

    std::vector<header_view> hs;
    REQUIRE(decode_user_headers(m->user_headers, hs).has_value());
    REQUIRE(hs.size() == 1);
    CHECK(hs[0].key_kind == header_kind::string);
    CHECK(hs[0].key_text() == "type");
    CHECK(hs[0].value_kind == header_kind::string);
    CHECK(hs[0].value_text() == "json");
}

TEST_CASE("a message is rebuilt byte for byte, the checksum computed like the server's", "[proto][message]") {
    byte_buffer headers;
    REQUIRE(append_user_header(headers, header_kind::string, as_bytes("type"), header_kind::string, as_bytes("json"))
                .has_value());
    byte_buffer out;
    message_fields f;
    f.id = 42;
    f.offset = 5;
    f.timestamp = 1767225600000000ULL;
    f.origin_timestamp = 1767225599999000ULL;
    f.payload = as_bytes("hello");
    f.user_headers = view(headers);
    REQUIRE(append_message(out, f, true).has_value());
    CHECK(to_hex(view(out)) == to_hex(view(from_hex(v3_message))));
    // Without the checksum (what a client sends) the first 8 bytes are zero.
    byte_buffer client;
    REQUIRE(append_message(client, f, false).has_value());
    CHECK(to_hex(bytes_view{client}.first(8)) == "0000000000000000");
}

TEST_CASE("a truncated message names the field that is cut", "[proto][message][hostile]") {
    const auto bytes = from_hex(v3_message);
    for (std::size_t n = 0; n < bytes.size(); ++n) {
        auto m = decode_message(bytes_view{bytes}.first(n), "m");
        REQUIRE(m.has_error());
        CHECK(m.error() == errc::truncated);
        if (n < 64) CHECK(m.error().detail() == "m.header");
        else if (n < 69) CHECK(m.error().detail() == "m.payload");
        else CHECK(m.error().detail() == "m.user_headers");
    }
}

TEST_CASE("payload and user header lengths over the limits are refused", "[proto][message][hostile]") {
    auto bytes = from_hex(v3_message);
    message_limits lim;
    lim.max_payload = 4;
    auto m = decode_message(view(bytes), "m", lim);
    REQUIRE(m.has_error());
    CHECK(m.error() == errc::limit_exceeded);
    CHECK(m.error().detail() == "m.payload_length");
    // A header claiming 100 001 bytes of user headers is over the protocol limit.
    store_le<std::uint32_t>(bytes.data() + 48, 100'001);
    m = decode_message(view(bytes), "m");
    REQUIRE(m.has_error());
    CHECK(m.error() == errc::limit_exceeded);
    CHECK(m.error().detail() == "m.user_headers_length");
    store_le<std::uint32_t>(bytes.data() + 48, 18);
    store_le<std::uint32_t>(bytes.data() + 52, 64'000'001);
    m = decode_message(view(bytes), "m");
    REQUIRE(m.has_error());
    CHECK(m.error().detail() == "m.payload_length");
}

TEST_CASE("user headers of every kind decode to typed values", "[proto][message][headers]") {
    byte_buffer block;
    const header_value values[] = {header_value{as_bytes("\xde\xad")},
                                   header_value{std::string_view{"text"}},
                                   header_value{true},
                                   header_value{std::int8_t{-5}},
                                   header_value{std::int16_t{-2}},
                                   header_value{std::int32_t{-7}},
                                   header_value{std::int64_t{-42}},
                                   header_value{static_cast<i128>(-3)},
                                   header_value{std::uint8_t{255}},
                                   header_value{std::uint16_t{65535}},
                                   header_value{std::uint32_t{3}},
                                   header_value{std::uint64_t{1234567890123}},
                                   header_value{(static_cast<u128>(1) << 100) + 7},
                                   header_value{1.5f},
                                   header_value{0.25}};
    for (const auto& v : values) {
        byte_buffer vb;
        append_header_value_bytes(vb, v);
        REQUIRE(
            append_user_header(block, header_kind::string, as_bytes("k"), header_value_kind(v), view(vb)).has_value());
    }
    std::vector<header_view> hs;
    REQUIRE(decode_user_headers(view(block), hs).has_value());
    REQUIRE(hs.size() == 15);
    for (std::size_t i = 0; i < hs.size(); ++i) {
        CHECK(static_cast<std::size_t>(hs[i].value_kind) == i + 1);
        auto v = decode_header_value(hs[i].value_kind, hs[i].value);
        REQUIRE(v.has_value());
        CHECK(v->index() == values[i].index());
        if (i == 0) {
            CHECK(to_hex(std::get<bytes_view>(*v)) == "dead");
        } else if (i == 1) {
            CHECK(std::get<std::string_view>(*v) == "text");
        } else {
            // Same alternative (checked above) and the same value.
            const bool same = std::visit(
                [&](const auto& got) {
                    using T = std::decay_t<decltype(got)>;
                    if constexpr (std::is_same_v<T, bytes_view>) return false;
                    else return got == std::get<T>(values[i]);
                },
                *v);
            CHECK(same);
        }
    }
    CHECK(validate_user_headers(view(block)).value() == 15);
}

TEST_CASE("a fixed-size header value of the wrong size is refused (Rust from_bytes test, as data)",
          "[proto][message][headers][hostile]") {
    // core/common/src/types/message/user_headers.rs from_bytes_returns_error_on_wrong_size_for_fixed_type:
    // key Int32 (4 bytes, fine), value Int16 with length 4.
    const auto block = from_hex("06 04000000 2a000000 05 04000000 01020304");
    header_reader r{view(block)};
    auto h = r.next();
    REQUIRE(h.has_error());
    CHECK(h.error() == errc::invalid_length);
    CHECK(h.error().detail() == "user_headers[0].value_length");
    CHECK(decode_header_value(header_kind::int16, view(from_hex("01020304"))).has_error());
}

TEST_CASE("hostile user header blocks give errors naming the entry, never a read past the end",
          "[proto][message][headers][hostile]") {
    struct hostile_case {
        const char* hex;
        errc code;
        const char* detail;
    };
    const hostile_case cases[] = {
        // Rust from_bytes_returns_error_on_truncated_input: key_len 100 but 3 bytes follow.
        {"02 64000000 616263", errc::truncated, "user_headers[0].key"},
        // Rust from_bytes_returns_error_on_truncated_value_length: value kind but no length.
        {"02 03000000 616263 06", errc::truncated, "user_headers[0].value_length"},
        {"00 01000000 61 02 01000000 62", errc::unknown_kind, "user_headers[0].key_kind"},
        {"02 01000000 61 10 01000000 62", errc::unknown_kind, "user_headers[0].value_kind"},
        {"02 01000000 61 02 01000000 62 02", errc::truncated, "user_headers[1].key_length"},
        {"02 01000000 61 02 ffffffff 62", errc::truncated, "user_headers[0].value"},
        {"03 01000000 01 09 02000000 0102", errc::invalid_length, "user_headers[0].value_length"},
    };
    for (const auto& c : cases) {
        INFO(c.hex);
        const auto block = from_hex(c.hex);
        auto n = validate_user_headers(view(block));
        REQUIRE(n.has_error());
        CHECK(n.error() == c.code);
        CHECK(n.error().detail() == c.detail);
    }
    // Every prefix of a valid block either decodes or fails cleanly.
    const auto good = from_hex("02 01000000 61 02 01000000 62 09 01000000 ff 03 01000000 01");
    for (std::size_t n = 0; n <= good.size(); ++n) {
        auto r = validate_user_headers(bytes_view{good}.first(n));
        if (n == 0 || n == 12 || n == 24 || n == good.size()) CHECK(r.has_value());
        else CHECK(r.has_error());
    }
}

TEST_CASE("typed values check bool and UTF-8, and the builder enforces the SDK rules", "[proto][message][headers]") {
    CHECK(decode_header_value(header_kind::boolean, view(from_hex("02"))).error() == errc::invalid_value);
    CHECK(decode_header_value(header_kind::string, view(from_hex("c3 28"))).error() == errc::invalid_utf8);
    byte_buffer b;
    CHECK(append_user_header(b, header_kind::string, {}, header_kind::raw, as_bytes("x")).error() ==
          errc::invalid_length);
    const std::string big(256, 'a');
    CHECK(append_user_header(b, header_kind::string, as_bytes("k"), header_kind::raw, as_bytes(big)).error() ==
          errc::invalid_length);
    CHECK(append_user_header(b, header_kind::string, as_bytes("k"), header_kind::uint32, as_bytes("ab")).error() ==
          errc::invalid_length);
    CHECK(append_user_header(b, static_cast<header_kind>(0), as_bytes("k"), header_kind::raw, as_bytes("x")).error() ==
          errc::unknown_kind);
    CHECK(b.empty());
}

TEST_CASE("UTF-8 validation refuses overlongs, surrogates and code points past U+10FFFF", "[proto][wire]") {
    CHECK(is_valid_utf8("plain ascii"));
    CHECK(is_valid_utf8("\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
    CHECK_FALSE(is_valid_utf8("\xc0\xaf"));          // overlong '/'
    CHECK_FALSE(is_valid_utf8("\xed\xa0\x80"));      // surrogate
    CHECK_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // > U+10FFFF
    CHECK_FALSE(is_valid_utf8("\xe2\x82"));          // truncated
    CHECK_FALSE(is_valid_utf8("\xff"));
}

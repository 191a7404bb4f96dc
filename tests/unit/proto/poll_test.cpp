// SPDX-License-Identifier: Apache-2.0
#include "proto/poll.hpp"

#include "test_util.hpp"

#include "catch2_compat.hpp"

using namespace iss::proto;
using proto_test::from_hex;
using proto_test::to_hex;
using proto_test::view;

namespace {

// V3 of docs/protocol.md §11 (111 bytes): status 0, length 103, then the payload.
constexpr std::string_view v3_reply =
    "00 00 00 00  67 00 00 00"
    "00 00 00 00  05 00 00 00 00 00 00 00  01 00 00 00"
    "6b ba fe cb 23 a2 e1 ef  2a 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
    "05 00 00 00 00 00 00 00  00 40 20 46 48 47 06 00  18 3c 20 46 48 47 06 00"
    "12 00 00 00  05 00 00 00  00 00 00 00 00 00 00 00"
    "68 65 6c 6c 6f  02 04 00 00 00 74 79 70 65  02 04 00 00 00 6a 73 6f 6e";

bytes_view payload_of(const byte_buffer& frame) { return bytes_view{frame}.subspan(8); }

u128 parse_u128(std::string_view dec) {
    u128 v = 0;
    for (char c : dec) v = v * 10 + static_cast<unsigned>(c - '0');
    return v;
}

}  // namespace

TEST_CASE("V3 poll reply decodes to one message view", "[proto][poll][vector]") {
    const auto frame = from_hex(v3_reply);
    REQUIRE(frame.size() == 111);
    auto r = decode_poll_reply(payload_of(frame), {.verify_checksums = true});
    REQUIRE(r.has_value());
    CHECK(r->partition_id == 0);
    CHECK(r->current_offset == 5);
    REQUIRE(r->size() == 1);
    const message_view m = *r->begin();
    CHECK(m.offset == 5);
    CHECK(m.id == 42);
    CHECK(as_text(m.payload) == "hello");
    // The views point into the receive buffer: no copy.
    CHECK(m.payload.data() == frame.data() + 8 + 16 + 64);
}

TEST_CASE("the poll reply fixture decodes to the server layout's values", "[proto][poll][fixture]") {
    const auto frame = proto_test::read_hex_file(proto_test::g1_dir() / "responses" /
                                                 "poll_messages_single_offset_autocommit_false.hex");
    REQUIRE(load_le<std::uint32_t>(frame.data()) == 0);
    REQUIRE(load_le<std::uint32_t>(frame.data() + 4) == frame.size() - 8);
    poll_reply out;
    REQUIRE(decode_poll_reply_into(payload_of(frame), out, {.verify_checksums = true}).has_value());
    CHECK(out.partition_id == 1);
    CHECK(out.current_offset == 6);
    REQUIRE(out.messages.size() == 2);

    const auto& a = out.messages[0];
    CHECK(a.checksum == 17285275119454698091ULL);
    CHECK(a.id == 42);
    CHECK(a.offset == 5);
    CHECK(a.timestamp == 1767225600000000ULL);
    CHECK(a.origin_timestamp == 1767225599999000ULL);
    CHECK(as_text(a.payload) == "hello");
    CHECK(a.user_headers.size() == 18);

    const auto& b = out.messages[1];
    CHECK(b.checksum == 12494777283387249110ULL);
    CHECK(b.id == parse_u128("1512366075204170928972419503379277431"));
    CHECK(b.offset == 6);
    CHECK(b.timestamp == 1767225600000000ULL);
    CHECK(b.user_headers.size() == 99);
    CHECK(to_hex(b.payload) == "0001feff");

    std::vector<header_view> hs;
    REQUIRE(decode_user_headers(b.user_headers, hs).has_value());
    REQUIRE(hs.size() == 5);
    CHECK(hs[0].key_text() == "seq");
    CHECK(hs[0].value_kind == header_kind::uint64);
    CHECK(std::get<std::uint64_t>(decode_header_value(hs[0].value_kind, hs[0].value).value()) == 1234567890123ULL);
    CHECK(hs[1].key_kind == header_kind::int32);
    CHECK(std::get<std::int32_t>(decode_header_value(hs[1].key_kind, hs[1].key).value()) == -7);
    CHECK(std::get<bool>(decode_header_value(hs[1].value_kind, hs[1].value).value()) == true);
    CHECK(hs[2].key_kind == header_kind::raw);
    CHECK(to_hex(hs[2].key) == "cafe");
    CHECK(std::get<double>(decode_header_value(hs[2].value_kind, hs[2].value).value()) == 2.5);
    CHECK(hs[3].key_text() == "i8");
    CHECK(std::get<std::int8_t>(decode_header_value(hs[3].value_kind, hs[3].value).value()) == -5);
    CHECK(hs[4].key_text() == "u128");
    CHECK(hs[4].value_kind == header_kind::uint128);
    CHECK(to_hex(hs[4].value) == "00112233445566778899aabbccddeeff");
}

TEST_CASE("a corrupted message fails the checksum check only when asked", "[proto][poll][hostile]") {
    auto frame = from_hex(v3_reply);
    frame[8 + 16 + 64] = std::byte{'j'};  // "hello" -> "jello"
    CHECK(decode_poll_reply(payload_of(frame)).has_value());
    auto r = decode_poll_reply(payload_of(frame), {.verify_checksums = true});
    REQUIRE(r.has_error());
    CHECK(r.error() == errc::checksum_mismatch);
    CHECK(r.error().detail() == "poll_reply.messages[0].checksum");
}

TEST_CASE("every truncation of a poll reply is an error naming its field", "[proto][poll][hostile]") {
    const auto frame = from_hex(v3_reply);
    const auto payload = payload_of(frame);
    for (std::size_t n = 0; n < payload.size(); ++n) {
        auto r = decode_poll_reply(payload.first(n));
        REQUIRE(r.has_error());
        CHECK(r.error() == errc::truncated);
        if (n < 4) CHECK(r.error().detail() == "poll_reply.partition_id");
        else if (n < 12) CHECK(r.error().detail() == "poll_reply.current_offset");
        else if (n < 16) CHECK(r.error().detail() == "poll_reply.messages_count");
        else if (n >= 16 + 64 && n < 16 + 69) CHECK(r.error().detail() == "poll_reply.messages[0].payload");
        else if (n >= 16 + 69) CHECK(r.error().detail() == "poll_reply.messages[0].user_headers");
    }
}

TEST_CASE("trailing bytes, huge counts and oversized replies are refused", "[proto][poll][hostile]") {
    auto frame = from_hex(v3_reply);
    frame.push_back(std::byte{0});
    auto r = decode_poll_reply(payload_of(frame));
    REQUIRE(r.has_error());
    CHECK(r.error() == errc::inconsistent);
    frame.pop_back();

    store_le<std::uint32_t>(frame.data() + 8 + 12, 0xffffffffu);
    r = decode_poll_reply(payload_of(frame));
    REQUIRE(r.has_error());
    CHECK(r.error() == errc::truncated);

    store_le<std::uint32_t>(frame.data() + 8 + 12, 1);
    r = decode_poll_reply(payload_of(frame), {.max_reply = 50});
    REQUIRE(r.has_error());
    CHECK(r.error() == errc::limit_exceeded);
}

TEST_CASE("an empty poll reply has no messages", "[proto][poll]") {
    const auto p = from_hex("07000000 0000000000000000 00000000");
    auto r = decode_poll_reply(view(p));
    REQUIRE(r.has_value());
    CHECK(r->partition_id == 7);
    CHECK(r->empty());
    CHECK(r->begin() == r->end());
}

TEST_CASE("the reply writer builds what the decoder reads, checksums included", "[proto][poll]") {
    byte_buffer out;
    poll_reply_writer w{out};
    w.begin(3, 101);
    for (std::uint64_t i = 0; i < 3; ++i) {
        std::string payload = "m";  // appended, not "m" + ...: GCC 12 -O3 false -Wrestrict (bug 105329)
        payload += std::to_string(i);
        message_fields f;
        f.id = i + 1;
        f.offset = 99 + i;
        f.timestamp = 1000;
        f.payload = as_bytes(payload);
        REQUIRE(w.add(f).has_value());
    }
    const std::size_t n = w.finish();
    CHECK(n == out.size());
    auto r = decode_poll_reply(view(out), {.verify_checksums = true});
    REQUIRE(r.has_value());
    CHECK(r->partition_id == 3);
    CHECK(r->current_offset == 101);
    std::uint64_t expect = 99;
    for (const auto& m : *r) {
        CHECK(m.offset == expect);
        std::string want = "m";
        want += std::to_string(expect - 99);
        CHECK(as_text(m.payload) == want);
        ++expect;
    }
    CHECK(expect == 102);
    // The V3 message, re-served as stored bytes, gives the V3 payload.
    byte_buffer again;
    poll_reply_writer w2{again};
    w2.begin(0, 5);
    const auto v3 = from_hex(v3_reply);
    w2.add_raw(bytes_view{v3}.subspan(8 + 16));
    w2.finish();
    CHECK(to_hex(view(again)) == to_hex(payload_of(v3)));
}

static_assert(std::forward_iterator<poll_reply_view::iterator>);

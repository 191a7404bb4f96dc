// SPDX-License-Identifier: Apache-2.0
#include "proto/send.hpp"

#include "test_util.hpp"

#include "catch2_compat.hpp"

using namespace iss::proto;
using proto_test::from_hex;
using proto_test::to_hex;
using proto_test::view;

namespace {

// V5 of docs/protocol.md §11 (209 bytes).
constexpr std::string_view v5 =
    "cd000000 65000000 16000000 010401000000 010400000000 020400000000 02000000"
    "00000000 41000000 0000000000000000"
    "00000000 8f000000 0000000000000000"
    "0000000000000000 01000000000000000000000000000000 0000000000000000 0000000000000000"
    "0040204648470600 00000000 01000000 0000000000000000 61"
    "0000000000000000 02000000000000000000000000000000 0000000000000000 0000000000000000"
    "0140204648470600 0c000000 02000000 0000000000000000 6263"
    "02010000006b 020100000076";

byte_buffer header_block(std::initializer_list<std::tuple<header_value, header_value>> entries) {
    byte_buffer block;
    for (const auto& [k, v] : entries) {
        byte_buffer kb, vb;
        append_header_value_bytes(kb, k);
        append_header_value_bytes(vb, v);
        REQUIRE(append_user_header(block, header_value_kind(k), view(kb), header_value_kind(v), view(vb)).has_value());
    }
    return block;
}

iss::result<void> decode_frame_payload(const byte_buffer& frame, send_messages_view& out) {
    return decode_send_messages(bytes_view{frame}.subspan(8), out);
}

}  // namespace

TEST_CASE("V5 SendMessages encodes to the 209 bytes of docs/protocol.md, in one buffer", "[proto][send][vector]") {
    const byte_buffer h2 = header_block({{std::string_view{"k"}, std::string_view{"v"}}});
    const message_fields msgs[] = {
        {1, 0, 0, 1767225600000000ULL, as_bytes("a"), {}},
        {2, 0, 0, 1767225600000001ULL, as_bytes("bc"), view(h2)},
    };
    byte_buffer out;
    REQUIRE(
        append_send_messages(out, identifier::numeric(1), identifier::numeric(0), partitioning::to_partition(0), msgs)
            .has_value());
    CHECK(out.size() == 209);
    CHECK(to_hex(view(out)) == to_hex(view(from_hex(v5))));

    send_messages_view got;
    REQUIRE(decode_frame_payload(out, got).has_value());
    CHECK(got.stream == identifier::numeric(1));
    CHECK(got.topic == identifier::numeric(0));
    CHECK(got.part == partitioning::to_partition(0));
    REQUIRE(got.messages.size() == 2);
    CHECK(got.messages[0].id == 1);
    CHECK(as_text(got.messages[1].payload) == "bc");
    CHECK(got.messages[1].origin_timestamp == 1767225600000001ULL);
    CHECK(got.messages[1].user_headers.size() == 12);
}

TEST_CASE("Rust send_messages verify_index_entries and verify_message_header_layout, as data", "[proto][send]") {
    const message_fields msgs[] = {
        {1, 0, 0, 0, as_bytes("aaaa"), {}},             // 68 bytes
        {2, 0, 0, 0, as_bytes("bbb"), as_bytes("hh")},  // 69 bytes
    };
    byte_buffer out;
    REQUIRE(append_send_messages(out, identifier::numeric(1), identifier::numeric(2), partitioning::balanced(), msgs)
                .has_value());
    const std::size_t index = 8 + 4 + 6 + 6 + 2 + 4;
    CHECK(load_le<std::uint32_t>(out.data() + index) == 0);
    CHECK(load_le<std::uint32_t>(out.data() + index + 4) == 68);
    CHECK(load_le<std::uint32_t>(out.data() + index + 16) == 0);
    CHECK(load_le<std::uint32_t>(out.data() + index + 20) == 137);

    const message_fields one[] = {{42, 0, 0, 777, as_bytes("pay"), as_bytes("hdr")}};
    out.clear();
    REQUIRE(append_send_messages(out, identifier::numeric(1), identifier::numeric(2), partitioning::balanced(), one)
                .has_value());
    const std::byte* m = out.data() + index + 16;
    CHECK(load_le<std::uint64_t>(m) == 0);
    CHECK(load_le<u128>(m + 8) == 42);
    CHECK(load_le<std::uint64_t>(m + 24) == 0);
    CHECK(load_le<std::uint64_t>(m + 32) == 0);
    CHECK(load_le<std::uint64_t>(m + 40) == 777);
    CHECK(load_le<std::uint32_t>(m + 48) == 3);
    CHECK(load_le<std::uint32_t>(m + 52) == 3);
    CHECK(load_le<std::uint64_t>(m + 56) == 0);
    CHECK(as_text(bytes_view{m + 64, 6}) == "payhdr");
}

TEST_CASE("Go TestSerialize_SendMessagesRequest, as data (metadata 0x29, index end 120)", "[proto][send]") {
    const byte_buffer h = header_block({{std::string_view{"HeaderKey1"}, std::string_view{"Value 1"}},
                                        {std::string_view{"HeaderKey2"}, std::uint32_t{0x04030201}}});
    const message_fields msgs[] = {{0x1234, 0, 0, 0, as_bytes("data1"), view(h)}};
    byte_buffer out;
    REQUIRE(append_send_messages(out, identifier::named("test_stream_id"), identifier::named("test_topic_id"),
                                 partitioning::to_partition(1), msgs)
                .has_value());
    const std::string expected_head =
        "29000000"
        "020e746573745f73747265616d5f6964"
        "020d746573745f746f7069635f6964"
        "020401000000"
        "01000000"
        "00000000"
        "78000000"
        "0000000000000000";
    CHECK(to_hex(bytes_view{out}.subspan(8, expected_head.size() / 2)) == expected_head);
    CHECK(out.size() == 8 + expected_head.size() / 2 + 120);
}

TEST_CASE("the SendMessages captures decode to their .txt values and re-encode to the same bytes",
          "[proto][send][fixture]") {
    // Message 2's headers, in the order the .txt lists them.
    const byte_buffer h2 = header_block({
        {std::string_view{"content-type"}, std::string_view{"application/json"}},
        {std::string_view{"retries"}, std::uint32_t{3}},
        {std::string_view{"urgent"}, true},
        {std::string_view{"delta"}, std::int64_t{-42}},
        {std::string_view{"ratio"}, 0.25},
        {std::string_view{"f32"}, 1.5f},
        {std::string_view{"i16"}, std::int16_t{-2}},
        {std::int32_t{7}, std::uint8_t{255}},
        {as_bytes("\xbe\xef"), as_bytes("\xde\xad\xbe\xef")},
    });
    // Node 0.8.0 writes origin_timestamp in milliseconds (the pinned clock).
    const message_fields msgs[] = {
        {1, 0, 0, 1767225600000ULL, as_bytes("first message"), {}},
        {2, 0, 0, 1767225600000ULL, as_bytes("{\"n\":2}"), view(h2)},
    };
    struct capture {
        const char* name;
        identifier stream, topic;
        partitioning part;
    };
    const capture captures[] = {
        {"send_messages_balanced", identifier::numeric(1), identifier::numeric(0), partitioning::balanced()},
        {"send_messages_partition_id", identifier::numeric(1), identifier::numeric(0), partitioning::to_partition(1)},
        {"send_messages_messages_key", identifier::named("test-stream"), identifier::named("test-topic"),
         partitioning::by_key("order-42")},
    };
    for (const auto& c : captures) {
        INFO(c.name);
        const auto bytes =
            proto_test::read_hex_file(proto_test::g1_dir() / "requests" / (std::string{c.name} + ".hex"));
        send_messages_view got;
        REQUIRE(decode_frame_payload(bytes, got).has_value());
        CHECK(got.stream == c.stream);
        CHECK(got.topic == c.topic);
        CHECK(got.part == c.part);
        REQUIRE(got.messages.size() == 2);
        CHECK(got.messages[0].id == 1);
        CHECK(as_text(got.messages[0].payload) == "first message");
        CHECK(got.messages[0].user_headers.empty());
        CHECK(got.messages[0].origin_timestamp == 1767225600000ULL);
        CHECK(got.messages[1].id == 2);
        CHECK(as_text(got.messages[1].payload) == "{\"n\":2}");
        std::vector<header_view> hs;
        REQUIRE(decode_user_headers(got.messages[1].user_headers, hs).has_value());
        REQUIRE(hs.size() == 9);
        CHECK(hs[0].key_text() == "content-type");
        CHECK(hs[0].value_text() == "application/json");
        CHECK(std::get<std::uint32_t>(decode_header_value(hs[1].value_kind, hs[1].value).value()) == 3);
        CHECK(std::get<bool>(decode_header_value(hs[2].value_kind, hs[2].value).value()));
        CHECK(std::get<std::int64_t>(decode_header_value(hs[3].value_kind, hs[3].value).value()) == -42);
        CHECK(std::get<double>(decode_header_value(hs[4].value_kind, hs[4].value).value()) == 0.25);
        CHECK(std::get<float>(decode_header_value(hs[5].value_kind, hs[5].value).value()) == 1.5f);
        CHECK(std::get<std::int16_t>(decode_header_value(hs[6].value_kind, hs[6].value).value()) == -2);
        CHECK(hs[7].key_kind == header_kind::int32);
        CHECK(std::get<std::int32_t>(decode_header_value(hs[7].key_kind, hs[7].key).value()) == 7);
        CHECK(std::get<std::uint8_t>(decode_header_value(hs[7].value_kind, hs[7].value).value()) == 255);
        CHECK(hs[8].key_kind == header_kind::raw);
        CHECK(to_hex(hs[8].key) == "beef");
        CHECK(to_hex(hs[8].value) == "deadbeef");

        byte_buffer again;
        REQUIRE(append_send_messages(again, c.stream, c.topic, c.part, msgs).has_value());
        CHECK(to_hex(view(again)) == to_hex(view(bytes)));
    }
}

TEST_CASE("the SendMessages decoder answers with the 0.8.0 server's error codes", "[proto][send][hostile]") {
    const auto good = from_hex(v5);
    const bytes_view payload = bytes_view{good}.subspan(8);
    send_messages_view out;
    REQUIRE(decode_send_messages(payload, out).has_value());

    auto expect = [&](byte_buffer p, server_errc code, std::string_view detail_prefix) {
        send_messages_view v;
        auto r = decode_send_messages(view(p), v);
        REQUIRE(r.has_error());
        CHECK(r.error() == code);
        CHECK(r.error().detail().rfind(detail_prefix, 0) == 0);
        CHECK(server_status_for_decode_error(r.error()) == static_cast<std::uint32_t>(code));
    };
    const byte_buffer base{payload.begin(), payload.end()};
    constexpr std::size_t index = 4 + 22;     // start of the index in the payload
    constexpr std::size_t msgs = index + 32;  // start of the messages
    {
        auto p = base;
        store_le<std::uint32_t>(p.data(), 10'000);
        expect(p, server_errc::invalid_command, "send_messages.metadata_length");
    }
    {
        auto p = base;
        p[4 + 1] = std::byte{3};  // stream id numeric with length 3
        expect(p, server_errc::invalid_identifier, "send_messages.stream_id");
    }
    {
        auto p = base;
        p[4 + 12] = std::byte{9};  // partitioning kind 9
        expect(p, server_errc::invalid_command, "send_messages.partitioning");
    }
    {
        auto p = base;
        store_le<std::uint32_t>(p.data(), 18);  // metadata without messages_count
        expect(p, server_errc::invalid_command, "send_messages.messages_count");
    }
    {
        auto p = base;
        store_le<std::uint32_t>(p.data() + 4 + 18, 0);
        expect(p, server_errc::invalid_messages_count, "send_messages.messages_count");
    }
    {
        auto p = base;
        store_le<std::uint32_t>(p.data() + 4 + 18, 100'000'000);
        expect(p, server_errc::invalid_command, "send_messages.messages_count");
    }
    {
        auto p = base;
        store_le<std::uint32_t>(p.data() + index + 16, 1);
        expect(p, server_errc::non_zero_offset, "send_messages.index[1].offset");
    }
    {
        auto p = base;
        p[index + 8 + 3] = std::byte{1};
        expect(p, server_errc::non_zero_timestamp, "send_messages.index[0].timestamp");
    }
    {
        auto p = base;
        store_le<std::uint32_t>(p.data() + index + 4, 63);  // slot shorter than a header
        expect(p, server_errc::missing_index, "send_messages.index[0].end_position");
    }
    {
        auto p = base;
        store_le<std::uint32_t>(p.data() + index + 20, 144);  // past the data
        expect(p, server_errc::missing_index, "send_messages.index[1].end_position");
    }
    {
        auto p = base;
        store_le<std::uint32_t>(p.data() + msgs + 52, 2);  // payload longer than its slot
        expect(p, server_errc::missing_index, "send_messages.messages[0]");
    }
    {
        auto p = base;
        store_le<std::uint64_t>(p.data() + msgs + 24, 9);  // offsets 9 then 0: decreasing
        expect(p, server_errc::invalid_offset, "send_messages.messages[1].offset");
    }
    {
        auto p = base;
        p.push_back(std::byte{0});  // one byte more than the messages add up to
        expect(p, server_errc::invalid_messages_size, "send_messages.messages");
    }
    // Every truncation is an error, never a read past the end.
    for (std::size_t n = 0; n < base.size(); ++n) {
        send_messages_view v;
        CHECK(decode_send_messages(bytes_view{base}.first(n), v).has_error());
    }
}

TEST_CASE("the SendMessages encoder refuses what the server or the SDKs refuse", "[proto][send]") {
    byte_buffer out;
    CHECK(append_send_messages(out, identifier::numeric(1), identifier::numeric(0), partitioning::balanced(), {})
              .error() == errc::invalid_value);
    const std::string big(max_user_headers_size + 1, 'h');
    const message_fields msgs[] = {{1, 0, 0, 0, as_bytes("x"), as_bytes(big)}};
    auto r = append_send_messages(out, identifier::numeric(1), identifier::numeric(0), partitioning::balanced(), msgs);
    REQUIRE(r.has_error());
    CHECK(r.error() == errc::limit_exceeded);
    CHECK(r.error().detail() == "send_messages.messages[0].user_headers (over 100 000 bytes)");
    const message_fields ok[] = {{1, 0, 0, 0, as_bytes("x"), {}}};
    CHECK(append_send_messages(out, identifier::named(""), identifier::numeric(0), partitioning::balanced(), ok)
              .error() == errc::invalid_length);
    CHECK(out.empty());
}

TEST_CASE("Node send-messages.command.test.ts: 7 one-byte messages to 911/213 make a 589-byte payload",
          "[proto][send]") {
    std::vector<message_fields> msgs(7);
    const char* payloads[] = {"a", "b", "X", "c", "X", "d", "e"};
    for (std::size_t i = 0; i < msgs.size(); ++i) {
        msgs[i].id = i == 2 ? 123 : i == 4 ? 1236234534554ULL : 0;
        msgs[i].payload = as_bytes(payloads[i]);
    }
    byte_buffer out;
    REQUIRE(
        append_send_messages(out, identifier::numeric(911), identifier::numeric(213), partitioning::balanced(), msgs)
            .has_value());
    CHECK(out.size() - request_header_size == 589);
    send_messages_view v;
    REQUIRE(decode_frame_payload(out, v).has_value());
    CHECK(v.messages.size() == 7);
    CHECK(v.messages[4].id == 1236234534554ULL);
}

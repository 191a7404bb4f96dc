// SPDX-License-Identifier: Apache-2.0
// The G2 message batch: G2-4, the SendMessages capture, the poll reply fixture, checksums,
// the broker-side writer, hostile batches.
#include "proto/g2_commands.hpp"
#include "test_util.hpp"

#include "catch2_compat.hpp"

#include <random>
#include <string>

using namespace iss::proto;
using namespace iss::proto::g2;
using proto_test::from_hex;
using proto_test::to_hex;
using proto_test::view;

namespace {

byte_buffer header_kv(std::string_view k, std::string_view v) {
    byte_buffer b;
    REQUIRE(append_user_header(b, header_kind::string, as_bytes(k), header_kind::string, as_bytes(v)).has_value());
    return b;
}

byte_buffer body_of(const send_messages_request& q) {
    byte_buffer b;
    writer w{b};
    auto r = encode_body(w, q);
    if (!r) FAIL(r.error().message());
    return b;
}

}  // namespace

TEST_CASE("G2-4 SendMessages body: V5's two messages (393 bytes)", "[proto][g2][vector][batch]") {
    const auto hdr = header_kv("k", "v");
    std::vector<message_fields> m(2);
    m[0].id = 1;
    m[0].origin_timestamp = 1767225600000000;
    m[0].payload = as_bytes("a");
    m[1].id = 2;
    m[1].origin_timestamp = 1767225600000001;
    m[1].payload = as_bytes("bc");
    m[1].user_headers = view(hdr);
    const auto b = body_of({identifier::numeric(1), identifier::numeric(0), partitioning::to_partition(0), m});
    REQUIRE(b.size() == 393);
    const std::string expected =
        "16000000010401000000010400000000020400000000"
        "02000000"
        // batch header
        "0000000000000000"
        "0000000000000000"
        "0000000000000000"
        "0040204648470600"
        "6f01000000000000"
        "ed13c65e89375db5"
        "02000000" +
        std::string(204 * 2, '0') +
        // frame 1
        "6f6fe35a61213a38"
        "01000000000000000000000000000000"
        "00000000"
        "00000000"
        "00000000"
        "01000000"
        "0000000000000000"
        "61"
        // frame 2
        "77b1432c3dd01a5b"
        "02000000000000000000000000000000"
        "01000000"
        "01000000"
        "0c000000"
        "02000000"
        "0000000000000000"
        "6263"
        "02010000006b"
        "0201000000"
        "76";
    CHECK(to_hex(view(b)) == expected);

    // The broker side decodes and verifies it.
    send_messages_batch_view v;
    auto d = decode_send_messages(view(b), v);
    if (!d) FAIL(d.error().message());
    CHECK(v.header.batch_checksum == 0xb55d37895ec613edULL);
    REQUIRE(v.messages.size() == 2);
    CHECK(v.messages[1].offset == 1);
    CHECK(v.messages[1].origin_timestamp == 1767225600000001);
    CHECK(as_text(v.messages[1].payload) == "bc");
    CHECK(v.messages[1].user_headers.size() == 12);

    // The reply of the vector.
    byte_buffer reply;
    const send_confirmation c{1, 0, 0, 7};
    append_send_reply(reply, std::span{&c, 1});
    CHECK(to_hex(view(reply)) ==
          "01000000"
          "01000000"
          "00000000"
          "00000000"
          "0700000000000000");
    CHECK(decode_send_reply(view(reply)).value() == std::vector<send_confirmation>{c});
    CHECK(decode_send_reply(view(from_hex("00000000"))).value().empty());
    CHECK_FALSE(decode_send_reply({}).has_value());  // status 0 + empty body = not accepted
}

TEST_CASE("SendMessages capture: decodes to its .txt and re-encodes byte-identical", "[proto][g2][capture][batch]") {
    const auto bytes = proto_test::read_hex_file(proto_test::g2_dir() / "requests" / "send_messages_partition_id.hex");
    auto f = decode_request_frame(view(bytes));
    REQUIRE(f.has_value());
    CHECK(f->header.op == operation::send_messages);
    CHECK(f->header.request == 1);
    CHECK(f->header.session == 1001);
    auto r = decode_request(f->header, f->body);
    if (!r) FAIL(r.error().message());
    const auto& v = std::get<send_messages_batch_view>(*r);
    CHECK(v.stream == identifier::numeric(1));
    CHECK(v.topic == identifier::numeric(2));
    CHECK(v.part == partitioning::to_partition(3));
    REQUIRE(v.messages.size() == 2);
    const u128 id1 = (u128{0x0102030405060708} << 64) | 0x090a0b0c0d0e0f10ULL;
    const u128 id2 = (u128{0x1112131415161718} << 64) | 0x191a1b1c1d1e1f20ULL;
    CHECK(v.messages[0].id == id1);
    CHECK(v.messages[1].id == id2);
    CHECK(as_text(v.messages[0].payload) == "hello golden 1");
    CHECK(as_text(v.messages[1].payload) == "hello golden 2");
    CHECK(v.messages[0].origin_timestamp == 1767225600000000);
    CHECK(v.messages[1].origin_timestamp == 1767225600001000);
    CHECK(v.messages[0].user_headers.empty());
    std::vector<header_view> hs;
    REQUIRE(decode_user_headers(v.messages[1].user_headers, hs).has_value());
    REQUIRE(hs.size() == 2);
    CHECK(hs[0].key_text() == "content-type");
    CHECK(hs[0].value_text() == "text/plain");
    CHECK(hs[1].key_text() == "retry");
    CHECK(hs[1].value_kind == header_kind::uint32);

    // Re-encode from the .txt values (checksums computed by us).
    byte_buffer uh;
    REQUIRE(append_user_header(uh, header_kind::string, as_bytes("content-type"), header_kind::string,
                               as_bytes("text/plain"))
                .has_value());
    std::uint32_t three = 3;
    REQUIRE(append_user_header(uh, header_kind::string, as_bytes("retry"), header_kind::uint32,
                               bytes_view{reinterpret_cast<const std::byte*>(&three), 4})
                .has_value());
    std::vector<message_fields> m(2);
    m[0].id = id1;
    m[0].origin_timestamp = 1767225600000000;
    m[0].payload = as_bytes("hello golden 1");
    m[1].id = id2;
    m[1].origin_timestamp = 1767225600001000;
    m[1].payload = as_bytes("hello golden 2");
    m[1].user_headers = view(uh);
    byte_buffer again;
    session_state s{f->header.client};
    s.bind(1001);
    auto h = s.next(code::send_messages);
    REQUIRE(append_request(
                again, h,
                send_messages_request{identifier::numeric(1), identifier::numeric(2), partitioning::to_partition(3), m})
                .has_value());
    CHECK(to_hex(view(again)) == to_hex(view(bytes)));
}

TEST_CASE("poll reply fixture decodes with verified checksums to the SDK's values", "[proto][g2][capture][batch]") {
    const auto bytes =
        proto_test::read_hex_file(proto_test::g2_dir() / "responses" / "poll_messages_group_next_autocommit_false.hex");
    auto f = decode_server_frame(view(bytes));
    REQUIRE(f.has_value());
    CHECK(f->reply().operation_ == operation::non_replicated);
    poll_reply p;
    poll_options o;
    o.verify_checksums = true;
    auto d = decode_batch_poll_reply(f->body, p, o);
    if (!d) FAIL(d.error().message());
    CHECK(p.partition_id == 3);
    CHECK(p.current_offset == 101);
    REQUIRE(p.messages.size() == 2);
    CHECK(p.messages[0].checksum == 4610425634637037563ULL);
    CHECK(p.messages[1].checksum == 6939192200282715142ULL);
    CHECK(p.messages[0].offset == 100);
    CHECK(p.messages[1].offset == 101);
    CHECK(p.messages[0].timestamp == 1767225600500000);  // 2026-01-01T00:00:00.500Z
    CHECK(p.messages[1].timestamp == 1767225600500000);
    CHECK(p.messages[0].origin_timestamp == 1767225600000000);
    CHECK(p.messages[1].origin_timestamp == 1767225600001000);
    CHECK(p.messages[1].user_headers.size() == 51);
    CHECK(as_text(p.messages[0].payload) == "hello golden 1");
    CHECK(p.messages[0].checksum_ok());

    // Our writer produces the same body from the same stored messages.
    byte_buffer again;
    batch_poll_writer w{again};
    w.begin(3, 101);
    for (const auto& m : p.messages) {
        message_fields mf{m.id, m.offset, m.timestamp, m.origin_timestamp, m.payload, m.user_headers};
        REQUIRE(w.add(mf).has_value());
    }
    w.finish();
    CHECK(to_hex(view(again)) == to_hex(f->body));

    // Every truncation fails; a flipped payload byte fails verification.
    for (std::size_t n = 0; n < f->body.size(); ++n) {
        poll_reply t;
        CHECK_FALSE(decode_batch_poll_reply(f->body.first(n), t, o).has_value());
    }
    byte_buffer flipped{f->body.begin(), f->body.end()};
    flipped[16 + 256 + 48] ^= std::byte{1};
    auto bad = decode_batch_poll_reply(view(flipped), p, o);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().code() == make_error_code(errc::checksum_mismatch));
    CHECK(decode_batch_poll_reply(view(flipped), p, {}).has_value());  // not asked: not checked

    // The error names the frame that failed (the name is built only then).
    REQUIRE(decode_batch_poll_reply(f->body, p, o).has_value());
    const auto second = static_cast<std::size_t>(p.messages[1].payload.data() - f->body.data());
    byte_buffer flipped2{f->body.begin(), f->body.end()};
    flipped2[second] ^= std::byte{1};
    auto bad2 = decode_batch_poll_reply(view(flipped2), p, o);
    REQUIRE_FALSE(bad2.has_value());
    CHECK_THAT(bad2.error().message(), Catch::Matchers::ContainsSubstring("poll_reply.records[0].frames[1].checksum"));
}

TEST_CASE("poll replies: sliced records, several records, 0.10 producer bytes", "[proto][g2][batch]") {
    byte_buffer body;
    batch_poll_writer w{body};
    w.begin(1, 20);
    std::vector<std::string> payloads;
    for (int i = 0; i < 6; ++i) payloads.push_back("m" + std::to_string(i));
    for (std::uint64_t i = 0; i < 6; ++i) {
        // offsets 10..12 at time 1, then 13..15 at time 2: two records.
        message_fields m{i + 1, 10 + i, i < 3 ? 1u : 2u, 100 + i, as_bytes(payloads[i]), {}};
        REQUIRE(w.add(m).has_value());
    }
    w.finish();
    poll_reply p;
    poll_options o;
    o.verify_checksums = true;
    REQUIRE(decode_batch_poll_reply(view(body), p, o).has_value());
    REQUIRE(p.messages.size() == 6);
    for (std::size_t i = 0; i < 6; ++i) {
        CHECK(p.messages[i].offset == 10 + i);
        CHECK(p.messages[i].origin_timestamp == 100 + i);
        CHECK(p.messages[i].timestamp == (i < 3 ? 1u : 2u));
    }
    // Two records: 16 + 2 × 256 + 6 frames.
    CHECK(body.size() == 16 + 2 * 256 + 6 * (48 + 2));

    // A sliced record: base 10, deltas starting at 1 (the server kept the stored base).
    byte_buffer sliced{body.begin(), body.end()};
    // Rewrite record 0: drop nothing, but raise base_offset by 0 and bump frame deltas is
    // checksum-neutral (the frame checksum covers the delta: recompute is what the server does).
    store_le<std::uint64_t>(sliced.data() + 16 + 8, 9);  // base 9: offsets become 9 + delta
    poll_reply q;
    REQUIRE(decode_batch_poll_reply(view(sliced), q, {}).has_value());
    CHECK(q.messages[0].offset == 9);
    // With verification the batch checksum no longer matches.
    CHECK_FALSE(decode_batch_poll_reply(view(sliced), q, o).has_value());

    // 0.10 batch flags (byte 52): refused for 0.9, tolerated with producer_fields.
    byte_buffer flags{body.begin(), body.end()};
    flags[16 + 52] = std::byte{1};
    CHECK_FALSE(decode_batch_poll_reply(view(flags), q, {}).has_value());
    poll_options o10;
    o10.producer_fields = true;
    o10.verify_checksums = true;
    CHECK(decode_batch_poll_reply(view(flags), q, o10).has_value());

    // Counts that do not add up.
    byte_buffer count{body.begin(), body.end()};
    store_le<std::uint32_t>(count.data() + 12, 7);
    CHECK_FALSE(decode_batch_poll_reply(view(count), q, {}).has_value());
    store_le<std::uint32_t>(count.data() + 12, 5);
    CHECK_FALSE(decode_batch_poll_reply(view(count), q, {}).has_value());
    // An empty poll.
    byte_buffer empty;
    batch_poll_writer e{empty};
    e.begin(0xffffffff, 0);
    e.finish();
    REQUIRE(decode_batch_poll_reply(view(empty), q, o).has_value());
    CHECK(q.partition_id == 0xffffffff);
    CHECK(q.messages.empty());
}

TEST_CASE("SendMessages decoding refuses corrupted batches with the server's codes", "[proto][g2][batch][hostile]") {
    std::vector<message_fields> m(3);
    for (std::size_t i = 0; i < m.size(); ++i) {
        m[i].id = i + 1;
        m[i].origin_timestamp = 1000 + i;
        m[i].payload = as_bytes("xyz");
    }
    const auto good = body_of({identifier::numeric(1), identifier::numeric(0), partitioning::balanced(), m});
    const std::size_t batch_at = 4 + 6 + 6 + 2 + 4;
    send_messages_batch_view v;
    REQUIRE(decode_send_messages(view(good), v).has_value());

    auto code_of_error = [&](byte_buffer b) {
        auto r = decode_send_messages(view(b), v);
        REQUIRE_FALSE(r.has_value());
        return r.error().code();
    };
    {
        auto b = good;
        b[batch_at + 256 + 48] ^= std::byte{1};  // payload of frame 0
        CHECK(code_of_error(b) == server_error(4027));
    }
    {
        auto b = good;
        b[batch_at + 40] ^= std::byte{1};  // batch checksum
        CHECK(code_of_error(b) == server_error(4039));
    }
    {
        auto b = good;
        b[batch_at + 100] = std::byte{1};  // reserved byte
        CHECK(code_of_error(b) == make_error_code(errc::invalid_value));
    }
    {
        auto b = good;
        store_le<std::uint32_t>(b.data() + batch_at + 48, 2);  // message_count
        CHECK(code_of_error(b) == make_error_code(errc::inconsistent));
    }
    {
        auto b = good;
        store_le<std::uint32_t>(b.data(), 5);  // metadata length
        CHECK(code_of_error(b) == make_error_code(errc::inconsistent));
    }
    for (std::size_t n = 0; n < good.size(); ++n) CHECK_FALSE(decode_send_messages(view(good).first(n), v).has_value());

    // Encoder refusals.
    byte_buffer b;
    writer w{b};
    CHECK_FALSE(
        encode_body(w,
                    send_messages_request{identifier::numeric(1), identifier::numeric(0), partitioning::balanced(), {}})
            .has_value());
    std::vector<message_fields> far(2);
    far[0].origin_timestamp = 0;
    far[1].origin_timestamp = std::uint64_t{1} << 33;  // more than u32::MAX µs apart
    CHECK_FALSE(encode_body(w, send_messages_request{identifier::numeric(1), identifier::numeric(0),
                                                     partitioning::balanced(), far})
                    .has_value());
    CHECK(b.empty());
}

TEST_CASE("random batches round-trip send -> decode", "[proto][g2][batch][property]") {
    const std::uint64_t seed = 20261130;
    std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
    std::mt19937_64 rng{seed};
    for (int round = 0; round < 200; ++round) {
        const std::size_t n = 1 + rng() % 8;
        std::vector<std::string> payloads(n);
        std::vector<message_fields> m(n);
        const std::uint64_t base = rng() % 1'000'000'000;
        for (std::size_t i = 0; i < n; ++i) {
            payloads[i].assign(rng() % 40, static_cast<char>('a' + i));
            m[i].id = rng();
            m[i].origin_timestamp = base + rng() % 100000;
            m[i].payload = as_bytes(payloads[i]);
        }
        const auto b = body_of({identifier::numeric(static_cast<std::uint32_t>(rng() % 5)), identifier::named("t"),
                                partitioning::by_key("k"), m});
        send_messages_batch_view v;
        REQUIRE(decode_send_messages(view(b), v).has_value());
        REQUIRE(v.messages.size() == n);
        for (std::size_t i = 0; i < n; ++i) {
            CHECK(v.messages[i].id == m[i].id);
            CHECK(v.messages[i].origin_timestamp == m[i].origin_timestamp);
            CHECK(v.messages[i].offset == i);
            CHECK(as_text(v.messages[i].payload) == payloads[i]);
        }
    }
}

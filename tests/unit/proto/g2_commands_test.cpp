// SPDX-License-Identifier: Apache-2.0
// G2 request captures of the official Node SDK (tests/data/iggy-g2): each decodes to
// the values of its .txt and re-encodes to the same bytes; reply fixtures decode.
#include "proto/g2_commands.hpp"

#include "test_util.hpp"

#include "catch2_compat.hpp"

#include <filesystem>
#include <map>
#include <set>

using namespace iss::proto;
using namespace iss::proto::g2;
using proto_test::from_hex;
using proto_test::to_hex;
using proto_test::view;

namespace {

// The client id the captures pinned: bytes 01 ae ad ... a0 at offset 128 (u128 LE).
u128 capture_client() {
    u128 v = 0;
    for (int i = 15; i >= 1; --i) v = (v << 8) | static_cast<unsigned>(0xaf - i);
    return (v << 8) | 0x01;
}

struct expected {
    std::uint32_t code;
    std::uint64_t request;
    std::uint64_t session;
    g2::request value;
};

const identifier s1 = identifier::numeric(1);
const identifier t2 = identifier::numeric(2);
const identifier g5 = identifier::numeric(5);

std::map<std::string, expected> expectations() {
    std::map<std::string, expected> m;
    const client_version_info node{protocol_0_11_0, "node-sdk", "0.10.0-edge.4"};
    register_request login;
    login.version = node;
    login.username = "iggy";
    login.password = "iggy";
    m["login_user"] = {40, 0, 0, login};
    register_pat_request pat;
    pat.version = node;
    pat.token = "iggypat_0123456789abcdefghijklmnopqrstuvwxyzABCD";
    m["login_with_personal_access_token"] = {40, 0, 0, pat};
    m["logout"] = {39, 1, 1001, logout_user_request{}};
    m["ping"] = {1, 1, 0, ping_request{}};
    m["get_consumer_offset_group"] = {120, 1, 1001, get_consumer_offset_request{consumer::group(g5), s1, t2, 3u}};
    m["get_topic"] = {300, 1, 1001, get_topic_request{s1, t2}};
    m["join_consumer_group"] = {604, 1, 1001, join_consumer_group_request{s1, t2, g5}};
    m["leave_consumer_group"] = {605, 1, 1001, leave_consumer_group_request{s1, t2, g5}};
    m["sync_consumer_group"] = {606, 1, 1001, sync_consumer_group_request{s1, t2, g5}};
    m["poll_messages_group_next_autocommit_false"] = {
        100, 1, 1001, poll_messages_request{consumer::group(g5), s1, t2, 3u, polling_strategy::next(), 10, false}};
    m["poll_messages_single_offset_autocommit_false"] = {
        100, 1, 1001,
        poll_messages_request{consumer::single(identifier::numeric(7)), s1, t2, 3u, polling_strategy::at_offset(100),
                              10, false}};
    m["store_consumer_offset_group"] = {121, 1, 1001, store_offset_request{consumer::group(g5), s1, t2, 3u, 42, 1}};
    return m;
}

// Re-encodes a decoded request with its decoded header.
byte_buffer reencode(const request_header& h, const g2::request& r) {
    byte_buffer b;
    std::visit(
        [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, send_messages_batch_view>) {
                FAIL("send captures are in g2_batch_test.cpp");
            } else {
                REQUIRE(append_request(b, h, v).has_value());
            }
        },
        r);
    return b;
}

}  // namespace

TEST_CASE("every G2 request capture decodes to its .txt values and re-encodes byte-identical", "[proto][g2][capture]") {
    const auto dir = proto_test::g2_dir() / "requests";
    const auto want = expectations();
    std::set<std::string> seen;
    for (const auto& entry : std::filesystem::directory_iterator{dir}) {
        if (entry.path().extension() != ".hex") continue;
        const std::string name = entry.path().stem().string();
        if (name.rfind("send_messages", 0) == 0) continue;  // g2_batch_test.cpp
        INFO(name << ": " << proto_test::read_text(dir / (name + ".txt")));
        const auto bytes = proto_test::read_hex_file(entry.path());
        auto it = want.find(name);
        REQUIRE(it != want.end());  // a new capture needs its expected values here
        seen.insert(name);

        auto f = decode_request_frame(view(bytes));
        REQUIRE(f.has_value());
        CHECK(f->header.client == capture_client());
        CHECK(f->header.request == it->second.request);
        CHECK(f->header.session == it->second.session);
        CHECK(f->header.request_checksum == 0);  // the Node SDK never stamps it
        CHECK(validate_request_header(f->header).has_value());
        CHECK(request_code(f->header) == it->second.code);
        auto r = decode_request(f->header, f->body);
        if (!r) FAIL(r.error().message());
        CHECK(*r == it->second.value);
        CHECK(to_hex(view(reencode(f->header, *r))) == to_hex(view(bytes)));

        // The session object builds the same header from scratch (pinned client id).
        session_state s{capture_client()};
        if (it->second.session != 0) s.bind(it->second.session);
        auto h = s.next(it->second.code);
        h.size = f->header.size;
        CHECK(h == f->header);

        // Every truncation of the body is refused or decodes to something else; never a crash.
        for (std::size_t n = 0; n < f->body.size(); ++n) {
            auto t = decode_request(f->header, f->body.first(n));
            if (t) CHECK_FALSE(*t == it->second.value);
        }
    }
    CHECK(seen.size() == want.size());
}

TEST_CASE("reply fixtures decode: login, join, not-found shapes", "[proto][g2][capture]") {
    const auto dir = proto_test::g2_dir() / "responses";
    {
        auto b = proto_test::read_hex_file(dir / "login_user.hex");
        auto f = decode_server_frame(view(b));
        REQUIRE(f.has_value());
        REQUIRE_FALSE(f->is_eviction());
        CHECK(f->reply().status == 0);
        CHECK(f->reply().operation_ == operation::register_client);
        CHECK(f->reply().client == capture_client());
        auto r = decode_register_reply(f->body);
        REQUIRE(r.has_value());
        CHECK(r->user_id == 1);  // parsed.json: userId 1
        CHECK(r->session == 1001);
        CHECK(r->server_protocol_version == protocol_0_11_0);
        CHECK(r->server_version == "0.11.0-edge.4");
        byte_buffer body;
        REQUIRE(append_register_reply(body, *r).has_value());
        CHECK(to_hex(view(body)) == to_hex(f->body));
    }
    {
        auto b = proto_test::read_hex_file(dir / "join_consumer_group.hex");
        auto f = decode_server_frame(view(b));
        REQUIRE(f.has_value());
        CHECK(f->reply().operation_ == operation::join_consumer_group);
        CHECK(f->reply().request == 1);
        auto p = decode_result_framed(f->body);
        REQUIRE(p.has_value());  // parsed.json: returned true
        CHECK(p->empty());
    }
    CHECK(decode_topic_reply({}).value() == std::nullopt);
    CHECK(decode_stream_reply({}).value() == std::nullopt);
    CHECK(decode_sync_reply({}).value() == std::nullopt);
    CHECK(decode_consumer_offset_reply({}).value() == std::nullopt);
}

TEST_CASE("G2 records: topic and stream replies with option blocks", "[proto][g2]") {
    topic_details t;
    t.topic = {2, 100, 3, 0, 1, 0, 1, 0, 0, "golden-topic"};
    for (std::uint32_t i = 0; i < 3; ++i) t.partitions.push_back({i, 100, 1, 0, 0, 0});
    byte_buffer body;
    REQUIRE(append_topic_details(body, t).has_value());
    // 4+8+4+8+1+8+8+8 + 1+12 + 4 + 4 = 70 bytes of header, then 3 × 40.
    CHECK(body.size() == 70 + 120);
    auto d = decode_topic_reply(view(body));
    REQUIRE(d.has_value());
    REQUIRE(d->has_value());
    CHECK(**d == t);
    // Non-empty option blocks are skipped.
    byte_buffer with_options;
    writer w{with_options};
    w.u32(1);
    w.u64(2);
    w.u32(0);
    w.u64(3);
    w.u8(1);
    w.u64(4);
    w.u64(5);
    w.u64(6);
    w.u8(1);
    w.text("x");
    w.u32(3);
    w.text("abc");
    w.u32(0);
    auto d2 = decode_topic_reply(view(with_options));
    REQUIRE(d2.has_value());
    CHECK((*d2)->topic.max_topic_size == 4);
    for (std::size_t n = 1; n < with_options.size(); ++n)
        CHECK_FALSE(decode_topic_reply(view(with_options).first(n)).has_value());

    stream_details s;
    s.stream = {1, 50, 1, 0, 0, "orders"};
    s.topics.push_back(t.topic);
    byte_buffer sb;
    REQUIRE(append_stream_details(sb, s).has_value());
    auto sd = decode_stream_reply(view(sb));
    REQUIRE(sd.has_value());
    CHECK(**sd == s);
}

TEST_CASE("SyncConsumerGroup reply and hostile counts", "[proto][g2]") {
    byte_buffer b;
    append_sync_reply(b, {1, {3}});
    CHECK(to_hex(view(b)) ==
          "0100000000000000"
          "01000000"
          "03000000");
    auto d = decode_sync_reply(view(b));
    REQUIRE(d.has_value());
    CHECK(**d == sync_reply{1, {3}});
    CHECK_FALSE(decode_sync_reply(view(from_hex("0100000000000000 ffffffff"))).has_value());
    CHECK_FALSE(decode_sync_reply(view(from_hex("0100000000000000 00000000 00"))).has_value());
}

TEST_CASE("Register bodies: PAT, bind secret (0.12.0, provisional), malformed prefixes", "[proto][g2][login]") {
    register_request q;
    q.version = {protocol_0_12_0, "cpp-sink", "0.1.0"};
    for (std::size_t i = 0; i < q.secret.size(); ++i) q.secret[i] = static_cast<std::byte>(i + 1);
    q.username = "iggy";
    q.password = "secret";
    byte_buffer b;
    writer w{b};
    REQUIRE(encode_body(w, q).has_value());
    // prefix (4 + 9 + 6) then the 32-byte secret, then the username.
    CHECK(to_hex(view(b).subspan(19, 32)).substr(0, 4) == "0102");
    CHECK(to_hex(view(b).subspan(51, 5)) == "0469676779");
    // Documented bytes (iggy.apache.org/docs/0.10/binary-protocol/connection-lifecycle/): the
    // packed 0.12.0 (0x3000) little-endian at 0..3, u8-length names; the secret is 32 bytes (crate
    // BIND_SECRET_BYTES); then u8-length password and a u32 context length (0, no bytes).
    CHECK(to_hex(view(b).subspan(0, 4)) == "00300000");
    CHECK(view(b).size() == 19u + 32u + 5u + 7u + 4u);
    CHECK(to_hex(view(b).subspan(50, 1)) == "20");  // last secret byte (i + 1 = 32)
    CHECK(to_hex(view(b).subspan(56, 11)) ==
          "06736563726574"
          "00000000");
    auto d = decode_register_user(view(b));
    REQUIRE(d.has_value());
    CHECK(*d == q);
    request_header h;
    h.client = 1;
    h.op = operation::register_client;
    auto any = decode_request(h, view(b));
    REQUIRE(any.has_value());
    CHECK(std::holds_alternative<register_request>(*any));

    // 0.11.0 has no secret.
    register_pat_request p;
    p.version = {protocol_0_11_0, "cpp-sink", "0.1.0"};
    p.token = "tok";
    byte_buffer pb;
    writer pw{pb};
    REQUIRE(encode_body(pw, p).has_value());
    CHECK(to_hex(view(pb)) ==
          "002c0000"
          "086370702d73696e6b"
          "05302e312e30"
          "03746f6b"
          "00000000");
    auto pa = decode_request(h, view(pb));
    REQUIRE(pa.has_value());
    CHECK(std::get<register_pat_request>(*pa) == p);

    // No decodable prefix: MalformedLogin territory.
    auto bad = decode_request(h, view(from_hex("002c0000 00")));
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().code() == make_error_code(errc::invalid_value));
    // Encoders refuse what the wire cannot carry.
    register_request empty_user;
    empty_user.version = {protocol_0_11_0, "cpp-sink", "0.1.0"};
    byte_buffer e;
    writer ew{e};
    CHECK_FALSE(encode_body(ew, empty_user).has_value());
}

TEST_CASE("requests the server refuses by header", "[proto][g2][hostile]") {
    request_header h;
    h.client = 1;
    h.session = 1;
    h.request = 1;
    h.op = static_cast<operation>(4);  // no such operation
    CHECK(decode_request(h, {}).error().code() == make_error_code(errc::unexpected_code));
    h.op = operation::non_replicated;
    h.code = 202;  // CreateStream is replicated: not valid as NonReplicated
    CHECK_FALSE(decode_request(h, view(from_hex("0161"))).has_value());
    h.code = 9999;
    CHECK_FALSE(decode_request(h, {}).has_value());
    h.op = operation::store_consumer_offset;
    // ack 2 is not an ack level.
    CHECK_FALSE(
        decode_request(h, view(from_hex("01010401000000 010401000000 010400000000 0100000000 0500000000000000 02")))
            .has_value());
}

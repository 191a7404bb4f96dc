// SPDX-License-Identifier: Apache-2.0
// G2 framing: headers, operations, evictions, versions, sessions, retries, the assembler.
#include "proto/g2_commands.hpp"
#include "test_util.hpp"

#include "catch2_compat.hpp"

#include <random>

using namespace iss::proto;
using namespace iss::proto::g2;
using proto_test::from_hex;
using proto_test::to_hex;
using proto_test::view;

namespace {

constexpr u128 vector_client = (u128{0x0011223344556677} << 64) | 0x8899aabbccddeeffULL;

std::string hex_at(const byte_buffer& b, std::size_t at, std::size_t n) { return to_hex(view(b).subspan(at, n)); }

// Every header byte is zero except the listed (offset, length) ranges.
void check_zero_except(const byte_buffer& b, std::initializer_list<std::pair<std::size_t, std::size_t>> ranges) {
    for (std::size_t i = 0; i < header_size; ++i) {
        bool in = false;
        for (auto [a, n] : ranges) in = in || (i >= a && i < a + n);
        if (!in && b[i] != std::byte{0}) FAIL("header byte " << i << " is not zero");
    }
}

}  // namespace

TEST_CASE("G2-1 Register frame of docs/protocol.md (289 bytes)", "[proto][g2][vector]") {
    session_state s{vector_client};
    auto h = s.next(code::login_register);
    CHECK(h.op == operation::register_client);
    CHECK(h.request == 0);
    CHECK(h.session == 0);
    register_request req;
    req.version = {protocol_0_11_0, "cpp-sink", "0.1.0"};
    req.username = "iggy";
    req.password = "iggy";
    byte_buffer b;
    REQUIRE(append_request(b, h, req).has_value());
    REQUIRE(b.size() == 289);
    CHECK(hex_at(b, 48, 4) == "21010000");
    CHECK(hex_at(b, 60, 1) == "05");
    CHECK(hex_at(b, 128, 16) == "ffeeddccbbaa99887766554433221100");
    CHECK(hex_at(b, 176, 1) == "01");
    check_zero_except(b, {{48, 4}, {60, 1}, {128, 16}, {176, 1}});
    CHECK(to_hex(view(b).subspan(256)) ==
          "002c0000"
          "086370702d73696e6b"
          "05302e312e30"
          "0469676779"
          "0469676779"
          "00000000");
    // The counter did not move: Register is request 0.
    CHECK(s.counter() == 1);

    // The reply of the vector: Reply header, operation 1, status 0, result-framed body.
    byte_buffer reply;
    reply_header rh;
    rh.client = vector_client;
    rh.operation_ = operation::register_client;
    byte_buffer body;
    REQUIRE(append_register_reply(body, {1, 7, protocol_0_11_0, "0.9.0"}).has_value());
    append_reply(reply, rh, view(body));
    CHECK(hex_at(reply, 60, 1) == "08");
    CHECK(hex_at(reply, 208, 1) == "01");
    CHECK(hex_at(reply, 216, 4) == "00000000");
    auto f = decode_server_frame(view(reply));
    REQUIRE(f.has_value());
    REQUIRE_FALSE(f->is_eviction());
    auto rr = decode_register_reply(f->body);
    REQUIRE(rr.has_value());
    CHECK(rr->user_id == 1);
    CHECK(rr->session == 7);
    CHECK(rr->server_protocol_version == 0x2c00);
    CHECK(rr->server_version == "0.9.0");
}

TEST_CASE("G2-2 Ping after login: session 7, counter 1, header only", "[proto][g2][vector]") {
    session_state s{vector_client};
    s.bind(7);
    byte_buffer b;
    REQUIRE(append_request(b, s.next(code::ping), ping_request{}).has_value());
    REQUIRE(b.size() == 256);
    CHECK(hex_at(b, 48, 4) == "00010000");
    CHECK(hex_at(b, 168, 8) == "0100000000000000");
    CHECK(hex_at(b, 176, 1) == "02");
    CHECK(hex_at(b, 184, 8) == "0700000000000000");
    CHECK(hex_at(b, 196, 4) == "01000000");
    check_zero_except(b, {{48, 4}, {60, 1}, {128, 16}, {168, 1}, {176, 1}, {184, 1}, {196, 1}});
}

TEST_CASE("G2-3 StoreConsumerOffset body: V4's payload and ack Quorum", "[proto][g2][vector]") {
    session_state s{vector_client};
    s.bind(7);
    store_offset_request q{
        consumer::group(identifier::named("sink")), identifier::numeric(1), identifier::numeric(0), 0u, 5, 1};
    byte_buffer b;
    auto h = s.next(code::store_consumer_offset);
    CHECK(h.op == operation::store_consumer_offset);
    CHECK(h.code == 0);
    REQUIRE(append_request(b, h, q).has_value());
    CHECK(hex_at(b, 176, 1) == "a1");
    CHECK(to_hex(view(b).subspan(256)) ==
          "0202047369"
          "6e6b"
          "010401000000"
          "010400000000"
          "0100000000"
          "0500000000000000"
          "01");
    // A successful reply body: result count 0.
    auto ok = decode_result_framed(view(from_hex("00000000")));
    REQUIRE(ok.has_value());
    CHECK(ok->empty());
}

TEST_CASE("operation for every command code (§8.2)", "[proto][g2]") {
    CHECK(operation_for(40) == operation::register_client);
    CHECK(operation_for(45) == operation::register_client);
    CHECK(operation_for(39) == operation::logout);
    for (std::uint32_t c : {1u, 20u, 100u, 120u, 200u, 201u, 300u, 301u, 600u, 601u, 606u, 12345u})
        CHECK(operation_for(c) == operation::non_replicated);
    CHECK(static_cast<int>(operation_for(202)) == 128);
    CHECK(static_cast<int>(operation_for(203)) == 130);
    CHECK(static_cast<int>(operation_for(302)) == 132);
    CHECK(static_cast<int>(operation_for(303)) == 134);
    CHECK(static_cast<int>(operation_for(402)) == 136);
    CHECK(static_cast<int>(operation_for(403)) == 137);
    CHECK(static_cast<int>(operation_for(602)) == 139);
    CHECK(static_cast<int>(operation_for(603)) == 140);
    CHECK(static_cast<int>(operation_for(604)) == 148);
    CHECK(static_cast<int>(operation_for(605)) == 149);
    CHECK(static_cast<int>(operation_for(101)) == 160);
    CHECK(static_cast<int>(operation_for(121)) == 161);
    CHECK(static_cast<int>(operation_for(122)) == 162);
    // The G1 logins are refused (MalformedLogin eviction): never a valid operation.
    CHECK(operation_for(38) == operation::reserved);
    CHECK(operation_for(44) == operation::reserved);
    for (std::uint32_t c : {39u, 202u, 203u, 302u, 303u, 402u, 403u, 602u, 603u, 604u, 605u, 101u, 121u, 122u})
        CHECK(code_for(operation_for(c)) == c);
    CHECK_FALSE(code_for(operation::non_replicated).has_value());
    CHECK(reply_is_result_framed(operation::register_client));
    CHECK(reply_is_result_framed(operation::join_consumer_group));
    CHECK(reply_is_result_framed(operation::store_consumer_offset));
    CHECK_FALSE(reply_is_result_framed(operation::send_messages));
    CHECK_FALSE(reply_is_result_framed(operation::non_replicated));
    CHECK_FALSE(reply_is_result_framed(operation::logout));
    CHECK_FALSE(is_known_operation(4));
    CHECK_FALSE(is_known_operation(255));
}

TEST_CASE("request numbering: metadata and Logout advance, the rest do not", "[proto][g2][session]") {
    session_state s{42};
    CHECK(s.next(code::ping).request == 1);  // before login, Ping rides NonReplicated with the counter
    auto reg = s.next(code::login_register);
    CHECK(reg.request == 0);
    CHECK(reg.session == 0);
    s.bind(1001);
    CHECK(s.next(code::poll_messages).request == 1);
    CHECK(s.next(code::sync_consumer_group).request == 1);
    CHECK(s.next(code::store_consumer_offset).request == 1);
    CHECK(s.next(code::send_messages).request == 1);
    auto join = s.next(code::join_consumer_group);
    CHECK(join.request == 1);
    CHECK(join.session == 1001);
    CHECK(join.code == 0);
    CHECK(s.next(code::poll_messages).request == 2);
    CHECK(s.next(code::create_stream).request == 2);
    CHECK(s.next(code::logout_user).request == 3);
    CHECK(s.counter() == 4);
    s.reset();
    CHECK(s.counter() == 1);
    CHECK_FALSE(s.logged_in());
    // Every header the session builds passes the server's field checks once logged in.
    s.bind(5);
    for (std::uint32_t c : {1u, 40u, 100u, 121u, 202u, 604u, 606u, 39u})
        CHECK(validate_request_header(s.next(c)).has_value());
}

TEST_CASE("server field checks on request headers", "[proto][g2][hostile]") {
    request_header h;
    h.client = 0;
    h.op = operation::non_replicated;
    CHECK_FALSE(validate_request_header(h).has_value());
    h.client = 1;
    CHECK(validate_request_header(h).has_value());
    h.op = operation::reserved;
    CHECK_FALSE(validate_request_header(h).has_value());
    h.op = operation::register_client;
    h.session = 3;
    CHECK_FALSE(validate_request_header(h).has_value());
    h.session = 0;
    h.request = 1;
    CHECK_FALSE(validate_request_header(h).has_value());
    h.op = operation::join_consumer_group;
    h.session = 0;
    CHECK_FALSE(validate_request_header(h).has_value());
    h.session = 9;
    h.request = 0;
    CHECK_FALSE(validate_request_header(h).has_value());
}

TEST_CASE("every eviction reason round-trips with its name", "[proto][g2][eviction]") {
    const char* names[] = {"Reserved",
                           "NoSession",
                           "ClientReleaseTooLow",
                           "ClientReleaseTooHigh",
                           "InvalidRequestOperation",
                           "InvalidRequestBody",
                           "InvalidRequestBodySize",
                           "SessionTooLow",
                           "SessionReleaseMismatch",
                           "InvalidCredentials",
                           "InvalidToken",
                           "UserInactive",
                           "SessionError",
                           "StaleClient",
                           "IncompatibleProtocol",
                           "MalformedLogin"};
    for (unsigned r = 0; r <= 15; ++r) {
        eviction_header e{vector_client, r == 14 ? protocol_0_12_0 : 0u, r == 14 ? protocol_0_12_0 : 0u,
                          static_cast<eviction_reason>(r)};
        byte_buffer b;
        append_eviction(b, e);
        REQUIRE(b.size() == 256);
        CHECK(static_cast<unsigned>(b[255]) == r);
        CHECK(hex_at(b, 60, 1) == "0d");
        auto f = decode_server_frame(view(b));
        REQUIRE(f.has_value());
        REQUIRE(f->is_eviction());
        CHECK(f->eviction() == e);
        CHECK(eviction_reason_name(e.reason) == names[r]);
        CHECK_FALSE(eviction_reason_hint(e.reason).empty());
    }
    CHECK(eviction_reason_name(static_cast<eviction_reason>(16)) == "Unknown");
    // Reason 14 carries the accepted window at 144/148.
    byte_buffer b;
    append_eviction(b, {1, protocol_0_11_0 + 3, protocol_0_11_0, eviction_reason::incompatible_protocol});
    CHECK(hex_at(b, 144, 8) == "032c0000002c0000");
    // An eviction with a body is refused.
    b.push_back(std::byte{0});
    store_le<std::uint32_t>(b.data() + 48, 257);
    CHECK_FALSE(decode_server_frame(view(b)).has_value());
}

TEST_CASE("protocol versions and the minor-scoped gate", "[proto][g2][version]") {
    CHECK(protocol_0_11_0 == 0x2c00);
    CHECK(protocol_0_12_0 == 0x3000);
    CHECK(version_text(protocol_0_11_0) == "0.11.0");
    CHECK(version_text(pack_version(1, 2, 3)) == "1.2.3");
    CHECK(version_accepted(protocol_0_11_0, protocol_0_11_0));
    CHECK(version_accepted(pack_version(0, 11, 5), protocol_0_11_0));  // any 0.11.x patch
    CHECK_FALSE(version_accepted(protocol_0_12_0, protocol_0_11_0));
    CHECK_FALSE(version_accepted(pack_version(0, 10, 9), protocol_0_11_0));
    CHECK_FALSE(version_accepted(protocol_0_11_0, protocol_0_12_0));
    CHECK(version_accepted(protocol_0_12_0, pack_version(0, 12, 2)));
    // 0.10 docs (connection-lifecycle): server 0.10.0 = protocol 0.12.0, minor-scoped gate, minimum
    // = current with patch zeroed: [0.12.0, 0.12.x] accepted, 0.11.x and 0.13.0 refused.
    CHECK(version_accepted(pack_version(0, 12, 9), protocol_0_12_0));
    CHECK_FALSE(version_accepted(pack_version(0, 11, 9), protocol_0_12_0));
    CHECK_FALSE(version_accepted(pack_version(0, 13, 0), protocol_0_12_0));
}

TEST_CASE("retry rules: only 57 is replayed with the same request number", "[proto][g2][retry]") {
    CHECK(retry_rule_for(57) == retry_rule::replay_same_request);
    CHECK(retry_rule_for(58) == retry_rule::retry);
    CHECK(retry_rule_for(59) == retry_rule::already_applied);
    for (std::uint32_t s : {0u, 3u, 40u, 42u, 3024u, 5006u}) CHECK(retry_rule_for(s) == retry_rule::none);
    CHECK(server_error_name(57) == "TransientNotCommitted");
    CHECK(server_error_name(58) == "TransientNotAccepted");
    // 0.9.0's per-partition offset-key limit: a final answer (PR #4063), never retried.
    CHECK(server_error_name(status_too_many_consumer_offsets) == "TooManyConsumerOffsets");
    CHECK(retry_rule_for(status_too_many_consumer_offsets) == retry_rule::none);
}

TEST_CASE("result-framed bodies: success, failure, hostile counts", "[proto][g2]") {
    byte_buffer ok;
    append_result_ok(ok);
    ok.push_back(std::byte{0x33});
    auto p = decode_result_framed(view(ok));
    REQUIRE(p.has_value());
    CHECK(p->size() == 1);
    byte_buffer bad;
    append_result_error(bad, 3024);
    auto e = decode_result_framed(view(bad));
    REQUIRE_FALSE(e.has_value());
    CHECK(e.error().code() == server_error(3024));
    CHECK_FALSE(decode_result_framed(view(from_hex("ffffffff 00000000"))).has_value());
    CHECK_FALSE(decode_result_framed(view(from_hex("0000"))).has_value());
    CHECK_FALSE(decode_result_framed(view(from_hex("01000000 00000000 00000000"))).has_value());
}

TEST_CASE("reply header fields sit at their offsets", "[proto][g2]") {
    reply_header h;
    h.request_checksum = 0x11;
    h.context = 0x22;
    h.client = 0x33;
    h.op = 0x44;
    h.commit = 0x55;
    h.timestamp = 0x66;
    h.request = 0x77;
    h.operation_ = operation::send_messages;
    h.status = 0;
    byte_buffer b;
    append_reply(b, h, view(from_hex("01000000 01000000 00000000 00000000 0500000000000000")));
    CHECK(hex_at(b, 128, 1) == "11");
    CHECK(hex_at(b, 144, 1) == "22");
    CHECK(hex_at(b, 160, 1) == "33");
    CHECK(hex_at(b, 176, 1) == "44");
    CHECK(hex_at(b, 184, 1) == "55");
    CHECK(hex_at(b, 192, 1) == "66");
    CHECK(hex_at(b, 200, 1) == "77");
    CHECK(hex_at(b, 208, 1) == "a0");
    auto d = decode_reply_header(view(b));
    REQUIRE(d.has_value());
    h.size = static_cast<std::uint32_t>(b.size());
    CHECK(*d == h);
    // A denied request has an empty body.
    byte_buffer denied;
    h.status = 58;
    append_reply(denied, h, view(from_hex("00")));
    CHECK_FALSE(decode_server_frame(view(denied)).has_value());
}

TEST_CASE("frame assembler: split at every byte, hostile sizes", "[proto][g2][assembler]") {
    session_state s{vector_client};
    s.bind(9);
    byte_buffer stream;
    REQUIRE(append_request(stream, s.next(1), ping_request{}).has_value());
    REQUIRE(append_request(
                stream, s.next(604),
                join_consumer_group_request{identifier::numeric(1), identifier::numeric(2), identifier::numeric(3)})
                .has_value());
    append_eviction(stream, {1, 0, 0, eviction_reason::stale_client});
    const std::vector<std::size_t> sizes{256, 274, 256};
    for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
        g2::frame_assembler a;
        std::vector<std::size_t> got;
        auto drain = [&] {
            for (;;) {
                auto f = a.next();
                REQUIRE(f.has_value());
                if (!*f) break;
                got.push_back((*f)->size());
            }
        };
        a.feed(view(stream).first(cut));
        drain();
        if (got.empty() && cut < 256) CHECK(a.bytes_wanted() == 256 - cut);
        a.feed(view(stream).subspan(cut));
        drain();
        CHECK(got == sizes);
        CHECK(a.buffered() == 0);
    }
    SECTION("size below 256") {
        byte_buffer b(256);
        store_le<std::uint32_t>(b.data() + 48, 100);
        g2::frame_assembler a;
        a.feed(view(b));
        auto f = a.next();
        REQUIRE_FALSE(f.has_value());
        CHECK(f.error().code() == make_error_code(errc::invalid_length));
        CHECK_FALSE(a.next().has_value());  // stays failed
    }
    SECTION("size over the limit") {
        byte_buffer b(256);
        store_le<std::uint32_t>(b.data() + 48, 4096);
        g2::frame_assembler a{1024};
        a.feed(view(b));
        auto f = a.next();
        REQUIRE_FALSE(f.has_value());
        CHECK(f.error().code() == make_error_code(errc::limit_exceeded));
    }
    SECTION("wrong command bytes") {
        byte_buffer b(256);
        store_le<std::uint32_t>(b.data() + 48, 256);
        b[60] = std::byte{5};
        CHECK_FALSE(decode_server_frame(view(b)).has_value());  // a request is not a server frame
        b[60] = std::byte{7};
        CHECK_FALSE(decode_server_frame(view(b)).has_value());
        CHECK_FALSE(decode_request_header(view(b)).has_value());
        CHECK_FALSE(decode_request_frame(view(b).first(200)).has_value());
    }
}

TEST_CASE("generation detection from the first bytes", "[proto][g2]") {
    CHECK_FALSE(detect_generation(view(from_hex("000000"))).has_value());
    CHECK(detect_generation(view(from_hex("04000000 01000000"))) == wire_generation::g1);
    byte_buffer g2(256);
    CHECK(detect_generation(view(g2).first(4)) == wire_generation::g2);
}

TEST_CASE("random bytes never crash the server-frame and request decoders", "[proto][g2][hostile]") {
    std::mt19937_64 rng{20261130};
    std::printf("seed 20261130\n");
    for (int i = 0; i < 2000; ++i) {
        byte_buffer b(256 + rng() % 64);
        for (auto& x : b) x = static_cast<std::byte>(rng());
        store_le<std::uint32_t>(b.data() + 48, static_cast<std::uint32_t>(i % 3 == 0 ? b.size() : rng()));
        b[60] = static_cast<std::byte>(i % 2 ? 8 : 13);
        (void)decode_server_frame(view(b));
        b[60] = std::byte{5};
        b[176] = static_cast<std::byte>(rng() % 4 == 0 ? 2 : rng());
        if (auto f = decode_request_frame(view(b)); f) (void)decode_request(f->header, f->body);
    }
}

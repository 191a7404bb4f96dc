// SPDX-License-Identifier: Apache-2.0
// Unit tests of the Iggy test broker's G2 side (tests/support/iggy_broker/g2_handler): where it
// answers as a 0.9 server does, built from the protocol facts (reply result section, batch
// records, topic options, operation 141, GetClusterMetadata).
#include "common/clock.hpp"
#include "iggy_broker/admin_wire.hpp"
#include "iggy_broker/broker_state.hpp"
#include "iggy_broker/g2_handler.hpp"
#include "proto/g2_batch.hpp"
#include "proto/g2_commands.hpp"
#include "proto/message.hpp"

#include "catch2_compat.hpp"

using namespace iss::broker;
namespace proto = iss::proto;
namespace g2 = proto::g2;

namespace {

proto::byte_buffer bytes(std::initializer_list<int> v) {
    proto::byte_buffer b;
    for (int x : v) b.push_back(static_cast<std::byte>(x));
    return b;
}

/// One logged-in G2 connection (client `client_id`, user `user`) to a broker.
struct g2_session {
    g2_connection conn;
    g2::session_state ss{0x1234};
    proto::byte_buffer out;
    proto::byte_buffer sent;  // the last request frame

    g2_session(broker_state& b, g2_shared& shared, std::uint32_t client_id, const std::string& user,
               const std::string& password)
        : conn{b, shared, client_id} {
        b.add_client(client_id, "127.0.0.1:" + std::to_string(5000 + client_id));
        g2::register_request r;
        r.version.sdk_name = "test";
        r.version.sdk_version = "1.0";
        r.username = user;
        r.password = password;
        auto f = send(r);
        REQUIRE(f.reply().status == 0);
        auto reply = g2::decode_register_reply(f.body);
        REQUIRE(reply.has_value());
        ss.bind(reply->session);
    }
    /// Sends a request; returns the server frame (a view into `out`).
    template <class Request>
    g2::server_frame send(const Request& req) {
        sent.clear();
        REQUIRE(g2::append_request(sent, ss.next(g2::code_of<Request>()), req).has_value());
        return handle();
    }
    /// Sends a raw body under command `code`.
    g2::server_frame send_raw(std::uint32_t code, const proto::byte_buffer& body) {
        sent.clear();
        g2::append_request(sent, ss.next(code), proto::bytes_view{body});
        return handle();
    }
    g2::server_frame handle() {
        out.clear();
        conn.handle(sent, out);
        auto f = g2::decode_server_frame(out);
        REQUIRE(f.has_value());
        return *f;
    }
};

/// A fresh broker and root's logged-in G2 connection (client 77).
struct g2_world {
    iss::manual_clock clock;
    broker_state b{broker_options{"iggy", "iggy", {}, std::chrono::seconds{30}, {}, {}, &clock, 7}};
    g2_shared shared{g2_options{}, node_endpoints{"127.0.0.1", 40001}};
    g2_session root{b, shared, 77, "iggy", "iggy"};
    proto::byte_buffer& sent = root.sent;

    template <class Request>
    g2::server_frame send(const Request& req) {
        return root.send(req);
    }
    g2::server_frame send_raw(std::uint32_t code, const proto::byte_buffer& body) { return root.send_raw(code, body); }
};

/// `count 1 | index 0 | result code`: a committed rejection.
proto::byte_buffer rejection(std::uint32_t code) {
    proto::byte_buffer b;
    proto::writer w{b};
    w.u32(1);
    w.u32(0);
    w.u32(code);
    return b;
}

proto::byte_buffer options_block(
    std::initializer_list<std::pair<std::string, std::pair<proto::header_kind, proto::byte_buffer>>> e) {
    proto::byte_buffer block;
    for (auto& [k, v] : e)
        REQUIRE(proto::append_user_header(block, proto::header_kind::string, proto::as_bytes(k), v.first, v.second)
                    .has_value());
    return block;
}

}  // namespace

TEST_CASE("G2: a duplicate stream or topic name is a committed rejection in the result section", "[broker][g2]") {
    g2_world w;
    REQUIRE(w.send(g2::create_stream_request{"s", {}}).reply().status == 0);
    auto dup = w.send(g2::create_stream_request{"s", {}});
    CHECK(dup.reply().status == 0);
    CHECK(proto::byte_buffer(dup.body.begin(), dup.body.end()) == rejection(1012));
    CHECK(g2::decode_result_framed(dup.body).error() == proto::server_error(1012));

    REQUIRE(w.send(g2::create_topic_request{proto::identifier::numeric(0), 1, "t", {}}).reply().status == 0);
    auto dup_topic = w.send(g2::create_topic_request{proto::identifier::numeric(0), 1, "t", {}});
    CHECK(dup_topic.reply().status == 0);
    CHECK(proto::byte_buffer(dup_topic.body.begin(), dup_topic.body.end()) == rejection(2013));
    // Join/leave/store rejections from the state machines: committed too.
    auto join = w.send(proto::join_consumer_group_request{proto::identifier::numeric(0), proto::identifier::numeric(0),
                                                          proto::identifier::numeric(9)});
    CHECK(join.reply().status == 0);
    CHECK(proto::byte_buffer(join.body.begin(), join.body.end()) == rejection(5000));
}

TEST_CASE("G2: CreateTopic applies the options block (compression, expiry, max size)", "[broker][g2]") {
    g2_world w;
    REQUIRE(w.send(g2::create_stream_request{"s", {}}).reply().status == 0);
    proto::byte_buffer u8v = bytes({2}), expiry(8), size(8);
    proto::store_le(expiry.data(), std::uint64_t{60'000'000});
    proto::store_le(size.data(), std::uint64_t{2'000'000'000});
    const auto block = options_block({{"compression_algorithm", {proto::header_kind::uint8, u8v}},
                                      {"message_expiry", {proto::header_kind::uint64, expiry}},
                                      {"max_topic_size", {proto::header_kind::uint64, size}}});
    auto r =
        w.send(g2::create_topic_request{proto::identifier::numeric(0), 2, "t", std::string{proto::as_text(block)}});
    REQUIRE(r.reply().status == 0);
    auto t = w.b.get_topic(ident::num(0), ident::num(0));
    REQUIRE(t);
    CHECK(t->compression == 2);
    CHECK(t->message_expiry == 60'000'000);
    CHECK(t->max_topic_size == 2'000'000'000);
    // An unknown key is refused by name (4041), a wrong kind (4042); nothing is created.
    const auto bad = options_block({{"no_such_key", {proto::header_kind::uint8, u8v}}});
    CHECK(w.send(g2::create_topic_request{proto::identifier::numeric(0), 1, "x", std::string{proto::as_text(bad)}})
              .reply()
              .status == 4041);
    const auto wrong = options_block({{"message_expiry", {proto::header_kind::uint8, u8v}}});
    CHECK(w.send(g2::create_topic_request{proto::identifier::numeric(0), 1, "y", std::string{proto::as_text(wrong)}})
              .reply()
              .status == 4042);
    CHECK(w.b.get_topics(ident::num(0)).size() == 1);
}

TEST_CASE("G2: CreateTopic accepts the completion policies the 0.9.0 SDKs always send", "[broker][g2]") {
    // apache-iggy 0.9.0 (Python, a wheel of the Rust SDK) sends `consumer_offset_durability` and
    // `durability` = "replicated" on every CreateTopic; the server takes "replicated" and
    // "persisted" and refuses any other value (4042).
    g2_world w;
    REQUIRE(w.send(g2::create_stream_request{"s", {}}).reply().status == 0);
    auto text = [](std::string_view v) {
        return proto::byte_buffer(proto::as_bytes(v).begin(), proto::as_bytes(v).end());
    };
    const auto block = options_block({{"consumer_offset_durability", {proto::header_kind::string, text("replicated")}},
                                      {"durability", {proto::header_kind::string, text("persisted")}}});
    auto r =
        w.send(g2::create_topic_request{proto::identifier::numeric(0), 1, "t", std::string{proto::as_text(block)}});
    REQUIRE(r.reply().status == 0);
    CHECK(g2::decode_result_framed(r.body).has_value());
    CHECK(w.b.get_topic(ident::num(0), ident::num(0)));
    const auto bad = options_block({{"durability", {proto::header_kind::string, text("eventually")}}});
    CHECK(w.send(g2::create_topic_request{proto::identifier::numeric(0), 1, "x", std::string{proto::as_text(bad)}})
              .reply()
              .status == 4042);
}

TEST_CASE("G2: a user without rights gets 41 Unauthorized, in the header or committed", "[broker][g2]") {
    // Upstream core/server/src/dispatch/authz.rs: reads (GetStream/GetTopic/...) and the
    // partition plane (poll, send, offsets) are denied before they run, with the status in the
    // reply header and an empty body; metadata operations are gated where they apply, so the
    // rejection is committed (status 0, 41 in the result section).
    g2_world w;
    REQUIRE(w.send(g2::create_stream_request{"s", {}}).reply().status == 0);
    REQUIRE(w.send(g2::create_topic_request{proto::identifier::numeric(0), 1, "t", {}}).reply().status == 0);
    // alice / secret, active, no permissions (the 0.8.0 body, then an empty options block).
    auto body = bytes({5, 'a', 'l', 'i', 'c', 'e', 6, 's', 'e', 'c', 'r', 'e', 't', 1, 0});
    REQUIRE(w.send_raw(admin::code::create_user, body).reply().status == 0);
    g2_session alice{w.b, w.shared, 78, "alice", "secret"};
    const auto s0 = proto::identifier::numeric(0);
    auto denied = [](const g2::server_frame& f) { return f.reply().status == 41 && f.body.empty(); };

    CHECK(denied(alice.send(proto::get_topic_request{s0, s0})));
    CHECK(denied(alice.send(proto::get_stream_request{s0})));
    CHECK(denied(alice.send(proto::poll_messages_request{proto::consumer::single(proto::identifier::numeric(1)), s0, s0,
                                                         0, proto::polling_strategy::first(), 10, false})));
    const std::string payload = "x";
    std::vector<proto::message_fields> msgs(1);
    msgs[0].payload = proto::as_bytes(payload);
    CHECK(denied(alice.send(g2::send_messages_request{s0, s0, proto::partitioning::to_partition(0), msgs})));
    CHECK(denied(
        alice.send(g2::store_offset_request{proto::consumer::single(proto::identifier::numeric(1)), s0, s0, 0, 0, 1})));
    auto create = alice.send(g2::create_stream_request{"mine", {}});
    CHECK(create.reply().status == 0);
    CHECK(proto::byte_buffer(create.body.begin(), create.body.end()) == rejection(41));
    CHECK(w.b.get_streams().size() == 1);
    CHECK(w.b.get_topic(ident::num(0), ident::num(0))->messages_count == 0);
    // An unknown topic is not a permission question: the empty "not found" answer.
    auto missing = alice.send(proto::get_topic_request{s0, proto::identifier::numeric(9)});
    CHECK(missing.reply().status == 0);
    CHECK(missing.body.empty());
    // Root still sees the topic.
    auto t = w.send(proto::get_topic_request{s0, s0});
    CHECK(t.reply().status == 0);
    CHECK_FALSE(t.body.empty());
}

TEST_CASE("G2: CreateConsumerGroup answers the group's details; GetConsumerGroups lists them", "[broker][g2]") {
    // The apache-iggy 0.9.0 SDK decodes ConsumerGroupDetails from the CreateConsumerGroup
    // reply (an empty result fails there with InvalidFormat) and sends GetConsumerGroups (601).
    g2_world w;
    REQUIRE(w.send(g2::create_stream_request{"s", {}}).reply().status == 0);
    REQUIRE(w.send(g2::create_topic_request{proto::identifier::numeric(0), 3, "t", {}}).reply().status == 0);
    const auto s0 = proto::identifier::numeric(0);
    auto r = w.send(proto::create_consumer_group_request{s0, s0, "g"});
    REQUIRE(r.reply().status == 0);
    auto payload = g2::decode_result_framed(r.body);
    REQUIRE(payload.has_value());
    auto g = g2::decode_consumer_group_reply(*payload);
    REQUIRE(g.has_value());
    REQUIRE(g->has_value());
    CHECK((*g)->group.name == "g");
    CHECK((*g)->group.partitions_count == 3);
    CHECK((*g)->group.members_count == 0);
    auto list = w.send(proto::get_consumer_groups_request{s0, s0});
    REQUIRE(list.reply().status == 0);
    proto::byte_buffer expected;
    proto::writer ew{expected};
    REQUIRE(proto::append_consumer_group_info(ew, {0, 3, 0, "g"}).has_value());
    CHECK(proto::byte_buffer(list.body.begin(), list.body.end()) == expected);
}

TEST_CASE("G2: SendMessages confirms the batch with its partition and base offset", "[broker][g2]") {
    g2_world w;
    REQUIRE(w.send(g2::create_stream_request{"s", {}}).reply().status == 0);
    REQUIRE(w.send(g2::create_topic_request{proto::identifier::numeric(0), 3, "t", {}}).reply().status == 0);
    const std::string payload = "hello";
    std::vector<proto::message_fields> msgs(2);
    for (auto& m : msgs) {
        m.payload = proto::as_bytes(payload);
        m.origin_timestamp = 1000;
    }
    for (std::uint64_t base : {0u, 2u}) {
        auto r = w.send(g2::send_messages_request{proto::identifier::numeric(0), proto::identifier::numeric(0),
                                                  proto::partitioning::to_partition(2), msgs});
        REQUIRE(r.reply().status == 0);
        auto c = g2::decode_send_reply(r.body);
        REQUIRE(c.has_value());
        REQUIRE(c->size() == 1);
        CHECK((*c)[0] == g2::send_confirmation{0, 0, 2, base});
    }
}

TEST_CASE("G2: a poll inside a stored batch keeps the stored base, deltas and frame bytes", "[broker][g2]") {
    g2_world w;
    REQUIRE(w.send(g2::create_stream_request{"s", {}}).reply().status == 0);
    REQUIRE(w.send(g2::create_topic_request{proto::identifier::numeric(0), 1, "t", {}}).reply().status == 0);
    const std::string p0 = "zero", p1 = "one", p2 = "two";
    std::vector<proto::message_fields> msgs(3);
    msgs[0].payload = proto::as_bytes(p0);
    msgs[1].payload = proto::as_bytes(p1);
    msgs[2].payload = proto::as_bytes(p2);
    for (std::size_t i = 0; i < 3; ++i) {
        msgs[i].id = 100 + i;
        msgs[i].origin_timestamp = 5000 + 10 * i;
    }
    REQUIRE(w.send(g2::send_messages_request{proto::identifier::numeric(0), proto::identifier::numeric(0),
                                             proto::partitioning::to_partition(0), msgs})
                .reply()
                .status == 0);
    // The producer's frames, as the server stored them.
    auto req = g2::decode_request_frame(w.sent);
    REQUIRE(req.has_value());
    g2::send_messages_batch_view sent;
    REQUIRE(g2::decode_send_messages(req->body, sent).has_value());
    REQUIRE(sent.messages.size() == 3);
    const proto::byte_buffer producer_frames(sent.messages[1].raw.begin(), sent.messages[2].raw.end());

    auto r = w.send(proto::poll_messages_request{proto::consumer::single(proto::identifier::numeric(1)),
                                                 proto::identifier::numeric(0), proto::identifier::numeric(0), 0,
                                                 proto::polling_strategy::at_offset(1), 10, false});
    REQUIRE(r.reply().status == 0);
    // partition u32 | current u64 | count u32 | one record: BatchHeader + frames 1 and 2.
    REQUIRE(r.body.size() == 16 + g2::batch_header_size + producer_frames.size());
    CHECK(proto::load_le<std::uint32_t>(r.body.data() + 12) == 2);
    const auto* rec = r.body.data() + 16;
    CHECK(proto::load_le<std::uint64_t>(rec + 8) == 0);      // base_offset: the stored batch's
    CHECK(proto::load_le<std::uint64_t>(rec + 24) == 5000);  // origin: the batch's smallest
    CHECK(proto::load_le<std::uint32_t>(rec + 48) == 2);     // message_count of the slice
    const proto::byte_buffer polled_frames(rec + g2::batch_header_size, r.body.data() + r.body.size());
    CHECK(polled_frames == producer_frames);  // deltas 1, 2 and the producer's checksums
    // The client-side decoder resolves offsets 1 and 2 and verifies every checksum.
    proto::poll_reply decoded;
    g2::poll_options o;
    o.verify_checksums = true;
    REQUIRE(g2::decode_batch_poll_reply(r.body, decoded, o).has_value());
    REQUIRE(decoded.messages.size() == 2);
    CHECK(decoded.messages[0].offset == 1);
    CHECK(decoded.messages[1].offset == 2);
    CHECK(decoded.messages[1].origin_timestamp == 5020);
}

TEST_CASE("G2: CreateUser (operation 141) is applied and answered, not evicted", "[broker][g2]") {
    g2_world w;
    // 0.8.0 CreateUser body + an empty options block; result-framed UserDetails back.
    auto body = bytes({5, 'a', 'l', 'i', 'c', 'e', 6, 's', 'e', 'c', 'r', 'e', 't', 1, 0});
    auto r = w.send_raw(admin::code::create_user, body);
    REQUIRE_FALSE(r.is_eviction());
    CHECK(r.reply().operation_ == g2::operation::create_user);
    REQUIRE(r.reply().status == 0);
    auto payload = g2::decode_result_framed(r.body);
    REQUIRE(payload.has_value());
    // id 1 | created_at | status 1 | name "alice" | options u32 0 | permissions u32 0
    REQUIRE(payload->size() == 4 + 8 + 1 + 6 + 4 + 4);
    CHECK(proto::load_le<std::uint32_t>(payload->data()) == 1);
    CHECK(w.b.users().get(ident::str("alice")));
    // The same name again: a committed rejection (46 UserAlreadyExists).
    auto dup = w.send_raw(admin::code::create_user, body);
    CHECK(dup.reply().status == 0);
    CHECK(proto::byte_buffer(dup.body.begin(), dup.body.end()) == rejection(46));
}

TEST_CASE("G2: GetClusterMetadata answers the single node after login", "[broker][g2]") {
    g2_world w;
    auto r = w.send_raw(admin::code::get_cluster_metadata, {});
    REQUIRE_FALSE(r.is_eviction());
    REQUIRE(r.reply().status == 0);
    proto::byte_buffer expected;
    proto::writer ew{expected};
    admin::append_cluster_metadata(ew, "single-node", {{"iggy-node", "127.0.0.1", 40001, 8080, 3000, 8092, 0, 0}});
    CHECK(proto::byte_buffer(r.body.begin(), r.body.end()) == expected);
}

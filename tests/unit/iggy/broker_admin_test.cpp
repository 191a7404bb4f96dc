// SPDX-License-Identifier: Apache-2.0
// Unit tests of the Iggy test broker's administrative commands (tests/support/iggy_broker:
// admin_wire, admin_handler, users): the 0.8.0 layouts (literal bytes from the tests of
// core/binary_protocol at tag server-0.8.0 where they exist), codes, permission checks and
// persistence.
#include "common/clock.hpp"
#include "iggy_broker/admin_handler.hpp"
#include "iggy_broker/admin_wire.hpp"
#include "iggy_broker/broker_state.hpp"
#include "iggy_broker/users.hpp"
#include "proto/error.hpp"

#include "catch2_compat.hpp"
#include <unistd.h>

#include <filesystem>
#include <vector>

using namespace iss::broker;
namespace proto = iss::proto;
using proto::server_errc;

namespace {

proto::byte_buffer bytes(std::initializer_list<int> v) {
    proto::byte_buffer b;
    for (int x : v) b.push_back(static_cast<std::byte>(x));
    return b;
}
proto::byte_buffer text(std::string_view s) { return {proto::as_bytes(s).begin(), proto::as_bytes(s).end()}; }
proto::byte_buffer cat(std::initializer_list<proto::byte_buffer> parts) {
    proto::byte_buffer out;
    for (auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}
constexpr std::uint32_t st(server_errc e) { return static_cast<std::uint32_t>(e); }

/// A broker with root iggy/iggy and two logged-in connections: 1 = root, 2 = free for others.
struct world {
    iss::manual_clock clock;
    broker_state b;
    node_endpoints node;
    explicit world(std::filesystem::path dir = {})
        : b{broker_options{"iggy", "iggy", {}, std::chrono::seconds{30}, {}, std::move(dir), &clock, 7}} {
        b.add_client(1, "127.0.0.1:5001");
        b.add_client(2, "127.0.0.1:5002");
        REQUIRE(b.login_user(1, "iggy", "iggy").ok());
    }
    /// Decodes `payload` as command `code` and runs it for `client`.
    admin_reply run(std::uint32_t client, std::uint32_t code, const proto::byte_buffer& payload) {
        auto q = admin::decode_request(code, payload);
        REQUIRE(q.has_value());
        return handle_admin(b, client, *q, node);
    }
};

/// CreateUser payload: name, password, status, no permissions or the given block.
proto::byte_buffer create_user(std::string_view name, std::string_view pw, int status,
                               const std::optional<permissions>& p = std::nullopt) {
    proto::byte_buffer out = cat({bytes({static_cast<int>(name.size())}), text(name),
                                  bytes({static_cast<int>(pw.size())}), text(pw), bytes({status})});
    if (!p) {
        out.push_back(std::byte{0});
        return out;
    }
    proto::byte_buffer block;
    proto::writer bw{block};
    admin::append_permissions(bw, *p);
    proto::writer w{out};
    w.u8(1);
    w.u32(static_cast<std::uint32_t>(block.size()));
    w.bytes(block);
    return out;
}

}  // namespace

TEST_CASE("admin requests decode the 0.8.0 wire layouts", "[broker][admin]") {
    // requests/system/get_client.rs `wire_compat_byte_layout`: client_id 1 = 01 00 00 00.
    auto gc = admin::decode_request(admin::code::get_client, bytes({1, 0, 0, 0}));
    REQUIRE(gc.has_value());
    CHECK(std::get<admin::get_client_request>(*gc).client_id == 1);
    // requests/users/get_user.rs `wire_compat_numeric_byte_layout`: numeric 1 = 01 04 01 00 00 00.
    auto gu = admin::decode_request(admin::code::get_user, bytes({1, 4, 1, 0, 0, 0}));
    REQUIRE(gu.has_value());
    CHECK(std::get<admin::get_user_request>(*gu).user.number() == 1);
    // requests/users/create_user.rs `none_permissions_wire_layout`: 01 'u' 01 'p' 00 00.
    auto cu = admin::decode_request(admin::code::create_user, bytes({1, 'u', 1, 'p', 0, 0}));
    REQUIRE(cu.has_value());
    const auto& c = std::get<admin::create_user_request>(*cu);
    CHECK(c.username == "u");
    CHECK(c.password == "p");
    CHECK(c.status == 0);
    CHECK_FALSE(c.perms);
    // Truncated at every byte: an error (the truncation tests of the same files).
    const auto full = bytes({1, 'u', 1, 'p', 0, 0});
    for (std::size_t i = 0; i < full.size(); ++i)
        CHECK_FALSE(admin::decode_request(admin::code::create_user, proto::bytes_view{full.data(), i}).has_value());
    // Trailing bytes are refused; the empty commands take an empty payload only.
    CHECK_FALSE(admin::decode_request(admin::code::get_client, bytes({1, 0, 0, 0, 9})).has_value());
    CHECK(admin::decode_request(admin::code::get_stats, {}).has_value());
    CHECK_FALSE(admin::decode_request(admin::code::get_stats, bytes({0})).has_value());
    // UpdateTopic: stream | topic | compression | expiry u64 | max u64 | replication | name.
    auto ut = admin::decode_request(
        admin::code::update_topic, cat({bytes({1, 4, 2, 0, 0, 0, 1, 4, 3, 0, 0, 0, 2}), bytes({5, 0, 0, 0, 0, 0, 0, 0}),
                                        bytes({0, 0, 0, 0, 0, 0, 0, 0}), bytes({1, 2, 'n', 'm'})}));
    REQUIRE(ut.has_value());
    const auto& u = std::get<admin::update_topic_request>(*ut);
    CHECK(u.stream.number() == 2);
    CHECK(u.topic.number() == 3);
    CHECK(u.compression == 2);
    CHECK(u.message_expiry == 5);
    CHECK(u.name == "nm");
}

TEST_CASE("permissions block: 0.8.0 layout both ways", "[broker][admin]") {
    // primitives/permissions.rs `roundtrip_global_only`: 10 global bytes + has_streams 0 = 11.
    proto::byte_buffer b;
    proto::writer w{b};
    admin::append_permissions(w, permissions::all());
    CHECK(b == bytes({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0}));
    // Streams and topics chain with has_next bytes.
    permissions p;
    p.global.read_streams = true;
    p.streams.push_back({42, true, false, false, true, true, false, {{7, true, true, false, true}}});
    p.streams.push_back({43, false, false, false, false, false, true, {}});
    b.clear();
    admin::append_permissions(w, p);
    CHECK(b == bytes({0,  0, 0, 0, 0, 1, 0, 0, 0, 0, 1,                             // global, has_streams
                      42, 0, 0, 0, 1, 0, 0, 1, 1, 0, 1, 7, 0, 0, 0, 1, 1, 0, 1, 0,  // stream 42, topic 7
                      1,                                                            // has_next stream
                      43, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0}));                       // stream 43, no topics, end
    proto::reader r{b};
    auto back = admin::read_permissions(r);
    REQUIRE(back.has_value());
    CHECK(*back == p);
    CHECK(r.remaining() == 0);
}

TEST_CASE("users: create, get, list, update, change password, delete as 0.8.0", "[broker][admin]") {
    world w;
    auto created = w.run(1, admin::code::create_user, create_user("test-user", "secret1", 1));
    REQUIRE(created.status == 0);
    // UserDetails: id 1 | created_at | status 1 | name, then u32 0 (no permissions).
    REQUIRE(created.payload.size() == 4 + 8 + 1 + 1 + 9 + 4);
    CHECK(proto::load_le<std::uint32_t>(created.payload.data()) == 1);
    CHECK(created.payload[12] == std::byte{1});
    CHECK(proto::bytes_view{created.payload}.last(4).size() == 4);
    CHECK(proto::load_le<std::uint32_t>(created.payload.data() + created.payload.size() - 4) == 0);

    CHECK(w.run(1, admin::code::create_user, create_user("test-user", "secret1", 1)).status ==
          st(server_errc::user_already_exists));
    CHECK(w.run(1, admin::code::create_user, create_user("ab", "secret1", 1)).status ==
          st(server_errc::invalid_username));
    CHECK(w.run(1, admin::code::create_user, create_user("abc", "pw", 1)).status == st(server_errc::invalid_password));
    CHECK(w.run(1, admin::code::create_user, create_user("abc", "secret", 3)).status ==
          st(server_errc::invalid_user_status));

    // GetUser by name; unknown: empty OK reply.
    auto got = w.run(1, admin::code::get_user, cat({bytes({2, 9}), text("test-user")}));
    CHECK(got.status == 0);
    CHECK(got.payload == created.payload);
    auto none = w.run(1, admin::code::get_user, bytes({1, 4, 9, 0, 0, 0}));
    CHECK(none.status == 0);
    CHECK(none.payload.empty());
    // GetUsers: headers back to back (root 0 "iggy", then 1 "test-user").
    auto all = w.run(1, admin::code::get_users, {});
    CHECK(all.payload.size() == (13 + 1 + 4) + (13 + 1 + 9));

    // Root: cannot be deleted (48) nor re-permissioned (49).
    CHECK(w.run(1, admin::code::delete_user, bytes({1, 4, 0, 0, 0, 0})).status == 48);
    CHECK(w.run(1, admin::code::update_permissions, bytes({1, 4, 0, 0, 0, 0, 0})).status == 49);
    // UpdateUser: status 2 makes the login fail with 47 (inactive).
    CHECK(w.run(1, admin::code::update_user, bytes({1, 4, 1, 0, 0, 0, 0, 1, 2})).status == 0);
    CHECK(w.b.login_user(2, "test-user", "secret1").code == st(server_errc::user_inactive));
    CHECK(w.run(1, admin::code::update_user, bytes({1, 4, 1, 0, 0, 0, 0, 1, 1})).status == 0);
    // ChangePassword: a wrong current password is 42.
    CHECK(w.run(1, admin::code::change_password,
                cat({bytes({1, 4, 1, 0, 0, 0, 5}), text("wrong"), bytes({6}), text("newpw1")}))
              .status == st(server_errc::invalid_credentials));
    CHECK(w.run(1, admin::code::change_password,
                cat({bytes({1, 4, 1, 0, 0, 0, 7}), text("secret1"), bytes({6}), text("newpw1")}))
              .status == 0);
    CHECK(w.b.login_user(2, "test-user", "secret1").code == st(server_errc::invalid_credentials));
    REQUIRE(w.b.login_user(2, "test-user", "newpw1").ok());
    CHECK(w.b.session_user(2) == 1u);
    // DeleteUser logs the user's connections out.
    CHECK(w.run(1, admin::code::delete_user, bytes({1, 4, 1, 0, 0, 0})).status == 0);
    CHECK_FALSE(w.b.logged_in(2));
    CHECK(w.run(1, admin::code::delete_user, bytes({1, 4, 1, 0, 0, 0})).status == st(server_errc::resource_not_found));
}

TEST_CASE("a user without rights gets 41; granted rights follow 0.8.0's inheritance", "[broker][admin]") {
    world w;
    REQUIRE(w.b.create_stream("s").ok());
    REQUIRE(w.b.create_topic(ident::num(0), 1, 1, 0, 0, 1, "t").ok());
    REQUIRE(w.run(1, admin::code::create_user, create_user("nobody", "secret1", 1)).status == 0);
    REQUIRE(w.b.login_user(2, "nobody", "secret1").ok());
    const auto unauthorized = st(server_errc::unauthorized);
    CHECK(w.run(2, admin::code::get_stats, {}).status == unauthorized);
    CHECK(w.run(2, admin::code::get_users, {}).status == unauthorized);
    CHECK(w.run(2, admin::code::get_clients, {}).status == unauthorized);
    CHECK(w.run(2, admin::code::create_user, create_user("other", "secret1", 1)).status == unauthorized);
    CHECK(w.run(2, admin::code::purge_topic, bytes({1, 4, 0, 0, 0, 0, 1, 4, 0, 0, 0, 0})).status == unauthorized);
    // Unknown stream: resolved first, so 1009 before the permission.
    CHECK(w.run(2, admin::code::purge_stream, bytes({1, 4, 9, 0, 0, 0})).status == 1009);
    const ident s = ident::num(0), t = ident::num(0);
    CHECK(authorize(w.b, 2, action::poll_messages, &s, &t) == unauthorized);
    CHECK(authorize(w.b, 2, action::send_messages, &s, &t) == unauthorized);
    CHECK(authorize(w.b, 2, action::get_streams) == unauthorized);
    // Own tokens need no right.
    CHECK(w.run(2, admin::code::create_token, cat({bytes({3}), text("tok"), bytes({0, 0, 0, 0, 0, 0, 0, 0})})).status ==
          0);

    // Stream-level read_topics grants poll on its topics (not send, not other streams).
    permissions p;
    p.streams.push_back({0, false, false, false, true, false, false, {}});
    proto::byte_buffer block;
    proto::writer bw{block};
    admin::append_permissions(bw, p);
    proto::byte_buffer upd = bytes({1, 4, 1, 0, 0, 0, 1});
    proto::writer uw{upd};
    uw.u32(static_cast<std::uint32_t>(block.size()));
    uw.bytes(block);
    REQUIRE(w.run(1, admin::code::update_permissions, upd).status == 0);
    CHECK(authorize(w.b, 2, action::poll_messages, &s, &t) == 0);
    CHECK(authorize(w.b, 2, action::get_topic, &s, &t) == 0);
    CHECK(authorize(w.b, 2, action::send_messages, &s, &t) == unauthorized);
    CHECK(authorize(w.b, 2, action::manage_topic, &s, &t) == unauthorized);
    // Root passes everything.
    CHECK(authorize(w.b, 1, action::manage_stream, &s) == 0);
}

TEST_CASE("personal access tokens: create, list, login, delete, limits", "[broker][admin]") {
    world w;
    auto made = w.run(1, admin::code::create_token, cat({bytes({3}), text("ci1"), bytes({0, 0, 0, 0, 0, 0, 0, 0})}));
    REQUIRE(made.status == 0);
    // RawPersonalAccessToken: u8 len + token.
    const auto len = static_cast<std::size_t>(made.payload[0]);
    REQUIRE(made.payload.size() == 1 + len);
    const std::string token{proto::as_text(proto::bytes_view{made.payload}.subspan(1))};
    CHECK(w.run(1, admin::code::create_token, cat({bytes({3}), text("ci1"), bytes({0, 0, 0, 0, 0, 0, 0, 0})})).status ==
          51);
    CHECK(w.run(1, admin::code::create_token, cat({bytes({2}), text("ab"), bytes({0, 0, 0, 0, 0, 0, 0, 0})})).status ==
          50);
    // Expiry 1800 µs from now: listed with its expiry, expired once the clock passes it.
    auto t2 =
        w.run(1, admin::code::create_token, cat({bytes({3}), text("ci2"), bytes({0x08, 0x07, 0, 0, 0, 0, 0, 0})}));
    REQUIRE(t2.status == 0);
    auto list = w.run(1, admin::code::get_tokens, {});
    REQUIRE(list.payload.size() == 2 * (1 + 3 + 8));
    CHECK(proto::load_le<std::uint64_t>(list.payload.data() + 4) == 0);  // ci1 never expires
    CHECK(proto::load_le<std::uint64_t>(list.payload.data() + 12 + 4) != 0);
    CHECK(w.b.login_token(2, token).value == 0);
    CHECK(w.run(1, admin::code::delete_token, cat({bytes({3}), text("ci1")})).status == 0);
    CHECK(w.run(1, admin::code::delete_token, cat({bytes({3}), text("ci1")})).status ==
          st(server_errc::resource_not_found));
    CHECK(w.b.login_token(2, token).code == st(server_errc::resource_not_found));
}

TEST_CASE("stats, clients and cluster metadata answer in the 0.8.0 layouts", "[broker][admin]") {
    world w;
    w.node.tcp = 41234;
    auto meta = w.run(1, admin::code::get_cluster_metadata, {});
    REQUIRE(meta.status == 0);
    // u32 len "single-node" | count 1 | u32 len "iggy-node" | u32 len ip | tcp quic http ws | role 0 | status 0
    const auto expected =
        cat({bytes({11, 0, 0, 0}), text("single-node"), bytes({1, 0, 0, 0, 9, 0, 0, 0}), text("iggy-node"),
             bytes({9, 0, 0, 0}), text("127.0.0.1"), bytes({0x12, 0xa1, 0x90, 0x1f, 0xb8, 0x0b, 0x9c, 0x1f, 0, 0})});
    CHECK(meta.payload == expected);

    auto clients = w.run(1, admin::code::get_clients, {});
    REQUIRE(clients.status == 0);
    // Two clients: (id | user | transport | u32 len address | groups count), 14-byte addresses.
    CHECK(clients.payload.size() == 2 * (4 + 4 + 1 + 4 + 14 + 4));
    auto one = w.run(1, admin::code::get_client, bytes({1, 0, 0, 0}));
    CHECK(proto::load_le<std::uint32_t>(one.payload.data()) == 1);
    CHECK(proto::load_le<std::uint32_t>(one.payload.data() + 4) == 0);  // root
    auto other = w.run(1, admin::code::get_client, bytes({2, 0, 0, 0}));
    CHECK(proto::load_le<std::uint32_t>(other.payload.data() + 4) == 0xffffffffu);  // not logged in
    CHECK(w.run(1, admin::code::get_client, bytes({0, 0, 0, 0})).status == 101);
    CHECK(w.run(1, admin::code::get_client, bytes({9, 0, 0, 0})).payload.empty());

    REQUIRE(w.b.create_stream("s").ok());
    REQUIRE(w.b.create_topic(ident::num(0), 3, 1, 0, 0, 1, "t").ok());
    auto stats = w.run(1, admin::code::get_stats, {});
    REQUIRE(stats.status == 0);
    const auto* p = stats.payload.data();
    CHECK(proto::load_le<std::uint32_t>(p) == static_cast<std::uint32_t>(::getpid()));
    CHECK(proto::load_le<std::uint32_t>(p + 76) == 1);   // streams_count
    CHECK(proto::load_le<std::uint32_t>(p + 80) == 1);   // topics_count
    CHECK(proto::load_le<std::uint32_t>(p + 84) == 3);   // partitions_count
    CHECK(proto::load_le<std::uint32_t>(p + 100) == 2);  // clients_count
}

TEST_CASE("update and purge of streams and topics", "[broker][admin]") {
    world w;
    REQUIRE(w.b.create_stream("s").ok());
    REQUIRE(w.b.create_stream("other").ok());
    REQUIRE(w.b.create_topic(ident::num(0), 1, 1, 0, 0, 1, "t").ok());
    REQUIRE(w.b.create_topic(ident::num(0), 1, 1, 0, 0, 1, "u").ok());
    CHECK(w.run(1, admin::code::update_stream, cat({bytes({1, 4, 0, 0, 0, 0, 5}), text("other")})).status == 1012);
    CHECK(w.run(1, admin::code::update_stream, cat({bytes({1, 4, 0, 0, 0, 0, 2}), text("s2")})).status == 0);
    CHECK(w.b.get_stream(ident::str("s2")).value);
    // UpdateTopic applies compression, expiry and size; a name taken by another topic: 2013.
    auto ut = [&](std::string_view name) {
        return cat({bytes({1, 4, 0, 0, 0, 0, 1, 4, 0, 0, 0, 0, 2}), bytes({0x40, 0x42, 0x0f, 0, 0, 0, 0, 0}),
                    bytes({0, 0, 0, 0, 0, 0, 0, 0}), bytes({1, static_cast<int>(name.size())}), text(name)});
    };
    CHECK(w.run(1, admin::code::update_topic, ut("u")).status == 2013);
    CHECK(w.run(1, admin::code::update_topic, ut("t2")).status == 0);
    auto t = w.b.get_topic(ident::num(0), ident::num(0));
    REQUIRE(t);
    CHECK(t->name == "t2");
    CHECK(t->compression == 2);
    CHECK(t->message_expiry == 1'000'000);
    // Purge: messages and stored offsets go; the next message is offset 0 again.
    message_in m;
    const std::string payload = "x";
    m.payload = {reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size()};
    std::vector<message_in> two{m, m};
    REQUIRE(w.b.send_messages(ident::num(0), ident::num(0), partitioning{}, two).ok());
    REQUIRE(w.b.store_offset(1, consumer{1, ident::num(1)}, ident::num(0), ident::num(0), 0, 1).ok());
    CHECK(w.run(1, admin::code::purge_topic, bytes({1, 4, 0, 0, 0, 0, 1, 4, 0, 0, 0, 0})).status == 0);
    CHECK(w.b.get_topic(ident::num(0), ident::num(0))->messages_count == 0);
    CHECK_FALSE(w.b.get_offset(consumer{1, ident::num(1)}, ident::num(0), ident::num(0), 0));
    auto again = w.b.send_messages(ident::num(0), ident::num(0), partitioning{}, two);
    REQUIRE(again.ok());
    CHECK(again.value.base_offset == 0);
    CHECK(w.run(1, admin::code::purge_stream, bytes({1, 4, 0, 0, 0, 0})).status == 0);
    CHECK(w.b.get_topic(ident::num(0), ident::num(0))->messages_count == 0);
}

TEST_CASE("users, permissions and tokens persist with --data", "[broker][admin]") {
    auto dir = std::filesystem::temp_directory_path() / ("iggy-broker-admin-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::string token;
    {
        world w{dir};
        REQUIRE(w.b.load().empty());
        permissions p;
        p.global.read_users = true;
        REQUIRE(w.run(1, admin::code::create_user, create_user("keeper", "secret1", 1, p)).status == 0);
        REQUIRE(w.b.login_user(2, "keeper", "secret1").ok());
        auto made =
            w.run(2, admin::code::create_token, cat({bytes({3}), text("tk1"), bytes({0, 0, 0, 0, 0, 0, 0, 0})}));
        REQUIRE(made.status == 0);
        token = std::string{proto::as_text(proto::bytes_view{made.payload}.subspan(1))};
        // Update and purge persist too: the renamed stream, an emptied partition log.
        REQUIRE(w.b.create_stream("s").ok());
        REQUIRE(w.b.create_topic(ident::num(0), 1, 1, 0, 0, 1, "t").ok());
        message_in m;
        const std::string payload = "x";
        m.payload = {reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size()};
        std::vector<message_in> two{m, m};
        REQUIRE(w.b.send_messages(ident::num(0), ident::num(0), partitioning{}, two).ok());
        REQUIRE(w.run(1, admin::code::purge_topic, bytes({1, 4, 0, 0, 0, 0, 1, 4, 0, 0, 0, 0})).status == 0);
        REQUIRE(w.b.send_messages(ident::num(0), ident::num(0), partitioning{}, {&m, 1}).ok());
        REQUIRE(w.run(1, admin::code::update_stream, cat({bytes({1, 4, 0, 0, 0, 0, 2}), text("s2")})).status == 0);
    }
    {
        world w{dir};
        REQUIRE(w.b.load().empty());
        auto u = w.b.users().get(ident::str("keeper"));
        REQUIRE(u);
        CHECK(u->id == 1);
        REQUIRE(u->perms);
        CHECK(u->perms->global.read_users);
        CHECK(w.b.login_token(2, token).value == 1);
        CHECK(w.b.users().tokens(1).size() == 1);
        CHECK(w.b.login_user(2, "keeper", "secret1").ok());
        auto t = w.b.get_topic(ident::str("s2"), ident::str("t"));
        REQUIRE(t);
        CHECK(t->messages_count == 1);  // the one sent after the purge
    }
    std::filesystem::remove_all(dir);
}

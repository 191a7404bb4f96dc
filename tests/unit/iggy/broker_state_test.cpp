// SPDX-License-Identifier: Apache-2.0
// Unit tests of the Iggy test broker's semantic core (tests/support/iggy_broker), against the
// 0.8.0 rules of docs/protocol.md §5-7.
#include "iggy_broker/broker_state.hpp"

#include "catch2_compat.hpp"

#include <cstring>
#include <filesystem>
#include <string>

using namespace iss::broker;
using namespace std::chrono_literals;

namespace {

std::span<const std::uint8_t> bytes(const std::string& s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

std::uint64_t rd64(const std::uint8_t* p) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}
std::uint32_t rd32(const std::uint8_t* p) {
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

/// A decoded message from a poll's chunks.
struct polled {
    std::uint64_t offset, timestamp, origin, id_lo;
    std::string payload, headers;
};
std::vector<polled> decode(const poll_result& r) {
    std::vector<polled> out;
    for (auto c : r.chunks) {
        std::size_t pos = 0;
        while (pos < c.size()) {
            const auto* h = c.data() + pos;
            auto hl = rd32(h + 48), pl = rd32(h + 52);
            out.push_back({rd64(h + 24), rd64(h + 32), rd64(h + 40), rd64(h + 8),
                           std::string(reinterpret_cast<const char*>(h + 64), pl),
                           std::string(reinterpret_cast<const char*>(h + 64 + pl), hl)});
            pos += 64 + pl + hl;
        }
    }
    return out;
}

struct world {
    iss::manual_clock clock;
    broker_state b;
    explicit world(std::chrono::microseconds rebalance = 30s, std::chrono::microseconds heartbeat = 0us,
                   std::filesystem::path dir = {})
        : b{broker_options{"iggy", "iggy", {{"ci", "tok-123"}}, rebalance, heartbeat, std::move(dir), &clock, 7}} {}

    void send(std::uint32_t stream, std::uint32_t topic, std::uint32_t partition, int n,
              const std::string& prefix = "m") {
        std::vector<std::string> payloads;
        for (int i = 0; i < n; ++i) payloads.push_back(prefix + std::to_string(i));
        std::vector<message_in> ms;
        for (auto& p : payloads) ms.push_back(message_in{0, 0, 0, 5, bytes(p), {}});
        auto r = b.send_messages(ident::num(stream), ident::num(topic),
                                 partitioning{partitioning_kind::partition_id, partition, {}}, ms);
        REQUIRE(r.code == 0);
    }
    res<poll_result> poll_group(std::uint32_t client, std::optional<std::uint32_t> p = std::nullopt,
                                std::uint32_t count = 100, bool auto_commit = false) {
        return b.poll_messages(client, consumer{2, ident::num(0)}, ident::num(0), ident::num(0), p,
                               strategy{strategy_kind::next, 0}, count, auto_commit);
    }
    std::vector<std::uint32_t> owned(std::uint32_t member_index) {
        auto g = b.get_group(ident::num(0), ident::num(0), ident::num(0));
        REQUIRE(g);
        REQUIRE(member_index < g->members.size());
        return g->members[member_index].partitions;
    }
    void topic_with_group(std::uint32_t partitions) {
        REQUIRE(b.create_stream("s").ok());
        REQUIRE(b.create_topic(ident::num(0), partitions, 1, 0, 0, 0, "t").ok());
        REQUIRE(b.create_group(ident::num(0), ident::num(0), "g").ok());
    }
};

using parts = std::vector<std::uint32_t>;

}  // namespace

TEST_CASE("ids start at 0 and a create reuses the most recently freed id", "[broker]") {
    world w;
    CHECK(w.b.create_stream("a").value.id == 0);
    CHECK(w.b.create_stream("b").value.id == 1);
    CHECK(w.b.create_stream("c").value.id == 2);
    CHECK(w.b.create_stream("a").code == code::stream_name_already_exists);
    REQUIRE(w.b.delete_stream(ident::num(0)).ok());
    REQUIRE(w.b.delete_stream(ident::str("b")).ok());
    CHECK(w.b.create_stream("d").value.id == 1);
    CHECK(w.b.create_stream("e").value.id == 0);
    auto all = w.b.get_streams();
    REQUIRE(all.size() == 3);
    CHECK(all[0].name == "e");
    CHECK(all[1].name == "d");
    CHECK(all[2].name == "c");
}

TEST_CASE("create topic resolves defaults and validates as 0.8.0", "[broker]") {
    world w;
    REQUIRE(w.b.create_stream("s").ok());
    auto t = w.b.create_topic(ident::str("s"), 3, 1, 0, 0, 0, "t");
    REQUIRE(t.ok());
    CHECK(t.value.id == 0);
    CHECK(t.value.message_expiry == ~std::uint64_t{0});
    CHECK(t.value.max_topic_size == ~std::uint64_t{0});
    CHECK(t.value.replication_factor == 1);
    REQUIRE(t.value.partitions.size() == 3);
    CHECK(t.value.partitions[2].id == 2);
    CHECK(w.b.create_topic(ident::num(0), 1, 1, 0, 0, 0, "t").code == code::topic_name_already_exists);
    CHECK(w.b.create_topic(ident::num(9), 1, 1, 0, 0, 0, "x").code == code::stream_id_not_found);
    CHECK(w.b.create_topic(ident::num(0), 1001, 1, 0, 0, 0, "x").code == code::too_many_partitions);
    CHECK(w.b.create_topic(ident::num(0), 1, 1, 0, 1000, 0, "x").code == code::invalid_topic_size);
    CHECK(w.b.create_topic(ident::num(0), 1, 3, 0, 0, 0, "x").code == code::invalid_command);
    CHECK(w.b.create_topic(ident::num(0), 0, 1, 0, 0, 0, "empty").ok());
    CHECK_FALSE(w.b.get_topic(ident::num(0), ident::str("nope")));
    CHECK_FALSE(w.b.get_stream(ident::str("nope")).value);
    CHECK(w.b.get_topics(ident::num(0)).size() == 2);
}

TEST_CASE("messages get consecutive offsets, server timestamps, ids and checksums", "[broker]") {
    world w;
    REQUIRE(w.b.create_stream("s").ok());
    REQUIRE(w.b.create_topic(ident::num(0), 2, 1, 0, 0, 0, "t").ok());
    w.send(0, 0, 1, 3);
    w.clock.advance(5s);
    w.send(0, 0, 1, 2, "n");
    auto r = w.b.poll_messages(1, consumer{1, ident::num(0)}, ident::num(0), ident::num(0), 1,
                               strategy{strategy_kind::offset, 0}, 100, false);
    REQUIRE(r.ok());
    CHECK(r.value.partition_id == 1);
    CHECK(r.value.current_offset == 4);
    REQUIRE(r.value.count == 5);
    auto ms = decode(r.value);
    REQUIRE(ms.size() == 5);
    for (std::uint64_t i = 0; i < 5; ++i) CHECK(ms[i].offset == i);
    CHECK(ms[0].payload == "m0");
    CHECK(ms[4].payload == "n1");
    CHECK(ms[0].timestamp == ms[2].timestamp);
    CHECK(ms[3].timestamp == ms[0].timestamp + 5'000'000);
    CHECK(ms[0].origin == 5);
    CHECK(ms[0].id_lo != 0);

    // Timestamp, First, Last strategies; beyond the head is an empty success.
    auto ts = w.b.poll_messages(1, consumer{1, ident::num(0)}, ident::num(0), ident::num(0), 1,
                                strategy{strategy_kind::timestamp, ms[3].timestamp}, 100, false);
    CHECK(decode(ts.value).front().offset == 3);
    auto last = w.b.poll_messages(1, consumer{1, ident::num(0)}, ident::num(0), ident::num(0), 1,
                                  strategy{strategy_kind::last, 0}, 2, false);
    CHECK(decode(last.value).front().offset == 3);
    auto beyond = w.b.poll_messages(1, consumer{1, ident::num(0)}, ident::num(0), ident::num(0), 1,
                                    strategy{strategy_kind::offset, 5}, 100, false);
    REQUIRE(beyond.ok());
    CHECK(beyond.value.count == 0);
    CHECK(beyond.value.current_offset == 4);

    // An empty partition answers P | 0 | 0 whatever the strategy.
    auto empty = w.b.poll_messages(1, consumer{1, ident::num(0)}, ident::num(0), ident::num(0), 0,
                                   strategy{strategy_kind::first, 0}, 100, false);
    REQUIRE(empty.ok());
    CHECK(empty.value.count == 0);
    CHECK(empty.value.current_offset == 0);
}

TEST_CASE("stored offset is the last consumed and Next starts after it", "[broker]") {
    world w;
    REQUIRE(w.b.create_stream("s").ok());
    REQUIRE(w.b.create_topic(ident::num(0), 1, 1, 0, 0, 0, "t").ok());
    consumer c{1, ident::str("reader")};
    auto next = [&](std::uint32_t n, bool ac) {
        return w.b.poll_messages(1, c, ident::num(0), ident::num(0), 0, strategy{strategy_kind::next, 0}, n, ac);
    };
    CHECK(w.b.store_offset(1, c, ident::num(0), ident::num(0), 0, 0).code == code::invalid_offset);
    w.send(0, 0, 0, 10);
    CHECK_FALSE(w.b.get_offset(c, ident::num(0), ident::num(0), 0));
    CHECK(decode(next(3, false).value).front().offset == 0);
    CHECK(decode(next(3, true).value).back().offset == 2);
    auto stored = w.b.get_offset(c, ident::num(0), ident::num(0), 0);
    REQUIRE(stored);
    CHECK(stored->stored_offset == 2);
    CHECK(stored->current_offset == 9);
    CHECK(decode(next(3, false).value).front().offset == 3);
    REQUIRE(w.b.store_offset(1, c, ident::num(0), ident::num(0), 0, 9).ok());
    CHECK(next(3, false).value.count == 0);
    CHECK(w.b.store_offset(1, c, ident::num(0), ident::num(0), 0, 10).code == code::invalid_offset);
    REQUIRE(w.b.store_offset(1, c, ident::num(0), ident::num(0), 0, 1).ok());  // may move back
    CHECK(decode(next(1, false).value).front().offset == 2);
    CHECK(w.b.store_offset(1, c, ident::num(0), ident::num(0), 4, 1).code == code::partition_not_found);
    CHECK(w.b.store_offset(1, c, ident::num(3), ident::num(0), 0, 1).code == code::stream_id_not_found);
    CHECK(w.b.store_offset(1, c, ident::num(0), ident::num(3), 0, 1).code == code::topic_id_not_found);
    REQUIRE(w.b.delete_offset(1, c, ident::num(0), ident::num(0), 0).ok());
    CHECK(w.b.delete_offset(1, c, ident::num(0), ident::num(0), 0).code == code::consumer_offset_not_found);
    // "7" and 7 are different consumers.
    REQUIRE(w.b.store_offset(1, consumer{1, ident::num(7)}, ident::num(0), ident::num(0), 0, 4).ok());
    CHECK_FALSE(w.b.get_offset(consumer{1, ident::str("7")}, ident::num(0), ident::num(0), 0));
}

TEST_CASE("balanced partitioning picks one partition per request, round robin", "[broker]") {
    world w;
    REQUIRE(w.b.create_stream("s").ok());
    REQUIRE(w.b.create_topic(ident::num(0), 3, 1, 0, 0, 0, "t").ok());
    std::string p = "x";
    std::vector<message_in> two{{0, 0, 0, 0, bytes(p), {}}, {0, 0, 0, 0, bytes(p), {}}};
    for (int i = 0; i < 4; ++i) REQUIRE(w.b.send_messages(ident::num(0), ident::num(0), partitioning{}, two).ok());
    auto t = w.b.get_topic(ident::num(0), ident::num(0));
    REQUIRE(t);
    CHECK(t->partitions[0].messages_count == 4);
    CHECK(t->partitions[1].messages_count == 2);
    CHECK(t->partitions[2].messages_count == 2);
    CHECK(t->messages_count == 8);
    CHECK(w.b.send_messages(ident::num(0), ident::num(0), partitioning{partitioning_kind::partition_id, 3, {}}, two)
              .code == code::partition_not_found);
    CHECK(w.b.send_messages(ident::num(0), ident::num(0), partitioning{}, {}).code == code::invalid_messages_count);
    CHECK(w.b.send_messages(ident::num(5), ident::num(0), partitioning{}, {}).code == code::invalid_messages_count);
    std::vector<message_in> decreasing{{0, 0, 5, 0, bytes(p), {}}, {0, 0, 4, 0, bytes(p), {}}};
    CHECK(w.b.send_messages(ident::num(0), ident::num(0), partitioning{}, decreasing).code == code::invalid_offset);
    REQUIRE(w.b.create_topic(ident::num(0), 0, 1, 0, 0, 0, "none").ok());
    CHECK(w.b.send_messages(ident::num(0), ident::str("none"), partitioning{}, two).code == code::topic_id_not_found);
}

TEST_CASE("login checks lengths then credentials; tokens answer 20 when unknown", "[broker]") {
    world w;
    w.b.add_client(1, "127.0.0.1:1");
    CHECK_FALSE(w.b.logged_in(1));
    CHECK(w.b.login_user(1, "ig", "iggy").code == code::invalid_username);
    CHECK(w.b.login_user(1, "iggy", "ig").code == code::invalid_password);
    CHECK(w.b.login_user(1, "iggy", "wrong").code == code::invalid_credentials);
    CHECK(w.b.login_user(1, "iggy", "iggy").ok());
    CHECK(w.b.logged_in(1));
    REQUIRE(w.b.logout(1).ok());
    CHECK_FALSE(w.b.logged_in(1));
    CHECK(w.b.login_token(1, "nope").code == code::resource_not_found);
    CHECK(w.b.login_token(1, "tok-123").ok());
    CHECK(w.b.logged_in(1));
}

TEST_CASE("the first member of a group gets every partition; joins take one partition each", "[broker][group]") {
    world w;
    w.topic_with_group(6);
    for (std::uint32_t c = 1; c <= 5; ++c) w.b.add_client(c, "c" + std::to_string(c));
    REQUIRE(w.b.join_group(1, ident::num(0), ident::num(0), ident::str("g")).ok());
    CHECK(w.owned(0) == parts{0, 1, 2, 3, 4, 5});
    // Nobody polled: each revocation completes at once, at the join.
    REQUIRE(w.b.join_group(2, ident::num(0), ident::num(0), ident::num(0)).ok());
    CHECK(w.owned(0) == parts{0, 1, 2, 3, 4});
    CHECK(w.owned(1) == parts{5});
    REQUIRE(w.b.join_group(3, ident::num(0), ident::num(0), ident::num(0)).ok());
    CHECK(w.owned(0) == parts{0, 1, 2, 3});
    CHECK(w.owned(2) == parts{4});
    REQUIRE(w.b.join_group(4, ident::num(0), ident::num(0), ident::num(0)).ok());
    REQUIRE(w.b.join_group(5, ident::num(0), ident::num(0), ident::num(0)).ok());
    CHECK(w.owned(0) == parts{0, 1});
    CHECK(w.owned(3) == parts{3});
    CHECK(w.owned(4) == parts{2});
    // Joining again is a no-op.
    REQUIRE(w.b.join_group(5, ident::num(0), ident::num(0), ident::num(0)).ok());
    CHECK(w.b.get_group(ident::num(0), ident::num(0), ident::num(0))->members_count == 5);
    auto me = w.b.get_me(3);
    REQUIRE(me.ok());
    REQUIRE(me.value.groups.size() == 1);
    CHECK(me.value.groups[0] == std::array<std::uint32_t, 3>{0, 0, 0});
}

TEST_CASE("a pending revocation waits for the commit of the polled range", "[broker][group]") {
    world w;
    w.topic_with_group(2);
    w.send(0, 0, 0, 3);
    w.send(0, 0, 1, 3);
    w.b.add_client(1, "a");
    w.b.add_client(2, "b");
    REQUIRE(w.b.join_group(1, ident::num(0), ident::num(0), ident::num(0)).ok());
    // Member 1 polls both partitions (round robin) without committing.
    auto r0 = w.poll_group(1);
    auto r1 = w.poll_group(1);
    REQUIRE(r0.ok());
    CHECK(r0.value.partition_id == 0);
    CHECK(r1.value.partition_id == 1);
    CHECK(r1.value.count == 3);
    REQUIRE(w.b.join_group(2, ident::num(0), ident::num(0), ident::num(0)).ok());
    // Partition 1 is pending revocation: still owned by member 1, the joiner owns nothing yet.
    CHECK(w.owned(0) == parts{0, 1});
    CHECK(w.owned(1).empty());
    auto nothing = w.poll_group(2);
    REQUIRE(nothing.ok());
    CHECK(nothing.value.partition_id == 0);
    CHECK(nothing.value.count == 0);
    CHECK(w.poll_group(2, 1).value.count == 0);
    CHECK(w.b.store_offset(2, consumer{2, ident::num(0)}, ident::num(0), ident::num(0), 1, 2).code ==
          code::not_resolved_consumer);
    // The old owner's round robin skips the pending partition but may still poll it explicitly.
    CHECK(w.poll_group(1).value.partition_id == 0);
    CHECK(w.poll_group(1).value.partition_id == 0);
    CHECK(w.poll_group(1, 1).value.partition_id == 1);
    // Storing below the polled offset does not complete; storing it does.
    REQUIRE(w.b.store_offset(1, consumer{2, ident::num(0)}, ident::num(0), ident::num(0), 1, 1).ok());
    CHECK(w.owned(0) == parts{0, 1});
    REQUIRE(w.b.store_offset(1, consumer{2, ident::num(0)}, ident::num(0), ident::num(0), 1, 2).ok());
    CHECK(w.owned(0) == parts{0});
    CHECK(w.owned(1) == parts{1});
    // The new owner resumes after the committed offset.
    auto resumed = w.poll_group(2);
    CHECK(resumed.value.partition_id == 1);
    CHECK(resumed.value.count == 0);
    w.send(0, 0, 1, 1);
    CHECK(decode(w.poll_group(2).value).front().offset == 3);
    // The old owner can no longer store there.
    CHECK(w.b.store_offset(1, consumer{2, ident::num(0)}, ident::num(0), ident::num(0), 1, 2).code ==
          code::not_resolved_consumer);
}

TEST_CASE("a pending revocation is forced after the rebalance timeout", "[broker][group]") {
    world w{2s};
    w.topic_with_group(2);
    w.send(0, 0, 1, 3);
    w.b.add_client(1, "a");
    w.b.add_client(2, "b");
    REQUIRE(w.b.join_group(1, ident::num(0), ident::num(0), ident::num(0)).ok());
    (void)w.poll_group(1, 1);
    REQUIRE(w.b.join_group(2, ident::num(0), ident::num(0), ident::num(0)).ok());
    CHECK(w.owned(1).empty());
    w.clock.advance(1s);
    w.b.tick();
    CHECK(w.owned(1).empty());
    w.clock.advance(1s);
    w.b.tick();
    CHECK(w.owned(0) == parts{0});
    CHECK(w.owned(1) == parts{1});
}

TEST_CASE("auto_commit completes a revocation on the next poll of the old owner", "[broker][group]") {
    world w;
    w.topic_with_group(2);
    w.send(0, 0, 1, 4);
    w.b.add_client(1, "a");
    w.b.add_client(2, "b");
    REQUIRE(w.b.join_group(1, ident::num(0), ident::num(0), ident::num(0)).ok());
    REQUIRE(w.poll_group(1, 1, 2, false).value.count == 2);
    REQUIRE(w.b.join_group(2, ident::num(0), ident::num(0), ident::num(0)).ok());
    CHECK(w.owned(1).empty());
    // Next with nothing stored re-reads 0..1 and auto-commits 1 = the last polled offset: complete.
    REQUIRE(w.poll_group(1, 1, 2, true).value.count == 2);
    CHECK(w.owned(1) == parts{1});
}

TEST_CASE("leave, disconnect and partition changes run a full rebalance", "[broker][group]") {
    world w;
    w.topic_with_group(4);
    for (std::uint32_t c = 1; c <= 3; ++c) w.b.add_client(c, "c" + std::to_string(c));
    for (std::uint32_t c = 1; c <= 3; ++c) REQUIRE(w.b.join_group(c, ident::num(0), ident::num(0), ident::num(0)).ok());
    CHECK(w.owned(0) == parts{0, 1});
    CHECK(w.owned(1) == parts{3});
    CHECK(w.owned(2) == parts{2});
    REQUIRE(w.b.leave_group(2, ident::num(0), ident::num(0), ident::num(0)).ok());
    CHECK(w.b.leave_group(2, ident::num(0), ident::num(0), ident::num(0)).code ==
          code::consumer_group_member_not_found);
    CHECK(w.owned(0) == parts{0, 2});
    CHECK(w.owned(1) == parts{1, 3});
    w.b.remove_client(1);
    CHECK(w.owned(0) == parts{0, 1, 2, 3});
    // A rejoin takes the freed slot 0 (slot order is not join order) and the highest id + 1.
    w.b.add_client(4, "c4");
    REQUIRE(w.b.join_group(4, ident::num(0), ident::num(0), ident::num(0)).ok());
    auto g = w.b.get_group(ident::num(0), ident::num(0), ident::num(0));
    REQUIRE(g->members.size() == 2);
    CHECK(g->members[0].id == 3);
    CHECK(g->members[1].id == 2);
    REQUIRE(w.b.create_partitions(ident::num(0), ident::num(0), 2).ok());
    CHECK(w.owned(0) == parts{0, 2, 4});
    CHECK(w.owned(1) == parts{1, 3, 5});
    REQUIRE(w.b.delete_partitions(ident::num(0), ident::num(0), 5).ok());
    CHECK(w.owned(0) == parts{0});
    CHECK(w.owned(1).empty());
    CHECK(w.b.delete_partitions(ident::num(0), ident::num(0), 2).code == code::invalid_partitions_count);
}

TEST_CASE("group commands give 30, 5000, 5006 and 3022 where 0.8.0 does", "[broker][group]") {
    world w{30s, 5s};
    w.topic_with_group(1);
    w.send(0, 0, 0, 2);
    w.b.add_client(1, "a");
    w.b.add_client(2, "b");
    REQUIRE(w.b.login_user(2, "iggy", "iggy").ok());
    CHECK(w.poll_group(1).code == code::consumer_group_member_not_found);
    CHECK(w.b.poll_messages(1, consumer{2, ident::str("zz")}, ident::num(0), ident::num(0), std::nullopt, strategy{}, 1,
                            false)
              .code == code::consumer_group_id_not_found);
    CHECK(w.b.join_group(1, ident::num(0), ident::num(0), ident::str("zz")).code == code::consumer_group_id_not_found);
    CHECK(w.b.create_group(ident::num(0), ident::num(0), "g").code == code::consumer_group_name_already_exists);
    REQUIRE(w.b.join_group(1, ident::num(0), ident::num(0), ident::num(0)).ok());
    REQUIRE(w.b.join_group(2, ident::num(0), ident::num(0), ident::num(0)).ok());
    CHECK(w.b.store_offset(2, consumer{2, ident::num(0)}, ident::num(0), ident::num(0), std::nullopt, 0).code ==
          code::not_resolved_consumer);
    CHECK(w.b.store_offset(1, consumer{2, ident::num(0)}, ident::num(0), ident::num(0), std::nullopt, 5).code ==
          code::invalid_offset);
    // Heartbeat expiry: only Ping refreshes; the removed client gets 30, GetMe 100.
    w.clock.advance(4s);
    w.b.ping(1);
    w.clock.advance(3s);
    auto removed = w.b.tick();
    CHECK(removed == std::vector<std::uint32_t>{2});
    CHECK(w.poll_group(2).code == code::stale_client);
    CHECK(w.b.get_me(2).code == code::client_not_found);
    CHECK(w.b.logged_in(2));  // the connection stays open and logged in for other commands
    CHECK(w.poll_group(1).ok());
    CHECK(w.owned(0) == parts{0});
}

TEST_CASE("deleting a group drops its offsets", "[broker][group]") {
    world w;
    w.topic_with_group(1);
    w.send(0, 0, 0, 2);
    w.b.add_client(1, "a");
    REQUIRE(w.b.join_group(1, ident::num(0), ident::num(0), ident::num(0)).ok());
    REQUIRE(w.b.store_offset(1, consumer{2, ident::num(0)}, ident::num(0), ident::num(0), 0, 1).ok());
    CHECK(w.b.get_offset(consumer{2, ident::str("g")}, ident::num(0), ident::num(0), std::nullopt)->stored_offset == 1);
    REQUIRE(w.b.delete_group(ident::num(0), ident::num(0), ident::num(0)).ok());
    REQUIRE(w.b.create_group(ident::num(0), ident::num(0), "g").value.id == 0);
    CHECK_FALSE(w.b.get_offset(consumer{2, ident::num(0)}, ident::num(0), ident::num(0), 0));
    CHECK(w.b.get_me(1).value.groups.empty());
}

TEST_CASE("state persists across restarts with a data directory", "[broker]") {
    auto dir = std::filesystem::temp_directory_path() / ("iggy-broker-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    {
        world w{30s, 0us, dir};
        REQUIRE(w.b.load().empty());
        w.topic_with_group(2);
        w.send(0, 0, 1, 5);
        REQUIRE(w.b.store_offset(1, consumer{1, ident::num(3)}, ident::num(0), ident::num(0), 1, 2).ok());
        w.b.add_client(1, "a");
        REQUIRE(w.b.join_group(1, ident::num(0), ident::num(0), ident::num(0)).ok());
        REQUIRE(w.b.store_offset(1, consumer{2, ident::num(0)}, ident::num(0), ident::num(0), 1, 4).ok());
    }
    {
        world w{30s, 0us, dir};
        REQUIRE(w.b.load().empty());
        auto t = w.b.get_topic(ident::str("s"), ident::str("t"));
        REQUIRE(t);
        CHECK(t->partitions[1].messages_count == 5);
        CHECK(w.b.get_offset(consumer{1, ident::num(3)}, ident::num(0), ident::num(0), 1)->stored_offset == 2);
        CHECK(w.b.get_offset(consumer{2, ident::num(0)}, ident::num(0), ident::num(0), 1)->stored_offset == 4);
        auto g = w.b.get_group(ident::num(0), ident::num(0), ident::num(0));
        REQUIRE(g);
        CHECK(g->members.empty());
        w.send(0, 0, 1, 1, "after");
        auto r = w.b.poll_messages(1, consumer{1, ident::num(0)}, ident::num(0), ident::num(0), 1,
                                   strategy{strategy_kind::first, 0}, 100, false);
        auto ms = decode(r.value);
        REQUIRE(ms.size() == 6);
        CHECK(ms[5].offset == 5);
        CHECK(ms[5].payload == "after0");
        CHECK(ms[0].payload == "m0");
    }
    std::filesystem::remove_all(dir);
}

TEST_CASE("every membership change is reported (a join, a leave, a gone client); a join again is not one",
          "[broker][group]") {
    iss::manual_clock clock;
    std::vector<std::string> lines;
    broker_options o{"iggy", "iggy", {}, 30s, 0us, {}, &clock, 7};
    o.on_membership = [&](const std::string& l) { lines.push_back(l); };
    broker_state b{o};
    REQUIRE(b.create_stream("s").ok());
    REQUIRE(b.create_topic(ident::num(0), 2, 1, 0, 0, 0, "t").ok());
    REQUIRE(b.create_group(ident::num(0), ident::num(0), "g").ok());
    b.add_client(1, "c1");
    b.add_client(2, "c2");
    REQUIRE(b.join_group(1, ident::num(0), ident::num(0), ident::str("g")).ok());
    REQUIRE(b.join_group(1, ident::num(0), ident::num(0), ident::str("g")).ok());  // a no-op, as 0.8.0
    REQUIRE(b.join_group(2, ident::num(0), ident::num(0), ident::str("g")).ok());
    REQUIRE(b.leave_group(2, ident::num(0), ident::num(0), ident::str("g")).ok());
    b.remove_client(1);
    CHECK(lines == std::vector<std::string>{"consumer group g of topic t: client 1 joined (a rebalance)",
                                            "consumer group g of topic t: client 2 joined (a rebalance)",
                                            "consumer group g of topic t: client 2 left (a rebalance)",
                                            "consumer group g of topic t: client 1 left (a rebalance)"});
}

// SPDX-License-Identifier: Apache-2.0
// Integration tests (labels integration;iggy): lib/iggy's client against iggy-test-broker
// (started here as a process on port 0), captured SDK requests replayed against the broker,
// and the iggy-produce CLI. Semantics checked: docs/protocol.md §3-7 (server 0.8.0).

#include "common/log.hpp"
#include "iggy/client.hpp"
#include "proto/commands.hpp"
#include "proto/poll.hpp"
#include "tests/integration/broker_child.hpp"
#include "tests/support/clock_sleeper.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>

#include "catch2_compat.hpp"
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace net = boost::asio;
namespace fs = std::filesystem;
using namespace iss;
using namespace std::chrono_literals;
using iggy::consumer;
using iggy::identifier;
using iggy::partitioning;
using iggy::polling_strategy;

namespace {

/// iggy-test-broker as a child process; reads `listening on HOST:PORT` from its stdout.
class broker_process {
public:
    explicit broker_process(std::vector<std::string> args = {}) : args_{std::move(args)} { start(0); }
    ~broker_process() {
        if (pid_ > 0) stop(SIGKILL);
    }
    broker_process(const broker_process&) = delete;
    broker_process& operator=(const broker_process&) = delete;

    /// Starts on `port` (0 = a free port picked by the OS).
    void start(std::uint16_t port) {
        const auto child = iss::test::spawn_broker(IGGY_TEST_BROKER, port, args_);
        pid_ = child.pid;
        port_ = child.port;
        REQUIRE(port_ != 0);
    }
    void stop(int sig = SIGTERM) {
        ::kill(pid_, sig);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
    }
    void restart() {
        stop(SIGKILL);
        start(port_);
    }
    [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
    /// Sends a test control (SIGUSR1: expire the group members; SIGUSR2: drop memberships).
    void control(int sig) const { ::kill(pid_, sig); }

private:
    std::vector<std::string> args_;
    pid_t pid_ = -1;
    std::uint16_t port_ = 0;
};

iggy::client_options options_for(const broker_process& b) {
    iggy::client_options o;
    o.port = b.port();
    o.password = iggy_password{"iggy"};
    o.reconnect_backoff = {std::chrono::milliseconds{10}, std::chrono::milliseconds{200}};
    o.request_timeout = std::chrono::milliseconds{10000};
    o.connect_timeout = std::chrono::milliseconds{5000};
    return o;
}

/// Runs a coroutine (a lambda returning net::awaitable<T>) to completion on a fresh io_context.
template <class F>
auto run(F&& f) {
    net::io_context ioc{1};
    auto fut = net::co_spawn(ioc, f(ioc.get_executor()), net::use_future);
    ioc.run();
    return fut.get();
}

net::awaitable<void> sleep_for(std::chrono::milliseconds d) {
    net::steady_timer t{co_await net::this_coro::executor, d};
    co_await t.async_wait(net::use_awaitable);
}

template <class T>
T must(result<T> r, std::string_view what) {
    INFO(what << ": " << (r ? std::string{} : iggy::describe(r.error())));
    REQUIRE(r.has_value());
    return std::move(*r);
}
inline void must(result<void> r, std::string_view what) {
    INFO(what << ": " << (r ? std::string{} : iggy::describe(r.error())));
    REQUIRE(r.has_value());
}

std::string text(proto::bytes_view b) { return std::string{proto::as_text(b)}; }

fs::path temp_dir(std::string_view name) {
    auto d = fs::temp_directory_path() / fmt::format("iggy-it-{}-{}", name, ::getpid());
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

/// The partition sets of a group's members, in the server's slot order.
net::awaitable<std::vector<std::vector<std::uint32_t>>> members_of(iggy::client& c, identifier s, identifier t,
                                                                   identifier g) {
    auto r = co_await c.get_consumer_group(std::move(s), std::move(t), std::move(g));
    auto d = must(std::move(r), "get group");
    REQUIRE(d.has_value());
    std::vector<std::vector<std::uint32_t>> out;
    for (auto& m : d->members) out.push_back(m.partitions);
    co_return out;
}

using parts = std::vector<std::uint32_t>;

}  // namespace

TEST_CASE("client creates a stream and a topic and reads them back", "[client]") {
    broker_process broker;
    run([&](auto ex) -> net::awaitable<void> {
        iggy::client c{ex, options_for(broker)};
        must(co_await c.connect(), "connect");
        CHECK(c.generation() == 1);
        auto missing = must(co_await c.get_stream(identifier::named("orders")), "get missing stream");
        CHECK_FALSE(missing.has_value());
        auto s = must(co_await c.create_stream("orders"), "create stream");
        CHECK(s.stream.id == 0);
        auto t = must(co_await c.create_topic(identifier::named("orders"), "eu", 8), "create topic");
        CHECK(t.topic.id == 0);
        CHECK(t.partitions.size() == 8);
        auto again = co_await c.create_stream("orders");
        REQUIRE_FALSE(again.has_value());
        CHECK(iggy::server_code(again.error()) == 1012u);
        CHECK(iggy::classify(again.error()) == iggy::outcome::fail);
        auto got = must(co_await c.get_topic(identifier::numeric(0), identifier::named("eu")), "get topic");
        REQUIRE(got.has_value());
        CHECK(got->topic.name == "eu");
        CHECK(got->topic.partitions_count == 8);
        CHECK(got->topic.message_expiry == ~std::uint64_t{0});
        auto no_topic = must(co_await c.get_topic(identifier::numeric(0), identifier::named("us")), "get topic");
        CHECK_FALSE(no_topic.has_value());
        auto poll_missing = co_await c.poll_messages(consumer::single(identifier::numeric(1)), identifier::numeric(9),
                                                     identifier::numeric(0), 0, polling_strategy::first(), 10, false);
        REQUIRE_FALSE(poll_missing.has_value());
        CHECK(iggy::server_code(poll_missing.error()) == 1009u);
        CHECK(iggy::classify(poll_missing.error()) == iggy::outcome::not_found);
        auto me = must(co_await c.get_me(), "get me");
        CHECK(me.address.rfind("127.0.0.1:", 0) == 0);
        must(co_await c.ping(), "ping");
        co_await c.close();
        auto closed = co_await c.ping();
        REQUIRE_FALSE(closed.has_value());
        CHECK(closed.error() == iggy::errc::closed);
    });
}

TEST_CASE("100 000 messages over 8 partitions come back in order with offsets, ids, headers and payloads", "[bulk]") {
    broker_process broker;
    constexpr std::uint32_t partitions = 8;
    constexpr std::uint64_t total = 100'000;
    constexpr std::uint64_t batch = 500;  // 200 batches, 25 per partition
    run([&](auto ex) -> net::awaitable<void> {
        iggy::client c{ex, options_for(broker)};
        must(co_await c.create_stream("bulk"), "create stream");
        must(co_await c.create_topic(identifier::named("bulk"), "t", partitions), "create topic");
        std::vector<std::string> payloads;
        std::vector<proto::byte_buffer> headers;
        std::vector<iggy::outgoing_message> out;
        for (std::uint64_t b = 0; b < total / batch; ++b) {
            payloads.clear();
            headers.clear();
            out.clear();
            for (std::uint64_t i = b * batch; i < (b + 1) * batch; ++i) {
                payloads.push_back(fmt::format(R"({{"seq":{},"body":"{}"}})", i, std::string(i % 50, 'x')));
                proto::byte_buffer h;
                const auto seq = std::to_string(i);
                REQUIRE(proto::append_user_header(h, proto::header_kind::string, proto::as_bytes("seq"),
                                                  proto::header_kind::string, proto::as_bytes(seq))
                            .has_value());
                std::uint64_t v = i * 3;
                REQUIRE(proto::append_user_header(h, proto::header_kind::string, proto::as_bytes("triple"),
                                                  proto::header_kind::uint64,
                                                  proto::bytes_view{reinterpret_cast<const std::byte*>(&v), sizeof v})
                            .has_value());
                headers.push_back(std::move(h));
            }
            for (std::uint64_t k = 0; k < batch; ++k)
                out.push_back({static_cast<proto::u128>(b * batch + k + 1) << 64 | 7, 1'700'000'000'000'000 + k,
                               proto::as_bytes(payloads[k]), headers[k]});
            must(co_await c.send_messages(identifier::named("bulk"), identifier::named("t"),
                                          partitioning::to_partition(static_cast<std::uint32_t>(b % partitions)), out),
                 "send");
        }
        std::uint64_t seen = 0;
        std::vector<proto::header_view> hv;
        for (std::uint32_t p = 0; p < partitions; ++p) {
            std::uint64_t next = 0;
            for (;;) {
                auto r = must(
                    co_await c.poll_messages(consumer::single(identifier::numeric(1)), identifier::named("bulk"),
                                             identifier::named("t"), p, polling_strategy::at_offset(next), 1000, false),
                    "poll");
                CHECK(r.partition_id == p);
                if (r.messages.empty()) break;
                for (const auto& m : r.messages) {
                    REQUIRE(m.offset == next);
                    // Partition p holds batches p, p+8, p+16...: offset o is message
                    // (o / batch * 8 + p) * batch + o % batch.
                    const std::uint64_t i = (next / batch * partitions + p) * batch + next % batch;
                    REQUIRE(m.id == (static_cast<proto::u128>(i + 1) << 64 | 7));
                    REQUIRE(text(m.payload) == fmt::format(R"({{"seq":{},"body":"{}"}})", i, std::string(i % 50, 'x')));
                    REQUIRE(m.checksum_ok());
                    REQUIRE(m.origin_timestamp == 1'700'000'000'000'000 + i % batch);
                    REQUIRE(proto::decode_user_headers(m.user_headers, hv).has_value());
                    REQUIRE(hv.size() == 2);
                    REQUIRE(hv[0].key_text() == "seq");
                    REQUIRE(hv[0].value_text() == std::to_string(i));
                    std::uint64_t v = 0;
                    std::memcpy(&v, hv[1].value.data(), sizeof v);
                    REQUIRE(v == i * 3);
                    ++next;
                    ++seen;
                }
            }
            CHECK(next == total / partitions);
        }
        CHECK(seen == total);
    });
}

TEST_CASE("a poll batch keeps the buffer its reply was read into: its bytes outlive later polls", "[client][owner]") {
    broker_process broker;
    run([&](auto ex) -> net::awaitable<void> {
        iggy::client c{ex, options_for(broker)};
        must(co_await c.create_stream("own"), "create stream");
        must(co_await c.create_topic(identifier::named("own"), "t", 1), "create topic");
        std::vector<std::string> payloads;
        std::vector<iggy::outgoing_message> out;
        for (int i = 0; i < 40; ++i)
            payloads.push_back(fmt::format("message-{}-{}", i, std::string(100, static_cast<char>('a' + i % 26))));
        for (const auto& p : payloads) out.push_back({0, 0, proto::as_bytes(p), {}});
        must(co_await c.send_messages(identifier::named("own"), identifier::named("t"), partitioning::to_partition(0),
                                      out),
             "send");
        // Four batches held at once, as the pipeline holds a batch it feeds and one read ahead.
        struct held {
            std::vector<proto::message_view> views;
            std::shared_ptr<const void> owner;
        };
        std::vector<held> batches;
        for (std::uint64_t from = 0; from < 40; from += 10) {
            auto r =
                must(co_await c.poll_messages(consumer::single(identifier::numeric(1)), identifier::named("own"),
                                              identifier::named("t"), 0, polling_strategy::at_offset(from), 10, false),
                     "poll");
            REQUIRE(r.messages.size() == 10);
            REQUIRE(r.owner);
            batches.push_back({{r.messages.begin(), r.messages.end()}, r.owner});
        }
        for (std::size_t b = 0; b < batches.size(); ++b)
            for (std::size_t i = 0; i < 10; ++i) CHECK(text(batches[b].views[i].payload) == payloads[b * 10 + i]);
        // Let them go (their buffers are kept for the next polls), then poll again.
        batches.clear();
        auto again =
            must(co_await c.poll_messages(consumer::single(identifier::numeric(1)), identifier::named("own"),
                                          identifier::named("t"), 0, polling_strategy::at_offset(35), 10, false),
                 "poll");
        REQUIRE(again.messages.size() == 5);
        CHECK(text(again.messages[4].payload) == payloads[39]);
        auto none =
            must(co_await c.poll_messages(consumer::single(identifier::numeric(1)), identifier::named("own"),
                                          identifier::named("t"), 0, polling_strategy::at_offset(40), 10, false),
                 "poll");
        CHECK(none.messages.empty());
    });
}

TEST_CASE("stored offsets are the last consumed; Next resumes after them", "[offsets]") {
    broker_process broker;
    run([&](auto ex) -> net::awaitable<void> {
        iggy::client c{ex, options_for(broker)};
        must(co_await c.create_stream("s"), "create stream");
        must(co_await c.create_topic(identifier::numeric(0), "t", 2), "create topic");
        std::vector<std::string> ps{"a", "b", "c", "d", "e"};
        std::vector<iggy::outgoing_message> out;
        for (auto& p : ps) out.push_back({0, 0, proto::as_bytes(p), {}});
        must(co_await c.send_messages(identifier::numeric(0), identifier::numeric(0), partitioning::to_partition(1),
                                      out),
             "send");
        const auto reader = consumer::single(identifier::named("reader"));
        auto none = must(co_await c.get_offset(reader, identifier::numeric(0), identifier::numeric(0), 1), "get");
        CHECK_FALSE(none.has_value());
        auto first = must(co_await c.poll_messages(reader, identifier::numeric(0), identifier::numeric(0), 1,
                                                   polling_strategy::next(), 2, false),
                          "poll");
        REQUIRE(first.messages.size() == 2);
        CHECK(first.messages[1].offset == 1);
        must(co_await c.store_offset(reader, identifier::numeric(0), identifier::numeric(0), 1, 1), "store");
        auto stored = must(co_await c.get_offset(reader, identifier::numeric(0), identifier::numeric(0), 1), "get");
        REQUIRE(stored.has_value());
        CHECK(stored->stored_offset == 1);
        CHECK(stored->current_offset == 4);
        auto next = must(co_await c.poll_messages(reader, identifier::numeric(0), identifier::numeric(0), 1,
                                                  polling_strategy::next(), 10, false),
                         "poll");
        REQUIRE(next.messages.size() == 3);
        CHECK(next.messages[0].offset == 2);
        CHECK(text(next.messages[0].payload) == "c");
        auto too_far = co_await c.store_offset(reader, identifier::numeric(0), identifier::numeric(0), 1, 5);
        REQUIRE_FALSE(too_far.has_value());
        CHECK(iggy::server_code(too_far.error()) == 4100u);
        auto empty = co_await c.store_offset(reader, identifier::numeric(0), identifier::numeric(0), 0, 0);
        REQUIRE_FALSE(empty.has_value());
        CHECK(iggy::server_code(empty.error()) == 4100u);
        auto no_partition = co_await c.store_offset(reader, identifier::numeric(0), identifier::numeric(0), 7, 0);
        REQUIRE_FALSE(no_partition.has_value());
        CHECK(iggy::classify(no_partition.error()) == iggy::outcome::not_found);
        must(co_await c.delete_offset(reader, identifier::numeric(0), identifier::numeric(0), 1), "delete");
        auto gone = co_await c.delete_offset(reader, identifier::numeric(0), identifier::numeric(0), 1);
        REQUIRE_FALSE(gone.has_value());
        CHECK(iggy::server_code(gone.error()) == 3021u);
        // Auto-commit stores the last polled offset during the poll.
        auto ac = must(co_await c.poll_messages(reader, identifier::numeric(0), identifier::numeric(0), 1,
                                                polling_strategy::first(), 3, true),
                       "poll");
        CHECK(ac.messages.size() == 3);
        stored = must(co_await c.get_offset(reader, identifier::numeric(0), identifier::numeric(0), 1), "get");
        REQUIRE(stored.has_value());
        CHECK(stored->stored_offset == 2);
    });
}

TEST_CASE("two members of a group get disjoint partitions covering the topic", "[group]") {
    broker_process broker;
    run([&](auto ex) -> net::awaitable<void> {
        iggy::client a{ex, options_for(broker)};
        iggy::client b{ex, options_for(broker)};
        const auto s = identifier::named("s"), t = identifier::named("t"), g = identifier::named("sink");
        must(co_await a.create_stream("s"), "create stream");
        must(co_await a.create_topic(s, "t", 8), "create topic");
        auto joined = co_await a.join_consumer_group(s, t, g);
        REQUIRE_FALSE(joined.has_value());
        CHECK(iggy::server_code(joined.error()) == 5000u);
        must(co_await a.create_consumer_group(s, t, "sink"), "create group");
        must(co_await a.join_consumer_group(s, t, g), "join a");
        must(co_await b.join_consumer_group(s, t, g), "join b");
        auto members = co_await members_of(a, s, t, g);
        REQUIRE(members.size() == 2);
        std::set<std::uint32_t> all;
        for (auto& m : members)
            for (auto p : m) CHECK(all.insert(p).second);  // disjoint
        CHECK(all == std::set<std::uint32_t>{0, 1, 2, 3, 4, 5, 6, 7});
        CHECK(members[0] == parts{0, 1, 2, 3, 4, 5, 6});  // 0.8.0: a joiner takes one partition
        CHECK(members[1] == parts{7});
        // Partition-less group polls only ever return the member's own partitions.
        std::set<std::uint32_t> polled_b;
        for (int i = 0; i < 3; ++i) {
            auto r = must(
                co_await b.poll_messages(consumer::group(g), s, t, std::nullopt, polling_strategy::next(), 10, false),
                "poll b");
            polled_b.insert(r.partition_id);
        }
        CHECK(polled_b == std::set<std::uint32_t>{7});
        std::set<std::uint32_t> polled_a;
        for (int i = 0; i < 7; ++i) {
            auto r = must(
                co_await a.poll_messages(consumer::group(g), s, t, std::nullopt, polling_strategy::next(), 10, false),
                "poll a");
            polled_a.insert(r.partition_id);
        }
        CHECK(polled_a == std::set<std::uint32_t>{0, 1, 2, 3, 4, 5, 6});
        auto not_owned = co_await b.store_offset(consumer::group(g), s, t, 0, 0);
        REQUIRE_FALSE(not_owned.has_value());
        CHECK(iggy::server_code(not_owned.error()) == 3022u);
    });
}

TEST_CASE("a third join, a leave and a killed connection move partitions as 0.8.0 does", "[rebalance]") {
    broker_process broker{{"--rebalance-timeout", "3s"}};
    run([&](auto ex) -> net::awaitable<void> {
        iggy::client a{ex, options_for(broker)};
        iggy::client b{ex, options_for(broker)};
        auto c = std::make_unique<iggy::client>(ex, options_for(broker));
        const auto s = identifier::named("s"), t = identifier::named("t"), g = identifier::named("g");
        must(co_await a.create_stream("s"), "create stream");
        must(co_await a.create_topic(s, "t", 3), "create topic");
        must(co_await a.create_consumer_group(s, t, "g"), "create group");
        std::string payload = "m";
        std::vector<iggy::outgoing_message> one{{0, 0, proto::as_bytes(payload), {}}};
        for (std::uint32_t p = 0; p < 3; ++p)
            for (int i = 0; i < 3; ++i)
                must(co_await a.send_messages(s, t, partitioning::to_partition(p), one), "send");
        must(co_await a.join_consumer_group(s, t, g), "join a");
        // a polls all three partitions without committing.
        for (int i = 0; i < 3; ++i) {
            auto polled = must(
                co_await a.poll_messages(consumer::group(g), s, t, std::nullopt, polling_strategy::next(), 10, false),
                "poll a");
            CHECK(polled.messages.size() == 3);
        }
        // b joins: partition 2 becomes pending revocation (a polled it and did not commit).
        must(co_await b.join_consumer_group(s, t, g), "join b");
        {
            auto now = co_await members_of(a, s, t, g);
            CHECK(now == std::vector<parts>{{0, 1, 2}, {}});
        }
        auto nothing =
            must(co_await b.poll_messages(consumer::group(g), s, t, std::nullopt, polling_strategy::next(), 10, false),
                 "poll b");
        CHECK(nothing.messages.empty());
        // a commits what it polled on 2: the revocation completes.
        must(co_await a.store_offset(consumer::group(g), s, t, 2, 2), "commit a/2");
        {
            auto now = co_await members_of(a, s, t, g);
            CHECK(now == std::vector<parts>{{0, 1}, {2}});
        }
        auto resumed =
            must(co_await b.poll_messages(consumer::group(g), s, t, std::nullopt, polling_strategy::next(), 10, false),
                 "poll b");
        CHECK(resumed.partition_id == 2);
        CHECK(resumed.messages.empty());  // resumes after the committed offset 2
        // c joins: a's partition 1 (polled, uncommitted) is pending; forced after the timeout.
        must(co_await c->join_consumer_group(s, t, g), "join c");
        {
            auto now = co_await members_of(a, s, t, g);
            CHECK(now == std::vector<parts>{{0, 1}, {2}, {}});
        }
        std::vector<parts> after;
        for (int i = 0; i < 200; ++i) {  // forced 3 s after the join (bounded wait, no timing assertion)
            after = co_await members_of(a, s, t, g);
            if (after[2] == parts{1}) break;
            co_await sleep_for(100ms);
        }
        CHECK(after == std::vector<parts>{{0}, {2}, {1}});
        // b leaves: full rebalance over the remaining slots (a, c).
        must(co_await b.leave_consumer_group(s, t, g), "leave b");
        {
            auto now = co_await members_of(a, s, t, g);
            CHECK(now == std::vector<parts>{{0, 2}, {1}});
        }
        // c's connection dies without a leave: full rebalance once the broker notices.
        co_await c->close();
        c.reset();
        for (int i = 0; i < 500; ++i) {
            after = co_await members_of(a, s, t, g);
            if (after.size() == 1) break;
            co_await sleep_for(20ms);
        }
        CHECK(after == std::vector<parts>{{0, 1, 2}});
    });
}

TEST_CASE("a broker restarted with --data keeps messages and offsets", "[persist]") {
    auto dir = temp_dir("persist");
    broker_process broker{{"--data", dir.string()}};
    run([&](auto ex) -> net::awaitable<void> {
        iggy::client c{ex, options_for(broker)};
        must(co_await c.create_stream("s"), "create stream");
        must(co_await c.create_topic(identifier::numeric(0), "t", 2), "create topic");
        std::vector<std::string> ps;
        for (int i = 0; i < 100; ++i) ps.push_back("msg-" + std::to_string(i));
        std::vector<iggy::outgoing_message> out;
        for (auto& p : ps) out.push_back({0, 0, proto::as_bytes(p), {}});
        must(co_await c.send_messages(identifier::numeric(0), identifier::numeric(0), partitioning::to_partition(1),
                                      out),
             "send");
        must(co_await c.store_offset(consumer::single(identifier::numeric(3)), identifier::numeric(0),
                                     identifier::numeric(0), 1, 41),
             "store");
        co_await c.close();
    });
    broker.stop(SIGTERM);
    broker.start(0);
    run([&](auto ex) -> net::awaitable<void> {
        iggy::client c{ex, options_for(broker)};
        auto t = must(co_await c.get_topic(identifier::named("s"), identifier::named("t")), "get topic");
        REQUIRE(t.has_value());
        CHECK(t->partitions[1].messages_count == 100);
        auto o = must(co_await c.get_offset(consumer::single(identifier::numeric(3)), identifier::numeric(0),
                                            identifier::numeric(0), 1),
                      "get offset");
        REQUIRE(o.has_value());
        CHECK(o->stored_offset == 41);
        auto r = must(co_await c.poll_messages(consumer::single(identifier::numeric(3)), identifier::numeric(0),
                                               identifier::numeric(0), 1, polling_strategy::next(), 1000, false),
                      "poll");
        REQUIRE(r.messages.size() == 58);
        CHECK(r.messages[0].offset == 42);
        CHECK(text(r.messages[0].payload) == "msg-42");
        CHECK(r.messages[0].checksum_ok());
    });
    fs::remove_all(dir);
}

TEST_CASE("a wrong password gives 42 once, with no retry loop", "[auth]") {
    broker_process broker;
    std::vector<std::string> lines;
    log::set_sink([&](std::string_view l) { lines.emplace_back(l); });
    run([&](auto ex) -> net::awaitable<void> {
        auto o = options_for(broker);
        o.password = iggy_password{"wrong"};
        o.reconnect_attempts = 0;  // unlimited: only the classification stops the loop
        iggy::client c{ex, o};
        auto r = co_await c.connect();
        REQUIRE_FALSE(r.has_value());
        CHECK(iggy::server_code(r.error()) == 42u);
        CHECK(iggy::classify(r.error()) == iggy::outcome::fail);
        CHECK(iggy::describe(r.error()).find("InvalidCredentials") != std::string::npos);
        auto again = co_await c.ping();
        REQUIRE_FALSE(again.has_value());
        CHECK(iggy::server_code(again.error()) == 42u);
        auto tok = options_for(broker);
        tok.token = iggy_token{"no-such-token"};
        iggy::client t{ex, tok};
        auto tr = co_await t.connect();
        REQUIRE_FALSE(tr.has_value());
        CHECK(iggy::server_code(tr.error()) == 20u);
    });
    log::set_sink({});
    std::size_t retries = 0;
    for (auto& l : lines)
        if (l.find("retrying") != std::string::npos) ++retries;
    CHECK(retries == 0);
}

TEST_CASE("a personal access token logs in", "[auth]") {
    broker_process broker{{"--token", "ci:secret-token-1"}};
    run([&](auto ex) -> net::awaitable<void> {
        auto o = options_for(broker);
        o.token = iggy_token{"secret-token-1"};
        o.password = iggy_password{"wrong"};  // not used with a token
        iggy::client c{ex, o};
        must(co_await c.connect(), "connect with token");
        must(co_await c.ping(), "ping");
    });
}

TEST_CASE("the client reconnects, logs in, re-joins and resumes after the broker restarts", "[reconnect]") {
    auto dir = temp_dir("reconnect");
    broker_process broker{{"--data", dir.string()}};
    run([&](auto ex) -> net::awaitable<void> {
        iggy::client c{ex, options_for(broker)};
        const auto s = identifier::named("s"), t = identifier::named("t"), g = identifier::named("g");
        must(co_await c.create_stream("s"), "create stream");
        must(co_await c.create_topic(s, "t", 1), "create topic");
        must(co_await c.create_consumer_group(s, t, "g"), "create group");
        must(co_await c.join_consumer_group(s, t, g), "join");
        std::vector<std::string> ps{"a", "b", "c", "d"};
        std::vector<iggy::outgoing_message> out;
        for (auto& p : ps) out.push_back({0, 0, proto::as_bytes(p), {}});
        must(co_await c.send_messages(s, t, partitioning::balanced(), out), "send");
        auto r =
            must(co_await c.poll_messages(consumer::group(g), s, t, std::nullopt, polling_strategy::next(), 2, false),
                 "poll");
        REQUIRE(r.messages.size() == 2);
        must(co_await c.store_offset(consumer::group(g), s, t, r.partition_id, r.messages.back().offset), "store");
        CHECK(c.generation() == 1);

        broker.restart();  // SIGKILL, then the same port and data

        // The call in flight when the connection broke fails (its outcome is unknown)...
        auto broken = co_await c.ping();
        if (!broken) CHECK(iggy::classify(broken.error()) == iggy::outcome::retry);
        // ...and the next one reconnects, logs in and re-joins before it is sent.
        result<iggy::poll_batch> resumed = iss::error{iggy::errc::closed};
        for (int i = 0; i < 5 && !resumed; ++i)
            resumed =
                co_await c.poll_messages(consumer::group(g), s, t, std::nullopt, polling_strategy::next(), 10, false);
        REQUIRE(resumed.has_value());
        CHECK(c.generation() == 2);
        REQUIRE(resumed->messages.size() == 2);
        CHECK(resumed->messages[0].offset == 2);
        CHECK(text(resumed->messages[0].payload) == "c");
        auto members = co_await members_of(c, s, t, g);
        CHECK(members == std::vector<parts>{{0}});
    });
    fs::remove_all(dir);
}

TEST_CASE(
    "TLS: verified connection with a CA file; an untrusted certificate or a wrong name is rejected: retried "
    "like an outage unless retry_rejected_certificate is false",
    "[tls]") {
    auto dir = temp_dir("tls");
    const auto cert = (dir / "cert.pem").string(), key = (dir / "key.pem").string();
    const auto cmd = fmt::format(
        "openssl req -x509 -newkey rsa:2048 -nodes -keyout {} -out {} -days 1 -subj /CN=localhost "
        "-addext subjectAltName=DNS:localhost,IP:127.0.0.1 >/dev/null 2>&1",
        key, cert);
    REQUIRE(std::system(cmd.c_str()) == 0);
    broker_process broker{{"--tls-cert", cert, "--tls-key", key}};
    run([&](auto ex) -> net::awaitable<void> {
        auto o = options_for(broker);
        o.tls.enabled = true;
        o.tls.ca_file = cert;
        o.tls.server_name = "localhost";
        iggy::client c{ex, o};
        must(co_await c.connect(), "TLS connect");
        must(co_await c.create_stream("secure"), "create stream over TLS");
        auto got = must(co_await c.get_stream(identifier::named("secure")), "get stream");
        CHECK(got.has_value());

        // Three attempts allowed; the waits between them are counted on a test sleeper.
        iss::manual_clock clock;
        const auto attempts = [&](iggy::client_options opts, bool retry) -> net::awaitable<std::size_t> {
            iss::test::clock_sleeper sleeper{clock};
            opts.reconnect_attempts = 3;
            opts.retry_rejected_certificate = retry;
            opts.clock = &clock;
            opts.sleeper = &sleeper;
            iggy::client d{ex, opts};
            auto r = co_await d.connect();
            REQUIRE_FALSE(r.has_value());
            CHECK(r.error() == iggy::errc::certificate_rejected);
            CHECK_THAT(r.error().detail(), Catch::Matchers::ContainsSubstring("certificate") ||
                                               Catch::Matchers::ContainsSubstring("mismatch"));
            co_return sleeper.waits.size() + 1;
        };
        auto bad = options_for(broker);
        bad.tls.enabled = true;  // system CAs only: the self-signed certificate is not trusted
        bad.host = "localhost";
        CHECK(co_await attempts(bad, true) == 3);   // `run`: waits for a renewed certificate
        CHECK(co_await attempts(bad, false) == 1);  // `probe`, `lag`, `verify`: answered at once

        auto wrong_name = o;
        wrong_name.tls.server_name = "not-localhost";
        CHECK(co_await attempts(wrong_name, false) == 1);

        // A plaintext client at the TLS listener: the listener closes it unanswered, and the
        // error says what to set.
        auto plain = options_for(broker);
        iss::test::clock_sleeper sleeper{clock};
        plain.reconnect_attempts = 1;
        plain.clock = &clock;
        plain.sleeper = &sleeper;
        iggy::client p{ex, plain};
        auto pr = co_await p.connect();
        REQUIRE_FALSE(pr.has_value());
        CHECK(pr.error() == iggy::errc::connection_lost);
        CHECK_THAT(pr.error().message(), Catch::Matchers::ContainsSubstring("set iggy.tls.enabled: true"));
    });
    fs::remove_all(dir);
}

// ---------------------------------------------------------------------------------------------
// Captured Node SDK 0.8.0 requests (tests/data/iggy-g1/requests) replayed against the
// broker, in a world set up to match their .txt files.

namespace {

proto::byte_buffer read_hex(const fs::path& p) {
    std::ifstream f(p);
    std::string hex, line;
    while (std::getline(f, line))
        for (char ch : line)
            if (std::isxdigit(static_cast<unsigned char>(ch))) hex += ch;
    proto::byte_buffer out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
        out.push_back(static_cast<std::byte>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    return out;
}

/// A raw G1 connection for byte-exact requests.
struct raw_connection {
    net::io_context ioc;
    net::ip::tcp::socket sock{ioc};
    explicit raw_connection(std::uint16_t port) { sock.connect({net::ip::make_address("127.0.0.1"), port}); }
    std::pair<std::uint32_t, proto::byte_buffer> exchange(proto::bytes_view frame) {
        net::write(sock, net::buffer(frame.data(), frame.size()));
        std::array<std::byte, 8> h{};
        net::read(sock, net::buffer(h));
        proto::byte_buffer payload(proto::load_le<std::uint32_t>(h.data() + 4));
        if (!payload.empty()) net::read(sock, net::buffer(payload.data(), payload.size()));
        return {proto::load_le<std::uint32_t>(h.data()), std::move(payload)};
    }
    template <class Request>
    std::pair<std::uint32_t, proto::byte_buffer> send(const Request& req) {
        proto::byte_buffer f;
        REQUIRE(proto::append_request(f, req).has_value());
        return exchange(f);
    }
};

/// The world every capture expects: stream 0 "other", stream 1 "test-stream" with topic 0
/// "test-topic" (2 partitions, 7 messages each), group "test-group" whose stored offset on
/// partition 0 is 4, and consumer `single` with offset 5 stored on partition 1.
void build_world(const broker_process& b, const consumer& single) {
    run([&](auto ex) -> net::awaitable<void> {
        iggy::client c{ex, options_for(b)};
        must(co_await c.create_stream("other"), "stream 0");
        must(co_await c.create_stream("test-stream"), "stream 1");
        must(co_await c.create_topic(identifier::numeric(1), "test-topic", 2), "topic 0");
        must(co_await c.create_consumer_group(identifier::numeric(1), identifier::numeric(0), "test-group"), "group");
        std::vector<std::string> ps{"p0", "p1", "p2", "p3", "p4", "p5", "p6"};
        std::vector<iggy::outgoing_message> out;
        for (auto& p : ps) out.push_back({0, 0, proto::as_bytes(p), {}});
        for (std::uint32_t p = 0; p < 2; ++p)
            must(co_await c.send_messages(identifier::numeric(1), identifier::numeric(0), partitioning::to_partition(p),
                                          out),
                 "send");
        const auto g = identifier::named("test-group");
        must(co_await c.join_consumer_group(identifier::numeric(1), identifier::numeric(0), g), "join");
        must(co_await c.store_offset(consumer::group(g), identifier::numeric(1), identifier::numeric(0), 0, 4),
             "group offset");
        must(co_await c.leave_consumer_group(identifier::numeric(1), identifier::numeric(0), g), "leave");
        must(co_await c.store_offset(single, identifier::numeric(1), identifier::numeric(0), 1, 5), "offset");
        co_await c.close();
    });
}

std::optional<proto::topic_details> topic_now(const broker_process& b) {
    return run([&](auto ex) -> net::awaitable<std::optional<proto::topic_details>> {
        iggy::client c{ex, options_for(b)};
        co_return must(co_await c.get_topic(identifier::numeric(1), identifier::numeric(0)), "get topic");
    });
}

}  // namespace

TEST_CASE("captured SDK requests replay against the broker with 0.8.0 replies", "[replay]") {
    const fs::path dir = fs::path{IGGY_TESTDATA_DIR} / "iggy-g1" / "requests";
    if (!fs::exists(dir)) {
        WARN("no captures at " << dir);
        if (std::getenv("CI") && std::string{std::getenv("CI")} == "true") FAIL("captures missing under CI");
        return;
    }
    std::size_t replayed = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.path().extension() != ".hex") continue;
        const std::string name = entry.path().stem().string();
        SECTION(name) {
            const auto frame = read_hex(entry.path());
            REQUIRE(frame.size() >= 8);
            const auto code = proto::load_le<std::uint32_t>(frame.data() + 4);
            // The consumer named by an offset capture gets the world's stored offset.
            consumer single = consumer::single(identifier::numeric(0));
            if (auto req = proto::decode_request(code, proto::bytes_view{frame}.subspan(8))) {
                if (auto* g = std::get_if<proto::get_consumer_offset_request>(&*req)) single = g->consumer;
            }
            broker_process broker{{"--token", "pat:iggy-pat-0123456789abcdef"}};
            build_world(broker, single);
            const auto before = topic_now(broker);
            raw_connection conn{broker.port()};
            const bool pre_login = code == 1 || code == 38 || code == 44;
            if (!pre_login) {
                auto [st, body] = conn.send(proto::login_user_request{"iggy", "iggy", "test", ""});
                REQUIRE(st == 0);
            }
            if (name.find("poll_messages_group") != std::string::npos ||
                name.find("leave_consumer_group") != std::string::npos) {
                auto [st, body] = conn.send(proto::join_consumer_group_request{
                    identifier::numeric(1), identifier::numeric(0), identifier::named("test-group")});
                REQUIRE(st == 0);
            }
            auto [status, payload] = conn.exchange(frame);
            INFO("capture " << name);
            REQUIRE(status == 0);
            const proto::bytes_view body{payload};
            if (code == 38 || code == 44) {
                CHECK(proto::decode_user_id_reply(body).value() == 0u);
            } else if (code == 1) {
                CHECK(payload.empty());
            } else if (code == 302) {
                auto t = proto::decode_create_topic_reply(body);
                REQUIRE(t.has_value());
                CHECK(t->topic.id == 1);
                CHECK(t->topic.name == "new-topic");
                CHECK(t->partitions.size() == 3);
                CHECK(t->topic.message_expiry == ~std::uint64_t{0});
                CHECK(t->topic.max_topic_size == ~std::uint64_t{0});
            } else if (code == 120) {
                auto o = proto::decode_get_consumer_offset_reply(body);
                REQUIRE(o.has_value());
                REQUIRE(o->has_value());
                CHECK((*o)->partition_id == 1);
                CHECK((*o)->current_offset == 6);
                CHECK((*o)->stored_offset == 5);
            } else if (code == 100) {
                auto p = proto::decode_poll_reply(body);
                REQUIRE(p.has_value());
                REQUIRE(p->messages_count == 2);
                std::vector<std::uint64_t> offsets;
                for (auto m : *p) offsets.push_back(m.offset);
                CHECK(offsets == std::vector<std::uint64_t>{5, 6});
            } else if (code == 101) {
                CHECK(payload.empty());
                auto after = topic_now(broker);
                REQUIRE(before);
                REQUIRE(after);
                std::uint32_t expect = 0;  // Balanced: the topic's first balanced send goes to 0
                if (name.find("partition_id") != std::string::npos) expect = 1;
                if (name.find("messages_key") != std::string::npos) expect = XXH32("order-42", 8, 0) % 2;
                CHECK(after->partitions[expect].messages_count == before->partitions[expect].messages_count + 2);
                CHECK(after->topic.messages_count == before->topic.messages_count + 2);
            } else if (code == 121) {
                CHECK(payload.empty());
                auto req = proto::decode_request(code, proto::bytes_view{frame}.subspan(8));
                REQUIRE(req.has_value());
                auto& st = std::get<proto::store_consumer_offset_request>(*req);
                auto [gst, got] =
                    conn.send(proto::get_consumer_offset_request{st.consumer, st.stream, st.topic, st.partition_id});
                REQUIRE(gst == 0);
                auto o = proto::decode_get_consumer_offset_reply(got);
                REQUIRE(o.has_value());
                REQUIRE(o->has_value());
                CHECK((*o)->stored_offset == st.offset);
            } else if (code == 604 || code == 605) {
                auto [gst, got] = conn.send(proto::get_consumer_group_request{identifier::named("test-stream"),
                                                                              identifier::named("test-topic"),
                                                                              identifier::named("test-group")});
                REQUIRE(gst == 0);
                auto g = proto::decode_get_consumer_group_reply(got);
                REQUIRE(g.has_value());
                REQUIRE(g->has_value());
                CHECK((*g)->group.members_count == (code == 604 ? 1u : 0u));
                if (code == 605) {
                    // Leaving again is 5006.
                    auto [lst, lb] = conn.exchange(frame);
                    CHECK(lst == 5006u);
                }
            }
            ++replayed;
        }
    }
    (void)replayed;
}

TEST_CASE("iggy-produce sends lines and synthetic messages and reports partitions", "[produce]") {
    broker_process broker;
    const std::string addr = fmt::format("127.0.0.1:{}", broker.port());
    auto sh = [&](const std::string& args, std::string& out) {
        const std::string cmd = fmt::format("{} --address {} {} 2>&1", IGGY_PRODUCE, addr, args);
        FILE* p = ::popen(cmd.c_str(), "r");
        REQUIRE(p);
        out.clear();
        char buf[512];
        while (std::fgets(buf, sizeof buf, p)) out += buf;
        const int st = ::pclose(p);
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    };
    std::string out;
    CHECK(sh("--stream s --topic t --create 4 --balanced --count 2000 --size 100 --batch 500", out) == 0);
    CHECK(out.find("sent 2000 messages") != std::string::npos);
    CHECK(out.find("partition 0: 500, partition 1: 500, partition 2: 500, partition 3: 500") != std::string::npos);
    CHECK(sh("--stream s --topic t --create 4 --count 1 --size 10", out) == 0);  // same count: fine
    CHECK(sh("--stream s --topic t --create 5 --count 1 --size 10", out) == 1);
    CHECK(sh("--stream s --topic t --password wrong --count 1 --size 10", out) == 1);
    CHECK(out.find("InvalidCredentials") != std::string::npos);
    CHECK(sh("--stream nope --topic t --count 1 --size 10", out) == 1);
    CHECK(sh("--stream s --topic t --partition 1 --balanced --count 1 --size 10", out) == 2);

    auto dir = temp_dir("produce");
    {
        std::ofstream f(dir / "lines.txt");
        f << "{\"n\":1}\nsecond line\nthird\n";
    }
    CHECK(sh(fmt::format("--stream s --topic t --partition 2 --header source=file {}", (dir / "lines.txt").string()),
             out) == 0);
    CHECK(out.find("sent 3 messages") != std::string::npos);
    CHECK(out.find("partition 2: 3") != std::string::npos);
    run([&](auto ex) -> net::awaitable<void> {
        iggy::client c{ex, options_for(broker)};
        auto r = must(co_await c.poll_messages(consumer::single(identifier::numeric(0)), identifier::named("s"),
                                               identifier::named("t"), 2, polling_strategy::at_offset(500), 10, false),
                      "poll");
        REQUIRE(r.messages.size() == 3);
        CHECK(text(r.messages[0].payload) == "{\"n\":1}");
        CHECK(text(r.messages[2].payload) == "third");
        std::vector<proto::header_view> hv;
        REQUIRE(proto::decode_user_headers(r.messages[1].user_headers, hv).has_value());
        REQUIRE(hv.size() == 1);
        CHECK(hv[0].key_text() == "source");
        CHECK(hv[0].value_text() == "file");
    });
    fs::remove_all(dir);
}

// ---------------------------------------------------------------------------------------------
// Fault injection: a scripted in-process server on 127.0.0.1:0 plays each connection.

namespace {

using tcp = net::ip::tcp;
using script = std::function<net::awaitable<void>(tcp::socket&, int connection)>;

/// Accepts connections forever and runs `play` on each (numbered from 1).
net::awaitable<void> fake_server(tcp::acceptor& acceptor, script play) {
    for (int n = 1;; ++n) {
        auto [ec, sock] = co_await acceptor.async_accept(net::as_tuple(net::use_awaitable));
        if (ec) co_return;
        net::co_spawn(
            acceptor.get_executor(),
            [](tcp::socket s, script p, int conn) -> net::awaitable<void> { co_await p(s, conn); }(std::move(sock),
                                                                                                   play, n),
            net::detached);
    }
}

/// Reads one request frame; returns its code (0 on EOF).
net::awaitable<std::uint32_t> read_request(tcp::socket& s) {
    std::array<std::byte, 8> h{};
    auto [ec, n] = co_await net::async_read(s, net::buffer(h), net::as_tuple(net::use_awaitable));
    if (ec) co_return 0;
    proto::byte_buffer body(proto::load_le<std::uint32_t>(h.data()) - 4);
    if (!body.empty())
        co_await net::async_read(s, net::buffer(body.data(), body.size()), net::as_tuple(net::use_awaitable));
    co_return proto::load_le<std::uint32_t>(h.data() + 4);
}

net::awaitable<void> reply(tcp::socket& s, std::uint32_t status, proto::byte_buffer payload = {}) {
    proto::byte_buffer f;
    proto::writer w{f};
    w.u32(status);
    w.u32(static_cast<std::uint32_t>(payload.size()));
    w.bytes(payload);
    co_await net::async_write(s, net::buffer(f.data(), f.size()), net::as_tuple(net::use_awaitable));
}

net::awaitable<void> login_ok(tcp::socket& s) {
    const auto code = co_await read_request(s);  // (never co_await inside a Catch macro)
    REQUIRE(code == 38u);
    co_await reply(s, 0, proto::byte_buffer(4));
}

iggy::client_options fake_options(std::uint16_t port) {
    iggy::client_options o;
    o.port = port;
    o.password = iggy_password{"iggy"};
    o.reconnect_backoff = {std::chrono::milliseconds{5}, std::chrono::milliseconds{20}};
    o.request_timeout = std::chrono::milliseconds{1500};  // generous: CI runs tests in parallel
    o.connect_timeout = std::chrono::milliseconds{1500};
    o.reconnect_attempts = 2;
    o.ping_interval = std::chrono::milliseconds{0};
    return o;
}

}  // namespace

TEST_CASE("faults: silence times out, a drop mid-request is connection_lost, the next call reconnects", "[faults]") {
    run([&](auto ex) -> net::awaitable<void> {
        tcp::acceptor acceptor{ex, {net::ip::make_address("127.0.0.1"), 0}};
        const auto port = acceptor.local_endpoint().port();
        int connections = 0;
        net::co_spawn(ex,
                      fake_server(acceptor,
                                  [&](tcp::socket& s, int n) -> net::awaitable<void> {
                                      connections = n;
                                      co_await login_ok(s);
                                      if (n == 1) {
                                          (void)co_await read_request(s);  // the ping: dropped unanswered
                                          s.close();
                                          co_return;
                                      }
                                      if (n == 2) {
                                          (void)co_await read_request(s);  // answered after the deadline
                                          net::steady_timer t{s.get_executor(), std::chrono::seconds{5}};
                                          co_await t.async_wait(net::as_tuple(net::use_awaitable));
                                          co_return;
                                      }
                                      while (co_await read_request(s) != 0) co_await reply(s, 0);
                                  }),
                      net::detached);
        iggy::client c{ex, fake_options(port)};
        auto lost = co_await c.ping();
        REQUIRE_FALSE(lost.has_value());
        CHECK(lost.error() == iggy::errc::connection_lost);
        CHECK(iggy::classify(lost.error()) == iggy::outcome::retry);
        CHECK_FALSE(c.connected());
        auto slow = co_await c.ping();
        REQUIRE_FALSE(slow.has_value());
        CHECK(slow.error() == iggy::errc::timeout);
        CHECK(c.generation() == 2);
        must(co_await c.ping(), "third connection answers");
        CHECK(c.generation() == 3);
        CHECK(connections == 3);
        // Concurrent callers share the connection one request at a time.
        auto both = [&]() -> net::awaitable<void> {
            using namespace net::experimental::awaitable_operators;
            auto [p1, p2] = co_await (c.ping() && c.ping());
            CHECK(p1.has_value());
            CHECK(p2.has_value());
        };
        co_await both();
        co_await c.close();
        acceptor.close();
    });
}

TEST_CASE("faults: an oversized reply is a protocol error; 30 StaleClient closes and is retried", "[faults]") {
    run([&](auto ex) -> net::awaitable<void> {
        tcp::acceptor acceptor{ex, {net::ip::make_address("127.0.0.1"), 0}};
        const auto port = acceptor.local_endpoint().port();
        net::co_spawn(ex,
                      fake_server(acceptor,
                                  [&](tcp::socket& s, int n) -> net::awaitable<void> {
                                      co_await login_ok(s);
                                      (void)co_await read_request(s);
                                      if (n == 1) {
                                          proto::byte_buffer h;
                                          proto::writer w{h};
                                          w.u32(0);
                                          w.u32(100u * 1024 * 1024);  // 100 MiB announced
                                          co_await net::async_write(s, net::buffer(h.data(), h.size()),
                                                                    net::as_tuple(net::use_awaitable));
                                      } else if (n == 2) {
                                          co_await reply(s, 30);
                                      } else {
                                          co_await reply(s, 0);
                                      }
                                      (void)co_await read_request(s);
                                  }),
                      net::detached);
        iggy::client c{ex, fake_options(port)};
        auto big = co_await c.ping();
        REQUIRE_FALSE(big.has_value());
        CHECK(big.error() == iggy::errc::protocol_error);
        auto stale = co_await c.ping();
        REQUIRE_FALSE(stale.has_value());
        CHECK(iggy::server_code(stale.error()) == 30u);
        CHECK(iggy::classify(stale.error()) == iggy::outcome::retry);
        CHECK_FALSE(c.connected());
        must(co_await c.ping(), "reconnected");
        CHECK(c.generation() == 3);
        co_await c.close();
        acceptor.close();
    });
}

TEST_CASE("faults: nothing listening gives connection_failed after the attempt budget", "[faults]") {
    run([&](auto ex) -> net::awaitable<void> {
        std::uint16_t port = 0;
        {
            tcp::acceptor probe{ex, {net::ip::make_address("127.0.0.1"), 0}};
            port = probe.local_endpoint().port();
        }  // closed: nothing listens there now
        iggy::client c{ex, fake_options(port)};
        auto r = co_await c.connect();
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error() == iggy::errc::connection_failed);
        CHECK(c.generation() == 0);
    });
}

TEST_CASE("faults: reconnect attempts follow the budget: the attempt limit, capped waits, resumed backoff",
          "[faults]") {
    iss::manual_clock clock;
    iss::test::clock_sleeper sleeper{clock};
    run([&](auto ex) -> net::awaitable<void> {
        std::uint16_t port = 0;
        {
            tcp::acceptor probe{ex, {net::ip::make_address("127.0.0.1"), 0}};
            port = probe.local_endpoint().port();
        }  // closed: every connect is refused
        auto o = fake_options(port);
        o.reconnect_attempts = 4;
        o.reconnect_backoff = {std::chrono::milliseconds{100}, std::chrono::milliseconds{1000}};
        o.clock = &clock;
        o.sleeper = &sleeper;
        iggy::client c{ex, o};
        auto r = co_await c.connect();
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error() == iggy::errc::connection_failed);
        // Four attempts, three waits between them, each under its ceiling (100, 200, 400 ms).
        REQUIRE(sleeper.waits.size() == 3);
        for (std::size_t i = 0; i < 3; ++i) CHECK(sleeper.waits[i] <= std::chrono::milliseconds{100 << i});
        // The next call goes on with the backoff: a wait first (step 3: <= 800 ms), then four
        // more attempts (waits <= 1000 ms, the cap).
        r = co_await c.connect();
        REQUIRE_FALSE(r.has_value());
        REQUIRE(sleeper.waits.size() == 7);
        CHECK(sleeper.waits[3] <= std::chrono::milliseconds{800});
        for (std::size_t i = 4; i < 7; ++i) CHECK(sleeper.waits[i] <= std::chrono::milliseconds{1000});
        CHECK(c.generation() == 0);
    });
}

TEST_CASE("heartbeat: pings keep a member; a silent one gets 30, then reconnects and re-joins", "[heartbeat]") {
    broker_process broker{{"--heartbeat", "2s"}};  // expiry after 2.4 s without a Ping
    run([&](auto ex) -> net::awaitable<void> {
        auto pinging = options_for(broker);
        pinging.ping_interval = std::chrono::milliseconds{50};
        auto silent = options_for(broker);
        silent.ping_interval = std::chrono::milliseconds{0};
        iggy::client a{ex, pinging};
        iggy::client b{ex, silent};
        const auto s = identifier::named("s"), t = identifier::named("t"), g = identifier::named("g");
        must(co_await a.create_stream("s"), "create stream");
        must(co_await a.create_topic(s, "t", 2), "create topic");
        must(co_await a.create_consumer_group(s, t, "g"), "create group");
        must(co_await a.join_consumer_group(s, t, g), "join a");
        must(co_await b.join_consumer_group(s, t, g), "join b");
        // b sends no Ping, so the checker drops it after 2.4 s; a pings every 50 ms.
        co_await sleep_for(4000ms);
        auto stale =
            co_await b.poll_messages(consumer::group(g), s, t, std::nullopt, polling_strategy::next(), 1, false);
        REQUIRE_FALSE(stale.has_value());
        CHECK(iggy::server_code(stale.error()) == 30u);
        CHECK(iggy::classify(stale.error()) == iggy::outcome::retry);
        CHECK_FALSE(b.connected());
        // a pinged all along: still a member, and b's leave gave it every partition.
        auto members = co_await members_of(a, s, t, g);
        CHECK(members == std::vector<parts>{{0, 1}});
        // The next call on b reconnects, logs in and re-joins (generation 2).
        must(co_await b.poll_messages(consumer::group(g), s, t, std::nullopt, polling_strategy::next(), 1, false),
             "poll after reconnect");
        CHECK(b.generation() == 2);
        members = co_await members_of(a, s, t, g);
        CHECK(members.size() == 2);
    });
}

TEST_CASE("the captured Node SDK session (transcript) replays against the broker", "[replay]") {
    const fs::path file = fs::path{IGGY_TESTDATA_DIR} / "iggy-g1" / "transcript-session.txt";
    if (!fs::exists(file)) {
        WARN("no transcript at " << file);
        if (std::getenv("CI") && std::string{std::getenv("CI")} == "true") FAIL("transcript missing under CI");
        return;
    }
    // Frames in order: requests (C>S) and the replies the capture server gave (S>C).
    struct frame {
        bool request;
        proto::byte_buffer bytes;
    };
    std::vector<frame> frames;
    {
        std::ifstream in(file);
        std::string line;
        int pending = -1;  // 1: a request's hex follows, 0: a reply's, -1: nothing
        while (std::getline(in, line)) {
            if (line.rfind("C>S", 0) == 0) pending = 1;
            else if (line.rfind("S>C", 0) == 0) pending = 0;
            else if (pending >= 0 && !line.empty() && std::isxdigit(static_cast<unsigned char>(line[0]))) {
                proto::byte_buffer b;
                for (std::size_t i = 0; i + 1 < line.size(); i += 2)
                    b.push_back(static_cast<std::byte>(std::stoi(line.substr(i, 2), nullptr, 16)));
                frames.push_back({pending == 1, std::move(b)});
                pending = -1;
            }
        }
    }
    REQUIRE(frames.size() >= 14);

    // The world of the capture: stream 1 "test-stream", topic 0 "test-topic" with 3 partitions
    // holding 7, 4 and 1 messages, group "test-group" with offset 4 stored on partition 0.
    broker_process broker;
    run([&](auto ex) -> net::awaitable<void> {
        iggy::client c{ex, options_for(broker)};
        must(co_await c.create_stream("other"), "stream 0");
        must(co_await c.create_stream("test-stream"), "stream 1");
        must(co_await c.create_topic(identifier::numeric(1), "test-topic", 3), "topic");
        must(co_await c.create_consumer_group(identifier::numeric(1), identifier::numeric(0), "test-group"), "group");
        std::string p = "payload";
        const std::array<int, 3> counts{7, 4, 1};
        for (std::uint32_t part = 0; part < 3; ++part) {
            std::vector<iggy::outgoing_message> out(static_cast<std::size_t>(counts[part]),
                                                    iggy::outgoing_message{0, 0, proto::as_bytes(p), {}});
            must(co_await c.send_messages(identifier::numeric(1), identifier::numeric(0),
                                          partitioning::to_partition(part), out),
                 "send");
        }
        const auto g = identifier::named("test-group");
        must(co_await c.join_consumer_group(identifier::numeric(1), identifier::numeric(0), g), "join");
        must(co_await c.store_offset(consumer::group(g), identifier::numeric(1), identifier::numeric(0), 0, 4),
             "store");
        must(co_await c.leave_consumer_group(identifier::numeric(1), identifier::numeric(0), g), "leave");
    });

    raw_connection conn{broker.port()};
    std::size_t exchanged = 0;
    for (std::size_t i = 0; i + 1 < frames.size(); ++i) {
        if (!frames[i].request || frames[i + 1].request) continue;
        const auto& req = frames[i].bytes;
        const auto& want = frames[i + 1].bytes;
        const auto code = proto::load_le<std::uint32_t>(req.data() + 4);
        const auto want_status = proto::load_le<std::uint32_t>(want.data());
        const proto::bytes_view want_body = proto::bytes_view{want}.subspan(8);
        auto [status, got] = conn.exchange(req);
        INFO("request #" << exchanged + 1 << " code " << code);
        REQUIRE(status == want_status);
        const proto::bytes_view body{got};
        if (code == 200) {
            auto a = proto::decode_get_stream_reply(body).value();
            auto b = proto::decode_get_stream_reply(want_body).value();
            REQUIRE(a.has_value());
            REQUIRE(b.has_value());
            CHECK(a->stream.id == b->stream.id);
            CHECK(a->stream.name == b->stream.name);
            CHECK(a->stream.topics_count == b->stream.topics_count);
            CHECK(a->stream.messages_count == b->stream.messages_count);
            REQUIRE(a->topics.size() == b->topics.size());
            CHECK(a->topics[0].name == b->topics[0].name);
            CHECK(a->topics[0].partitions_count == b->topics[0].partitions_count);
            CHECK(a->topics[0].message_expiry == b->topics[0].message_expiry);
            CHECK(a->topics[0].max_topic_size == b->topics[0].max_topic_size);
        } else if (code == 300) {
            auto a = proto::decode_get_topic_reply(body).value();
            auto b = proto::decode_get_topic_reply(want_body).value();
            REQUIRE(a.has_value());
            REQUIRE(b.has_value());
            CHECK(a->topic.name == b->topic.name);
            REQUIRE(a->partitions.size() == b->partitions.size());
            for (std::size_t k = 0; k < a->partitions.size(); ++k) {
                CHECK(a->partitions[k].id == b->partitions[k].id);
                CHECK(a->partitions[k].current_offset == b->partitions[k].current_offset);
                CHECK(a->partitions[k].messages_count == b->partitions[k].messages_count);
            }
        } else if (code == 100) {
            auto a = proto::decode_poll_reply(body).value();
            auto b = proto::decode_poll_reply(want_body).value();
            CHECK(a.partition_id == b.partition_id);
            CHECK(a.current_offset == b.current_offset);
            std::vector<std::uint64_t> oa, ob;
            for (auto m : a) oa.push_back(m.offset);
            for (auto m : b) ob.push_back(m.offset);
            CHECK(oa == ob);
        } else {
            CHECK(got.size() == want_body.size());
        }
        ++exchanged;
    }
    CHECK(exchanged == 8);
}

TEST_CASE("the broker answers 0.8.0's error codes on the wire: 40, 3, 4, 43, short frame, 8 on shutdown", "[errors]") {
    broker_process broker;
    auto raw = [](std::uint32_t code, std::vector<std::uint8_t> body) {
        proto::byte_buffer f;
        proto::writer w{f};
        w.u32(static_cast<std::uint32_t>(body.size() + 4));
        w.u32(code);
        for (auto b : body) w.u8(b);
        return f;
    };
    {
        raw_connection conn{broker.port()};
        CHECK(conn.exchange(raw(201, {})).first == 40u);              // GetStreams before login
        CHECK(conn.exchange(raw(9999, {})).first == 3u);              // unknown command, even before login
        CHECK(conn.exchange(raw(200, {1, 3, 0, 0, 0})).first == 4u);  // numeric id with len 3
        CHECK(conn.exchange(raw(200, {9, 1, 0})).first == 3u);        // unknown identifier kind
        CHECK(conn.send(proto::login_user_request{"ab", "iggy", "", ""}).first == 43u);
        CHECK(conn.send(proto::login_user_request{"iggy", "ig", "", ""}).first == 44u);
        CHECK(conn.send(proto::login_user_request{"iggy", "iggy", "", ""}).first == 0u);
        CHECK(conn.exchange(raw(200, {1, 4, 0, 0, 0, 0})).second.empty());  // unknown stream: empty OK
        CHECK(conn.send(proto::delete_stream_request{identifier::numeric(0)}).first == 1009u);
        CHECK(conn.send(proto::logout_user_request{}).first == 0u);
        CHECK(conn.exchange(raw(201, {})).first == 40u);  // logged out, still connected
        // A length below 4: 3, and the connection is unusable (closed).
        proto::byte_buffer bad;
        proto::writer w{bad};
        w.u32(2);
        w.u32(1);
        auto [st, body] = conn.exchange(bad);
        CHECK(st == 3u);
        std::array<std::byte, 1> one{};
        boost::system::error_code ec;
        net::read(conn.sock, net::buffer(one), ec);
        CHECK(ec == net::error::eof);
    }
    raw_connection idle{broker.port()};
    CHECK(idle.send(proto::login_user_request{"iggy", "iggy", "", ""}).first == 0u);
    broker.stop(SIGTERM);
    std::array<std::byte, 8> h{};
    boost::system::error_code ec;
    net::read(idle.sock, net::buffer(h), ec);
    REQUIRE_FALSE(ec);
    CHECK(proto::load_le<std::uint32_t>(h.data()) == 8u);  // Disconnected
}

TEST_CASE("G1 evictions by the server's controls: the client (30, reconnect) and the membership alone (5006, join)",
          "[evict]") {
    broker_process broker;
    run([&](auto ex) -> net::awaitable<void> {
        iggy::client admin{ex, options_for(broker)};
        iggy::client m{ex, options_for(broker)};
        const auto s = identifier::named("s"), t = identifier::named("t"), g = identifier::named("g");
        const auto grp = consumer::group(g);
        must(co_await admin.create_stream("s"), "create stream");
        must(co_await admin.create_topic(s, "t", 2), "create topic");
        must(co_await admin.create_consumer_group(s, t, "g"), "create group");
        std::vector<std::string> payloads{"a", "b", "c"};
        std::vector<iggy::outgoing_message> batch;
        for (auto& p : payloads) batch.push_back({0, 0, proto::as_bytes(p), {}});
        for (std::uint32_t p = 0; p < 2; ++p)
            must(co_await admin.send_messages(s, t, partitioning::to_partition(p), batch), "send");
        auto until_members = [&](std::size_t n) -> net::awaitable<bool> {
            for (int i = 0; i < 500; ++i) {
                auto now = co_await members_of(admin, s, t, g);
                if (now.size() == n) co_return true;
                co_await sleep_for(20ms);
            }
            co_return false;
        };
        must(co_await m.join_consumer_group(s, t, g), "join");
        auto p = must(co_await m.poll_messages(grp, s, t, std::nullopt, polling_strategy::first(), 3, false), "poll");
        CHECK(p.messages.size() == 3);

        broker.control(SIGUSR2);  // membership lost, connection and login kept
        {
            const bool dropped = co_await until_members(0);
            REQUIRE(dropped);
        }
        auto lost = co_await m.poll_messages(grp, s, t, std::nullopt, polling_strategy::first(), 3, false);
        REQUIRE_FALSE(lost.has_value());
        CHECK(iggy::server_code(lost.error()) == 5006u);
        CHECK(m.connected());
        must(co_await m.join_consumer_group(s, t, g), "join again");
        auto back = must(co_await m.poll_messages(grp, s, t, std::nullopt, polling_strategy::first(), 3, false),
                         "poll after joining again");
        CHECK(back.messages.size() == 3);

        broker.control(SIGUSR1);  // dropped from the client table, as by the heartbeat checker
        {
            const bool expired = co_await until_members(0);
            REQUIRE(expired);
        }
        auto evicted = co_await m.poll_messages(grp, s, t, std::nullopt, polling_strategy::first(), 3, false);
        REQUIRE_FALSE(evicted.has_value());
        CHECK(iggy::server_code(evicted.error()) == 30u);
        CHECK_FALSE(m.connected());
        auto resumed = must(co_await m.poll_messages(grp, s, t, std::nullopt, polling_strategy::first(), 3, false),
                            "poll after the eviction");
        CHECK(resumed.messages.size() == 3);
        CHECK(m.generation() == 2);
        {
            const bool one = co_await until_members(1);
            CHECK(one);
        }
        co_await m.close();
        co_await admin.close();
    });
}

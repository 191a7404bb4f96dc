// SPDX-License-Identifier: Apache-2.0
// Integration tests (labels integration;iggy) of the G2 transport (issue 9): lib/iggy's client
// in `0.9` / `auto` mode against iggy-test-broker in G2 mode (started here on port 0).
// Semantics: docs/protocol.md §8, docs/protocol.md §12.1-4 (the double's rules are in
// tests/support/iggy_broker/g2_handler.hpp).

#include "common/log.hpp"
#include "iggy/client.hpp"
#include "proto/g2_commands.hpp"
#include "tests/integration/broker_child.hpp"
#include "tests/support/clock_sleeper.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>

#include "catch2_compat.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace net = boost::asio;
using namespace iss;
using iggy::consumer;
using iggy::identifier;
using iggy::partitioning;
using iggy::polling_strategy;
using iggy::wire_protocol;

namespace {

/// iggy-test-broker as a child process on a free port (reads `listening on HOST:PORT`).
class broker_process {
public:
    explicit broker_process(std::vector<std::string> args) {
        const auto child = iss::test::spawn_broker(IGGY_TEST_BROKER, 0, args);
        pid_ = child.pid;
        port_ = child.port;
    }
    ~broker_process() {
        ::kill(pid_, SIGKILL);
        int status = 0;
        ::waitpid(pid_, &status, 0);
    }
    broker_process(const broker_process&) = delete;
    broker_process& operator=(const broker_process&) = delete;
    [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
    /// Sends a test control (SIGUSR1: expire the group members; SIGUSR2: drop memberships).
    void control(int sig) const { ::kill(pid_, sig); }

private:
    pid_t pid_ = -1;
    std::uint16_t port_ = 0;
};

iggy::client_options options_for(const broker_process& b, wire_protocol p) {
    iggy::client_options o;
    o.port = b.port();
    o.password = iggy_password{"iggy"};
    o.protocol = p;
    o.reconnect_backoff = {std::chrono::milliseconds{10}, std::chrono::milliseconds{200}};
    o.reconnect_attempts = 3;
    o.request_timeout = std::chrono::milliseconds{10000};
    o.connect_timeout = std::chrono::milliseconds{5000};
    o.detect_timeout = std::chrono::milliseconds{2000};
    o.transient_retry_delay = std::chrono::milliseconds{5};
    return o;
}

template <class F>
auto run(F&& f) {
    net::io_context ioc{1};
    auto fut = net::co_spawn(ioc, f(ioc.get_executor()), net::use_future);
    ioc.run();
    return fut.get();
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

/// Creates stream "s" / topic "t" with `partitions` and sends `n` messages to each partition.
net::awaitable<void> seed(iggy::client& c, std::uint32_t partitions, std::uint32_t n) {
    must(co_await c.create_stream("s"), "create stream");
    auto t = must(co_await c.create_topic(identifier::named("s"), "t", partitions), "create topic");
    CHECK(t.partitions.size() == partitions);
    std::vector<std::string> payloads;
    for (std::uint32_t i = 0; i < n; ++i) payloads.push_back("message-" + std::to_string(i));
    for (std::uint32_t p = 0; p < partitions; ++p) {
        std::vector<iggy::outgoing_message> ms;
        for (std::uint32_t i = 0; i < n; ++i)
            ms.push_back({(proto::u128{p} << 64) | (i + 1), 1767225600000000ULL + i, proto::as_bytes(payloads[i]), {}});
        must(
            co_await c.send_messages(identifier::named("s"), identifier::named("t"), partitioning::to_partition(p), ms),
            "send");
    }
}

net::awaitable<void> pause(std::chrono::milliseconds d) {
    net::steady_timer t{co_await net::this_coro::executor, d};
    co_await t.async_wait(net::use_awaitable);
}

/// How many members group s/t/g has, as `c` reads it (-1: no group).
net::awaitable<int> members_count(iggy::client& c) {
    auto g = must(co_await c.get_consumer_group(identifier::named("s"), identifier::named("t"), identifier::named("g")),
                  "get group");
    co_return g ? static_cast<int>(g->members.size()) : -1;
}

/// Waits (up to 10 s) until group s/t/g has `n` members.
net::awaitable<bool> until_members(iggy::client& c, int n) {
    for (int i = 0; i < 500; ++i) {
        if (co_await members_count(c) == n) co_return true;
        co_await pause(std::chrono::milliseconds{20});
    }
    co_return false;
}

/// Collects the log lines of the test (level and text), restoring stderr at the end.
struct log_capture {
    std::vector<std::string> lines;
    log_capture() {
        log::set_sink([this](std::string_view l) { lines.emplace_back(l); });
    }
    ~log_capture() { log::set_sink({}); }
    [[nodiscard]] bool has_warn(std::string_view text) const {
        return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) {
            return l.find(" warn ") != std::string::npos && l.find(text) != std::string::npos;
        });
    }
};

}  // namespace

TEST_CASE("G2 client: topics, send, poll with verified checksums, offsets", "[g2][client]") {
    broker_process broker{{"--protocol", "0.9"}};
    run([&](auto ex) -> net::awaitable<void> {
        iggy::client c{ex, options_for(broker, wire_protocol::g2_0_9)};
        must(co_await c.connect(), "connect");
        CHECK(c.protocol_in_use() == wire_protocol::g2_0_9);
        co_await seed(c, 2, 50);
        auto t = must(co_await c.get_topic(identifier::named("s"), identifier::named("t")), "get topic");
        REQUIRE(t.has_value());
        CHECK(t->partitions.size() == 2);
        CHECK_FALSE(must(co_await c.get_topic(identifier::named("s"), identifier::named("nope")), "get").has_value());

        const auto me = consumer::single(identifier::named("sink"));
        auto b = must(co_await c.poll_messages(me, identifier::named("s"), identifier::named("t"), 1u,
                                               polling_strategy::at_offset(10), 20, false),
                      "poll");
        CHECK(b.partition_id == 1);
        CHECK(b.current_offset == 49);
        REQUIRE(b.messages.size() == 20);
        for (std::size_t i = 0; i < b.messages.size(); ++i) {
            CHECK(b.messages[i].offset == 10 + i);
            CHECK(proto::as_text(b.messages[i].payload) == "message-" + std::to_string(10 + i));
            CHECK(b.messages[i].origin_timestamp == 1767225600000000ULL + 10 + i);
            CHECK(b.messages[i].checksum_ok());  // the G2 frame checksum
            CHECK(b.messages[i].id == ((proto::u128{1} << 64) | (11 + i)));
        }
        must(co_await c.store_offset(me, identifier::named("s"), identifier::named("t"), 1u, 29), "store");
        auto o = must(co_await c.get_offset(me, identifier::named("s"), identifier::named("t"), 1u), "get offset");
        REQUIRE(o.has_value());
        CHECK(o->stored_offset == 29);
        auto missing = co_await c.poll_messages(me, identifier::named("zz"), identifier::named("t"), 0u,
                                                polling_strategy::first(), 1, false);
        REQUIRE_FALSE(missing.has_value());
        CHECK(iggy::classify(missing.error()) == iggy::outcome::not_found);
        must(co_await c.ping(), "ping");
        co_await c.close();
    });
}

TEST_CASE("G2 client: a poll batch keeps its reply's buffer, so its bytes outlive later polls", "[g2][client][owner]") {
    broker_process broker{{"--protocol", "0.9"}};
    run([&](auto ex) -> net::awaitable<void> {
        iggy::client c{ex, options_for(broker, wire_protocol::g2_0_9)};
        must(co_await c.connect(), "connect");
        co_await seed(c, 2, 50);
        const auto me = consumer::single(identifier::named("sink"));
        std::vector<std::vector<proto::message_view>> views;
        std::vector<std::shared_ptr<const void>> owners;
        for (std::uint64_t from = 0; from < 50; from += 10) {
            auto b = must(co_await c.poll_messages(me, identifier::named("s"), identifier::named("t"), 1u,
                                                   polling_strategy::at_offset(from), 10, false),
                          "poll");
            REQUIRE(b.messages.size() == 10);
            REQUIRE(b.owner);
            views.emplace_back(b.messages.begin(), b.messages.end());
            owners.push_back(b.owner);
        }
        for (std::size_t k = 0; k < views.size(); ++k)
            for (std::size_t i = 0; i < 10; ++i) {
                CHECK(proto::as_text(views[k][i].payload) == "message-" + std::to_string(k * 10 + i));
                CHECK(views[k][i].checksum_ok());
            }
        co_await c.close();
    });
}

TEST_CASE("G2 groups: join, sync, explicit-partition polls and stores, leave", "[g2][group]") {
    broker_process broker{{"--protocol", "0.9"}};
    run([&](auto ex) -> net::awaitable<void> {
        iggy::client admin{ex, options_for(broker, wire_protocol::g2_0_9)};
        co_await seed(admin, 2, 10);
        auto g = must(co_await admin.create_consumer_group(identifier::named("s"), identifier::named("t"), "g"),
                      "create group");
        CHECK(g.name == "g");
        iggy::client a{ex, options_for(broker, wire_protocol::g2_0_9)};
        iggy::client b{ex, options_for(broker, wire_protocol::g2_0_9)};
        must(co_await a.join_consumer_group(identifier::named("s"), identifier::named("t"), identifier::named("g")),
             "join a");
        must(co_await b.join_consumer_group(identifier::named("s"), identifier::named("t"), identifier::named("g")),
             "join b");
        const auto grp = consumer::group(identifier::named("g"));
        std::set<std::uint32_t> seen_a, seen_b;
        for (int i = 0; i < 4; ++i) {
            // a joined alone first and may still hold a pending revocation: it commits what it
            // polled so the hand-over completes (cooperative, as in G1).
            auto pa = must(co_await a.poll_messages(grp, identifier::named("s"), identifier::named("t"), std::nullopt,
                                                    polling_strategy::next(), 100, false),
                           "poll a");
            if (!pa.messages.empty()) {
                seen_a.insert(pa.partition_id);
                must(co_await a.store_offset(grp, identifier::named("s"), identifier::named("t"), pa.partition_id,
                                             pa.messages.back().offset),
                     "store a");
            }
            auto pb = must(co_await b.poll_messages(grp, identifier::named("s"), identifier::named("t"), std::nullopt,
                                                    polling_strategy::next(), 100, false),
                           "poll b");
            if (!pb.messages.empty()) {
                seen_b.insert(pb.partition_id);
                must(co_await b.store_offset(grp, identifier::named("s"), identifier::named("t"), pb.partition_id,
                                             pb.messages.back().offset),
                     "store b");
            }
        }
        CHECK_FALSE(seen_b.empty());
        std::set<std::uint32_t> both;
        both.insert(seen_a.begin(), seen_a.end());
        both.insert(seen_b.begin(), seen_b.end());
        CHECK(both == std::set<std::uint32_t>{0, 1});
        // A poll on a partition the member does not own answers the re-sync sentinel, which
        // the client turns into an empty batch and a fresh sync.
        const std::uint32_t not_b = *seen_b.begin() == 0 ? 1u : 0u;
        auto foreign = must(co_await b.poll_messages(grp, identifier::named("s"), identifier::named("t"), not_b,
                                                     polling_strategy::next(), 10, false),
                            "poll foreign");
        CHECK(foreign.messages.empty());
        must(co_await a.leave_consumer_group(identifier::named("s"), identifier::named("t"), identifier::named("g")),
             "leave");
        auto all = must(co_await b.poll_messages(grp, identifier::named("s"), identifier::named("t"), not_b,
                                                 polling_strategy::first(), 10, false),
                        "poll after leave");
        CHECK(all.partition_id == not_b);  // b owns everything after a left (full rebalance)
        co_await a.close();
        co_await b.close();
        co_await admin.close();
    });
}

TEST_CASE("iggy.protocol auto detects a G1 and a G2 broker and logs it", "[g2][auto]") {
    for (const char* mode : {"0.8", "0.9", "auto"}) {
        broker_process broker{{"--protocol", mode}};
        const auto found = run([&](auto ex) -> net::awaitable<wire_protocol> {
            iggy::client c{ex, options_for(broker, wire_protocol::automatic)};
            must(co_await c.connect(), "connect");
            must(co_await c.create_stream("s"), "create stream");
            must(co_await c.ping(), "ping");
            auto p = c.protocol_in_use();
            co_await c.close();
            co_return p;
        });
        INFO("broker --protocol " << mode);
        CHECK(found == (std::string_view{mode} == "0.8" ? wire_protocol::g1_0_8 : wire_protocol::g2_0_9));
    }
}

TEST_CASE("version gate: Eviction 14 reports the window; auto follows it (0.12.0 provisional)", "[g2][version]") {
    broker_process broker{{"--protocol", "0.9", "--g2-protocol", "0.12.0"}};
    run([&](auto ex) -> net::awaitable<void> {
        iggy::client strict{ex, options_for(broker, wire_protocol::g2_0_9)};
        auto r = co_await strict.connect();
        REQUIRE_FALSE(r.has_value());
        CHECK(iggy::server_code(r.error()) == 14003u);
        CHECK(iggy::classify(r.error()) == iggy::outcome::fail);
        CHECK(r.error().message().find("0.12.0") != std::string::npos);
        iggy::client autod{ex, options_for(broker, wire_protocol::automatic)};
        must(co_await autod.connect(), "auto connect");
        CHECK(autod.protocol_in_use() == wire_protocol::g2_0_10);
        must(co_await autod.create_stream("s"), "create stream over 0.12.0");
        co_await autod.close();
    });
}

TEST_CASE("TransientNotCommitted is replayed with the same request number and applies once", "[g2][retry]") {
    broker_process broker{{"--protocol", "0.9", "--g2-transient-not-committed", "3"}};
    run([&](auto ex) -> net::awaitable<void> {
        iggy::client c{ex, options_for(broker, wire_protocol::g2_0_9)};
        must(co_await c.create_stream("s"), "create stream (57 then replay)");
        must(co_await c.create_topic(identifier::named("s"), "t", 1), "create topic");
        auto again = co_await c.create_stream("s");
        REQUIRE_FALSE(again.has_value());
        CHECK(iggy::server_code(again.error()) == 1012u);  // the first one applied exactly once
        co_await c.close();
    });
}

namespace {
/// How many requests this client saw answered with `status`.
std::uint64_t answered(const iggy::client& c, std::string_view status) {
    std::uint64_t n = 0;
    for (const auto& [k, v] : c.stats().requests)
        if (k.second == status) n += v;
    return n;
}
}  // namespace

TEST_CASE("TransientNotCommitted replays stop at the budget's attempts and at its deadline", "[g2][retry]") {
    broker_process broker{{"--protocol", "0.9", "--g2-transient-not-committed", "100"}};
    run([&](auto ex) -> net::awaitable<void> {
        using std::chrono::milliseconds;
        {
            // 50 ms budget, 10 ms pause: 5 tries, 4 pauses of exactly 10 ms, then the 57.
            iss::manual_clock clock;
            iss::test::clock_sleeper sleeper{clock};
            auto o = options_for(broker, wire_protocol::g2_0_9);
            o.transient_retry_delay = milliseconds{10};
            o.transient_retry_budget = milliseconds{50};
            o.clock = &clock;
            o.sleeper = &sleeper;
            iggy::client c{ex, o};
            auto r = co_await c.create_stream("s");
            REQUIRE_FALSE(r.has_value());
            CHECK(iggy::server_code(r.error()) == 57u);
            CHECK(answered(c, "57") == 5);
            CHECK(sleeper.waits == std::vector<milliseconds>(4, milliseconds{10}));
            co_await c.close();
        }
        {
            // Wake-ups three times later than asked: the 50 ms deadline on the clock ends the
            // replay after two tries (10 ms wait -> 30 ms; the 20 ms left -> 10 ms wait -> 60 ms).
            iss::manual_clock clock;
            iss::test::clock_sleeper sleeper{clock, 3};
            auto o = options_for(broker, wire_protocol::g2_0_9);
            o.transient_retry_delay = milliseconds{10};
            o.transient_retry_budget = milliseconds{50};
            o.clock = &clock;
            o.sleeper = &sleeper;
            iggy::client c{ex, o};
            auto r = co_await c.create_stream("s");
            REQUIRE_FALSE(r.has_value());
            CHECK(iggy::server_code(r.error()) == 57u);
            CHECK(answered(c, "57") == 2);
            CHECK(sleeper.waits.size() == 2);
            co_await c.close();
        }
    });
}

TEST_CASE("G2 login refusals: bad password is final, not retried", "[g2][auth]") {
    broker_process broker{{"--protocol", "0.9"}};
    run([&](auto ex) -> net::awaitable<void> {
        auto o = options_for(broker, wire_protocol::g2_0_9);
        o.password = iggy_password{"wrong"};
        iggy::client c{ex, o};
        auto r = co_await c.connect();
        REQUIRE_FALSE(r.has_value());
        CHECK(iggy::server_code(r.error()) == 42u);
        CHECK(iggy::classify(r.error()) == iggy::outcome::fail);
        co_await c.close();
    });
}

TEST_CASE("every G2 request capture of the Node SDK is served by the broker without an eviction", "[g2][replay]") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::path{IGGY_TESTDATA_DIR} / "iggy-g2" / "requests";
    if (!fs::is_directory(dir)) {
        const char* ci = std::getenv("CI");
        if (ci == nullptr || std::string_view{ci} != "true") {
            WARN("iggy-g2 captures not found at " << dir << ": skipped");
            return;
        }
        FAIL("iggy-g2 captures missing under CI");
    }
    auto read_hex = [&](const std::string& name) {
        std::ifstream f{dir / (name + ".hex")};
        std::stringstream ss;
        ss << f.rdbuf();
        const std::string hex = ss.str();
        proto::byte_buffer b;
        for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
            if (hex[i] == '\n') break;
            b.push_back(static_cast<std::byte>(std::stoi(hex.substr(i, 2), nullptr, 16)));
        }
        return b;
    };
    broker_process broker{{"--protocol", "auto"}};
    net::io_context ioc{1};
    net::ip::tcp::socket sock{ioc};
    sock.connect({net::ip::make_address("127.0.0.1"), broker.port()});
    // The captures' session is 1001: the broker's first login gets session 1001 too. Order:
    // ping before login, login, then every post-login capture, logout last.
    const std::vector<std::pair<std::string, std::uint32_t>> order{
        {"ping", 0},
        {"login_user", 0},
        {"get_topic", 0},
        {"get_consumer_offset_group", 0},
        // Stream 1 does not exist on an empty broker. Join and the offset store are replicated:
        // their rejection is committed (status 0, 1009 in the result section; see below).
        {"join_consumer_group", 1009},
        {"sync_consumer_group", 0},
        {"poll_messages_group_next_autocommit_false", 1009},
        {"poll_messages_single_offset_autocommit_false", 1009},
        {"store_consumer_offset_group", 1009},
        {"send_messages_partition_id", 1009},
        // Leave carries request 1 like Join did (each capture was taken alone): for the
        // session that is the same replicated request again, so it is answered 59.
        {"leave_consumer_group", 59},
        {"logout", 0}};
    for (const auto& [name, status] : order) {
        INFO(name);
        auto frame = read_hex(name);
        REQUIRE(frame.size() >= 256);
        net::write(sock, net::buffer(frame.data(), frame.size()));
        proto::byte_buffer reply(256);
        net::read(sock, net::buffer(reply.data(), 256));
        const auto size = proto::load_le<std::uint32_t>(reply.data() + 48);
        REQUIRE(size >= 256);
        reply.resize(size);
        if (size > 256) net::read(sock, net::buffer(reply.data() + 256, size - 256));
        auto f = proto::g2::decode_server_frame(reply);
        REQUIRE(f.has_value());
        REQUIRE_FALSE(f->is_eviction());
        if (name == "join_consumer_group" || name == "store_consumer_offset_group") {
            CHECK(f->reply().status == 0);
            auto committed = proto::g2::decode_result_framed(f->body);
            REQUIRE_FALSE(committed.has_value());
            CHECK(committed.error() == proto::server_error(status));
        } else {
            CHECK(f->reply().status == status);
        }
        CHECK(f->reply().request == proto::load_le<std::uint64_t>(frame.data() + 168));  // echoed
        if (name == "login_user") {
            auto r = proto::g2::decode_register_reply(f->body);
            REQUIRE(r.has_value());
            CHECK(r->session == 1001);
        }
    }
    // A G1 login inside a G2 frame: Eviction 15 (MalformedLogin), and the connection closes.
    proto::g2::request_header h;
    h.client = 7;
    h.op = proto::g2::operation::non_replicated;
    h.code = 38;
    h.request = 1;
    proto::byte_buffer g1login;
    proto::g2::append_request(g1login, h, {});
    net::ip::tcp::socket s2{ioc};
    s2.connect({net::ip::make_address("127.0.0.1"), broker.port()});
    net::write(s2, net::buffer(g1login.data(), g1login.size()));
    proto::byte_buffer ev(256);
    net::read(s2, net::buffer(ev.data(), 256));
    auto e = proto::g2::decode_server_frame(ev);
    REQUIRE(e.has_value());
    REQUIRE(e->is_eviction());
    CHECK(e->eviction().reason == proto::g2::eviction_reason::malformed_login);
}

TEST_CASE(
    "committed rejections in the result section: join, leave and store offset fail with the code, the "
    "connection stays",
    "[g2][rejection]") {
    // A 0.9 server applies Join, Leave and StoreConsumerOffset through its state machines: a
    // rejection there is status 0 with the code in the reply's result section (the broker
    // answers so: tests/unit/iggy/broker_g2_test.cpp). The client must surface the code,
    // not success, and keep the session.
    broker_process broker{{"--protocol", "0.9"}};
    run([&](auto ex) -> net::awaitable<void> {
        iggy::client c{ex, options_for(broker, wire_protocol::g2_0_9)};
        co_await seed(c, 2, 3);
        const auto s = identifier::named("s"), t = identifier::named("t"), g = identifier::named("g");
        auto expect_code = [](const result<void>& r, std::uint32_t code, std::string_view what) {
            INFO(what << ": " << (r ? std::string{"success"} : iggy::describe(r.error())));
            REQUIRE_FALSE(r.has_value());
            CHECK(r.error().code() == proto::server_error(code));
        };
        // Join an unknown group: 5000 ConsumerGroupIdNotFound; not remembered for re-joins.
        expect_code(co_await c.join_consumer_group(s, t, g), 5000, "join unknown group");
        must(co_await c.create_consumer_group(s, t, "g"), "create group");
        // Leave a group this client is not a member of: 5006 ConsumerGroupMemberNotFound.
        expect_code(co_await c.leave_consumer_group(s, t, g), 5006, "leave without join");
        // A group offset store by a non-member: 5006 as well.
        expect_code(co_await c.store_offset(consumer::group(g), s, t, 0u, 1), 5006, "store as non-member");
        // The same session goes on: join, store and leave now succeed.
        must(co_await c.join_consumer_group(s, t, g), "join");
        auto p =
            must(co_await c.poll_messages(consumer::group(g), s, t, std::nullopt, polling_strategy::next(), 10, false),
                 "poll");
        REQUIRE_FALSE(p.messages.empty());
        must(co_await c.store_offset(consumer::group(g), s, t, p.partition_id, p.messages.back().offset), "store");
        auto o = must(co_await c.get_offset(consumer::group(g), s, t, p.partition_id), "get offset");
        REQUIRE(o);
        CHECK(o->stored_offset == p.messages.back().offset);
        must(co_await c.leave_consumer_group(s, t, g), "leave");
        co_await c.close();
    });
}

TEST_CASE("G2 heartbeat: a member silent past it is evicted (13): 30 at once, then reconnect, re-join, resume",
          "[g2][evict]") {
    broker_process broker{{"--protocol", "0.9", "--heartbeat", "1s"}};  // evicted after 1.2 s of silence
    log_capture logs;
    run([&](auto ex) -> net::awaitable<void> {
        auto admin_opts = options_for(broker, wire_protocol::g2_0_9);
        admin_opts.ping_interval = std::chrono::milliseconds{100};  // keeps the admin's session alive
        iggy::client admin{ex, admin_opts};
        co_await seed(admin, 1, 20);
        must(co_await admin.create_consumer_group(identifier::named("s"), identifier::named("t"), "g"), "create group");
        auto member_opts = options_for(broker, wire_protocol::g2_0_9);
        member_opts.ping_interval = std::chrono::milliseconds{0};  // a frozen process sends nothing
        iggy::client m{ex, member_opts};
        const auto s = identifier::named("s"), t = identifier::named("t"), g = identifier::named("g");
        const auto grp = consumer::group(g);
        must(co_await m.join_consumer_group(s, t, g), "join");
        auto first =
            must(co_await m.poll_messages(grp, s, t, std::nullopt, polling_strategy::next(), 5, false), "poll");
        REQUIRE(first.messages.size() == 5);
        must(co_await m.store_offset(grp, s, t, first.partition_id, first.messages.back().offset), "store");
        CHECK(m.generation() == 1);
        co_await pause(std::chrono::milliseconds{2500});  // past 1.2 x heartbeat: the group drops m
        {
            const bool gone = co_await until_members(admin, 0);
            CHECK(gone);
        }
        // The server ended the session: the call fails at once (retry), never an empty batch
        // that looks like a member without partitions.
        auto evicted = co_await m.poll_messages(grp, s, t, std::nullopt, polling_strategy::next(), 5, false);
        REQUIRE_FALSE(evicted.has_value());
        CHECK(iggy::server_code(evicted.error()) == 30u);
        CHECK(iggy::classify(evicted.error()) == iggy::outcome::retry);
        CHECK_FALSE(m.connected());
        CHECK(logs.has_warn("the server ended the session"));
        // The next call reconnects (a new member), re-joins, and reads on from the group's offset.
        auto again = must(co_await m.poll_messages(grp, s, t, std::nullopt, polling_strategy::next(), 5, false),
                          "poll after the eviction");
        CHECK(m.generation() == 2);
        REQUIRE(again.messages.size() == 5);
        CHECK(again.messages.front().offset == 5);
        {
            const int members = co_await members_count(admin);
            CHECK(members == 1);
        }
        co_await m.close();
        co_await admin.close();
    });
}

TEST_CASE("G2 evictions by the server's controls: the session (30, reconnect) and the membership alone (5006, join)",
          "[g2][evict]") {
    broker_process broker{{"--protocol", "0.9"}};
    log_capture logs;
    run([&](auto ex) -> net::awaitable<void> {
        iggy::client admin{ex, options_for(broker, wire_protocol::g2_0_9)};
        co_await seed(admin, 2, 10);
        must(co_await admin.create_consumer_group(identifier::named("s"), identifier::named("t"), "g"), "create group");
        iggy::client m{ex, options_for(broker, wire_protocol::g2_0_9)};
        const auto s = identifier::named("s"), t = identifier::named("t"), g = identifier::named("g");
        const auto grp = consumer::group(g);
        must(co_await m.join_consumer_group(s, t, g), "join");
        auto p = must(co_await m.poll_messages(grp, s, t, std::nullopt, polling_strategy::first(), 3, false), "poll");
        REQUIRE(p.messages.size() == 3);

        // Membership lost, session alive: the partition-less poll answers 5006 as in G1 (not an
        // empty batch, which would park the caller as a member without partitions).
        broker.control(SIGUSR2);
        {
            const bool dropped = co_await until_members(admin, 0);
            REQUIRE(dropped);
        }
        // The first poll may name a partition of the old assignment (5006 from the poll itself);
        // from then on the client syncs, and the sync's "not a member" is 5006 too.
        for (int i = 0; i < 3; ++i) {
            auto lost = co_await m.poll_messages(grp, s, t, std::nullopt, polling_strategy::first(), 3, false);
            REQUIRE_FALSE(lost.has_value());
            CHECK(iggy::server_code(lost.error()) == 5006u);
        }
        CHECK(m.connected());
        CHECK(m.generation() == 1);
        CHECK(logs.has_warn("no longer counts this client as a member"));
        auto explicit_poll = co_await m.poll_messages(grp, s, t, 0u, polling_strategy::first(), 3, false);
        REQUIRE_FALSE(explicit_poll.has_value());
        CHECK(iggy::server_code(explicit_poll.error()) == 5006u);
        must(co_await m.join_consumer_group(s, t, g), "join again");
        auto back = must(co_await m.poll_messages(grp, s, t, std::nullopt, polling_strategy::first(), 3, false),
                         "poll after joining again");
        CHECK(back.messages.size() == 3);

        // The session evicted: 30 (retry), the next call reconnects and re-joins by itself.
        broker.control(SIGUSR1);
        {
            const bool expired = co_await until_members(admin, 0);
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
            const int members = co_await members_count(admin);
            CHECK(members == 1);
        }
        co_await m.close();
        co_await admin.close();
    });
}

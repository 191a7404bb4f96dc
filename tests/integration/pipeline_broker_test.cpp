// SPDX-License-Identifier: Apache-2.0
// The pipeline's consumer loop and Iggy adapters against iggy-test-broker (0.8.0 semantics),
// with the unit tests' in-memory object store. What the server does to a group (cooperative
// hand-over, full rebalance on disconnect) drives the loop; the bucket must end up with each
// (partition, offset) exactly once.
#include "fakes.hpp"
#include "iggy/client.hpp"
#include "iggy/error.hpp"
#include "pipeline/adapters/iggy_ports.hpp"
#include "pipeline/consumer.hpp"
#include "tests/integration/broker_child.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_future.hpp>

#include "catch2_compat.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

namespace net = boost::asio;
namespace pl = iss::pipeline;
using namespace std::chrono_literals;
using iss::proto::identifier;

namespace {

class broker_process {
public:
    explicit broker_process(std::vector<std::string> extra = {}) {
        const auto child = iss::test::spawn_broker(IGGY_TEST_BROKER, 0, extra);
        pid_ = child.pid;
        port_ = child.port;
    }
    ~broker_process() {
        ::kill(pid_, SIGKILL);
        int st = 0;
        ::waitpid(pid_, &st, 0);
    }
    broker_process(const broker_process&) = delete;
    broker_process& operator=(const broker_process&) = delete;
    [[nodiscard]] std::uint16_t port() const { return port_; }
    /// Sends a test control (SIGUSR1: expire the group members; SIGUSR2: drop memberships).
    void control(int sig) const { ::kill(pid_, sig); }

private:
    pid_t pid_ = -1;
    std::uint16_t port_ = 0;
};

iss::iggy::client_options opts(const broker_process& b,
                               iss::iggy::wire_protocol protocol = iss::iggy::wire_protocol::g1_0_8) {
    iss::iggy::client_options o;
    o.protocol = protocol;
    o.port = b.port();
    o.password = iss::iggy_password{"iggy"};
    o.reconnect_backoff = {10ms, 200ms};
    o.ping_interval = 0ms;
    return o;
}

template <class F>
void run_on_loop(F&& f) {
    net::io_context io{1};
    auto fut = net::co_spawn(io, f(io.get_executor()), net::use_future);
    io.run();
    fut.get();
}

template <class T>
T must(iss::result<T> r, std::string_view what) {
    INFO(what << ": " << (r ? std::string{} : iss::iggy::describe(r.error())));
    REQUIRE(r.has_value());
    return std::move(*r);
}
void must(iss::result<void> r, std::string_view what) {
    INFO(what << ": " << (r ? std::string{} : iss::iggy::describe(r.error())));
    REQUIRE(r.has_value());
}

/// Creates app/events with `partitions` and sends `per_partition` messages to each.
net::awaitable<void> produce(iss::iggy::client& c, std::uint32_t partitions, int per_partition, bool create) {
    if (create) {
        must(co_await c.create_stream("app"), "create stream");
        must(co_await c.create_topic(identifier::named("app"), "events", partitions), "create topic");
    }
    std::deque<std::string> payloads;
    for (std::uint32_t p = 0; p < partitions; ++p) {
        for (int done = 0; done < per_partition;) {
            std::vector<iss::iggy::outgoing_message> batch;
            for (int i = 0; i < 100 && done < per_partition; ++i, ++done) {
                payloads.push_back(fmt::format("{{\"p\":{},\"i\":{}}}", p, done));
                iss::iggy::outgoing_message m;
                m.payload = std::as_bytes(std::span{payloads.back().data(), payloads.back().size()});
                batch.push_back(m);
            }
            must(co_await c.send_messages(identifier::named("app"), identifier::named("events"),
                                          iss::proto::partitioning::to_partition(p), batch),
                 "send");
        }
    }
}

/// One sink instance: a client, its ports, a router and a loop over a shared world (bucket).
struct sink {
    sink(net::any_io_executor ex, const broker_process& b, fakes::world& w, bool group, std::string name,
         iss::iggy::wire_protocol protocol = iss::iggy::wire_protocol::g1_0_8)
        : client{ex, opts(b, protocol)}, ports{client, pl::iggy_ports_options{group, std::move(name), false, {}}} {
        w.options.mode = group ? pl::consumer_mode::group : pl::consumer_mode::single;
        router = std::make_unique<pl::router>(
            w.options, w.policy(), pl::writer_ports{w.store, ports, w.encoders, w.namer, w.sleeper, w.clock, nullptr});
        pl::consumer_options co;
        co.mode = w.options.mode;
        co.sources = {pl::source_topic{{"app", "events"}, std::nullopt}};
        co.poll_messages = 100;
        loop = std::make_unique<pl::consumer_loop>(co, ports, *router, w.sleeper, w.clock);
    }
    iss::iggy::client client;
    pl::iggy_ports ports;
    std::unique_ptr<pl::router> router;
    std::unique_ptr<pl::consumer_loop> loop;
};

/// (partition, offset) -> times in the bucket. Keys end in "/partition=<p>/<offset>.jsonl".
std::map<std::pair<std::uint32_t, std::uint64_t>, int> bucket(const fakes::world& w) {
    std::map<std::pair<std::uint32_t, std::uint64_t>, int> out;
    for (const auto& [k, o] : w.store.objects) {
        const auto at = k.find("partition=");
        const auto p = static_cast<std::uint32_t>(std::stoul(k.substr(at + 10)));
        std::string_view b = o.body;
        while (!b.empty()) {
            const auto nl = b.find('\n');
            const auto line = b.substr(0, nl);
            out[{p, std::stoull(std::string{line.substr(0, line.find(':'))})}] += 1;
            b.remove_prefix(nl + 1);
        }
    }
    return out;
}

net::awaitable<std::optional<std::uint64_t>> stored(iss::iggy::client& c, iss::proto::consumer who, std::uint32_t p) {
    auto r = must(co_await c.get_offset(who, identifier::named("app"), identifier::named("events"), p), "get offset");
    if (!r) co_return std::nullopt;
    co_return r->stored_offset;
}

void check_exactly_once(const fakes::world& w, std::uint32_t partitions, std::uint64_t per_partition) {
    const auto b = bucket(w);
    CHECK(b.size() == partitions * per_partition);
    for (const auto& [k, n] : b) {
        INFO("partition " << k.first << " offset " << k.second);
        CHECK(n == 1);
    }
    CHECK(w.store.overwrites == 0);
}

}  // namespace

TEST_CASE("single consumer: every partition polled by explicit offset, committed after upload", "[single]") {
    broker_process b;
    fakes::world w;
    w.rotation.max_records = 120;
    run_on_loop([&](net::any_io_executor ex) -> net::awaitable<void> {
        iss::iggy::client admin{ex, opts(b)};
        co_await produce(admin, 3, 500, true);
        sink s{ex, b, w, false, "solo"};
        {
            const auto v1 = co_await s.loop->start();
            REQUIRE(v1);
        }
        for (int i = 0; i < 100; ++i) co_await s.loop->round();
        {
            const auto v2 = co_await s.loop->shutdown();
            REQUIRE(v2);
        }
        for (std::uint32_t p = 0; p < 3; ++p) {
            {
                const auto v3 = co_await stored(admin, iss::proto::consumer::single(identifier::named("solo")), p);
                CHECK(v3 == 499u);
            }
        }
        co_await s.client.close();
        co_await admin.close();
    });
    check_exactly_once(w, 3, 500);
}

TEST_CASE("group: a partition handed to a new member is uploaded and committed at once by the old one", "[handover]") {
    broker_process b{{"--rebalance-timeout", "120s"}};  // only our commit can complete the hand-over
    fakes::world w;
    w.rotation.max_records = 100'000;  // nothing rotates by itself
    run_on_loop([&](net::any_io_executor ex) -> net::awaitable<void> {
        iss::iggy::client admin{ex, opts(b)};
        co_await produce(admin, 3, 300, true);
        sink a{ex, b, w, true, "g"};
        {
            const auto v4 = co_await a.loop->start();
            REQUIRE(v4);
        }  // creates the group; the first member gets everything
        for (int i = 0; i < 10; ++i) co_await a.loop->round();
        CHECK(a.loop->assignment().size() == 3);
        CHECK(w.store.objects.empty());
        sink bb{ex, b, w, true, "g"};
        {
            const auto v5 = co_await bb.loop->start();
            REQUIRE(v5);
        }
        // cooperative rebalance: one partition pending revocation
        w.clock.advance(2s);  // the next round re-learns the assignment
        co_await a.loop->round();
        CHECK(a.loop->assignment().size() == 2);
        CHECK(w.store.objects.size() == 1);  // the handed-over partition, uploaded at once
        const auto given = w.store.objects.begin()->second.range;
        CHECK(given == pl::object_range{0, 299, 300});
        for (int i = 0; i < 3; ++i) co_await bb.loop->round();
        CHECK(bb.loop->assignment().size() == 1);  // our commit completed the revocation
        co_await produce(admin, 3, 100, false);
        for (int i = 0; i < 20; ++i) {
            co_await a.loop->round();
            co_await bb.loop->round();
        }
        {
            const auto v6 = co_await a.loop->shutdown();
            REQUIRE(v6);
        }
        {
            const auto v7 = co_await bb.loop->shutdown();
            REQUIRE(v7);
        }
        for (std::uint32_t p = 0; p < 3; ++p) {
            const auto v8 = co_await stored(admin, iss::proto::consumer::group(identifier::named("g")), p);
            CHECK(v8 == 399u);
        }
        co_await a.client.close();
        co_await bb.client.close();
        co_await admin.close();
    });
    check_exactly_once(w, 3, 400);
    CHECK(w.store.objects.size() >= 4);
}

TEST_CASE("group: a member that disappears loses only what it held; the others re-read it", "[failover]") {
    broker_process b;
    fakes::world w;
    w.rotation.max_records = 250;
    run_on_loop([&](net::any_io_executor ex) -> net::awaitable<void> {
        iss::iggy::client admin{ex, opts(b)};
        co_await produce(admin, 2, 400, true);
        auto a = std::make_unique<sink>(ex, b, w, true, "g");
        {
            const auto v9 = co_await a->loop->start();
            REQUIRE(v9);
        }
        for (int i = 0; i < 3; ++i) co_await a->loop->round();  // 250 uploaded per partition, the rest held
        sink bb{ex, b, w, true, "g"};
        {
            const auto v10 = co_await bb.loop->start();
            REQUIRE(v10);
        }
        co_await a->client.close();  // A dies: full rebalance, B owns everything
        a.reset();                   // A's buffers are gone without an upload
        w.clock.advance(2s);
        for (int i = 0; i < 20; ++i) {
            co_await bb.loop->round();
            w.clock.advance(2s);
        }
        CHECK(bb.loop->assignment().size() == 2);
        {
            const auto v11 = co_await bb.loop->shutdown();
            REQUIRE(v11);
        }
        co_await bb.client.close();
        co_await admin.close();
    });
    check_exactly_once(w, 2, 400);
}

TEST_CASE("group: a member the server evicts while it polls re-joins and resumes; nothing lost or doubled", "[evict]") {
    // Over both transports; SIGUSR1 ends the session (G1: 30, G2: Eviction 13), SIGUSR2 drops
    // only the membership (G1: 5006, G2: SyncConsumerGroup "not a member").
    const auto protocol = GENERATE(iss::iggy::wire_protocol::g1_0_8, iss::iggy::wire_protocol::g2_0_9);
    const int control = GENERATE(SIGUSR1, SIGUSR2);
    INFO("protocol " << iss::iggy::wire_protocol_name(protocol) << ", control "
                     << (control == SIGUSR1 ? "SIGUSR1" : "SIGUSR2"));
    broker_process b;  // serves G1 and G2 on one port
    fakes::world w;
    w.rotation.max_records = 250;
    w.rotation.idle = 1s;  // the manual clock moves 2 s a round: a quiet partition flushes
    run_on_loop([&](net::any_io_executor ex) -> net::awaitable<void> {
        iss::iggy::client admin{ex, opts(b)};
        co_await produce(admin, 2, 400, true);
        sink s{ex, b, w, true, "g", protocol};
        {
            const auto started = co_await s.loop->start();
            REQUIRE(started);
        }
        for (int i = 0; i < 3; ++i) {  // 300 polled per partition: 250 uploaded and committed, the rest held
            co_await s.loop->round();
            w.clock.advance(2s);
        }
        CHECK(s.loop->assignment().size() == 2);
        const auto before = s.client.generation();
        b.control(control);
        for (int i = 0; i < 500; ++i) {  // until the server has dropped the member (signals are async)
            auto g = must(co_await admin.get_consumer_group(identifier::named("app"), identifier::named("events"),
                                                            identifier::named("g")),
                          "get group");
            REQUIRE(g.has_value());
            if (g->members.empty()) break;
            net::steady_timer t{ex, 20ms};
            co_await t.async_wait(net::use_awaitable);
        }
        const auto group = iss::proto::consumer::group(identifier::named("g"));
        auto delivered = [&]() -> net::awaitable<bool> {
            for (std::uint32_t p = 0; p < 2; ++p) {
                const auto o = co_await stored(admin, group, p);
                if (o != std::optional<std::uint64_t>{399}) co_return false;
            }
            co_return true;
        };
        bool done = false;
        for (int i = 0; i < 40 && !done; ++i) {
            co_await s.loop->round();
            co_await s.router->tick();
            w.clock.advance(2s);
            done = co_await delivered();
        }
        CHECK(done);  // before: the member polled on as one without partitions, lag never fell
        CHECK(s.loop->assignment().size() == 2);
        if (control == SIGUSR1) {
            CHECK(s.client.generation() > before);  // a new session, so a new member
        }
        co_await produce(admin, 2, 100, false);
        for (int i = 0; i < 10; ++i) {
            co_await s.loop->round();
            co_await s.router->tick();
            w.clock.advance(2s);
        }
        {
            const auto stopped = co_await s.loop->shutdown();
            REQUIRE(stopped);
        }
        for (std::uint32_t p = 0; p < 2; ++p) {
            const auto o = co_await stored(admin, group, p);
            CHECK(o == std::optional<std::uint64_t>{499});
        }
        co_await s.client.close();
        co_await admin.close();
    });
    check_exactly_once(w, 2, 500);
}

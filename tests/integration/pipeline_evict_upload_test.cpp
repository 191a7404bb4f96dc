// SPDX-License-Identifier: Apache-2.0
// The consumer loop, the Iggy adapters and the S3 store against iggy-test-broker and the real
// Ceph RGW of the `rgw` fixture, through the fault front (tests/support/s3/fault_front.hpp):
// the front holds the first PutObject while the broker evicts the group member (its test
// controls, SIGUSR1 / SIGUSR2). The held upload lands, the member notices the eviction,
// re-joins and resumes, and the bucket ends with every (partition, offset) exactly once.
#include "fakes.hpp"
#include "iggy/client.hpp"
#include "iggy/error.hpp"
#include "pipeline/adapters/iggy_ports.hpp"
#include "pipeline/adapters/s3_store.hpp"
#include "pipeline/consumer.hpp"
#include "s3/client.hpp"
#include "s3/fault_front.hpp"
#include "tests/integration/broker_child.hpp"
#include "tests/support/fixture_env.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_future.hpp>

#include "catch2_compat.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>

namespace net = boost::asio;
namespace pl = iss::pipeline;
using namespace std::chrono_literals;
using iss::proto::identifier;

namespace {

std::map<std::string, std::string> rgw_env() { return iss::test::fixture_env("RGW_DIR", "rgw"); }

iss::s3::client_options s3_options(const std::map<std::string, std::string>& env, std::string endpoint) {
    iss::s3::client_options o;
    o.endpoint = std::move(endpoint);
    o.region = env.at("RGW_REGION");
    o.credentials = {
        iss::access_key_id{env.at("RGW_ACCESS_KEY")}, iss::secret_access_key{env.at("RGW_SECRET_KEY")}, {}};
    o.retry.base = 20ms;
    o.retry.cap = 200ms;
    o.retry.attempts = 6;
    o.retry.deadline = 20s;
    o.part_size = 5ULL << 20;
    return o;
}

class broker_process {
public:
    broker_process() {
        const auto child = iss::test::spawn_broker(IGGY_TEST_BROKER, 0, {});
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
    void control(int sig) const { ::kill(pid_, sig); }

private:
    pid_t pid_ = -1;
    std::uint16_t port_ = 0;
};

iss::iggy::client_options iggy_options(const broker_process& b, iss::iggy::wire_protocol p) {
    iss::iggy::client_options o;
    o.protocol = p;
    o.port = b.port();
    o.password = iss::iggy_password{"iggy"};
    o.reconnect_backoff = {10ms, 200ms};
    o.ping_interval = 0ms;
    return o;
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

net::awaitable<void> pause(std::chrono::milliseconds d) {
    net::steady_timer t{co_await net::this_coro::executor, d};
    co_await t.async_wait(net::use_awaitable);
}

net::awaitable<std::size_t> members(iss::iggy::client& admin) {
    auto g = must(co_await admin.get_consumer_group(identifier::named("app"), identifier::named("events"),
                                                    identifier::named("g")),
                  "get group");
    co_return g ? g->members.size() : 0;
}

net::awaitable<std::optional<std::uint64_t>> committed(iss::iggy::client& admin, std::uint32_t p) {
    auto r = must(co_await admin.get_offset(iss::proto::consumer::group(identifier::named("g")),
                                            identifier::named("app"), identifier::named("events"), p),
                  "get offset");
    if (!r) co_return std::nullopt;
    co_return r->stored_offset;
}

}  // namespace

TEST_CASE(
    "group: the server evicts the member while its upload is held; it lands once, the member re-joins and "
    "resumes",
    "[evict_upload]") {
    const auto protocol = GENERATE(iss::iggy::wire_protocol::g1_0_8, iss::iggy::wire_protocol::g2_0_9);
    const int control = GENERATE(SIGUSR1, SIGUSR2);
    INFO("protocol " << iss::iggy::wire_protocol_name(protocol) << ", control "
                     << (control == SIGUSR1 ? "SIGUSR1 (session)" : "SIGUSR2 (membership)"));
    const auto env = rgw_env();
    broker_process broker;
    static std::mt19937_64 rng{std::random_device{}()};
    const std::string bucket = fmt::format("t-evict-upload-{:08x}", static_cast<std::uint32_t>(rng()));

    net::io_context io{1};
    iss::test::fault_front front{io.get_executor(), iss::http::parse_url(env.at("RGW_ENDPOINT")).value()};
    iss::s3::client direct{io.get_executor(), s3_options(env, env.at("RGW_ENDPOINT"))};
    iss::s3::client via_front{io.get_executor(), s3_options(env, front.url())};
    // The first PutObject of the sink is held for 3 s at the front (then forwarded).
    front.add_rule({"PUT", "/" + bucket + "/app/", iss::test::fault::delay, 0, 1, 3000ms});

    fakes::world w;
    w.options.mode = pl::consumer_mode::group;
    // RGW honours If-None-Match on PutObject, not on CompleteMultipartUpload.
    w.options.plan = *pl::plan_delivery({true, false}, pl::conditional_writes::auto_detect, pl::consumer_mode::group);
    w.options.part_size = 5ULL << 20;
    w.rotation.max_records = 100;
    w.rotation.idle = 1s;

    std::optional<std::chrono::steady_clock::time_point> put_seen, signalled;
    std::exception_ptr watcher_error;
    auto fut = net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
            must(co_await direct.create_bucket(bucket), "create bucket");
            iss::iggy::client admin{io.get_executor(), iggy_options(broker, iss::iggy::wire_protocol::g1_0_8)};
            must(co_await admin.create_stream("app"), "create stream");
            must(co_await admin.create_topic(identifier::named("app"), "events", 1), "create topic");
            std::deque<std::string> payloads;
            std::vector<iss::iggy::outgoing_message> batch;
            for (int i = 0; i < 300; ++i) {
                payloads.push_back(fmt::format("{{\"i\":{}}}", i));
                iss::iggy::outgoing_message m;
                m.payload = std::as_bytes(std::span{payloads.back().data(), payloads.back().size()});
                batch.push_back(m);
            }
            must(co_await admin.send_messages(identifier::named("app"), identifier::named("events"),
                                              iss::proto::partitioning::to_partition(0), batch),
                 "send");

            iss::iggy::client client{io.get_executor(), iggy_options(broker, protocol)};
            pl::iggy_ports ports{client, pl::iggy_ports_options{true, "g", false, {}}};
            pl::s3_store store{via_front, bucket};
            pl::router router{w.options, w.policy(),
                              pl::writer_ports{store, ports, w.encoders, w.namer, w.sleeper, w.clock, nullptr}};
            pl::consumer_options co;
            co.mode = pl::consumer_mode::group;
            co.sources = {pl::source_topic{{"app", "events"}, std::nullopt}};
            co.poll_messages = 100;
            pl::consumer_loop loop{co, ports, router, w.sleeper, w.clock};
            {
                const bool started = co_await loop.start();
                REQUIRE(started);
            }

            // The watcher: as soon as the front holds the PutObject, the broker evicts the member.
            net::co_spawn(
                io,
                [&]() -> net::awaitable<void> {
                    for (int i = 0; i < 2000 && !signalled; ++i) {
                        for (const auto& r : front.requests())
                            if (r.method == "PUT" && r.applied == iss::test::fault::delay) put_seen = r.at;
                        if (put_seen) {
                            broker.control(control);
                            signalled = std::chrono::steady_clock::now();
                        }
                        co_await pause(10ms);
                    }
                },
                [&](std::exception_ptr e) { watcher_error = e; });

            bool done = false;
            for (int i = 0; i < 60 && !done; ++i) {
                co_await loop.round();
                co_await router.tick();
                w.clock.advance(2s);
                const auto c = co_await committed(admin, 0);
                done = c == std::optional<std::uint64_t>{299};
            }
            CHECK(done);
            REQUIRE(put_seen);
            REQUIRE(signalled);
            CHECK(*signalled - *put_seen < 2500ms);  // the eviction came while the upload was held
            {
                const auto n = co_await members(admin);
                CHECK(n == 1);  // a member of the group again
            }
            CHECK(loop.assignment().size() == 1);
            if (control == SIGUSR1) CHECK(client.generation() >= 2);
            {
                const bool stopped = co_await loop.shutdown();
                CHECK(stopped);
            }

            // What landed, read straight from RGW: offsets 0..299, each exactly once.
            std::map<std::uint64_t, int> seen;
            auto page = must(co_await direct.list_objects_v2(bucket, {}), "list");
            for (const auto& o : page.objects) {
                auto g = must(co_await direct.get_object(bucket, o.key), "get");
                std::string_view b = g.body;
                while (!b.empty()) {
                    const auto nl = b.find('\n');
                    const auto line = b.substr(0, nl);
                    seen[std::stoull(std::string{line.substr(0, line.find(':'))})] += 1;
                    b.remove_prefix(nl == std::string_view::npos ? b.size() : nl + 1);
                }
            }
            CHECK(seen.size() == 300);
            for (const auto& [offset, n] : seen) {
                INFO("offset " << offset);
                CHECK(n == 1);
            }
            co_await client.close();
            co_await admin.close();
            front.stop();
        },
        net::use_future);
    io.run();
    fut.get();
    if (watcher_error) std::rethrow_exception(watcher_error);
}

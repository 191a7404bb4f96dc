// SPDX-License-Identifier: Apache-2.0
// bench_iggy: client-from-broker poll throughput on loopback and iggy-produce throughput.
//   build/tests/bench/bench_iggy [messages, default 200000] [message bytes, default 1024]
// Starts iggy-test-broker (a separate process, so the client's CPU time is its own), fills one
// partition with iggy-produce (timed), then polls everything back with lib/iggy in batches of
// 1000 (Offset strategy, no auto-commit) and reports messages/s, MB/s and client CPU seconds.
// Not a test: numbers only, never run by the test command.

#include "common/log.hpp"
#include "iggy/client.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

namespace net = boost::asio;
using namespace iss;

namespace {

double cpu_seconds() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct broker {
    pid_t pid = -1;
    std::uint16_t port = 0;
    broker() {
        int fds[2];
        if (::pipe(fds) != 0) throw std::runtime_error("pipe");
        pid = ::fork();
        if (pid == 0) {
            ::dup2(fds[1], 1);
            ::close(fds[0]);
            ::close(fds[1]);
            ::execl(IGGY_TEST_BROKER, IGGY_TEST_BROKER, "--listen", "127.0.0.1:0", static_cast<char*>(nullptr));
            ::_exit(127);
        }
        ::close(fds[1]);
        std::string line;
        char ch = 0;
        while (::read(fds[0], &ch, 1) == 1 && ch != '\n') line += ch;
        ::close(fds[0]);
        auto colon = line.rfind(':');
        if (colon == std::string::npos) throw std::runtime_error("broker did not start: " + line);
        port = static_cast<std::uint16_t>(std::stoi(line.substr(colon + 1)));
    }
    ~broker() {
        ::kill(pid, SIGTERM);
        int st = 0;
        ::waitpid(pid, &st, 0);
    }
};

}  // namespace

int main(int argc, char** argv) {
    const std::uint64_t messages = argc > 1 ? std::stoull(argv[1]) : 200'000;
    const std::size_t size = argc > 2 ? std::stoul(argv[2]) : 1024;
    iss::log::configure(iss::log::level::warn, iss::log::output_format::text);
    broker b;

    // 1. iggy-produce: synthetic JSON messages of `size` bytes, batches of 1000, one partition.
    const auto cmd = fmt::format(
        "{} --address 127.0.0.1:{} --stream bench --topic t --create 1 --partition 0 "
        "--count {} --size {} --batch 1000",
        IGGY_PRODUCE, b.port, messages, size);
    const auto p0 = std::chrono::steady_clock::now();
    if (std::system(cmd.c_str()) != 0) {
        std::fprintf(stderr, "iggy-produce failed\n");
        return 1;
    }
    const double produce_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - p0).count();
    fmt::print("iggy-produce: {} messages x {} B in {:.3f} s = {:.0f} msg/s, {:.1f} MB/s (process wall time)\n",
               messages, size, produce_s, static_cast<double>(messages) / produce_s,
               static_cast<double>(messages * size) / produce_s / 1e6);

    // 2. Poll everything back, batches of 1000.
    net::io_context ioc{1};
    auto fut = net::co_spawn(
        ioc,
        [&]() -> net::awaitable<int> {
            iggy::client_options o;
            o.port = b.port;
            o.password = iggy_password{"iggy"};
            o.ping_interval = std::chrono::milliseconds{0};
            iggy::client c{co_await net::this_coro::executor, o};
            if (auto r = co_await c.connect(); !r) {
                fmt::print(stderr, "connect: {}\n", iggy::describe(r.error()));
                co_return 1;
            }
            const auto s = iggy::identifier::named("bench"), t = iggy::identifier::named("t");
            const auto reader = iggy::consumer::single(iggy::identifier::numeric(1));
            for (int round = 0; round < 3; ++round) {
                std::uint64_t next = 0, got = 0, bytes = 0;
                const double cpu0 = cpu_seconds();
                const auto t0 = std::chrono::steady_clock::now();
                while (next < messages) {
                    auto r =
                        co_await c.poll_messages(reader, s, t, 0, iggy::polling_strategy::at_offset(next), 1000, false);
                    if (!r) {
                        fmt::print(stderr, "poll: {}\n", iggy::describe(r.error()));
                        co_return 1;
                    }
                    if (r->messages.empty()) break;
                    for (const auto& m : r->messages) bytes += m.payload.size();
                    got += r->messages.size();
                    next = r->messages.back().offset + 1;
                }
                const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                const double cpu = cpu_seconds() - cpu0;
                fmt::print(
                    "poll round {}: {} messages, {:.3f} s = {:.0f} msg/s, {:.1f} MB/s payload; client CPU "
                    "{:.3f} s ({:.2f} us/message)\n",
                    round + 1, got, secs, static_cast<double>(got) / secs, static_cast<double>(bytes) / secs / 1e6, cpu,
                    cpu / static_cast<double>(got) * 1e6);
            }
            co_await c.close();
            co_return 0;
        }(),
        net::use_future);
    ioc.run();
    return fut.get();
}

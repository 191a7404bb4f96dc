// SPDX-License-Identifier: Apache-2.0
// iggy-produce: sends lines (or synthetic JSON messages) to an Iggy stream/topic with the
// project's own client (lib/iggy). For the demo, users' smoke tests and the benchmarks.

#include "common/log.hpp"
#include "iggy/client.hpp"
#include "proto/message.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace net = boost::asio;
using namespace iss;

namespace {

const char* const usage_text =
    R"(Usage: iggy-produce --address HOST:PORT [--username U --password P] [--protocol P] --stream S --topic T
                    [--delete-topic] [--delete-stream] [--create PARTITIONS] [--add-partitions N]
                    [--partition N | --balanced | --key K]
                    [--header NAME=VALUE]... (FILE... | - | --count N --size BYTES)
       iggy-produce --address HOST:PORT [--username U --password P] [--protocol P] --stream S --delete-stream

Sends messages to an Iggy stream/topic, or deletes a stream with all its topics.
  --address HOST:PORT   the server (e.g. 127.0.0.1:8090)
  --username, --password  login (default iggy / iggy)
  --protocol P          the wire protocol, as the daemon's iggy.protocol: 0.8 (default), 0.9,
                        0.10 or auto
  --delete-stream       delete stream S (and its topics) and exit; a missing stream is fine
  --tls-ca FILE         connect with TLS, the server's certificate checked against FILE (PEM)
  --tls-name NAME       the name the certificate must match (default: the host of --address)
  --stream S, --topic T   a number is an id, anything else a name
  --create PARTITIONS   create the stream and the topic (with PARTITIONS partitions) if missing;
                        an existing topic with the same partition count is fine
  --delete-topic        delete the topic first (if it exists): with --create, the topic is
                        created again, its offsets starting at 0; alone, only deletes it
  --add-partitions N    add N partitions to the topic (CreatePartitions) before sending
  --partition N         send to partition N;  --balanced: the server picks one partition per
                        batch (default);  --key K: partition = XXH32(K) % partitions
  --header NAME=VALUE   a string user header on every message (repeatable)
  FILE... | -           each input line becomes one message (- = standard input)
  --count N --size BYTES  N synthetic JSON messages of about BYTES bytes each
  --batch N             messages per SendMessages request (default 1000)
Prints how many messages went to which partition (from the topic's counters before and
after), then exits 0; on an error, names it and exits 1; usage errors exit 2.
)";

proto::identifier parse_id(const std::string& s) {
    std::uint32_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc{} && p == s.data() + s.size() && !s.empty()) return proto::identifier::numeric(v);
    return proto::identifier::named(s);
}

struct args {
    std::string host = "127.0.0.1";
    std::uint16_t port = 8090;
    std::string username = "iggy", password = "iggy";
    iggy::wire_protocol protocol = iggy::wire_protocol::g1_0_8;
    bool delete_stream = false;
    iggy::tls_options tls;
    std::string stream, topic;
    std::optional<std::uint32_t> create;
    bool delete_topic = false;
    std::uint32_t add_partitions = 0;
    proto::partitioning part = proto::partitioning::balanced();
    std::vector<std::pair<std::string, std::string>> headers;
    std::vector<std::string> files;
    std::optional<std::uint64_t> count;
    std::optional<std::size_t> size;
    std::size_t batch = 1000;
};

int usage_error(const std::string& m) {
    std::fprintf(stderr, "iggy-produce: %s\n(see --help)\n", m.c_str());
    return 2;
}

template <class T>
bool parse_num(std::string_view s, T& out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc{} && p == s.data() + s.size() && !s.empty();
}

std::string synthetic(std::uint64_t i, std::size_t size) {
    std::string s = fmt::format(
        R"({{"seq":{},"ts_us":{},"pad":")", i,
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
    const std::size_t tail = 2;  // "}
    if (s.size() + tail < size) s.append(size - s.size() - tail, 'x');
    s += "\"}";
    return s;
}

std::uint64_t now_us() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
}

net::awaitable<int> run(args a) {
    iggy::client_options o;
    o.host = a.host;
    o.port = a.port;
    o.username = a.username;
    o.password = iggy_password{a.password};
    o.protocol = a.protocol;
    o.tls = a.tls;
    o.ping_interval = std::chrono::milliseconds{0};
    o.reconnect_attempts = 3;
    iggy::client c{co_await net::this_coro::executor, o};
    auto fail = [](std::string_view what, const iss::error& e) {
        std::fprintf(stderr, "iggy-produce: %.*s: %s\n", static_cast<int>(what.size()), what.data(),
                     iggy::describe(e).c_str());
        return 1;
    };
    if (auto r = co_await c.connect(); !r) co_return fail("connect", r.error());
    const auto sid = parse_id(a.stream), tid = parse_id(a.topic);
    if (a.delete_stream) {
        auto s = co_await c.get_stream(sid);
        if (!s) co_return fail("get stream", s.error());
        if (*s) {
            if (auto r = co_await c.delete_stream(sid); !r) co_return fail("delete stream", r.error());
        }
        std::printf("%s stream %s\n", *s ? "deleted" : "no", a.stream.c_str());
        co_await c.close();
        co_return 0;
    }

    if (a.delete_topic) {
        auto t = co_await c.get_topic(sid, tid);
        if (!t) co_return fail("get topic", t.error());
        if (*t)
            if (auto r = co_await c.delete_topic(sid, tid); !r) co_return fail("delete topic", r.error());
        if (!a.create && !a.count && a.files.empty()) {
            std::printf("deleted stream %s topic %s\n", a.stream.c_str(), a.topic.c_str());
            co_await c.close();
            co_return 0;
        }
    }
    if (a.create) {
        auto s = co_await c.get_stream(sid);
        if (!s) co_return fail("get stream", s.error());
        if (!*s) {
            if (sid.is_numeric()) {
                std::fprintf(stderr, "iggy-produce: --create needs a stream name, got id %u\n", sid.number());
                co_return 1;
            }
            if (auto cr = co_await c.create_stream(sid.name()); !cr) co_return fail("create stream", cr.error());
        }
        auto t = co_await c.get_topic(sid, tid);
        if (!t) co_return fail("get topic", t.error());
        if (!*t) {
            if (tid.is_numeric()) {
                std::fprintf(stderr, "iggy-produce: --create needs a topic name, got id %u\n", tid.number());
                co_return 1;
            }
            if (auto cr = co_await c.create_topic(sid, tid.name(), *a.create); !cr)
                co_return fail("create topic", cr.error());
        } else if ((*t)->topic.partitions_count != *a.create) {
            std::fprintf(stderr, "iggy-produce: topic exists with %u partitions, not %u\n",
                         (*t)->topic.partitions_count, *a.create);
            co_return 1;
        }
    }
    if (a.add_partitions > 0)
        if (auto r = co_await c.create_partitions(sid, tid, a.add_partitions); !r)
            co_return fail("create partitions", r.error());
    auto before = co_await c.get_topic(sid, tid);
    if (!before) co_return fail("get topic", before.error());
    if (!*before) {
        std::fprintf(stderr, "iggy-produce: stream %s / topic %s not found (use --create)\n", a.stream.c_str(),
                     a.topic.c_str());
        co_return 1;
    }

    proto::byte_buffer header_block;
    for (auto& [k, v] : a.headers) {
        if (auto r = proto::append_user_header(header_block, proto::header_kind::string, proto::as_bytes(k),
                                               proto::header_kind::string, proto::as_bytes(v));
            !r) {
            std::fprintf(stderr, "iggy-produce: header %s: %s\n", k.c_str(), r.error().message().c_str());
            co_return 1;
        }
    }

    std::vector<std::string> payloads;
    std::vector<iggy::outgoing_message> batch;
    std::uint64_t sent = 0;
    auto flush = [&]() -> net::awaitable<result<void>> {
        if (payloads.empty()) co_return result<void>{};
        batch.clear();
        const auto ts = now_us();
        for (auto& p : payloads) batch.push_back({0, ts, proto::as_bytes(p), header_block});
        auto r = co_await c.send_messages(sid, tid, a.part, batch);
        if (!r) co_return r.error();
        sent += payloads.size();
        payloads.clear();
        co_return result<void>{};
    };

    if (a.count) {
        for (std::uint64_t i = 0; i < *a.count; ++i) {
            payloads.push_back(synthetic(i, a.size.value_or(64)));
            if (payloads.size() >= a.batch)
                if (auto r = co_await flush(); !r) co_return fail("send", r.error());
        }
    } else {
        for (auto& f : a.files) {
            std::ifstream file;
            std::istream* in = &std::cin;
            if (f != "-") {
                file.open(f);
                if (!file) {
                    std::fprintf(stderr, "iggy-produce: cannot open %s\n", f.c_str());
                    co_return 1;
                }
                in = &file;
            }
            std::string line;
            while (std::getline(*in, line)) {
                if (line.empty()) continue;  // the SDKs refuse empty payloads
                payloads.push_back(std::move(line));
                if (payloads.size() >= a.batch)
                    if (auto r = co_await flush(); !r) co_return fail("send", r.error());
            }
        }
    }
    if (auto r = co_await flush(); !r) co_return fail("send", r.error());

    auto after = co_await c.get_topic(sid, tid);
    if (!after || !*after) co_return fail("get topic", after ? iss::error{iggy::errc::protocol_error} : after.error());
    std::string per;
    for (std::size_t i = 0; i < (*after)->partitions.size(); ++i) {
        const auto now = (*after)->partitions[i].messages_count;
        const auto was = i < (*before)->partitions.size() ? (*before)->partitions[i].messages_count : 0;
        if (now > was) per += fmt::format("{}partition {}: {}", per.empty() ? "" : ", ", i, now - was);
    }
    std::printf("sent %llu messages to stream %s topic %s: %s\n", static_cast<unsigned long long>(sent),
                a.stream.c_str(), a.topic.c_str(), per.empty() ? "none" : per.c_str());
    co_await c.close();
    co_return 0;
}

}  // namespace

int main(int argc, char** argv) {
    args a;
    std::vector<std::string> v(argv + 1, argv + argc);
    int part_choices = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
        const std::string& k = v[i];
        auto next = [&](std::string& out) {
            if (i + 1 >= v.size()) return false;
            out = v[++i];
            return true;
        };
        std::string val;
        if (k == "--help" || k == "-h") {
            std::fputs(usage_text, stdout);
            return 0;
        } else if (k == "-") {
            a.files.push_back(k);
        } else if (k.rfind("--", 0) != 0) {
            a.files.push_back(k);
        } else if (k == "--delete-topic") {
            a.delete_topic = true;
        } else if (k == "--delete-stream") {
            a.delete_stream = true;
        } else if (k == "--balanced") {
            a.part = proto::partitioning::balanced();
            ++part_choices;
        } else if (!next(val)) {
            return usage_error(k + " needs a value");
        } else if (k == "--address") {
            auto colon = val.rfind(':');
            unsigned port = 0;
            if (colon == std::string::npos || !parse_num(std::string_view{val}.substr(colon + 1), port) || port > 65535)
                return usage_error("--address wants HOST:PORT");
            a.host = val.substr(0, colon);
            a.port = static_cast<std::uint16_t>(port);
        } else if (k == "--username") {
            a.username = val;
        } else if (k == "--password") {
            a.password = val;
        } else if (k == "--protocol") {
            if (val == "0.8") a.protocol = iggy::wire_protocol::g1_0_8;
            else if (val == "0.9") a.protocol = iggy::wire_protocol::g2_0_9;
            else if (val == "0.10") a.protocol = iggy::wire_protocol::g2_0_10;
            else if (val == "auto") a.protocol = iggy::wire_protocol::automatic;
            else return usage_error("--protocol wants 0.8, 0.9, 0.10 or auto");
        } else if (k == "--tls-ca") {
            a.tls.enabled = true;
            a.tls.ca_file = val;
        } else if (k == "--tls-name") {
            a.tls.server_name = val;
        } else if (k == "--stream") {
            a.stream = val;
        } else if (k == "--topic") {
            a.topic = val;
        } else if (k == "--create") {
            std::uint32_t n = 0;
            if (!parse_num(val, n)) return usage_error("--create wants a partition count");
            a.create = n;
        } else if (k == "--add-partitions") {
            std::uint32_t n = 0;
            if (!parse_num(val, n) || n == 0) return usage_error("--add-partitions wants a positive number");
            a.add_partitions = n;
        } else if (k == "--partition") {
            std::uint32_t n = 0;
            if (!parse_num(val, n)) return usage_error("--partition wants a number");
            a.part = proto::partitioning::to_partition(n);
            ++part_choices;
        } else if (k == "--key") {
            a.part = proto::partitioning::by_key(val);
            ++part_choices;
        } else if (k == "--header") {
            auto eq = val.find('=');
            if (eq == std::string::npos || eq == 0) return usage_error("--header wants NAME=VALUE");
            a.headers.emplace_back(val.substr(0, eq), val.substr(eq + 1));
        } else if (k == "--count") {
            std::uint64_t n = 0;
            if (!parse_num(val, n)) return usage_error("--count wants a number");
            a.count = n;
        } else if (k == "--size") {
            std::size_t n = 0;
            if (!parse_num(val, n) || n == 0) return usage_error("--size wants a positive number");
            a.size = n;
        } else if (k == "--batch") {
            std::size_t n = 0;
            if (!parse_num(val, n) || n == 0) return usage_error("--batch wants a positive number");
            a.batch = n;
        } else {
            return usage_error("unknown option " + k);
        }
    }
    if (a.delete_stream) {
        if (a.stream.empty()) return usage_error("--delete-stream needs --stream");
        if (!a.topic.empty() || a.count || !a.files.empty() || a.create)
            return usage_error("--delete-stream takes no --topic, --create or messages");
    } else if (a.stream.empty() || a.topic.empty()) {
        return usage_error("--stream and --topic are required");
    }
    if (part_choices > 1) return usage_error("choose one of --partition, --balanced, --key");
    if (a.count.has_value() != a.size.has_value()) return usage_error("--count and --size go together");
    if (a.count && !a.files.empty()) return usage_error("give FILE... or --count/--size, not both");
    if (!a.delete_stream && !a.count && a.files.empty() && !(a.delete_topic && !a.create))
        return usage_error("give FILE..., - or --count N --size BYTES");
    iss::log::configure(iss::log::level::warn, iss::log::output_format::text);  // a CLI: quiet unless wrong
    try {
        net::io_context ioc{1};
        auto f = net::co_spawn(ioc, run(std::move(a)), net::use_future);
        ioc.run();
        return f.get();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "iggy-produce: %s\n", e.what());
        return 1;
    }
}

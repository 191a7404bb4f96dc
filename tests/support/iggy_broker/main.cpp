// SPDX-License-Identifier: Apache-2.0
// iggy-test-broker: a TEST DOUBLE of Apache Iggy server 0.8.0 speaking the G1 TCP protocol
// (docs/protocol.md §3-7) over proto/, with the semantics of broker_state.hpp. Not a server
// to run in production: it exists for the tests, the demo and the benchmarks.
//
// One io_context, one thread. Each connection is one coroutine: read bytes into a
// proto::frame_assembler, decode each request, apply it to broker_state, write the reply
// (poll replies are gathered straight from the partition log: no copy, no per-message
// allocation), repeat. The first line on stdout is `listening on HOST:PORT`.

#include "common/log.hpp"
#include "iggy_broker/admin_handler.hpp"
#include "iggy_broker/broker_state.hpp"
#include "iggy_broker/g2_handler.hpp"
#include "iggy_broker/users.hpp"
#include "proto/commands.hpp"
#include "proto/poll.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <charconv>
#include <cstdio>
#include <functional>
#include <iostream>
#include <list>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace net = boost::asio;
using tcp = net::ip::tcp;
using namespace iss;
using namespace std::chrono_literals;

namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);

const char* const usage_text = R"(iggy-test-broker: a TEST DOUBLE of Apache Iggy server 0.8.0 (G1 TCP protocol).
In-memory streams, topics, partitions, consumer groups and offsets with the 0.8.0 semantics,
plus users, permissions, personal access tokens, stats, clients and cluster metadata,
for tests, demos and benchmarks. It is not an Iggy server: do not run it in production.

Usage: iggy-test-broker [options]
  --listen HOST:PORT          address to listen on (default 127.0.0.1:8090; port 0 picks a free
                              port). The first line on stdout is `listening on HOST:PORT`.
  --username NAME             root user name (default iggy)
  --password PASSWORD         root password (default iggy; the real server generates one
                              unless IGGY_ROOT_PASSWORD is set)
  --token NAME:VALUE          a personal access token accepted by LoginWithPersonalAccessToken
                              (repeatable)
  --data DIR                  keep streams, topics, groups, messages, offsets, users and tokens
                              in DIR across restarts (default: memory only)
  --rebalance-timeout DURATION  force a pending partition revocation after DURATION
                              (default 30s, as the server's [consumer_group] rebalancing_timeout)
  --heartbeat DURATION        remove clients that sent no Ping for 1.2 x DURATION
                              (default off, as the server's [heartbeat])
  --tls-cert FILE --tls-key FILE  serve TLS with this PEM certificate chain and key
  --protocol auto|0.8|0.9     wire protocol: 0.8 = G1 (server 0.8.x), 0.9 = the consensus framing
                              G2 (server 0.9.x, protocol 0.11.0), auto (default) = both on one
                              port, told apart by each connection's first bytes
  --g2-protocol X.Y.Z         the G2 binary protocol version the double announces and gates on
                              (default 0.11.0; 0.12.0 makes 0.11 clients get Eviction 14)
  --g2-transient-not-committed N  answer the first N replicated G2 requests with status 57
                              (TransientNotCommitted) without applying them (retry tests)
Signals (test controls): SIGUSR1 expires every client that is a member of a consumer group
  at once, as the heartbeat checker would (G1: group commands answer 30 and the connection
  closes; G2: the next request gets Eviction 13); SIGUSR2 drops every group membership and
  keeps the sessions (G2 SyncConsumerGroup answers "not a member", group polls 5006).
  SIGINT/SIGTERM stop the broker.
Every consumer-group membership change (a member joined or left: LeaveConsumerGroup, its
  connection closed or expired) is one line on stderr, e.g. `iggy-test-broker: consumer group
  s3-sink of topic events: client 7 left (a rebalance)`: each is a rebalance the group's
  other members see.
  --help                      this text
Durations: a number with a unit: us, ms, s, m, h (e.g. 500ms, 30s); a bare number is seconds.
)";

std::optional<std::chrono::microseconds> parse_duration(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i == 0) return std::nullopt;
    double v = 0;
    try {
        v = std::stod(std::string{s.substr(0, i)});
    } catch (...) {
        return std::nullopt;
    }
    auto unit = s.substr(i);
    double us = 0;
    if (unit.empty() || unit == "s") us = v * 1e6;
    else if (unit == "ms") us = v * 1e3;
    else if (unit == "us") us = v;
    else if (unit == "m") us = v * 60e6;
    else if (unit == "h") us = v * 3600e6;
    else return std::nullopt;
    return std::chrono::microseconds{static_cast<std::int64_t>(us)};
}

broker::ident to_ident(const proto::identifier& id) {
    return id.is_numeric() ? broker::ident::num(id.number()) : broker::ident::str(id.name());
}
broker::consumer to_consumer(const proto::consumer& c) { return {static_cast<std::uint8_t>(c.kind), to_ident(c.id)}; }

proto::stream_info to_proto(const broker::stream_info& s) {
    return {s.id, s.created_at, s.topics_count, s.size_bytes, s.messages_count, s.name};
}
proto::topic_info to_proto(const broker::topic_info& t) {
    return {t.id,
            t.created_at,
            t.partitions_count,
            t.message_expiry,
            t.compression,
            t.max_topic_size,
            t.replication_factor,
            t.size_bytes,
            t.messages_count,
            t.name};
}
proto::topic_details to_proto_details(const broker::topic_info& t) {
    proto::topic_details d{to_proto(t), {}};
    for (auto& p : t.partitions)
        d.partitions.push_back(
            {p.id, p.created_at, p.segments_count, p.current_offset, p.size_bytes, p.messages_count});
    return d;
}
proto::stream_details to_proto_details(const broker::stream_info& s) {
    proto::stream_details d{to_proto(s), {}};
    for (auto& t : s.topics) d.topics.push_back(to_proto(t));
    return d;
}
proto::consumer_group_details to_proto(const broker::group_info& g) {
    proto::consumer_group_details d{{g.id, g.partitions_count, g.members_count, g.name}, {}};
    for (auto& m : g.members) d.members.push_back({m.id, m.partitions});
    return d;
}

template <class... F>
struct overloaded : F... {
    using F::operator()...;
};
template <class... F>
overloaded(F...) -> overloaded<F...>;

/// The server: the state, the listener, the sessions.
class server {
public:
    server(net::io_context& ioc, broker::broker_state& state, std::chrono::microseconds check_interval,
           net::ssl::context* tls, std::string protocol = "auto", broker::g2_options g2 = {},
           broker::node_endpoints node = {})
        : ioc_{ioc},
          state_{state},
          check_interval_{check_interval},
          tls_{tls},
          protocol_{std::move(protocol)},
          g2_{std::move(g2), node},
          node_{std::move(node)} {}

    net::awaitable<void> listen(tcp::acceptor acceptor) {
        for (;;) {
            auto [ec, sock] = co_await acceptor.async_accept(use_tuple);
            if (ec) {
                if (ec == net::error::operation_aborted) co_return;
                continue;
            }
            net::co_spawn(ioc_, session(std::move(sock)), net::detached);  // errors end the session only
        }
    }

    /// The periodic checkers (revocation timeout, heartbeat).
    net::awaitable<void> ticker() {
        net::steady_timer t{ioc_};
        for (;;) {
            t.expires_after(check_interval_);
            auto [ec] = co_await t.async_wait(use_tuple);
            if (ec) co_return;
            state_.tick();
        }
    }

    /// Shutdown: like 0.8.0, tell each plain-TCP connection 8 (Disconnected), then close it.
    void close_all() {
        proto::byte_buffer disconnected;
        proto::append_error_reply(disconnected, broker::code::disconnected);
        for (auto [s, is_tls] : sockets_) {
            boost::system::error_code ec;
            if (!is_tls) net::write(*s, net::buffer(disconnected), ec);
            s->close(ec);
        }
    }

private:
    struct reply {
        proto::byte_buffer head;  // whole frame, or the frame header + poll header
        broker::poll_result poll;
        bool is_poll = false;
        bool close_after = false;
    };

    net::awaitable<void> session(tcp::socket sock) {
        sockets_.emplace_back(&sock, tls_ != nullptr);
        boost::system::error_code ec;
        auto ep = sock.remote_endpoint(ec);
        std::string address = ep.address().is_v6() ? fmt::format("[{}]:{}", ep.address().to_string(), ep.port())
                                                   : fmt::format("{}:{}", ep.address().to_string(), ep.port());
        sock.set_option(tcp::no_delay{true}, ec);
        const std::uint32_t client_id = broker::broker_state::client_id_for(address);
        state_.add_client(client_id, address);
        std::optional<net::ssl::stream<tcp::socket>> tls_stream;
        tcp::socket* registered = &sock;
        try {
            if (tls_) {
                tls_stream.emplace(std::move(sock), *tls_);
                registered = &tls_stream->next_layer();
                sockets_.back().first = registered;  // no suspension since the push: still ours
                auto [hec] = co_await tls_stream->async_handshake(net::ssl::stream_base::server, use_tuple);
                if (!hec) co_await serve(*tls_stream, client_id);
            } else {
                co_await serve(sock, client_id);
            }
        } catch (const std::exception&) {
            // A failed connection ends its session only.
        }
        forget(registered);
        state_.remove_client(client_id);
    }

    template <class Stream>
    net::awaitable<void> serve(Stream& s, std::uint32_t client_id) {
        proto::frame_assembler in{proto::frame_direction::request};
        reply r;
        std::vector<net::const_buffer> gather;
        {
            // Which generation? --protocol, or the first bytes (proto::g2::detect_generation).
            std::array<std::byte, 512> first{};
            std::size_t have = 0;
            std::optional<proto::g2::wire_generation> gen;
            if (protocol_ == "0.8") gen = proto::g2::wire_generation::g1;
            if (protocol_ == "0.9") gen = proto::g2::wire_generation::g2;
            while (!gen || have == 0) {
                auto [ec, n] =
                    co_await s.async_read_some(net::buffer(first.data() + have, first.size() - have), use_tuple);
                if (ec) co_return;
                have += n;
                if (!gen) gen = proto::g2::detect_generation({first.data(), have});
            }
            if (*gen == proto::g2::wire_generation::g2) {
                co_await serve_g2(s, client_id, proto::bytes_view{first.data(), have});
                co_return;
            }
            in.feed({first.data(), have});
        }
        for (;;) {
            if (in.buffered() > 0) {
                // Frames already buffered (the first read) are served before reading more.
                bool closed = false;
                for (;;) {
                    auto f = in.next_request();
                    if (!f) {
                        r.head.clear();
                        proto::append_error_reply(r.head, broker::code::invalid_command);
                        co_await net::async_write(s, net::buffer(r.head.data(), r.head.size()), use_tuple);
                        co_return;
                    }
                    if (!*f) break;
                    handle(client_id, **f, r);
                    gather.clear();
                    gather.emplace_back(r.head.data(), r.head.size());
                    if (r.is_poll)
                        for (auto c : r.poll.chunks) gather.emplace_back(c.data(), c.size());
                    auto [wec, wn] = co_await net::async_write(s, gather, use_tuple);
                    r.poll = {};
                    if (wec || r.close_after) closed = true;
                    if (closed) break;
                }
                if (closed) co_return;
            }
            auto buf = in.prepare(64 * 1024);
            auto [ec, n] = co_await s.async_read_some(net::buffer(buf.data(), buf.size()), use_tuple);
            if (ec) co_return;
            in.commit(n);
            for (;;) {
                auto f = in.next_request();
                if (!f) {
                    // Oversized or short frame: 3, and the byte stream is out of step.
                    r.head.clear();
                    proto::append_error_reply(r.head, broker::code::invalid_command);
                    co_await net::async_write(s, net::buffer(r.head.data(), r.head.size()), use_tuple);
                    co_return;
                }
                if (!*f) break;
                handle(client_id, **f, r);
                gather.clear();
                gather.emplace_back(r.head.data(), r.head.size());
                if (r.is_poll)
                    for (auto c : r.poll.chunks) gather.emplace_back(c.data(), c.size());
                auto [wec, wn] = co_await net::async_write(s, gather, use_tuple);
                r.poll = {};
                if (wec || r.close_after) co_return;
            }
        }
    }

    /// The G2 side (g2_handler.hpp): whole frames through proto::g2::frame_assembler.
    template <class Stream>
    net::awaitable<void> serve_g2(Stream& s, std::uint32_t client_id, proto::bytes_view first) {
        proto::g2::frame_assembler in;
        broker::g2_connection conn{state_, g2_, client_id};
        proto::byte_buffer out;
        in.feed(first);
        for (;;) {
            for (;;) {
                auto f = in.next();
                if (!f) co_return;  // out of step: close
                if (!*f) break;
                out.clear();
                const bool keep = conn.handle(**f, out);
                auto [wec, wn] = co_await net::async_write(s, net::buffer(out.data(), out.size()), use_tuple);
                if (wec || !keep) co_return;
            }
            auto buf = in.prepare(64 * 1024);
            auto [ec, n] = co_await s.async_read_some(net::buffer(buf.data(), buf.size()), use_tuple);
            if (ec) co_return;
            in.commit(n);
        }
    }

    static void error_reply(reply& r, std::uint32_t status) {
        r.head.clear();
        proto::append_error_reply(r.head, status);
        // The server closes the connection after these (docs/protocol.md §3).
        r.close_after = status == broker::code::stale_client || status == broker::code::client_not_found;
    }
    static void empty_ok(reply& r) {
        r.head.clear();
        proto::append_empty_reply(r.head);
    }
    template <class T>
    static void check(reply& r, const iss::result<T>& written) {
        if (!written) error_reply(r, 3);  // a record the codec refuses (a bug in the double)
    }

    void handle(std::uint32_t client_id, const proto::request_frame& f, reply& r) {
        r.is_poll = false;
        r.close_after = false;
        r.head.clear();
        if (f.code == static_cast<std::uint32_t>(proto::command::send_messages)) {
            handle_send(client_id, f.payload, r);
            return;
        }
        if (broker::admin::is_admin_code(f.code)) {
            // Users, tokens, stats, clients, cluster metadata, stream/topic update and purge.
            auto q = broker::admin::decode_request(f.code, f.payload);
            if (!q) return error_reply(r, proto::server_status_for_decode_error(q.error()));
            if (!state_.logged_in(client_id)) return error_reply(r, broker::code::unauthenticated);
            auto a = broker::handle_admin(state_, client_id, *q, node_);
            if (a.status) return error_reply(r, a.status);
            proto::append_ok_reply(r.head, a.payload);
            return;
        }
        auto req = proto::decode_request(f.code, f.payload);
        if (!req) return error_reply(r, proto::server_status_for_decode_error(req.error()));
        const bool pre_login = std::holds_alternative<proto::ping_request>(*req) ||
                               std::holds_alternative<proto::login_user_request>(*req) ||
                               std::holds_alternative<proto::login_with_token_request>(*req);
        if (!pre_login && !state_.logged_in(client_id)) return error_reply(r, broker::code::unauthenticated);
        auto status = [&](std::uint32_t st) {
            if (st) error_reply(r, st);
            else empty_ok(r);
        };
        // Rights of users other than root (users.hpp; 0.8.0 checks after resolving).
        using broker::action;
        auto denied = [&](action a, const proto::identifier* s = nullptr, const proto::identifier* t = nullptr) {
            broker::ident si, ti;
            if (s) si = to_ident(*s);
            if (t) ti = to_ident(*t);
            const auto st = broker::authorize(state_, client_id, a, s ? &si : nullptr, t ? &ti : nullptr);
            if (st) error_reply(r, st);
            return st != 0;
        };
        std::visit(
            overloaded{
                [&](const proto::ping_request&) {
                    state_.ping(client_id);
                    empty_ok(r);
                },
                [&](const proto::get_me_request&) {
                    auto me = state_.get_me(client_id);
                    if (!me.ok()) return error_reply(r, me.code);
                    proto::client_details d{me.value.client_id, me.value.user_id, 1, me.value.address, {}};
                    for (auto& g : me.value.groups) d.consumer_groups.push_back({g[0], g[1], g[2]});
                    proto::append_get_me_reply(r.head, d);
                },
                [&](const proto::login_user_request& q) {
                    auto lr = state_.login_user(client_id, q.username, q.password);
                    if (!lr.ok()) return error_reply(r, lr.code);
                    proto::append_user_id_reply(r.head, lr.value);
                },
                [&](const proto::login_with_token_request& q) {
                    auto lr = state_.login_token(client_id, q.token);
                    if (!lr.ok()) return error_reply(r, lr.code);
                    proto::append_user_id_reply(r.head, lr.value);
                },
                [&](const proto::logout_user_request&) { status(state_.logout(client_id).code); },
                [&](const proto::poll_messages_request& q) {
                    if (denied(action::poll_messages, &q.stream, &q.topic)) return;
                    auto p = state_.poll_messages(
                        client_id, to_consumer(q.consumer), to_ident(q.stream), to_ident(q.topic), q.partition_id,
                        broker::strategy{static_cast<broker::strategy_kind>(q.strategy.kind), q.strategy.value},
                        q.count, q.auto_commit);
                    if (!p.ok()) return error_reply(r, p.code);
                    // Frame header + poll header, then the stored messages as they are.
                    const std::size_t body = proto::poll_reply_header_size + p.value.bytes();
                    proto::writer w{r.head};
                    w.u32(0);
                    w.u32(static_cast<std::uint32_t>(body));
                    w.u32(p.value.partition_id);
                    w.u64(p.value.current_offset);
                    w.u32(p.value.count);
                    r.poll = std::move(p.value);
                    r.is_poll = true;
                },
                [&](const proto::send_messages_view&) { error_reply(r, 3); },  // handled above
                [&](const proto::get_consumer_offset_request& q) {
                    if (denied(action::poll_messages, &q.stream, &q.topic)) return;
                    auto o = state_.get_offset(to_consumer(q.consumer), to_ident(q.stream), to_ident(q.topic),
                                               q.partition_id);
                    std::optional<proto::consumer_offset_info> info;
                    if (o) info = proto::consumer_offset_info{o->partition_id, o->current_offset, o->stored_offset};
                    proto::append_consumer_offset_reply(r.head, info);
                },
                [&](const proto::store_consumer_offset_request& q) {
                    if (denied(action::poll_messages, &q.stream, &q.topic)) return;
                    status(state_
                               .store_offset(client_id, to_consumer(q.consumer), to_ident(q.stream), to_ident(q.topic),
                                             q.partition_id, q.offset)
                               .code);
                },
                [&](const proto::delete_consumer_offset_request& q) {
                    if (denied(action::poll_messages, &q.stream, &q.topic)) return;
                    status(state_
                               .delete_offset(client_id, to_consumer(q.consumer), to_ident(q.stream), to_ident(q.topic),
                                              q.partition_id)
                               .code);
                },
                [&](const proto::get_stream_request& q) {
                    if (denied(action::get_stream, &q.stream)) return;
                    auto s = state_.get_stream(to_ident(q.stream));
                    if (!s.value) return empty_ok(r);
                    check(r, proto::append_stream_reply(r.head, to_proto_details(*s.value)));
                },
                [&](const proto::get_streams_request&) {
                    if (denied(action::get_streams)) return;
                    std::vector<proto::stream_info> v;
                    for (auto& s : state_.get_streams()) v.push_back(to_proto(s));
                    check(r, proto::append_streams_reply(r.head, v));
                },
                [&](const proto::create_stream_request& q) {
                    if (denied(action::create_stream)) return;
                    auto s = state_.create_stream(q.name);
                    if (!s.ok()) return error_reply(r, s.code);
                    check(r, proto::append_stream_reply(r.head, to_proto_details(s.value)));
                },
                [&](const proto::delete_stream_request& q) {
                    if (denied(action::manage_stream, &q.stream)) return;
                    status(state_.delete_stream(to_ident(q.stream)).code);
                },
                [&](const proto::get_topic_request& q) {
                    if (denied(action::get_topic, &q.stream, &q.topic)) return;
                    auto t = state_.get_topic(to_ident(q.stream), to_ident(q.topic));
                    if (!t) return empty_ok(r);
                    check(r, proto::append_topic_reply(r.head, to_proto_details(*t)));
                },
                [&](const proto::get_topics_request& q) {
                    if (denied(action::get_topics, &q.stream)) return;
                    std::vector<proto::topic_info> v;
                    for (auto& t : state_.get_topics(to_ident(q.stream))) v.push_back(to_proto(t));
                    check(r, proto::append_topics_reply(r.head, v));
                },
                [&](const proto::create_topic_request& q) {
                    if (denied(action::create_topic, &q.stream)) return;
                    auto t = state_.create_topic(to_ident(q.stream), q.partitions_count, q.compression,
                                                 q.message_expiry, q.max_topic_size, q.replication_factor, q.name);
                    if (!t.ok()) return error_reply(r, t.code);
                    auto d = to_proto_details(t.value);
                    for (auto& p : d.partitions) p.segments_count = 0;  // the CreateTopic reply sends 0
                    check(r, proto::append_topic_reply(r.head, d));
                },
                [&](const proto::delete_topic_request& q) {
                    if (denied(action::manage_topic, &q.stream, &q.topic)) return;
                    status(state_.delete_topic(to_ident(q.stream), to_ident(q.topic)).code);
                },
                [&](const proto::create_partitions_request& q) {
                    if (denied(action::manage_topic, &q.stream, &q.topic)) return;
                    status(state_.create_partitions(to_ident(q.stream), to_ident(q.topic), q.partitions_count).code);
                },
                [&](const proto::delete_partitions_request& q) {
                    if (denied(action::manage_topic, &q.stream, &q.topic)) return;
                    status(state_.delete_partitions(to_ident(q.stream), to_ident(q.topic), q.partitions_count).code);
                },
                [&](const proto::get_consumer_group_request& q) {
                    if (denied(action::get_topic, &q.stream, &q.topic)) return;
                    auto g = state_.get_group(to_ident(q.stream), to_ident(q.topic), to_ident(q.group));
                    if (!g) return empty_ok(r);
                    check(r, proto::append_consumer_group_reply(r.head, to_proto(*g)));
                },
                [&](const proto::get_consumer_groups_request& q) {
                    if (denied(action::get_topic, &q.stream, &q.topic)) return;
                    std::vector<proto::consumer_group_info> v;
                    for (auto& g : state_.get_groups(to_ident(q.stream), to_ident(q.topic)))
                        v.push_back(to_proto(g).group);
                    check(r, proto::append_consumer_groups_reply(r.head, v));
                },
                [&](const proto::create_consumer_group_request& q) {
                    if (denied(action::get_topic, &q.stream, &q.topic)) return;
                    auto g = state_.create_group(to_ident(q.stream), to_ident(q.topic), q.name);
                    if (!g.ok()) return error_reply(r, g.code);
                    check(r, proto::append_consumer_group_reply(r.head, to_proto(g.value)));
                },
                [&](const proto::delete_consumer_group_request& q) {
                    if (denied(action::get_topic, &q.stream, &q.topic)) return;
                    status(state_.delete_group(to_ident(q.stream), to_ident(q.topic), to_ident(q.group)).code);
                },
                [&](const proto::join_consumer_group_request& q) {
                    if (denied(action::get_topic, &q.stream, &q.topic)) return;
                    status(state_.join_group(client_id, to_ident(q.stream), to_ident(q.topic), to_ident(q.group)).code);
                },
                [&](const proto::leave_consumer_group_request& q) {
                    if (denied(action::get_topic, &q.stream, &q.topic)) return;
                    status(
                        state_.leave_group(client_id, to_ident(q.stream), to_ident(q.topic), to_ident(q.group)).code);
                },
            },
            *req);
    }

    void handle_send(std::uint32_t client_id, proto::bytes_view payload, reply& r) {
        // The batch is validated by the decoder before the login check would matter only for
        // well-formed frames; 0.8.0 decodes first, then checks the session.
        if (auto d = proto::decode_send_messages(payload, send_); !d)
            return error_reply(r, proto::server_status_for_decode_error(d.error()));
        if (!state_.logged_in(client_id)) return error_reply(r, broker::code::unauthenticated);
        {
            const auto si = to_ident(send_.stream), ti = to_ident(send_.topic);
            if (auto a = broker::authorize(state_, client_id, broker::action::send_messages, &si, &ti))
                return error_reply(r, a);
        }
        messages_.clear();
        for (auto& m : send_.messages) {
            broker::message_in in;
            in.id_lo = static_cast<std::uint64_t>(m.id);
            in.id_hi = static_cast<std::uint64_t>(m.id >> 64);
            in.offset = m.offset;
            in.origin_timestamp = m.origin_timestamp;
            in.payload = {reinterpret_cast<const std::uint8_t*>(m.payload.data()), m.payload.size()};
            in.headers = {reinterpret_cast<const std::uint8_t*>(m.user_headers.data()), m.user_headers.size()};
            messages_.push_back(in);
        }
        broker::partitioning p{static_cast<broker::partitioning_kind>(send_.part.kind), send_.part.partition_id,
                               send_.part.key};
        auto st = state_.send_messages(to_ident(send_.stream), to_ident(send_.topic), p, messages_);
        if (st.code) return error_reply(r, st.code);
        empty_ok(r);
    }

    net::io_context& ioc_;
    broker::broker_state& state_;
    std::chrono::microseconds check_interval_;
    net::ssl::context* tls_;
    void forget(tcp::socket* s) {
        sockets_.remove_if([s](const auto& e) { return e.first == s; });
    }

    std::list<std::pair<tcp::socket*, bool>> sockets_;  // open connections (socket, is TLS)
    std::string protocol_;
    broker::g2_shared g2_;
    broker::node_endpoints node_;
    proto::send_messages_view send_;
    std::vector<broker::message_in> messages_;
};

int usage_error(const std::string& msg) {
    std::fprintf(stderr, "iggy-test-broker: %s\n(see --help)\n", msg.c_str());
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    broker::broker_options opts;
    std::string listen = "127.0.0.1:8090";
    std::string tls_cert, tls_key;
    std::string protocol = "auto";
    broker::g2_options g2opts;
    std::vector<std::string_view> args(argv + 1, argv + argc);
    for (std::size_t i = 0; i < args.size(); ++i) {
        auto a = args[i];
        auto value = [&]() -> std::optional<std::string> {
            if (i + 1 >= args.size()) return std::nullopt;
            return std::string{args[++i]};
        };
        if (a == "--help" || a == "-h") {
            std::fputs(usage_text, stdout);
            return 0;
        }
        auto v = value();
        if (!v) return usage_error(std::string{a} + " needs a value");
        if (a == "--listen") {
            listen = *v;
        } else if (a == "--username") {
            opts.username = *v;
        } else if (a == "--password") {
            opts.password = *v;
        } else if (a == "--token") {
            auto colon = v->find(':');
            if (colon == std::string::npos || colon == 0 || colon + 1 == v->size())
                return usage_error("--token wants NAME:VALUE");
            opts.tokens.emplace_back(v->substr(0, colon), v->substr(colon + 1));
        } else if (a == "--data") {
            opts.data_dir = *v;
        } else if (a == "--rebalance-timeout" || a == "--heartbeat") {
            auto d = parse_duration(*v);
            if (!d) return usage_error(std::string{a} + ": not a duration: " + *v);
            (a == "--heartbeat" ? opts.heartbeat : opts.rebalance_timeout) = *d;
        } else if (a == "--protocol") {
            if (*v != "auto" && *v != "0.8" && *v != "0.9") return usage_error("--protocol wants auto, 0.8 or 0.9");
            protocol = *v;
        } else if (a == "--g2-protocol") {
            unsigned ma = 0, mi = 0, pa = 0;
            if (std::sscanf(v->c_str(), "%u.%u.%u", &ma, &mi, &pa) != 3)
                return usage_error("--g2-protocol wants X.Y.Z");
            g2opts.protocol_version = proto::g2::pack_version(ma, mi, pa);
        } else if (a == "--g2-transient-not-committed") {
            g2opts.transient_not_committed = static_cast<unsigned>(std::stoul(*v));
        } else if (a == "--tls-cert") {
            tls_cert = *v;
        } else if (a == "--tls-key") {
            tls_key = *v;
        } else {
            return usage_error("unknown option " + std::string{a});
        }
    }
    if (tls_cert.empty() != tls_key.empty()) return usage_error("--tls-cert and --tls-key go together");
    auto colon = listen.rfind(':');
    if (colon == std::string::npos) return usage_error("--listen wants HOST:PORT");
    std::string host = listen.substr(0, colon);
    if (host.size() > 1 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    unsigned port = 0;
    auto port_text = std::string_view{listen}.substr(colon + 1);
    if (auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
        ec != std::errc{} || p != port_text.data() + port_text.size() || port > 65535)
        return usage_error("--listen: bad port " + std::string{port_text});

    // Membership changes on stderr: tests count the rebalances the group's members saw.
    opts.on_membership = [](const std::string& line) {
        std::fprintf(stderr, "iggy-test-broker: %s\n", line.c_str());
        std::fflush(stderr);
    };
    broker::broker_state state{opts};
    if (auto err = state.load(); !err.empty()) {
        std::fprintf(stderr, "iggy-test-broker: %s\n", err.c_str());
        return 1;
    }
    try {
        net::io_context ioc{1};
        std::unique_ptr<net::ssl::context> tls;
        if (!tls_cert.empty()) {
            tls = std::make_unique<net::ssl::context>(net::ssl::context::tls_server);
            tls->use_certificate_chain_file(tls_cert);
            tls->use_private_key_file(tls_key, net::ssl::context::pem);
        }
        boost::system::error_code ec;
        auto addr = net::ip::make_address(host, ec);
        if (ec) return usage_error("--listen: bad address " + host);
        tcp::acceptor acceptor{ioc, tcp::endpoint{addr, static_cast<std::uint16_t>(port)}};
        auto bound = acceptor.local_endpoint();
        std::string shown =
            bound.address().is_v6() ? "[" + bound.address().to_string() + "]" : bound.address().to_string();
        std::printf("listening on %s:%u\n", shown.c_str(), static_cast<unsigned>(bound.port()));
        std::fflush(stdout);

        // The server checks revocations every 5 s; a shortened timeout is checked more often.
        auto check = std::chrono::microseconds{5s};
        check = std::min(check, std::max<std::chrono::microseconds>(opts.rebalance_timeout / 10, 20ms));
        if (opts.heartbeat.count() > 0)
            check = std::min(check, std::max<std::chrono::microseconds>(opts.heartbeat / 5, 20ms));
        broker::node_endpoints node;
        node.ip = bound.address().to_string();
        node.tcp = bound.port();
        server srv{ioc, state, check, tls.get(), protocol, g2opts, node};
        net::co_spawn(ioc, srv.listen(std::move(acceptor)), net::detached);
        net::co_spawn(ioc, srv.ticker(), net::detached);
        net::signal_set signals{ioc, SIGINT, SIGTERM};
        signals.async_wait([&](auto, int) {
            srv.close_all();
            ioc.stop();
        });
        // Test controls: SIGUSR1 expires every group member now (as the heartbeat checker
        // would), SIGUSR2 drops every group membership and keeps the sessions.
        net::signal_set controls{ioc, SIGUSR1, SIGUSR2};
        std::function<void(const boost::system::error_code&, int)> on_control =
            [&](const boost::system::error_code& wait_error, int sig) {
                if (wait_error) return;
                if (sig == SIGUSR1) {
                    const auto n = state.expire_group_members().size();
                    std::fprintf(stderr, "iggy-test-broker: control: expired %zu group member client(s)\n", n);
                } else {
                    const auto n = state.drop_group_memberships();
                    std::fprintf(stderr, "iggy-test-broker: control: dropped %zu group membership(s)\n", n);
                }
                controls.async_wait(on_control);
            };
        controls.async_wait(on_control);
        ioc.run();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "iggy-test-broker: %s\n", e.what());
        return 1;
    }
    return 0;
}

// SPDX-License-Identifier: Apache-2.0
#include "iggy/g2_transport.hpp"

#include "iggy/connection.hpp"
#include "iggy/session.hpp"
#include "proto/g2_commands.hpp"

#include <fmt/format.h>

namespace iss::iggy {

namespace g2 = proto::g2;

namespace {

// G1 request structs whose G2 body differs (the ack byte of offsets: 1 = Quorum; no ids on
// create).
template <class R>
const R& to_g2(const R& r) {
    return r;
}
g2::store_offset_request to_g2(const proto::store_consumer_offset_request& r) {
    return {r.consumer, r.stream, r.topic, r.partition_id, r.offset, 1};
}
g2::delete_offset_request to_g2(const proto::delete_consumer_offset_request& r) {
    return {r.consumer, r.stream, r.topic, r.partition_id, 1};
}
g2::create_stream_request to_g2(const proto::create_stream_request& r) { return {r.name, {}}; }
g2::create_topic_request to_g2(const proto::create_topic_request& r) {
    return {r.stream, r.partitions_count, r.name, {}};
}

/// A Create* reply must hold what was created.
template <class T>
result<T> present(result<std::optional<T>> d, std::string_view command) {
    if (!d) return d.error();
    if (!*d) return iss::error{errc::protocol_error, fmt::format("{}: empty reply", command)};
    return std::move(**d);
}

proto::u128 random_client_id() {
    std::random_device rd;
    proto::u128 v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 32) | rd();
    return v == 0 ? 1 : v;
}

}  // namespace

iss::error eviction_error(const g2::eviction_header& e) {
    std::string detail = fmt::format("evicted by the server: {} ({})", g2::eviction_reason_name(e.reason),
                                     g2::eviction_reason_hint(e.reason));
    if (e.reason == g2::eviction_reason::incompatible_protocol)
        detail +=
            fmt::format("; the server accepts binary protocol {} to {}",
                        g2::version_text(e.server_protocol_version_min), g2::version_text(e.server_protocol_version));
    auto server = [&](proto::server_errc code) { return iss::error{make_error_code(code), detail}; };
    // An authentication code names the reason itself, and whoever shows it adds the advice
    // (is_auth_code): the detail says only where it came from.
    auto refused = [](proto::server_errc code) { return iss::error{make_error_code(code), "evicted by the server"}; };
    using se = proto::server_errc;
    switch (e.reason) {
        case g2::eviction_reason::invalid_credentials: return refused(se::invalid_credentials);
        case g2::eviction_reason::invalid_token: return refused(se::invalid_personal_access_token);
        case g2::eviction_reason::user_inactive: return refused(se::user_inactive);
        case g2::eviction_reason::incompatible_protocol: return server(se::incompatible_protocol_version);
        case g2::eviction_reason::stale_client:
        case g2::eviction_reason::no_session:
        case g2::eviction_reason::session_too_low:
        case g2::eviction_reason::session_release_mismatch:
        case g2::eviction_reason::session_error: return server(se::stale_client);
        default: return iss::error{errc::protocol_error, detail};
    }
}

g2_transport::g2_transport(transport_context ctx)
    : ctx_{std::move(ctx)},
      numbering_{random_client_id()},
      in_{ctx_.opts.max_reply_bytes + g2::header_size},
      poll_in_{ctx_.opts.max_reply_bytes + g2::header_size},
      groups_{ctx_.log} {}

template <class Request>
result<void> g2_transport::build(proto::byte_buffer& out, const Request& req) {
    last_code_ = g2::code_of<Request>();
    const auto h = numbering_.next(last_code_);
    last_op_ = h.op;
    return g2::append_request(out, h, req);
}

result<void> g2_transport::encode(proto::byte_buffer& out, const request& r) {
    return std::visit(
        [&](const auto& q) -> result<void> {
            using Q = std::decay_t<decltype(q)>;
            if constexpr (std::is_same_v<Q, proto::get_me_request>) {
                return iss::error{errc::invalid_request, "GetMe is not supported over G2 by this client"};
            } else if constexpr (std::is_same_v<Q, send_request>) {
                const g2::send_messages_request g{q.stream, q.topic, q.part, q.messages};
                return build(out, g);
            } else {
                const auto& g = to_g2(q);
                return build(out, g);
            }
        },
        r);
}

net::awaitable<result<proto::bytes_view>> g2_transport::roundtrip(connection& c, proto::bytes_view frame,
                                                                  reply_slot slot, bool probe, bool& g1_answer) {
    auto& in = slot == reply_slot::poll ? poll_in_ : in_;
    c.arm(probe ? ctx_.opts.detect_timeout : ctx_.opts.request_timeout);
    if (auto w = co_await c.write(frame, "write request"); !w) co_return w.error();
    if (probe) {
        // Eight bytes first: a G1 reply header is 8 bytes, and a G1 server may send no more.
        const auto head = in.prepare(8);
        if (auto rd = co_await c.read(head, "read G2 probe reply"); !rd) {
            g1_answer = true;  // closed or silent: not a G2 server
            co_return rd.error();
        }
        in.commit(head.size());
        if (g2::detect_generation(head) == g2::wire_generation::g1) {
            g1_answer = true;
            c.close();
            co_return iss::error{errc::protocol_error, "the server answered in G1 framing"};
        }
    }
    for (;;) {
        auto f = in.next();
        if (!f) {
            c.close();
            co_return iss::error{errc::protocol_error, "G2 reply: " + f.error().message()};
        }
        if (*f) {
            c.disarm();
            co_return **f;
        }
        const std::size_t n = in.bytes_wanted();
        const bool header = in.buffered() < g2::header_size;
        if (auto rd = co_await c.read(in.prepare(n), header ? "read reply header" : "read reply body"); !rd)
            co_return rd.error();
        in.commit(n);
    }
}

net::awaitable<result<proto::bytes_view>> g2_transport::exchange(connection& c, proto::bytes_view frame,
                                                                 reply_slot slot) {
    const auto op = last_op_;
    const auto code = last_code_;
    const auto delay =
        std::max<std::chrono::milliseconds>(ctx_.opts.transient_retry_delay, std::chrono::milliseconds{1});
    // A fixed pause (no jitter), as many tries as fit in the budget, and none past its end on
    // the retry clock.
    const auto budget_time = std::max(ctx_.opts.transient_retry_budget, std::chrono::milliseconds{0});
    const auto attempts = static_cast<unsigned>(std::max<std::int64_t>(1, budget_time / delay));
    retry_budget budget{{{delay, delay}, attempts, budget_time, false}, retry_clock(ctx_.opts), rng_};
    std::uint32_t last_status = 0;
    while (budget.try_attempt()) {
        bool g1 = false;
        auto raw = co_await roundtrip(c, frame, slot, false, g1);
        if (!raw) {
            ctx_.count(code, "error");  // (a cancellation threw: never counted)
            co_return raw.error();
        }
        auto f = g2::decode_server_frame(*raw);
        if (!f) {
            c.close();
            co_return iss::error{errc::protocol_error, "G2 reply: " + f.error().message()};
        }
        if (f->is_eviction()) {
            c.close();
            auto e = eviction_error(f->eviction());
            if (classify(e) == outcome::retry) ctx_.session_lost(e);
            co_return e;
        }
        const auto st = f->reply().status;
        ctx_.count(code, std::to_string(st));
        if (ends_session(st)) {
            // As in G1: the session is over (server going away, stale or unknown client).
            c.close();
            ctx_.session_lost(iss::error{proto::server_error(st)});
            co_return iss::error{proto::server_error(st)};
        }
        if (st == 0) {
            if (!g2::reply_is_result_framed(op)) co_return f->body;
            auto p = g2::decode_result_framed(f->body);
            if (!p && p.error().code().category() != proto::server_category()) {
                c.close();
                co_return iss::error{errc::protocol_error, "G2 reply: " + p.error().message()};
            }
            co_return p;
        }
        const auto rule = g2::retry_rule_for(st);
        if (rule == g2::retry_rule::already_applied) co_return proto::bytes_view{};
        if (rule == g2::retry_rule::none) co_return iss::error{proto::server_error(st)};
        last_status = st;
        const auto wait = budget.next_wait();
        if (!wait) break;
        ctx_.log.debug("G2 {} ({}): resending the same request (attempt {})", proto::server_error_name(st), st,
                       budget.attempts() + 1);
        co_await ctx_.sleep.sleep_for(*wait);  // a caller's cancellation throws
    }
    co_return iss::error{proto::server_error(last_status)};
}

net::awaitable<login_outcome> g2_transport::login(connection& c, proto::login_plan plan) {
    using kind = proto::login_result::kind;
    protocol_ = plan.protocol;
    numbering_.reset();
    groups_.clear();
    in_.reset();
    poll_in_.reset();
    out_.clear();
    const auto& o = ctx_.opts;
    const g2::client_version_info info{plan.g2_version, o.sdk_name, o.sdk_version};
    g2::bind_secret secret{};
    for (auto& b : secret) b = static_cast<std::byte>(rng_());  // PROVISIONAL (0.12.0 only)
    result<void> built;
    if (!o.token.empty()) {
        const g2::register_pat_request q{info, secret, o.token.reveal(), {}};
        built = build(out_, q);
    } else {
        const g2::register_request q{info, secret, o.username, o.password.reveal(), {}};
        built = build(out_, q);
    }
    if (!built) co_return login_outcome{iss::error{errc::invalid_request, built.error().message()}, {}, {}};
    bool g1_answer = false;
    auto frame = co_await roundtrip(c, out_, reply_slot::general, plan.probe, g1_answer);
    if (!frame) {
        const bool no_answer = g1_answer || classify(frame.error()) == outcome::retry;
        co_return login_outcome{frame.error(), {no_answer ? kind::no_g2_answer : kind::refused}, {}};
    }
    auto f = g2::decode_server_frame(*frame);
    if (!f)
        co_return login_outcome{
            iss::error{errc::protocol_error, "G2 login reply: " + f.error().message()}, {kind::refused}, {}};
    if (f->is_eviction()) {
        const auto& e = f->eviction();
        if (e.reason == g2::eviction_reason::incompatible_protocol)
            ctx_.log.warn("the server accepts binary protocol {} .. {} (we sent {})",
                          g2::version_text(e.server_protocol_version_min), g2::version_text(e.server_protocol_version),
                          g2::version_text(plan.g2_version));
        co_return login_outcome{eviction_error(e), {kind::evicted, e}, {}};
    }
    if (f->reply().status != 0)
        co_return login_outcome{iss::error{proto::server_error(f->reply().status)}, {kind::refused}, {}};
    auto r = g2::decode_register_reply(f->body);
    if (!r) {
        if (r.error().code().category() == proto::server_category())
            co_return login_outcome{r.error(), {kind::refused}, {}};
        co_return login_outcome{
            iss::error{errc::protocol_error, "G2 login reply: " + r.error().message()}, {kind::refused}, {}};
    }
    numbering_.bind(r->session);
    co_return login_outcome{
        result<void>{},
        {kind::logged_in},
        fmt::format("server {}, protocol {}", r->server_version, g2::version_text(r->server_protocol_version))};
}

result<std::optional<proto::stream_details>> g2_transport::stream_reply(proto::bytes_view reply) {
    return g2::decode_stream_reply(reply);
}

result<proto::stream_details> g2_transport::created_stream(proto::bytes_view reply) {
    return present(g2::decode_stream_reply(reply), "CreateStream");
}

result<std::optional<proto::topic_details>> g2_transport::topic_reply(proto::bytes_view reply) {
    return g2::decode_topic_reply(reply);
}

result<proto::topic_details> g2_transport::created_topic(proto::bytes_view reply) {
    return present(g2::decode_topic_reply(reply), "CreateTopic");
}

result<std::optional<proto::consumer_group_info>> g2_transport::created_group(proto::bytes_view) {
    return std::optional<proto::consumer_group_info>{};  // an empty result: read back by name
}

result<void> g2_transport::sent(proto::bytes_view reply) {
    // A status-0 reply with an empty body is a failure (docs/protocol.md §8.6).
    if (auto d = g2::decode_send_reply(reply); !d) return d.error();
    return {};
}

net::awaitable<result<poll_batch>> g2_transport::poll(session& s, poll_args a) {
    g2::poll_options o;
    o.max_reply = ctx_.opts.max_reply_bytes;
    o.producer_fields = protocol_ == proto::wire_protocol::g2_0_10;  // PROVISIONAL: 0.10 batch flags/producer bytes
    auto b = co_await groups_.poll(s, std::move(a), o, poll_);
    if (b && !b->messages.empty()) {
        std::size_t bytes = g2::header_size;
        for (const proto::message_view& m : b->messages) bytes += m.raw.size() + 64;
        b->owner = poll_buffers_.hand_over(poll_in_, bytes);
    }
    co_return b;
}

}  // namespace iss::iggy

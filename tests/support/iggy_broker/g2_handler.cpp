// SPDX-License-Identifier: Apache-2.0
#include "iggy_broker/g2_handler.hpp"

#include "iggy_broker/admin_wire.hpp"
#include "iggy_broker/users.hpp"
#include "proto/message.hpp"

#include <variant>

namespace iss::broker {

namespace g2 = proto::g2;

namespace {

template <class... F>
struct overloaded : F... {
    using F::operator()...;
};
template <class... F>
overloaded(F...) -> overloaded<F...>;

ident to_ident(const proto::identifier& id) {
    return id.is_numeric() ? ident::num(id.number()) : ident::str(id.name());
}
consumer to_consumer(const proto::consumer& c) { return {static_cast<std::uint8_t>(c.kind), to_ident(c.id)}; }

proto::topic_info to_proto(const topic_info& t) {
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
proto::topic_details to_details(const topic_info& t) {
    proto::topic_details d{to_proto(t), {}};
    for (auto& p : t.partitions)
        d.partitions.push_back(
            {p.id, p.created_at, p.segments_count, p.current_offset, p.size_bytes, p.messages_count});
    return d;
}
proto::stream_details to_details(const stream_info& s) {
    proto::stream_details d{{s.id, s.created_at, s.topics_count, s.size_bytes, s.messages_count, s.name}, {}};
    for (auto& t : s.topics) d.topics.push_back(to_proto(t));
    return d;
}

std::uint32_t decode_status(const iss::error& e) { return proto::server_status_for_decode_error(e); }

/// The topic options a 0.9 CreateTopic applies (core/common/src/types/options/mod.rs
/// `topic_option_keys`): compression (Uint8 code or "none"/"gzip"), message expiry (Uint64 µs,
/// 0 = server default = never), max topic size (Uint64 bytes, 0 = server default =
/// unlimited); the partition storage knobs and the completion policies (`durability`,
/// `consumer_offset_durability`: String "replicated" | "persisted", released 0.9.0) are
/// accepted and have no effect in the double.
/// Unknown keys: 4041 UnsupportedOptionKey; a value of the wrong kind: 4042 InvalidOptionValue.
struct topic_options {
    std::uint8_t compression = 1;
    std::uint64_t message_expiry = 0;
    std::uint64_t max_topic_size = 0;
};
constexpr std::uint32_t unsupported_option_key = 4041;
constexpr std::uint32_t invalid_option_value = 4042;

std::uint32_t parse_topic_options(std::string_view block, topic_options& o) {
    proto::header_reader r{proto::as_bytes(block)};
    auto u64_of = [](const proto::header_view& e, std::uint64_t& v) {
        if (e.value_kind == proto::header_kind::uint64 && e.value.size() == 8) {
            v = proto::load_le<std::uint64_t>(e.value.data());
            return true;
        }
        if (e.value_kind == proto::header_kind::string) {
            auto t = proto::as_text(e.value);
            if (t == "none" || t == "unlimited" || t == "never_expire" || t == "server_default") {
                v = 0;
                return true;
            }
        }
        return false;
    };
    for (;;) {
        auto e = r.next();
        if (!e) return code::invalid_format;
        if (!*e) break;
        const auto& h = **e;
        if (h.key_kind != proto::header_kind::string) return invalid_option_value;
        const auto key = proto::as_text(h.key);
        if (key == "compression_algorithm") {
            if (h.value_kind == proto::header_kind::uint8 && h.value.size() == 1 &&
                (h.value[0] == std::byte{1} || h.value[0] == std::byte{2}))
                o.compression = static_cast<std::uint8_t>(h.value[0]);
            else if (h.value_kind == proto::header_kind::string && proto::as_text(h.value) == "none") o.compression = 1;
            else if (h.value_kind == proto::header_kind::string && proto::as_text(h.value) == "gzip") o.compression = 2;
            else return invalid_option_value;
        } else if (key == "message_expiry") {
            if (!u64_of(h, o.message_expiry)) return invalid_option_value;
        } else if (key == "max_topic_size") {
            if (!u64_of(h, o.max_topic_size)) return invalid_option_value;
        } else if (key == "durability" || key == "consumer_offset_durability") {
            // Completion policies of 0.9.0 (the apache-iggy 0.9.0 SDKs send both on every
            // CreateTopic, default "replicated"): a single node has nothing to wait for.
            const auto v = proto::as_text(h.value);
            if (h.value_kind != proto::header_kind::string || (v != "replicated" && v != "persisted"))
                return invalid_option_value;
        } else if (key == "segment_size" || key == "enforce_fsync" || key == "messages_required_to_save" ||
                   key == "size_of_messages_required_to_save" || key == "preallocate_segments") {
            // Storage layout knobs: accepted, nothing to apply in memory.
        } else {
            return unsupported_option_key;
        }
    }
    return 0;
}

}  // namespace

bool g2_connection::evict(proto::byte_buffer& out, proto::u128 client, g2::eviction_reason r) {
    g2::eviction_header e{client, 0, 0, r};
    if (r == g2::eviction_reason::incompatible_protocol) {
        e.server_protocol_version = shared_.opts.protocol_version;
        e.server_protocol_version_min = shared_.opts.protocol_version & ~std::uint32_t{0x3ff};
    }
    g2::append_eviction(out, e);
    return false;
}

void g2_connection::reply(proto::byte_buffer& out, const g2::request_header& h, std::uint32_t status,
                          proto::bytes_view body) {
    g2::reply_header r;
    r.client = h.client;
    r.request_checksum = h.request_checksum;
    r.request = h.request;
    r.operation_ = h.op;
    r.status = status;
    if (g2::is_metadata(h.op) || g2::is_partition_plane(h.op)) r.op = r.commit = h.request;
    g2::append_reply(out, r, status == 0 ? body : proto::bytes_view{});
}

bool g2_connection::login(const g2::request_header& h, proto::bytes_view body, proto::byte_buffer& out) {
    auto version = g2::decode_client_version(body);
    if (!version) return evict(out, h.client, g2::eviction_reason::malformed_login);
    if (!g2::version_accepted(version->protocol_version, shared_.opts.protocol_version))
        return evict(out, h.client, g2::eviction_reason::incompatible_protocol);
    std::optional<std::uint32_t> user;
    bool user_form = false;
    if (auto u = g2::decode_register_user(body)) {
        user_form = true;
        auto r = state_.login_user(client_id_, u->username, u->password);
        if (r.ok()) user = r.value;
    }
    if (!user) {
        auto p = g2::decode_register_pat(body);
        if (p) {
            auto r = state_.login_token(client_id_, p->token);
            if (r.ok()) user = r.value;
            else if (!user_form) return evict(out, h.client, g2::eviction_reason::invalid_token);
        } else if (!user_form) {
            return evict(out, h.client, g2::eviction_reason::malformed_login);
        }
    }
    if (!user) return evict(out, h.client, g2::eviction_reason::invalid_credentials);
    session_ = shared_.next_session++;
    applied_.clear();
    body_.clear();
    (void)g2::append_register_reply(body_,
                                    {*user, session_, shared_.opts.protocol_version, shared_.opts.server_version});
    reply(out, h, 0, body_);
    return true;
}

bool g2_connection::handle(proto::bytes_view frame, proto::byte_buffer& out) {
    auto f = g2::decode_request_frame(frame);
    if (!f) return evict(out, 0, g2::eviction_reason::invalid_request_body_size);
    const auto& h = f->header;
    if (h.op == g2::operation::non_replicated &&
        (h.code == g2::code::legacy_login_user || h.code == g2::code::legacy_login_pat))
        return evict(out, h.client, g2::eviction_reason::malformed_login);
    if (!g2::is_known_operation(static_cast<std::uint8_t>(h.op)) || !g2::validate_request_header(h))
        return evict(out, h.client, g2::eviction_reason::invalid_request_operation);
    if (h.op == g2::operation::register_client) return login(h, f->body, out);
    const auto code = g2::request_code(h).value_or(0);
    if (session_ == 0) {
        if (code == g2::code::ping) {
            reply(out, h, 0, {});
            return true;
        }
        reply(out, h, code::unauthenticated, {});
        return true;
    }
    if (h.session != session_) return evict(out, h.client, g2::eviction_reason::no_session);
    // Heartbeat (docs/protocol.md §8.3): any request refreshes it. A session whose client the
    // heartbeat checker (or the SIGUSR1 control) dropped is dead: Eviction 13 (StaleClient).
    if (!state_.client_exists(client_id_)) return evict(out, h.client, g2::eviction_reason::stale_client);
    state_.ping(client_id_);

    const bool replicated = g2::is_metadata(h.op) || g2::is_partition_plane(h.op) || h.op == g2::operation::logout;
    if (g2::is_metadata(h.op) && applied_.count(h.request)) {
        reply(out, h, 59, {});  // RequestAlreadyApplied
        return true;
    }
    if (replicated && shared_.faults_left > 0) {
        --shared_.faults_left;
        reply(out, h, 57, {});  // TransientNotCommitted: not applied, outcome "unknown" to the client
        return true;
    }
    if (h.op == g2::operation::create_user) {
        // CreateUser (operation 141): the 0.8.0 body, then an options block (the rest); the
        // reply is result-framed UserDetails whose user header carries a `u32 len + options`
        // block. Rejections are committed: status 0, the code in the result section.
        applied_.insert(h.request);
        body_.clear();
        auto q = admin::decode_create_user(f->body, true);
        if (!q) {
            reply(out, h, decode_status(q.error()), {});
            return true;
        }
        auto a = handle_admin(state_, client_id_, admin::request{std::move(*q)}, shared_.node);
        if (a.status) {
            g2::append_result_error(body_, a.status);
        } else {
            g2::append_result_ok(body_);
            auto u = state_.users().get(ident::num(proto::load_le<std::uint32_t>(a.payload.data())));
            proto::writer w{body_};
            if (u) admin::append_user_details(w, *u, true);
        }
        reply(out, h, 0, body_);
        return true;
    }
    if (h.op == g2::operation::non_replicated && code == admin::code::get_cluster_metadata) {
        // GetClusterMetadata (12): the SDKs ask right after Register; raw payload, 0.8 layout.
        auto a = handle_admin(state_, client_id_, admin::request{admin::get_cluster_metadata_request{}}, shared_.node);
        reply(out, h, a.status, a.payload);
        return true;
    }
    auto req = g2::decode_request(h, f->body);
    if (!req) {
        if (h.op == g2::operation::send_messages && req.error().code().category() == proto::server_category()) {
            reply(out, h, static_cast<std::uint32_t>(req.error().code().value()), {});
            return true;
        }
        reply(out, h, decode_status(req.error()), {});
        return true;
    }
    if (g2::is_metadata(h.op)) applied_.insert(h.request);

    body_.clear();
    const bool framed = g2::reply_is_result_framed(h.op);
    auto done = [&](std::uint32_t st) {
        if (st && framed && st != code::unauthenticated) {
            // 0.9 applies replicated operations through its state machines: a rejection found
            // there (name taken, unknown group, not a member, ...) commits as a no-op and comes
            // back as status 0 with the code in the result section.
            body_.clear();
            g2::append_result_error(body_, st);
            return reply(out, h, 0, body_);
        }
        if (st) return reply(out, h, st, {});
        if (framed) g2::append_result_ok(body_);
        reply(out, h, 0, body_);
    };
    // Rights of users other than root (users.hpp), checked after the ids resolve as the server
    // does (core/server/src/dispatch/authz.rs): reads and the partition plane are denied
    // before they run (the status in the reply header, empty body); metadata operations are
    // gated where they apply, so their denial is committed (status 0, the code in the result).
    auto denied = [&](action a, const proto::identifier* s = nullptr, const proto::identifier* t = nullptr) {
        ident si, ti;
        if (s) si = to_ident(*s);
        if (t) ti = to_ident(*t);
        const auto st = authorize(state_, client_id_, a, s ? &si : nullptr, t ? &ti : nullptr);
        if (!st) return false;
        if (g2::is_metadata(h.op)) done(st);
        else reply(out, h, st, {});
        return true;
    };
    bool keep = true;
    std::visit(
        overloaded{
            [&](const proto::ping_request&) {
                state_.ping(client_id_);
                done(0);
            },
            [&](const proto::get_me_request&) { done(code::invalid_command); },
            [&](const g2::register_request&) { done(code::invalid_command); },
            [&](const g2::register_pat_request&) { done(code::invalid_command); },
            [&](const proto::logout_user_request&) {
                done(state_.logout(client_id_).code);
                session_ = 0;
            },
            [&](const proto::poll_messages_request& q) {
                state_.ping(client_id_);
                if (denied(action::poll_messages, &q.stream, &q.topic)) return;
                std::optional<std::uint32_t> pid = q.partition_id;
                if (q.consumer.kind == proto::consumer_kind::group) {
                    // §8.7: the client chooses the partition; none = empty reply, partition 0;
                    // one it does not own = empty reply, 0xFFFFFFFF (re-sync).
                    if (!pid) {
                        g2::batch_poll_writer w{body_};
                        w.begin(0, 0);
                        w.finish();
                        return done(0);
                    }
                    auto owned = state_.member_partitions(client_id_, to_ident(q.stream), to_ident(q.topic),
                                                          to_ident(q.consumer.id));
                    // Unknown stream/topic/group or not a member: the errors of the poll below.
                    if (owned && std::find(owned->begin(), owned->end(), *pid) == owned->end()) {
                        g2::batch_poll_writer w{body_};
                        w.begin(0xffffffffu, 0);
                        w.finish();
                        return done(0);
                    }
                }
                auto p = state_.poll_messages(
                    client_id_, to_consumer(q.consumer), to_ident(q.stream), to_ident(q.topic), pid,
                    strategy{static_cast<strategy_kind>(q.strategy.kind), q.strategy.value}, q.count, q.auto_commit);
                if (!p.ok()) return done(p.code);
                g2::batch_poll_writer w{body_};
                w.begin(p.value.partition_id, p.value.current_offset);
                for (auto chunk : p.value.chunks) {
                    proto::bytes_view rest{reinterpret_cast<const std::byte*>(chunk.data()), chunk.size()};
                    while (!rest.empty()) {
                        auto m = proto::decode_message(rest);
                        if (!m) return done(code::invalid_command);  // a bug in the double
                        proto::message_fields mf{m->id,      m->offset,      m->timestamp, m->origin_timestamp,
                                                 m->payload, m->user_headers};
                        // The server serves stored batches as they are: a slice keeps the
                        // stored base offset and origin, so the frames keep the producer's
                        // deltas and checksums (docs/protocol.md §8.6).
                        const auto batch = p.value.keep_alive->batch_of(m->offset);
                        const std::uint64_t base = batch ? batch->first_offset : m->offset;
                        const std::uint64_t origin = batch ? batch->origin_timestamp : m->origin_timestamp;
                        if (!w.add(mf, base, origin)) return done(code::invalid_command);
                        rest = rest.subspan(m->raw.size());
                    }
                }
                w.finish();
                done(0);
            },
            [&](const g2::send_messages_batch_view& v) {
                if (denied(action::send_messages, &v.stream, &v.topic)) return;
                messages_.clear();
                for (auto& m : v.messages) {
                    message_in in;
                    in.id_lo = static_cast<std::uint64_t>(m.id);
                    in.id_hi = static_cast<std::uint64_t>(m.id >> 64);
                    in.offset = m.offset;
                    in.origin_timestamp = m.origin_timestamp;
                    in.payload = {reinterpret_cast<const std::uint8_t*>(m.payload.data()), m.payload.size()};
                    in.headers = {reinterpret_cast<const std::uint8_t*>(m.user_headers.data()), m.user_headers.size()};
                    messages_.push_back(in);
                }
                partitioning p{static_cast<partitioning_kind>(v.part.kind), v.part.partition_id, v.part.key};
                auto st = state_.send_messages(to_ident(v.stream), to_ident(v.topic), p, messages_);
                if (st.code) return done(st.code);
                // One confirmation per batch: where it went and its first offset.
                const g2::send_confirmation c{st.value.stream_id, st.value.topic_id, st.value.partition_id,
                                              st.value.base_offset};
                g2::append_send_reply(body_, {&c, 1});
                done(0);
            },
            [&](const proto::get_consumer_offset_request& q) {
                if (denied(action::poll_messages, &q.stream, &q.topic)) return;
                auto o =
                    state_.get_offset(to_consumer(q.consumer), to_ident(q.stream), to_ident(q.topic), q.partition_id);
                if (o) {
                    proto::writer w{body_};
                    proto::append_consumer_offset_info(w, {o->partition_id, o->current_offset, o->stored_offset});
                }
                done(0);
            },
            [&](const g2::store_offset_request& q) {
                if (denied(action::poll_messages, &q.stream, &q.topic)) return;
                if (q.consumer.kind == proto::consumer_kind::group && !q.partition_id)
                    return done(code::invalid_identifier);
                done(state_
                         .store_offset(client_id_, to_consumer(q.consumer), to_ident(q.stream), to_ident(q.topic),
                                       q.partition_id, q.offset)
                         .code);
            },
            [&](const g2::delete_offset_request& q) {
                if (denied(action::poll_messages, &q.stream, &q.topic)) return;
                done(state_
                         .delete_offset(client_id_, to_consumer(q.consumer), to_ident(q.stream), to_ident(q.topic),
                                        q.partition_id)
                         .code);
            },
            [&](const proto::get_stream_request& q) {
                if (denied(action::get_stream, &q.stream)) return;
                auto s = state_.get_stream(to_ident(q.stream));
                if (s.value) (void)g2::append_stream_details(body_, to_details(*s.value));
                done(0);
            },
            [&](const proto::get_streams_request&) { done(code::invalid_command); },
            [&](const g2::create_stream_request& q) {
                if (denied(action::create_stream)) return;
                auto s = state_.create_stream(q.name);
                if (!s.ok()) return done(s.code);
                g2::append_result_ok(body_);
                (void)g2::append_stream_details(body_, to_details(s.value));
                reply(out, h, 0, body_);
            },
            [&](const proto::delete_stream_request& q) {
                if (denied(action::manage_stream, &q.stream)) return;
                done(state_.delete_stream(to_ident(q.stream)).code);
            },
            [&](const proto::get_topic_request& q) {
                if (denied(action::get_topic, &q.stream, &q.topic)) return;
                auto t = state_.get_topic(to_ident(q.stream), to_ident(q.topic));
                if (t) (void)g2::append_topic_details(body_, to_details(*t));
                done(0);
            },
            [&](const proto::get_topics_request&) { done(code::invalid_command); },
            [&](const g2::create_topic_request& q) {
                if (denied(action::create_topic, &q.stream)) return;
                topic_options o;
                if (auto bad = parse_topic_options(q.options, o)) return reply(out, h, bad, {});
                auto t = state_.create_topic(to_ident(q.stream), q.partitions_count, o.compression, o.message_expiry,
                                             o.max_topic_size, 1, q.name);
                if (!t.ok()) return done(t.code);
                g2::append_result_ok(body_);
                auto d = to_details(t.value);
                for (auto& p : d.partitions) p.segments_count = 0;
                (void)g2::append_topic_details(body_, d);
                reply(out, h, 0, body_);
            },
            [&](const proto::delete_topic_request& q) {
                if (denied(action::manage_topic, &q.stream, &q.topic)) return;
                done(state_.delete_topic(to_ident(q.stream), to_ident(q.topic)).code);
            },
            [&](const proto::create_partitions_request& q) {
                if (denied(action::manage_topic, &q.stream, &q.topic)) return;
                done(state_.create_partitions(to_ident(q.stream), to_ident(q.topic), q.partitions_count).code);
            },
            [&](const proto::delete_partitions_request& q) {
                if (denied(action::manage_topic, &q.stream, &q.topic)) return;
                done(state_.delete_partitions(to_ident(q.stream), to_ident(q.topic), q.partitions_count).code);
            },
            [&](const proto::get_consumer_group_request& q) {
                if (denied(action::get_topic, &q.stream, &q.topic)) return;
                auto g = state_.get_group(to_ident(q.stream), to_ident(q.topic), to_ident(q.group));
                if (g) {
                    proto::consumer_group_details d{{g->id, g->partitions_count, g->members_count, g->name}, {}};
                    for (auto& m : g->members) d.members.push_back({m.id, m.partitions});
                    proto::writer w{body_};
                    (void)proto::append_consumer_group_details(w, d);
                }
                done(0);
            },
            [&](const proto::get_consumer_groups_request& q) {
                if (denied(action::get_topic, &q.stream, &q.topic)) return;
                proto::writer w{body_};
                for (auto& g : state_.get_groups(to_ident(q.stream), to_ident(q.topic)))
                    (void)proto::append_consumer_group_info(w, {g.id, g.partitions_count, g.members_count, g.name});
                done(0);
            },
            [&](const proto::create_consumer_group_request& q) {
                if (denied(action::get_topic, &q.stream, &q.topic)) return;
                // The reply is the new group's details behind the result section (the 0.9.0
                // SDKs decode ConsumerGroupDetails from it; an empty result is InvalidFormat).
                auto g = state_.create_group(to_ident(q.stream), to_ident(q.topic), q.name);
                if (!g.ok()) return done(g.code);
                g2::append_result_ok(body_);
                proto::consumer_group_details d{
                    {g.value.id, g.value.partitions_count, g.value.members_count, g.value.name}, {}};
                proto::writer w{body_};
                (void)proto::append_consumer_group_details(w, d);
                reply(out, h, 0, body_);
            },
            [&](const proto::delete_consumer_group_request& q) {
                if (denied(action::get_topic, &q.stream, &q.topic)) return;
                done(state_.delete_group(to_ident(q.stream), to_ident(q.topic), to_ident(q.group)).code);
            },
            [&](const proto::join_consumer_group_request& q) {
                if (denied(action::get_topic, &q.stream, &q.topic)) return;
                done(state_.join_group(client_id_, to_ident(q.stream), to_ident(q.topic), to_ident(q.group)).code);
            },
            [&](const proto::leave_consumer_group_request& q) {
                if (denied(action::get_topic, &q.stream, &q.topic)) return;
                done(state_.leave_group(client_id_, to_ident(q.stream), to_ident(q.topic), to_ident(q.group)).code);
            },
            [&](const g2::sync_consumer_group_request& q) {
                auto parts =
                    state_.member_partitions(client_id_, to_ident(q.stream), to_ident(q.topic), to_ident(q.group));
                if (parts) {
                    // The generation changes whenever the assignment does (a hash of it here).
                    std::uint64_t gen = 1469598103934665603ULL;
                    for (auto p : *parts) gen = (gen ^ p) * 1099511628211ULL;
                    g2::append_sync_reply(body_, {gen ^ parts->size(), *parts});
                }
                done(0);
            },
        },
        *req);
    return keep;
}

}  // namespace iss::broker

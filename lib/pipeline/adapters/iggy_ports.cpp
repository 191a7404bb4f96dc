// SPDX-License-Identifier: Apache-2.0
#include "pipeline/adapters/iggy_ports.hpp"

#include "iggy/error.hpp"
#include "proto/message.hpp"

#include <boost/asio/awaitable.hpp>

#include <memory>

namespace iss::pipeline {

namespace {
using proto::identifier;
using proto::server_errc;

proto::bytes_view bytes_of(std::string_view s) { return std::as_bytes(std::span{s.data(), s.size()}); }

/// A poll batch: the reply's buffer, handed over by the client (`iggy::poll_batch::owner`),
/// and the message views into it.
struct owned_batch {
    std::shared_ptr<const void> bytes;
    std::vector<proto::message_view> views;  ///< into `bytes`; never reallocated after filling
};
}  // namespace

// 5000 ConsumerGroupIdNotFound for a member: the group went with its topic or stream (deleted
// and created again; Iggy 0.8 answers so where 0.9 answers 5006). Joining again creates it.
source_status source_status_of(const iss::error& e) noexcept {
    if (iggy::is_server_error(e, server_errc::consumer_group_member_not_found) ||
        iggy::is_server_error(e, server_errc::consumer_group_id_not_found))
        return source_status::not_member;
    return iggy::classify(e) == iggy::outcome::retry ? source_status::retryable : source_status::fatal;
}

offset_status offset_status_of(const iss::error& e) noexcept {
    if (iggy::is_server_error(e, server_errc::not_resolved_consumer) ||
        iggy::is_server_error(e, server_errc::consumer_group_member_not_found) ||
        iggy::is_server_error(e, server_errc::consumer_group_id_not_found))
        return offset_status::not_owner;
    return iggy::classify(e) == iggy::outcome::retry ? offset_status::retryable : offset_status::fatal;
}

iggy_ports::iggy_ports(iggy::client& c, iggy_ports_options o) : c_{c}, o_{std::move(o)} {}

message message_of(const proto::message_view& v) {
    message m;
    m.offset = v.offset;
    m.timestamp_us = v.timestamp;
    m.origin_timestamp_us = v.origin_timestamp;
    m.id_high = static_cast<std::uint64_t>(v.id >> 64);
    m.id_low = static_cast<std::uint64_t>(v.id);
    m.payload = v.payload;
    m.user_headers = v.user_headers;
    m.view = &v;
    return m;
}

proto::consumer iggy_ports::consumer() const {
    return o_.group_mode ? proto::consumer::group(identifier::named(o_.consumer_name))
                         : proto::consumer::single(identifier::named(o_.consumer_name));
}

std::uint64_t iggy_ports::session() const { return c_.generation(); }

task<poll_result> iggy_ports::poll(const topic_ref& t, std::optional<std::uint32_t> partition,
                                   std::optional<std::uint64_t> from, std::uint32_t count) {
    const auto strategy = from ? proto::polling_strategy::at_offset(*from) : proto::polling_strategy::first();
    auto r = co_await c_.poll_messages(consumer(), identifier::named(t.stream), identifier::named(t.topic), partition,
                                       strategy, count, false);
    poll_result out;
    if (!r) {
        out.status = source_status_of(r.error());
        out.detail = iggy::describe(r.error());
        co_return out;
    }
    out.reply.partition = r->partition_id;
    out.reply.current_offset = r->current_offset;
    // The consumer polls several partitions concurrently and feeds each batch across uploads:
    // the batch keeps the buffer the client read the reply into (handed over, not copied) and
    // its own copy of the views (the client's span is reused by the next poll).
    auto owned = std::make_shared<owned_batch>();
    owned->bytes = std::move(r->owner);
    owned->views.assign(r->messages.begin(), r->messages.end());
    out.reply.messages.reserve(owned->views.size());
    // (each view lives in `owned`, kept alive by the reply)
    for (const proto::message_view& v : owned->views) out.reply.messages.push_back(message_of(v));
    out.reply.storage = std::move(owned);
    co_return out;
}

task<source_status> iggy_ports::join(const topic_ref& t) {
    if (!o_.group_mode) co_return source_status::ok;
    auto r = co_await c_.join_consumer_group(identifier::named(t.stream), identifier::named(t.topic),
                                             identifier::named(o_.consumer_name));
    if (!r && iggy::is_server_error(r.error(), server_errc::consumer_group_id_not_found)) {
        log_.info({iss::log::kv("stream", t.stream), iss::log::kv("topic", t.topic)}, "creating consumer group {}",
                  o_.consumer_name);
        auto c = co_await c_.create_consumer_group(identifier::named(t.stream), identifier::named(t.topic),
                                                   o_.consumer_name);
        if (!c && iggy::classify(c.error()) == iggy::outcome::fail) {
            // Another member may have created it in between (5004 AlreadyExists): join anyway.
            log_.debug("create consumer group: {}", iggy::describe(c.error()));
        }
        r = co_await c_.join_consumer_group(identifier::named(t.stream), identifier::named(t.topic),
                                            identifier::named(o_.consumer_name));
    }
    if (!r) {
        log_.warn({iss::log::kv("stream", t.stream), iss::log::kv("topic", t.topic)}, "join {}: {}", o_.consumer_name,
                  iggy::describe(r.error()));
        // Still no group after creating it (the creation refused): joining again would not help.
        if (iggy::is_server_error(r.error(), server_errc::consumer_group_id_not_found)) co_return source_status::fatal;
        co_return source_status_of(r.error());
    }
    log_.info({iss::log::kv("stream", t.stream), iss::log::kv("topic", t.topic)}, "joined consumer group {}",
              o_.consumer_name);
    co_return source_status::ok;
}

task<source_status> iggy_ports::leave(const topic_ref& t) {
    if (!o_.group_mode) co_return source_status::ok;
    auto r = co_await c_.leave_consumer_group(identifier::named(t.stream), identifier::named(t.topic),
                                              identifier::named(o_.consumer_name));
    if (!r) co_return source_status_of(r.error());
    co_return source_status::ok;
}

task<partitions_result> iggy_ports::partitions(const topic_ref& t) {
    // Not logged here: the consumer loop logs an unavailable source once, then at a backoff.
    auto r = co_await c_.get_topic(identifier::named(t.stream), identifier::named(t.topic));
    partitions_result out;
    if (!r) {
        out.status = source_status_of(r.error());
        out.detail = fmt::format("get topic: {}", iggy::describe(r.error()));
        co_return out;
    }
    if (!*r) {
        out.status = source_status::fatal;
        out.detail = "stream or topic not found: check sources[].stream and topics (or create it)";
        co_return out;
    }
    for (const auto& p : (*r)->partitions) out.ids.push_back(p.id);
    out.created_at = (*r)->topic.created_at;
    co_return out;
}

task<offset_result> iggy_ports::store_offset(const partition_ref& p, std::uint64_t offset) {
    auto r = co_await c_.store_offset(consumer(), identifier::named(p.stream), identifier::named(p.topic), p.partition,
                                      offset);
    if (!r) co_return offset_result{offset_status_of(r.error()), std::nullopt, iggy::describe(r.error())};
    co_return offset_result{offset_status::ok, offset, {}};
}

task<offset_result> iggy_ports::load_offset(const partition_ref& p) {
    auto r = co_await c_.get_offset(consumer(), identifier::named(p.stream), identifier::named(p.topic), p.partition);
    if (!r) co_return offset_result{offset_status_of(r.error()), std::nullopt, iggy::describe(r.error())};
    if (!*r) co_return offset_result{offset_status::ok, std::nullopt, {}};
    co_return offset_result{offset_status::ok, (*r)->stored_offset, {}};
}

task<source_status> iggy_ports::send(const message& m, const partition_ref& source, std::string reason) {
    if (o_.dead_letter.stream.empty()) co_return source_status::fatal;
    // The original headers, then the two of ours (docs/protocol.md §2.6: entries back to back).
    proto::byte_buffer headers(m.user_headers.begin(), m.user_headers.end());
    const std::string src = fmt::format("{}/{}/{}/{}", source.stream, source.topic, source.partition, m.offset);
    if (reason.size() > proto::max_header_field_size) reason.resize(proto::max_header_field_size);
    auto a = proto::append_user_header(headers, proto::header_kind::string, bytes_of("iggy-s3-sink-error"),
                                       proto::header_kind::string, bytes_of(reason));
    auto b = proto::append_user_header(headers, proto::header_kind::string, bytes_of("iggy-s3-sink-source"),
                                       proto::header_kind::string, bytes_of(src));
    if (!a || !b) co_return source_status::fatal;
    iggy::outgoing_message out;
    out.id = (static_cast<proto::u128>(m.id_high) << 64) | m.id_low;
    out.origin_timestamp = m.origin_timestamp_us;
    out.payload = m.payload;
    out.user_headers = headers;
    auto r =
        co_await c_.send_messages(identifier::named(o_.dead_letter.stream), identifier::named(o_.dead_letter.topic),
                                  proto::partitioning::balanced(), std::span{&out, 1});
    if (!r) {
        log_.warn("dead-letter send to {}/{}: {}", o_.dead_letter.stream, o_.dead_letter.topic,
                  iggy::describe(r.error()));
        co_return source_status_of(r.error());
    }
    co_return source_status::ok;
}

}  // namespace iss::pipeline

// SPDX-License-Identifier: Apache-2.0
// The G1 reply writers of the server side (the test broker): reply frames, the records of
// the Get*/Create* replies, poll replies (docs/protocol.md §2-7). Target proto_server: the
// daemon never links it.
#include "proto/commands.hpp"
#include "proto/framing.hpp"
#include "proto/poll.hpp"
#include "proto/records.hpp"

#include <string>

namespace iss::proto {

namespace {

template <class F>
auto with_reply(byte_buffer& out, F&& body) {
    const std::size_t start = begin_reply(out);
    writer w{out};
    if constexpr (std::is_void_v<decltype(body(w))>) {
        body(w);
        finish_reply(out, start);
    } else {
        auto r = body(w);
        if (!r) {
            out.resize(start);
            return r;
        }
        finish_reply(out, start);
        return r;
    }
}

result<void> append_name(writer& w, const std::string& name, std::string_view field) {
    if (name.empty() || name.size() > 255)
        return iss::error{errc::invalid_length, std::string{field} + " (name 1..255 bytes)"};
    w.u8(static_cast<std::uint8_t>(name.size()));
    w.text(name);
    return {};
}

}  // namespace

// ---- reply frames ----

std::size_t begin_reply(byte_buffer& out) {
    const std::size_t start = out.size();
    writer w{out};
    w.u32(0);
    w.u32(0);
    return start;
}

void finish_reply(byte_buffer& out, std::size_t start) noexcept {
    store_le<std::uint32_t>(out.data() + start + 4, static_cast<std::uint32_t>(out.size() - start - reply_header_size));
}

void append_ok_reply(byte_buffer& out, bytes_view payload) {
    const std::size_t at = begin_reply(out);
    writer{out}.bytes(payload);
    finish_reply(out, at);
}

void append_error_reply(byte_buffer& out, std::uint32_t status) {
    writer w{out};
    w.u32(status);
    w.u32(0);
}

// ---- records ----

result<void> append_stream_info(writer& w, const stream_info& s) {
    w.u32(s.id);
    w.u64(s.created_at);
    w.u32(s.topics_count);
    w.u64(s.size_bytes);
    w.u64(s.messages_count);
    return append_name(w, s.name, "stream.name");
}

result<void> append_topic_info(writer& w, const topic_info& t) {
    w.u32(t.id);
    w.u64(t.created_at);
    w.u32(t.partitions_count);
    w.u64(t.message_expiry);
    w.u8(t.compression);
    w.u64(t.max_topic_size);
    w.u8(t.replication_factor);
    w.u64(t.size_bytes);
    w.u64(t.messages_count);
    return append_name(w, t.name, "topic.name");
}

void append_partition_info(writer& w, const partition_info& p) {
    w.u32(p.id);
    w.u64(p.created_at);
    w.u32(p.segments_count);
    w.u64(p.current_offset);
    w.u64(p.size_bytes);
    w.u64(p.messages_count);
}

result<void> append_stream_details(writer& w, const stream_details& s) {
    stream_info head = s.stream;
    head.topics_count = static_cast<std::uint32_t>(s.topics.size());
    if (auto r = append_stream_info(w, head); !r) return r;
    for (const auto& t : s.topics)
        if (auto r = append_topic_info(w, t); !r) return r;
    return {};
}

result<void> append_topic_details(writer& w, const topic_details& t) {
    topic_info head = t.topic;
    head.partitions_count = static_cast<std::uint32_t>(t.partitions.size());
    if (auto r = append_topic_info(w, head); !r) return r;
    for (const auto& p : t.partitions) append_partition_info(w, p);
    return {};
}

result<void> append_consumer_group_info(writer& w, const consumer_group_info& g) {
    w.u32(g.id);
    w.u32(g.partitions_count);
    w.u32(g.members_count);
    return append_name(w, g.name, "consumer_group.name");
}

result<void> append_consumer_group_details(writer& w, const consumer_group_details& g) {
    consumer_group_info head = g.group;
    head.members_count = static_cast<std::uint32_t>(g.members.size());
    if (auto r = append_consumer_group_info(w, head); !r) return r;
    for (const auto& m : g.members) {
        w.u32(m.id);
        w.u32(static_cast<std::uint32_t>(m.partitions.size()));
        for (auto p : m.partitions) w.u32(p);
    }
    return {};
}

void append_client_details(writer& w, const client_details& c) {
    w.u32(c.client_id);
    w.u32(c.user_id);
    w.u8(c.transport);
    w.u32(static_cast<std::uint32_t>(c.address.size()));
    w.text(c.address);
    w.u32(static_cast<std::uint32_t>(c.consumer_groups.size()));
    for (const auto& g : c.consumer_groups) {
        w.u32(g.stream_id);
        w.u32(g.topic_id);
        w.u32(g.group_id);
    }
}

void append_consumer_offset_info(writer& w, const consumer_offset_info& o) {
    w.u32(o.partition_id);
    w.u64(o.current_offset);
    w.u64(o.stored_offset);
}

// ---- replies ----

void append_empty_reply(byte_buffer& out) { append_ok_reply(out, {}); }

void append_user_id_reply(byte_buffer& out, std::uint32_t user_id) {
    with_reply(out, [&](writer& w) { w.u32(user_id); });
}

void append_get_me_reply(byte_buffer& out, const client_details& c) {
    with_reply(out, [&](writer& w) { append_client_details(w, c); });
}

result<void> append_stream_reply(byte_buffer& out, const stream_details& s) {
    return with_reply(out, [&](writer& w) { return append_stream_details(w, s); });
}

result<void> append_streams_reply(byte_buffer& out, std::span<const stream_info> streams) {
    return with_reply(out, [&](writer& w) -> result<void> {
        for (const auto& s : streams)
            if (auto r = append_stream_info(w, s); !r) return r;
        return {};
    });
}

result<void> append_topic_reply(byte_buffer& out, const topic_details& t) {
    return with_reply(out, [&](writer& w) { return append_topic_details(w, t); });
}

result<void> append_topics_reply(byte_buffer& out, std::span<const topic_info> topics) {
    return with_reply(out, [&](writer& w) -> result<void> {
        for (const auto& t : topics)
            if (auto r = append_topic_info(w, t); !r) return r;
        return {};
    });
}

result<void> append_consumer_group_reply(byte_buffer& out, const consumer_group_details& g) {
    return with_reply(out, [&](writer& w) { return append_consumer_group_details(w, g); });
}

result<void> append_consumer_groups_reply(byte_buffer& out, std::span<const consumer_group_info> groups) {
    return with_reply(out, [&](writer& w) -> result<void> {
        for (const auto& g : groups)
            if (auto r = append_consumer_group_info(w, g); !r) return r;
        return {};
    });
}

void append_consumer_offset_reply(byte_buffer& out, const std::optional<consumer_offset_info>& o) {
    with_reply(out, [&](writer& w) {
        if (o) append_consumer_offset_info(w, *o);
    });
}

// ---- poll replies ----

void poll_reply_writer::begin(std::uint32_t partition_id, std::uint64_t current_offset) {
    start_ = out_->size();
    count_ = 0;
    writer w{*out_};
    w.u32(partition_id);
    w.u64(current_offset);
    w.u32(0);
}

result<void> poll_reply_writer::add(const message_fields& m) {
    if (auto r = append_message(*out_, m, true); !r) return r;
    ++count_;
    return {};
}

void poll_reply_writer::add_raw(bytes_view message) {
    out_->insert(out_->end(), message.begin(), message.end());
    ++count_;
}

std::size_t poll_reply_writer::finish() noexcept {
    store_le<std::uint32_t>(out_->data() + start_ + 12, count_);
    return out_->size() - start_;
}

}  // namespace iss::proto

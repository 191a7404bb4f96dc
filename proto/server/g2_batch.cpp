// SPDX-License-Identifier: Apache-2.0
// The G2 batches of the server side (the test broker): SendMessages decoded and verified,
// its confirmations and poll replies written (docs/protocol.md §8.4). Target proto_server:
// the daemon never links it.
#include "proto/g2_batch.hpp"

#include "proto/g2_codec.hpp"

#include <limits>
#include <vector>

namespace iss::proto::g2 {

using namespace batch_codec;

result<void> decode_send_messages(bytes_view body, send_messages_batch_view& out, const message_limits& limits) {
    out.messages.clear();
    reader r{body};
    auto metadata = r.u32("send_messages.metadata_length");
    if (!metadata) return metadata.error();
    const std::size_t meta_start = r.position();
    auto stream = read_identifier(r, "send_messages.stream_id");
    if (!stream) return stream.error();
    auto topic = read_identifier(r, "send_messages.topic_id");
    if (!topic) return topic.error();
    auto part = read_partitioning(r, "send_messages.partitioning");
    if (!part) return part.error();
    auto count = r.u32("send_messages.messages_count");
    if (!count) return count.error();
    if (r.position() - meta_start != *metadata)
        return iss::error{errc::inconsistent, "send_messages.metadata_length (does not match the fields)"};
    if (*count == 0) return server(server_errc::invalid_messages_count, "send_messages.messages_count (0)");
    auto hb = r.bytes(batch_header_size, "send_messages.batch_header");
    if (!hb) return hb.error();
    const batch_header h = read_batch_header(hb->data());
    if (!reserved_zero(hb->data()))
        return iss::error{errc::invalid_value, "send_messages.batch_header.reserved (bytes 52..255 not zero)"};
    if (h.message_count != *count)
        return iss::error{errc::inconsistent, "send_messages.batch_header.message_count (differs from messages_count)"};
    if (h.batch_length != batch_header_size + r.remaining())
        return iss::error{errc::inconsistent, "send_messages.batch_header.batch_length (does not match the body)"};
    std::vector<std::uint64_t> sums;
    sums.reserve(*count);
    out.messages.reserve(*count);
    bytes_view rest = r.rest();
    for (std::uint32_t i = 0; i < *count; ++i) {
        const frame_name field{"send_messages.messages", i};
        auto m = read_frame(rest, h, limits, field);
        if (!m) return m.error();
        if (m->payload.size() > max_payload_size)
            return server(server_errc::too_big_message_payload, field(".payload_length"));
        if (m->compute_checksum() != m->checksum)
            return server(server_errc::invalid_message_checksum, field(".checksum"));
        sums.push_back(m->checksum);
        m->offset = m->offset - h.base_offset;  // the delta: a client's base is 0
        rest = rest.subspan(m->raw.size());
        out.messages.push_back(*m);
    }
    if (!rest.empty()) return iss::error{errc::inconsistent, "send_messages (bytes after the last frame)"};
    if (compute_batch_checksum(h, sums) != h.batch_checksum)
        return server(server_errc::invalid_batch_checksum, "send_messages.batch_header.batch_checksum");
    out.stream = std::move(*stream);
    out.topic = std::move(*topic);
    out.part = std::move(*part);
    out.header = h;
    return {};
}

void append_send_reply(byte_buffer& body, std::span<const send_confirmation> c) {
    writer w{body};
    w.u32(static_cast<std::uint32_t>(c.size()));
    for (const auto& x : c) {
        w.u32(x.stream_id);
        w.u32(x.topic_id);
        w.u32(x.partition_id);
        w.u64(x.base_offset);
    }
}

void batch_poll_writer::begin(std::uint32_t partition_id, std::uint64_t current_offset) {
    start_ = out_->size();
    partition_ = partition_id;
    count_ = 0;
    open_ = false;
    writer w{*out_};
    w.u32(partition_id);
    w.u64(current_offset);
    w.u32(0);
}

void batch_poll_writer::close_record() {
    if (!open_) return;
    h_.batch_length = out_->size() - rec_;
    h_.batch_checksum = compute_batch_checksum(h_, sums_);
    write_batch_header(out_->data() + rec_, h_);
    open_ = false;
}

void batch_poll_writer::open_record(std::uint64_t base_offset, std::uint64_t base_timestamp, std::uint64_t origin) {
    close_record();
    rec_ = out_->size();
    out_->resize(rec_ + batch_header_size);
    h_ = batch_header{};
    h_.partition_id = partition_;
    h_.base_offset = base_offset;
    h_.base_timestamp = base_timestamp;
    h_.origin_timestamp = origin;
    sums_.clear();
    open_ = true;
}

result<void> batch_poll_writer::append_frame(const message_fields& m) {
    const std::size_t at = out_->size();
    out_->resize(at + frame_header_size + m.payload.size() + m.user_headers.size());
    sums_.push_back(write_frame(out_->data() + at, m, static_cast<std::uint32_t>(m.offset - h_.base_offset),
                                static_cast<std::uint32_t>(m.origin_timestamp - h_.origin_timestamp)));
    ++h_.message_count;
    next_offset_ = m.offset + 1;
    ++count_;
    return {};
}

result<void> batch_poll_writer::add(const message_fields& m) {
    if (m.payload.size() > max_payload_size) return iss::error{errc::limit_exceeded, "poll_reply.payload"};
    if (m.user_headers.size() > max_user_headers_size)
        return iss::error{errc::limit_exceeded, "poll_reply.user_headers"};
    const bool fits = open_ && m.timestamp == h_.base_timestamp && m.offset == next_offset_ &&
                      m.origin_timestamp >= h_.origin_timestamp &&
                      m.origin_timestamp - h_.origin_timestamp <= std::numeric_limits<std::uint32_t>::max() &&
                      m.offset - h_.base_offset <= std::numeric_limits<std::uint32_t>::max();
    if (!fits) open_record(m.offset, m.timestamp, m.origin_timestamp);
    return append_frame(m);
}

result<void> batch_poll_writer::add(const message_fields& m, std::uint64_t record_base_offset,
                                    std::uint64_t record_origin) {
    if (m.payload.size() > max_payload_size) return iss::error{errc::limit_exceeded, "poll_reply.payload"};
    if (m.user_headers.size() > max_user_headers_size)
        return iss::error{errc::limit_exceeded, "poll_reply.user_headers"};
    constexpr auto u32_max = std::numeric_limits<std::uint32_t>::max();
    if (m.offset < record_base_offset || m.offset - record_base_offset > u32_max ||
        m.origin_timestamp < record_origin || m.origin_timestamp - record_origin > u32_max)
        return iss::error{errc::invalid_value, "poll_reply: message outside its stored batch"};
    const bool fits = open_ && h_.base_offset == record_base_offset && h_.origin_timestamp == record_origin &&
                      m.timestamp == h_.base_timestamp && m.offset == next_offset_;
    if (!fits) open_record(record_base_offset, m.timestamp, record_origin);
    return append_frame(m);
}

std::size_t batch_poll_writer::finish() {
    close_record();
    store_le(out_->data() + start_ + 12, count_);
    return out_->size() - start_;
}

}  // namespace iss::proto::g2

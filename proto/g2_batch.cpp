// SPDX-License-Identifier: Apache-2.0
#include "proto/g2_batch.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace iss::proto::g2 {

namespace {

// BatchHeader field offsets.
constexpr std::size_t bh_partition = 0, bh_base_offset = 8, bh_base_ts = 16, bh_origin = 24, bh_length = 32,
                      bh_checksum = 40, bh_count = 48, bh_reserved = 52;
// Frame field offsets.
constexpr std::size_t fr_checksum = 0, fr_id = 8, fr_offset_delta = 24, fr_ts_delta = 28, fr_uh_len = 32, fr_p_len = 36,
                      fr_reserved = 40;

void write_batch_header(std::byte* p, const batch_header& h) noexcept {
    std::memset(p, 0, batch_header_size);
    store_le(p + bh_partition, h.partition_id);
    store_le(p + bh_base_offset, h.base_offset);
    store_le(p + bh_base_ts, h.base_timestamp);
    store_le(p + bh_origin, h.origin_timestamp);
    store_le(p + bh_length, h.batch_length);
    store_le(p + bh_checksum, h.batch_checksum);
    store_le(p + bh_count, h.message_count);
}

batch_header read_batch_header(const std::byte* p) noexcept {
    batch_header h;
    h.partition_id = load_le<std::uint64_t>(p + bh_partition);
    h.base_offset = load_le<std::uint64_t>(p + bh_base_offset);
    h.base_timestamp = load_le<std::uint64_t>(p + bh_base_ts);
    h.origin_timestamp = load_le<std::uint64_t>(p + bh_origin);
    h.batch_length = load_le<std::uint64_t>(p + bh_length);
    h.batch_checksum = load_le<std::uint64_t>(p + bh_checksum);
    h.message_count = load_le<std::uint32_t>(p + bh_count);
    return h;
}

bool reserved_zero(const std::byte* p) noexcept {
    for (std::size_t i = bh_reserved; i < batch_header_size; ++i)
        if (p[i] != std::byte{0}) return false;
    return true;
}

std::uint64_t frame_checksum(const std::byte* frame, std::size_t size) noexcept {
    return XXH3_64bits(frame + 8, size - 8);
}

/// Writes one frame at `p` (room checked by the caller); returns its checksum.
std::uint64_t write_frame(std::byte* p, const message_fields& m, std::uint32_t offset_delta,
                          std::uint32_t ts_delta) noexcept {
    store_le<u128>(p + fr_id, m.id);
    store_le(p + fr_offset_delta, offset_delta);
    store_le(p + fr_ts_delta, ts_delta);
    store_le(p + fr_uh_len, static_cast<std::uint32_t>(m.user_headers.size()));
    store_le(p + fr_p_len, static_cast<std::uint32_t>(m.payload.size()));
    store_le<std::uint64_t>(p + fr_reserved, 0);
    if (!m.payload.empty()) std::memcpy(p + frame_header_size, m.payload.data(), m.payload.size());
    if (!m.user_headers.empty())
        std::memcpy(p + frame_header_size + m.payload.size(), m.user_headers.data(), m.user_headers.size());
    const std::size_t size = frame_header_size + m.payload.size() + m.user_headers.size();
    const std::uint64_t sum = frame_checksum(p, size);
    store_le(p + fr_checksum, sum);
    return sum;
}

iss::error server(server_errc e, std::string detail) { return iss::error{make_error_code(e), std::move(detail)}; }

/// A frame's name in error messages, `<prefix>[<index>]<suffix>`: built only when an error is
/// reported (formatting it for every frame cost more than reading the frame).
struct frame_name {
    std::string_view prefix;
    std::uint32_t index = 0;
    [[nodiscard]] std::string operator()(std::string_view suffix) const {
        return fmt::format("{}[{}]{}", prefix, index, suffix);
    }
};

/// One frame at the start of `in` decoded into a message_view (offset/timestamps resolved
/// against `h`). `field` names it in errors.
result<message_view> read_frame(bytes_view in, const batch_header& h, const message_limits& limits,
                                const frame_name& field) {
    if (in.size() < frame_header_size) return iss::error{errc::truncated, field(".header")};
    const std::byte* p = in.data();
    const auto uh_len = load_le<std::uint32_t>(p + fr_uh_len);
    const auto p_len = load_le<std::uint32_t>(p + fr_p_len);
    if (p_len > limits.max_payload) return iss::error{errc::limit_exceeded, field(".payload_length")};
    if (uh_len > limits.max_user_headers) return iss::error{errc::limit_exceeded, field(".user_headers_length")};
    const std::size_t size = frame_header_size + std::size_t{p_len} + uh_len;
    if (in.size() < size) return iss::error{errc::truncated, field(".payload")};
    message_view m;
    m.checksum = load_le<std::uint64_t>(p + fr_checksum);
    m.id = load_le<u128>(p + fr_id);
    m.offset = h.base_offset + load_le<std::uint32_t>(p + fr_offset_delta);
    m.timestamp = h.base_timestamp;
    m.origin_timestamp = h.origin_timestamp + load_le<std::uint32_t>(p + fr_ts_delta);
    m.reserved = load_le<std::uint64_t>(p + fr_reserved);
    m.payload = in.subspan(frame_header_size, p_len);
    m.user_headers = in.subspan(frame_header_size + p_len, uh_len);
    m.raw = in.first(size);
    return m;
}

}  // namespace

std::uint64_t compute_batch_checksum(const batch_header& h, std::span<const std::uint64_t> sums) noexcept {
    // One contiguous buffer, hashed once (XXH3's streaming state needs XXH_STATIC_LINKING_ONLY).
    thread_local std::vector<std::byte> buf;
    buf.resize(44 + sums.size() * 8);
    std::byte* fixed = buf.data();
    store_le(fixed + 0, h.partition_id);
    store_le(fixed + 8, h.base_offset);
    store_le(fixed + 16, h.base_timestamp);
    store_le(fixed + 24, h.origin_timestamp);
    store_le(fixed + 32, h.batch_length);
    store_le(fixed + 40, h.message_count);
    if (!sums.empty()) std::memcpy(fixed + 44, sums.data(), sums.size() * 8);
    return XXH3_64bits(buf.data(), buf.size());
}

result<void> encode_body(writer& w, const send_messages_request& req) {
    const auto& msgs = req.messages;
    if (msgs.empty()) return iss::error{errc::invalid_value, "send_messages.messages (empty batch)"};
    std::uint64_t origin = std::numeric_limits<std::uint64_t>::max();
    std::size_t frames = 0;
    for (std::size_t i = 0; i < msgs.size(); ++i) {
        const auto& m = msgs[i];
        if (m.payload.size() > max_payload_size)
            return iss::error{errc::limit_exceeded, fmt::format("send_messages.messages[{}].payload", i)};
        if (m.user_headers.size() > max_user_headers_size)
            return iss::error{errc::limit_exceeded, fmt::format("send_messages.messages[{}].user_headers", i)};
        origin = std::min(origin, m.origin_timestamp);
        frames += frame_header_size + m.payload.size() + m.user_headers.size();
    }
    if (frames + batch_header_size > std::numeric_limits<std::uint32_t>::max())
        return iss::error{errc::limit_exceeded, "send_messages (frame over 4 GiB)"};
    for (std::size_t i = 0; i < msgs.size(); ++i)
        if (msgs[i].origin_timestamp - origin > std::numeric_limits<std::uint32_t>::max())
            return iss::error{errc::invalid_value,
                              fmt::format("send_messages.messages[{}].origin_timestamp (more than u32::MAX µs "
                                          "after the batch's earliest)",
                                          i)};
    const std::size_t start = w.size();
    auto& out = w.buffer();
    const std::size_t metadata = req.stream.wire_size() + req.topic.wire_size() + req.part.wire_size() + 4;
    out.reserve(start + 4 + metadata + batch_header_size + frames);
    w.u32(static_cast<std::uint32_t>(metadata));
    auto fail = [&](iss::error e) -> result<void> {
        out.resize(start);
        return e;
    };
    if (auto r = append_identifier(w, req.stream, "send_messages.stream_id"); !r) return fail(r.error());
    if (auto r = append_identifier(w, req.topic, "send_messages.topic_id"); !r) return fail(r.error());
    if (auto r = append_partitioning(w, req.part); !r) return fail(r.error());
    w.u32(static_cast<std::uint32_t>(msgs.size()));

    const std::size_t hdr_at = w.skip(batch_header_size + frames);
    batch_header h;
    h.origin_timestamp = origin;
    h.batch_length = batch_header_size + frames;
    h.message_count = static_cast<std::uint32_t>(msgs.size());
    std::vector<std::uint64_t> sums;
    sums.reserve(msgs.size());
    std::byte* p = out.data() + hdr_at + batch_header_size;
    for (std::size_t i = 0; i < msgs.size(); ++i) {
        const auto& m = msgs[i];
        sums.push_back(
            write_frame(p, m, static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(m.origin_timestamp - origin)));
        p += frame_header_size + m.payload.size() + m.user_headers.size();
    }
    h.batch_checksum = compute_batch_checksum(h, sums);
    write_batch_header(out.data() + hdr_at, h);
    return {};
}

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

result<std::vector<send_confirmation>> decode_send_reply(bytes_view body) {
    if (body.empty()) return iss::error{errc::inconsistent, "send_messages_reply (empty body: not accepted)"};
    reader r{body};
    auto n = r.u32("send_messages_reply.count");
    if (!n) return n.error();
    if (r.remaining() / 20 < *n) return reader::truncated("send_messages_reply.confirmations");
    std::vector<send_confirmation> v(*n);
    for (auto& c : v) {
        c.stream_id = *r.u32("s");
        c.topic_id = *r.u32("t");
        c.partition_id = *r.u32("p");
        c.base_offset = *r.u64("o");
    }
    if (!r.empty()) return iss::error{errc::inconsistent, "send_messages_reply (trailing bytes)"};
    return v;
}

// ---- poll ------------------------------------------------------------------------------------

result<void> decode_batch_poll_reply(bytes_view body, poll_reply& out, const poll_options& o) {
    out.messages.clear();
    out.partition_id = 0;
    out.current_offset = 0;
    if (body.size() > o.max_reply) return iss::error{errc::limit_exceeded, "poll_reply (over max_reply)"};
    reader r{body};
    auto pid = r.u32("poll_reply.partition_id");
    if (!pid) return pid.error();
    auto cur = r.u64("poll_reply.current_offset");
    if (!cur) return cur.error();
    auto count = r.u32("poll_reply.messages_count");
    if (!count) return count.error();
    bytes_view rest = r.rest();
    out.messages.reserve(std::min<std::size_t>(*count, rest.size() / frame_header_size));
    std::vector<std::uint64_t> sums;
    std::size_t rec = 0;
    while (!rest.empty()) {
        const std::string rf = fmt::format("poll_reply.records[{}]", rec);
        if (rest.size() < batch_header_size) return iss::error{errc::truncated, rf + ".header"};
        const batch_header h = read_batch_header(rest.data());
        if (!o.producer_fields && !reserved_zero(rest.data()))
            return iss::error{errc::invalid_value, rf + ".reserved (bytes 52..255 not zero)"};
        if (h.batch_length < batch_header_size || h.batch_length > rest.size())
            return iss::error{errc::inconsistent, rf + ".batch_length"};
        if (h.message_count > (h.batch_length - batch_header_size) / frame_header_size)
            return iss::error{errc::inconsistent, rf + ".message_count"};
        if (out.messages.size() + h.message_count > *count)
            return iss::error{errc::inconsistent, "poll_reply.messages_count (fewer than the frames)"};
        bytes_view frames = rest.subspan(batch_header_size, h.batch_length - batch_header_size);
        sums.clear();
        const std::string frames_name = rf + ".frames";
        for (std::uint32_t i = 0; i < h.message_count; ++i) {
            const frame_name ff{frames_name, i};
            auto m = read_frame(frames, h, o.message, ff);
            if (!m) return m.error();
            if (o.verify_checksums && !m->checksum_ok()) return iss::error{errc::checksum_mismatch, ff(".checksum")};
            sums.push_back(m->checksum);
            frames = frames.subspan(m->raw.size());
            out.messages.push_back(*m);
        }
        if (!frames.empty()) return iss::error{errc::inconsistent, rf + " (bytes after the last frame)"};
        if (o.verify_checksums && !o.producer_fields && compute_batch_checksum(h, sums) != h.batch_checksum)
            return iss::error{errc::checksum_mismatch, rf + ".batch_checksum"};
        rest = rest.subspan(h.batch_length);
        ++rec;
    }
    if (out.messages.size() != *count)
        return iss::error{errc::inconsistent, "poll_reply.messages_count (more than the frames)"};
    out.partition_id = *pid;
    out.current_offset = *cur;
    return {};
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

// SPDX-License-Identifier: Apache-2.0
#include "proto/g2_batch.hpp"

#include "proto/g2_codec.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace iss::proto::g2 {

using namespace batch_codec;

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

}  // namespace iss::proto::g2

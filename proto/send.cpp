// SPDX-License-Identifier: Apache-2.0
#include "proto/send.hpp"

#include "proto/message_header.hpp"

#include <cstring>
#include <limits>
#include <string>

namespace iss::proto {

namespace {

std::string at(std::string_view what, std::size_t i) {
    return "send_messages." + std::string{what} + "[" + std::to_string(i) + "]";
}

iss::error server(server_errc e, std::string detail) { return iss::error{make_error_code(e), std::move(detail)}; }

}  // namespace

result<void> append_send_messages(byte_buffer& out, const identifier& stream, const identifier& topic,
                                  const partitioning& part, std::span<const message_fields> messages) {
    if (messages.empty()) return iss::error{errc::invalid_value, "send_messages.messages (empty batch)"};
    std::size_t body = 0;
    for (std::size_t i = 0; i < messages.size(); ++i) {
        const auto& m = messages[i];
        if (m.payload.size() > max_payload_size)
            return iss::error{errc::limit_exceeded, at("messages", i) + ".payload (over 64 000 000 bytes)"};
        if (m.user_headers.size() > max_user_headers_size)
            return iss::error{errc::limit_exceeded, at("messages", i) + ".user_headers (over 100 000 bytes)"};
        body += message_header_size + m.payload.size() + m.user_headers.size();
        if (body > std::numeric_limits<std::uint32_t>::max())
            return iss::error{errc::limit_exceeded, "send_messages (frame over 4 GiB)"};
    }
    const std::size_t metadata = stream.wire_size() + topic.wire_size() + part.wire_size() + 4;
    const std::size_t payload = 4 + metadata + send_index_entry_size * messages.size() + body;
    if (payload + 4 > std::numeric_limits<std::uint32_t>::max())
        return iss::error{errc::limit_exceeded, "send_messages (frame over 4 GiB)"};

    const std::size_t start = out.size();
    out.reserve(start + request_header_size + payload);
    writer w{out};
    w.u32(static_cast<std::uint32_t>(payload + 4));
    w.u32(static_cast<std::uint32_t>(command::send_messages));
    w.u32(static_cast<std::uint32_t>(metadata));
    auto fail = [&](iss::error e) -> result<void> {
        out.resize(start);
        return e;
    };
    if (auto r = append_identifier(w, stream, "send_messages.stream_id"); !r) return fail(r.error());
    if (auto r = append_identifier(w, topic, "send_messages.topic_id"); !r) return fail(r.error());
    if (auto r = append_partitioning(w, part); !r) return fail(r.error());
    w.u32(static_cast<std::uint32_t>(messages.size()));

    // Index and messages are written in place into one resize.
    const std::size_t index_at = out.size();
    out.resize(index_at + send_index_entry_size * messages.size() + body);
    std::byte* index = out.data() + index_at;
    std::byte* msg = index + send_index_entry_size * messages.size();
    std::memset(index, 0, send_index_entry_size * messages.size());
    std::uint32_t end = 0;
    for (std::size_t i = 0; i < messages.size(); ++i) {
        const auto& m = messages[i];
        const std::size_t size = message_header_size + m.payload.size() + m.user_headers.size();
        std::memset(msg, 0, 8);
        store_le<u128>(msg + 8, m.id);
        store_le<std::uint64_t>(msg + 24, 0);
        store_le<std::uint64_t>(msg + 32, 0);
        store_le<std::uint64_t>(msg + 40, m.origin_timestamp);
        store_le<std::uint32_t>(msg + 48, static_cast<std::uint32_t>(m.user_headers.size()));
        store_le<std::uint32_t>(msg + 52, static_cast<std::uint32_t>(m.payload.size()));
        store_le<std::uint64_t>(msg + 56, 0);
        if (!m.payload.empty()) std::memcpy(msg + 64, m.payload.data(), m.payload.size());
        if (!m.user_headers.empty())
            std::memcpy(msg + 64 + m.payload.size(), m.user_headers.data(), m.user_headers.size());
        end += static_cast<std::uint32_t>(size);
        store_le<std::uint32_t>(index + send_index_entry_size * i + 4, end);
        msg += size;
    }
    return {};
}

result<void> decode_send_messages(bytes_view payload, send_messages_view& out) {
    out.messages.clear();
    reader r{payload};
    auto meta_len = r.u32("send_messages.metadata_length");
    if (!meta_len) return server(server_errc::invalid_command, "send_messages.metadata_length (truncated)");
    if (*meta_len > payload.size())
        return server(server_errc::invalid_command, "send_messages.metadata_length (over the payload)");
    auto meta_bytes = r.bytes(*meta_len, "send_messages.metadata");
    if (!meta_bytes) return server(server_errc::invalid_command, "send_messages.metadata (truncated)");

    reader m{*meta_bytes};
    auto stream = read_identifier(m, "send_messages.stream_id");
    if (!stream) return server(server_errc::invalid_identifier, stream.error().detail());
    auto topic = read_identifier(m, "send_messages.topic_id");
    if (!topic) return server(server_errc::invalid_identifier, topic.error().detail());
    auto part = read_partitioning(m, "send_messages.partitioning");
    if (!part) return server(server_errc::invalid_command, part.error().detail());
    auto count = m.u32("send_messages.messages_count");
    if (!count) return server(server_errc::invalid_command, "send_messages.messages_count (missing)");
    out.stream = std::move(*stream);
    out.topic = std::move(*topic);
    out.part = std::move(*part);

    const std::size_t index_size = std::size_t{*count} * send_index_entry_size;
    if (index_size > payload.size())
        return server(server_errc::invalid_command, "send_messages.messages_count (index larger than the payload)");
    if (r.remaining() < index_size) return server(server_errc::invalid_command, "send_messages.index (truncated)");
    const bytes_view index = r.bytes(index_size, "send_messages.index").value();
    const bytes_view data = r.rest();

    if (*count == 0) return server(server_errc::invalid_messages_count, "send_messages.messages_count (empty batch)");
    out.messages.reserve(*count);
    std::size_t prev_end = 0;
    std::uint64_t prev_offset = 0;
    std::size_t sum = 0;
    for (std::uint32_t i = 0; i < *count; ++i) {
        const std::byte* e = index.data() + send_index_entry_size * i;
        if (load_le<std::uint32_t>(e) != 0) return server(server_errc::non_zero_offset, at("index", i) + ".offset");
        if (load_le<std::uint64_t>(e + 8) != 0)
            return server(server_errc::non_zero_timestamp, at("index", i) + ".timestamp");
        const std::size_t end = load_le<std::uint32_t>(e + 4);
        if (end > data.size() || end < prev_end || end - prev_end < message_header_size)
            return server(server_errc::missing_index, at("index", i) + ".end_position");
        const bytes_view slot = data.subspan(prev_end, end - prev_end);
        const std::byte* p = slot.data();
        const auto lengths = message_header::read_lengths(p);
        const std::size_t h = lengths.user_headers;
        const std::size_t pl = lengths.payload;
        if (message_header_size + pl + h > slot.size())
            return server(server_errc::missing_index, at("messages", i) + " (longer than its index slot)");
        if (pl > max_payload_size)
            return server(server_errc::too_big_message_payload, at("messages", i) + ".payload_length");
        if (h > max_user_headers_size)
            return server(server_errc::too_big_user_headers, at("messages", i) + ".user_headers_length");
        auto mv = decode_message(slot, at("messages", i));
        if (!mv) return server(server_errc::missing_index, mv.error().detail());
        if (mv->offset < prev_offset)
            return server(server_errc::invalid_offset, at("messages", i) + ".offset (decreasing)");
        prev_offset = mv->offset;
        prev_end = end;
        sum += mv->raw.size();
        out.messages.push_back(*mv);
    }
    if (sum != data.size())
        return server(server_errc::invalid_messages_size, "send_messages.messages (sizes do not add up to the frame)");
    return {};
}

}  // namespace iss::proto

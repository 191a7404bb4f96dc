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
        message_header::write(msg, m);
        // The server assigns offset and timestamp: a client sends 0 whatever `m` holds.
        store_le<std::uint64_t>(msg + message_header::offset, 0);
        store_le<std::uint64_t>(msg + message_header::timestamp, 0);
        std::byte* body_at = msg + message_header_size;
        if (!m.payload.empty()) std::memcpy(body_at, m.payload.data(), m.payload.size());
        if (!m.user_headers.empty())
            std::memcpy(body_at + m.payload.size(), m.user_headers.data(), m.user_headers.size());
        end += static_cast<std::uint32_t>(size);
        store_le<std::uint32_t>(index + send_index_entry_size * i + 4, end);
        msg += size;
    }
    return {};
}

}  // namespace iss::proto

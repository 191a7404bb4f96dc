// SPDX-License-Identifier: Apache-2.0
#include "proto/poll.hpp"

#include "proto/message_header.hpp"

#include <string>

namespace iss::proto {

namespace {

std::string message_field(std::size_t i) { return "poll_reply.messages[" + std::to_string(i) + "]"; }

}  // namespace

void poll_reply_view::iterator::load() noexcept {
    if (left_ == 0) return;
    // Validated by decode_poll_reply: the header and both lengths are inside rest_.
    const auto [h, pl] = message_header::read(rest_.data(), cur_);
    cur_.payload = rest_.subspan(message_header_size, pl);
    cur_.user_headers = rest_.subspan(message_header_size + pl, h);
    cur_.raw = rest_.first(message_header_size + std::size_t{pl} + h);
}

result<poll_reply_view> decode_poll_reply(bytes_view payload, const poll_reply_options& options) {
    if (payload.size() > options.max_reply) return iss::error{errc::limit_exceeded, "poll_reply (over max_reply)"};
    reader r{payload};
    poll_reply_view v;
    auto pid = r.u32("poll_reply.partition_id");
    if (!pid) return pid.error();
    auto cur = r.u64("poll_reply.current_offset");
    if (!cur) return cur.error();
    auto cnt = r.u32("poll_reply.messages_count");
    if (!cnt) return cnt.error();
    v.partition_id = *pid;
    v.current_offset = *cur;
    v.messages_count = *cnt;
    bytes_view rest = r.rest();
    // Each message is at least 64 bytes: reject an impossible count before walking.
    if (rest.size() / message_header_size < *cnt)
        return iss::error{errc::truncated, "poll_reply.messages (fewer bytes than messages_count needs)"};
    bytes_view walk = rest;
    for (std::uint32_t i = 0; i < *cnt; ++i) {
        const std::byte* p = walk.data();
        // Fast path of decode_message: checks without building an error string.
        if (walk.size() >= message_header_size) {
            const auto [h, pl] = message_header::read_lengths(p);
            const std::size_t body = walk.size() - message_header_size;
            if (pl <= options.message.max_payload && h <= options.message.max_user_headers && pl <= body &&
                h <= body - pl) {
                const std::size_t total = message_header_size + std::size_t{pl} + h;
                if (options.verify_checksums &&
                    message_checksum(walk.first(total)) != load_le<std::uint64_t>(p + message_header::checksum))
                    return iss::error{errc::checksum_mismatch, message_field(i) + ".checksum"};
                walk = walk.subspan(total);
                continue;
            }
        }
        // The slow path runs only to name the error; it fails on the same conditions.
        auto m = decode_message(walk, message_field(i), options.message);
        if (!m) return m.error();
        return iss::error{errc::inconsistent, message_field(i)};
    }
    if (!walk.empty()) return iss::error{errc::inconsistent, "poll_reply (bytes after the last message)"};
    v.messages_bytes_ = rest;
    return v;
}

result<void> decode_poll_reply_into(bytes_view payload, poll_reply& out, const poll_reply_options& options) {
    out.messages.clear();
    auto v = decode_poll_reply(payload, options);
    if (!v) return v.error();
    out.partition_id = v->partition_id;
    out.current_offset = v->current_offset;
    out.messages.reserve(v->size());
    for (const auto& m : *v) out.messages.push_back(m);
    return {};
}

}  // namespace iss::proto

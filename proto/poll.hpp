// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// PollMessages (100) reply payload (docs/protocol.md §5.6):
/// ```
/// partition_id u32 | current_offset u64 | messages_count u32 | messages (§6.1) back to back
/// ```
/// Decoding checks every message once (bounds, limits, optionally checksums) and then hands out
/// `message_view`s into the caller's buffer: no allocation per message. The views stay valid
/// while the buffer does (for the client: until the next poll on that connection).

#include "proto/message.hpp"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

namespace iss::proto {

/// Size of the fixed part of a poll reply.
inline constexpr std::size_t poll_reply_header_size = 16;
/// Default cap on a poll reply payload (the caller may raise it).
inline constexpr std::size_t default_max_poll_reply = 64u * 1024 * 1024;

/// What a poll reply decoder accepts.
struct poll_reply_options {
    std::size_t max_reply = default_max_poll_reply;  ///< payload bytes; `limit_exceeded` above
    message_limits message{};                        ///< per-message payload/header caps
    /// Verify each message's XXH3-64 (`checksum_mismatch` naming the message). Off by default:
    /// servers with encryption at rest send checksums of the encrypted bytes (§6.1).
    bool verify_checksums = false;
};

/// A decoded poll reply: the fixed fields plus a forward range of message views.
class poll_reply_view {
public:
    std::uint32_t partition_id = 0;
    std::uint64_t current_offset = 0;  ///< the partition's newest offset, or 0 when empty
    std::uint32_t messages_count = 0;

    /// Iterates the (already validated) messages in wire order.
    class iterator {
    public:
        // Dereferencing yields a view by value (a "stashing" iterator may not hand out
        // references), so the legacy category is input; in C++20 terms it is forward.
        using iterator_category = std::input_iterator_tag;
        using iterator_concept = std::forward_iterator_tag;
        using value_type = message_view;
        using difference_type = std::ptrdiff_t;
        using reference = message_view;

        iterator() = default;
        message_view operator*() const noexcept { return cur_; }
        const message_view* operator->() const noexcept { return &cur_; }
        iterator& operator++() noexcept {
            rest_ = rest_.subspan(cur_.raw.size());
            --left_;
            load();
            return *this;
        }
        iterator operator++(int) noexcept {
            iterator t = *this;
            ++*this;
            return t;
        }
        friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.left_ == b.left_; }

    private:
        friend class poll_reply_view;
        iterator(bytes_view rest, std::uint32_t left) noexcept : rest_{rest}, left_{left} { load(); }
        void load() noexcept;
        bytes_view rest_;
        std::uint32_t left_ = 0;
        message_view cur_{};
    };

    [[nodiscard]] iterator begin() const noexcept { return iterator{messages_bytes_, messages_count}; }
    [[nodiscard]] iterator end() const noexcept { return iterator{}; }
    [[nodiscard]] std::size_t size() const noexcept { return messages_count; }
    [[nodiscard]] bool empty() const noexcept { return messages_count == 0; }
    /// The bytes of all messages.
    [[nodiscard]] bytes_view messages_bytes() const noexcept { return messages_bytes_; }

private:
    friend result<poll_reply_view> decode_poll_reply(bytes_view, const poll_reply_options&);
    bytes_view messages_bytes_;
};

/// Decodes and validates a poll reply payload. Errors name the field
/// ("poll_reply.messages[3].payload"): truncation, limits, trailing bytes after the last
/// message (`inconsistent`), checksum mismatch when asked.
result<poll_reply_view> decode_poll_reply(bytes_view payload, const poll_reply_options& options = {});

/// A poll reply with its messages in a vector, for random access. Reuse one object across
/// polls: `decode_poll_reply_into` clears it and keeps its capacity, so steady-state decoding
/// allocates nothing.
struct poll_reply {
    std::uint32_t partition_id = 0;
    std::uint64_t current_offset = 0;
    std::vector<message_view> messages;
};

/// As `decode_poll_reply`, into `out` (cleared first).
result<void> decode_poll_reply_into(bytes_view payload, poll_reply& out, const poll_reply_options& options = {});

/// Builds a poll reply payload (server side, the test broker; target proto_server): call `begin`, then `add` or
/// `add_raw` per message, then `finish`, which patches `messages_count`.
class poll_reply_writer {
public:
    explicit poll_reply_writer(byte_buffer& out) noexcept : out_{&out} {}
    /// Writes the fixed fields (count patched by `finish`).
    void begin(std::uint32_t partition_id, std::uint64_t current_offset);
    /// Appends a message built from fields, with its checksum computed.
    result<void> add(const message_fields& m);
    /// Appends a message already laid out as in §6.1 (a stored message), as is.
    void add_raw(bytes_view message);
    /// Patches messages_count; returns the payload size.
    std::size_t finish() noexcept;

private:
    byte_buffer* out_;
    std::size_t start_ = 0;
    std::uint32_t count_ = 0;
};

}  // namespace iss::proto

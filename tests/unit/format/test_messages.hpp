// SPDX-License-Identifier: Apache-2.0
#pragma once
// Builds real G1 messages (proto::append_message) and returns views into them, so the
// writers are tested on exactly what a poll reply holds.
#include "proto/message.hpp"

#include "catch2_compat.hpp"

#include <deque>
#include <string>
#include <string_view>

namespace iss::format::test {

/// A user-headers block under construction.
struct headers {
    proto::byte_buffer block;
    headers& add(proto::header_kind kk, proto::bytes_view k, proto::header_kind vk, proto::bytes_view v) {
        REQUIRE(proto::append_user_header(block, kk, k, vk, v).has_value());
        return *this;
    }
    /// An entry written byte by byte, without the builder's checks (invalid UTF-8 in a string
    /// kind: the 0.8.0 server stores whatever a client sends, docs/protocol.md §2.6).
    headers& add_unchecked(proto::header_kind kk, std::string_view k, proto::header_kind vk, std::string_view v) {
        const auto put = [&](proto::header_kind kind, std::string_view bytes) {
            block.push_back(static_cast<std::byte>(kind));
            const auto n = static_cast<std::uint32_t>(bytes.size());
            for (int i = 0; i < 4; ++i) block.push_back(static_cast<std::byte>((n >> (8 * i)) & 0xff));
            for (char c : bytes) block.push_back(static_cast<std::byte>(c));
        };
        put(kk, k);
        put(vk, v);
        return *this;
    }
    /// A string key with a typed value.
    headers& add(std::string_view key, const proto::header_value& v) {
        proto::byte_buffer value;
        proto::append_header_value_bytes(value, v);
        return add(proto::header_kind::string, proto::as_bytes(key), proto::header_value_kind(v), value);
    }
    /// A typed key with a string value.
    headers& add_key(const proto::header_value& k, std::string_view value) {
        proto::byte_buffer key;
        proto::append_header_value_bytes(key, k);
        return add(proto::header_value_kind(k), key, proto::header_kind::string, proto::as_bytes(value));
    }
};

/// Owns message buffers; views stay valid while the store lives.
class message_store {
public:
    proto::message_view make(std::uint64_t offset, std::string_view payload, const headers& h = {}, proto::u128 id = 0,
                             std::uint64_t timestamp = 1'796'000'523'000'004ULL,
                             std::uint64_t origin = 1'796'000'522'999'000ULL) {
        proto::message_fields f;
        f.id = id;
        f.offset = offset;
        f.timestamp = timestamp;
        f.origin_timestamp = origin;
        f.payload = proto::as_bytes(payload);
        f.user_headers = h.block;
        auto& buf = buffers_.emplace_back();
        REQUIRE(proto::append_message(buf, f, true).has_value());
        auto m = proto::decode_message(buf);
        REQUIRE(m.has_value());
        return *m;
    }

private:
    std::deque<proto::byte_buffer> buffers_;
};

}  // namespace iss::format::test

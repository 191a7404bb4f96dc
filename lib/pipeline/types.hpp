// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Plain values shared by the pipeline and its ports: which partition, one message as the
/// pipeline sees it, and an object's offset range as stored in its user metadata.

#include "common/error.hpp"

#include <fmt/format.h>

#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace iss::proto {
struct message_view;  // proto/message.hpp
}  // namespace iss::proto

namespace iss::pipeline {

/// `s3.conditional_writes`: probe the store (`auto_detect`), refuse to start without
/// conditional writes (`required`), or write without them (`off`); `plan_delivery` (delivery.hpp).
enum class conditional_writes { auto_detect, required, off };

/// `delivery.on_bad_message`: stop the partition, skip the message, or send it to the
/// dead-letter topic (delivery.hpp, `writer_options::on_bad_message`).
enum class bad_message_policy { fail, skip, dead_letter };

/// `iggy.on_offset_reset`: a partition whose next offset lies past its newest offset (the topic
/// was deleted and created again). `fail`: stop that partition; `earliest`: read the new topic
/// from its first message, under keys of its own generation (`{topic_created}` in `naming.key`)
/// (consumer.hpp, `consumer_options::on_offset_reset`; docs/operations.md, Faults).
enum class offset_reset_policy : std::uint8_t { fail, earliest };

/// One source partition, by Iggy's own names (users see stream, topic, partition).
/// Names are used both for keys and as Iggy string identifiers.
struct partition_ref {
    std::string stream;
    std::string topic;
    std::uint32_t partition = 0;
    friend auto operator<=>(const partition_ref&, const partition_ref&) = default;
    friend bool operator==(const partition_ref&, const partition_ref&) = default;
};

/// One topic of a source (a consumer group belongs to one topic).
struct topic_ref {
    std::string stream;
    std::string topic;
    friend auto operator<=>(const topic_ref&, const topic_ref&) = default;
    friend bool operator==(const topic_ref&, const topic_ref&) = default;
};

/// One polled message as the pipeline needs it. Views into the poll reply: valid only until
/// the next poll on that connection (docs/architecture.md §2), so the pipeline encodes it at once and
/// keeps nothing of it.
struct message {
    std::uint64_t offset = 0;               ///< absolute offset in its partition
    std::uint64_t timestamp_us = 0;         ///< server append time, µs since the Unix epoch (record time)
    std::uint64_t origin_timestamp_us = 0;  ///< producer clock as sent (µs by convention)
    std::uint64_t id_high = 0;              ///< u128 message id, most significant half
    std::uint64_t id_low = 0;               ///< u128 message id, least significant half
    std::span<const std::byte> payload;
    std::span<const std::byte> user_headers;  ///< encoded user headers (docs/protocol.md §2.6)
    /// The message as the Iggy codecs decoded it (header fields, checksum, raw bytes), for the
    /// record encoder; the pipeline's core never looks at it. May be null in tests.
    const proto::message_view* view = nullptr;
    /// The creation time (µs) of the topic generation the message was polled from (GetTopic
    /// `created_at`; 0: not tracked), for `{topic_created}` in the key. Set by the consumer loop.
    std::uint64_t topic_created_us = 0;
};

/// The user-metadata names (without `x-amz-meta-`) every object carries (docs/architecture.md §3.3).
inline constexpr std::string_view meta_first_offset = "iggy-first-offset";
inline constexpr std::string_view meta_last_offset = "iggy-last-offset";
inline constexpr std::string_view meta_count = "iggy-count";

/// User metadata as a store returns it: lower-case names without the `x-amz-meta-` prefix.
using user_metadata = std::map<std::string, std::string, std::less<>>;

/// The offset range an object covers. `last_offset` is the last offset the object accounts
/// for (skipped or dead-lettered messages inside it included); `count` is the number of
/// records in it.
struct object_range {
    std::uint64_t first_offset = 0;
    std::uint64_t last_offset = 0;
    std::uint64_t count = 0;
    friend bool operator==(const object_range&, const object_range&) = default;
};

/// The three `iggy-*` metadata entries for `r`, in decimal.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> to_user_metadata(const object_range& r);
/// Reads them back; errc::bad_object_metadata (detail: the entry) when one is missing,
/// not a decimal u64, or last < first.
[[nodiscard]] result<object_range> from_user_metadata(const user_metadata& m);

}  // namespace iss::pipeline

template <>
struct fmt::formatter<iss::pipeline::partition_ref> : fmt::formatter<std::string_view> {
    auto format(const iss::pipeline::partition_ref& p, fmt::format_context& ctx) const {
        return fmt::format_to(ctx.out(), "{}/{}/{}", p.stream, p.topic, p.partition);
    }
};

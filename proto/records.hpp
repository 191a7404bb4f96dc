// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Records in G1 replies (docs/protocol.md §5.3, §5.7-5.9): Stream, TopicHeader, Partition,
/// consumer group and member, ClientDetails, consumer offset. Each has an encoder (server
/// side: the test broker) and a decoder (client side). Decoders never read past the input and
/// name the field on error (`"topic.partitions[2].current_offset"`).

#include "proto/wire.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace iss::proto {

/// Stream = id | created_at | topics_count | size_bytes | messages_count | name  (33+n B)
struct stream_info {
    std::uint32_t id = 0;
    std::uint64_t created_at = 0;  ///< µs since the Unix epoch
    std::uint32_t topics_count = 0;
    std::uint64_t size_bytes = 0;
    std::uint64_t messages_count = 0;
    std::string name;
    friend bool operator==(const stream_info&, const stream_info&) = default;
};

/// TopicHeader = id | created_at | partitions_count | message_expiry | compression u8 |
/// max_topic_size | replication_factor u8 | size_bytes | messages_count | name  (51+n B)
struct topic_info {
    std::uint32_t id = 0;
    std::uint64_t created_at = 0;  ///< µs
    std::uint32_t partitions_count = 0;
    std::uint64_t message_expiry = 0;  ///< µs; u64 max = never (the resolved value)
    std::uint8_t compression = 1;      ///< 1 none, 2 gzip (metadata only)
    std::uint64_t max_topic_size = 0;  ///< bytes; u64 max = unlimited
    std::uint8_t replication_factor = 1;
    std::uint64_t size_bytes = 0;
    std::uint64_t messages_count = 0;
    std::string name;
    friend bool operator==(const topic_info&, const topic_info&) = default;
};

/// Partition = id | created_at | segments_count | current_offset | size_bytes | messages_count (40 B)
struct partition_info {
    std::uint32_t id = 0;
    std::uint64_t created_at = 0;
    std::uint32_t segments_count = 0;
    std::uint64_t current_offset = 0;  ///< newest offset, or 0 when empty (see messages_count)
    std::uint64_t size_bytes = 0;
    std::uint64_t messages_count = 0;
    friend bool operator==(const partition_info&, const partition_info&) = default;
};

/// GetStream / CreateStream reply: Stream + topics_count TopicHeaders.
struct stream_details {
    stream_info stream;
    std::vector<topic_info> topics;
    friend bool operator==(const stream_details&, const stream_details&) = default;
};

/// GetTopic / CreateTopic reply: TopicHeader + partitions_count Partitions.
struct topic_details {
    topic_info topic;
    std::vector<partition_info> partitions;
    friend bool operator==(const topic_details&, const topic_details&) = default;
};

/// Group = id | partitions_count | members_count | name
struct consumer_group_info {
    std::uint32_t id = 0;
    std::uint32_t partitions_count = 0;  ///< the topic's partition count
    std::uint32_t members_count = 0;
    std::string name;
    friend bool operator==(const consumer_group_info&, const consumer_group_info&) = default;
};

/// Member = member_id | partitions_count | partition ids (in assignment order)
struct consumer_group_member {
    std::uint32_t id = 0;
    std::vector<std::uint32_t> partitions;
    friend bool operator==(const consumer_group_member&, const consumer_group_member&) = default;
};

/// GetConsumerGroup reply: Group + members_count Members (server slot order).
struct consumer_group_details {
    consumer_group_info group;
    std::vector<consumer_group_member> members;
    friend bool operator==(const consumer_group_details&, const consumer_group_details&) = default;
};

/// One group a client has joined (GetMe).
struct client_group_ref {
    std::uint32_t stream_id = 0;
    std::uint32_t topic_id = 0;
    std::uint32_t group_id = 0;
    friend bool operator==(const client_group_ref&, const client_group_ref&) = default;
};

/// ClientDetails (GetMe, §5.9).
struct client_details {
    std::uint32_t client_id = 0;
    std::uint32_t user_id = 0;
    std::uint8_t transport = 1;  ///< 1 tcp, 2 quic, 3 http, 4 ws
    std::string address;         ///< "ip:port", IPv6 as "[ip]:port"
    std::vector<client_group_ref> consumer_groups;
    friend bool operator==(const client_details&, const client_details&) = default;
};

/// GetConsumerOffset reply (20 B).
struct consumer_offset_info {
    std::uint32_t partition_id = 0;
    std::uint64_t current_offset = 0;
    std::uint64_t stored_offset = 0;
    friend bool operator==(const consumer_offset_info&, const consumer_offset_info&) = default;
};

// Encoders (server side: target proto_server, proto/server/g1_replies.cpp). Names longer than
// 255 bytes or empty are `invalid_length`.
result<void> append_stream_info(writer& w, const stream_info& s);
result<void> append_topic_info(writer& w, const topic_info& t);
void append_partition_info(writer& w, const partition_info& p);
/// Writes the Stream with topics_count = topics.size().
result<void> append_stream_details(writer& w, const stream_details& s);
/// Writes the TopicHeader with partitions_count = partitions.size().
result<void> append_topic_details(writer& w, const topic_details& t);
result<void> append_consumer_group_info(writer& w, const consumer_group_info& g);
/// Writes the Group with members_count = members.size().
result<void> append_consumer_group_details(writer& w, const consumer_group_details& g);
void append_client_details(writer& w, const client_details& c);
void append_consumer_offset_info(writer& w, const consumer_offset_info& o);

// Decoders (client side); `field` prefixes error details.
result<stream_info> read_stream_info(reader& r, std::string_view field = "stream");
result<topic_info> read_topic_info(reader& r, std::string_view field = "topic");
result<partition_info> read_partition_info(reader& r, std::string_view field = "partition");
result<stream_details> read_stream_details(reader& r, std::string_view field = "stream");
result<topic_details> read_topic_details(reader& r, std::string_view field = "topic");
result<consumer_group_info> read_consumer_group_info(reader& r, std::string_view field = "consumer_group");
result<consumer_group_details> read_consumer_group_details(reader& r, std::string_view field = "consumer_group");
result<client_details> read_client_details(reader& r, std::string_view field = "client");
result<consumer_offset_info> read_consumer_offset_info(reader& r, std::string_view field = "consumer_offset");

}  // namespace iss::proto

// SPDX-License-Identifier: Apache-2.0
#include "proto/records.hpp"

#include "proto/decoding.hpp"

#include <algorithm>
#include <string>

namespace iss::proto {

namespace {

// Reads a count and checks that `count` records of at least `min_size` bytes can fit, so a
// hostile count cannot make us reserve or loop for nothing.
result<std::uint32_t> read_count(reader& r, std::string_view field, std::size_t min_size) {
    auto n = r.u32(field);
    if (!n) return n.error();
    if (min_size != 0 && r.remaining() / min_size < *n)
        return iss::error{errc::truncated, std::string{field} + " (more records than bytes)"};
    return *n;
}

}  // namespace

result<stream_info> read_stream_info(reader& r, std::string_view field) {
    stream_info s;
    ISS_TRY(s.id, r.u32(field_path(field, "id")));
    ISS_TRY(s.created_at, r.u64(field_path(field, "created_at")));
    ISS_TRY(s.topics_count, r.u32(field_path(field, "topics_count")));
    ISS_TRY(s.size_bytes, r.u64(field_path(field, "size_bytes")));
    ISS_TRY(s.messages_count, r.u64(field_path(field, "messages_count")));
    auto name = r.name(field_path(field, "name"));
    if (!name) return name.error();
    s.name.assign(*name);
    return s;
}

result<topic_info> read_topic_info(reader& r, std::string_view field) {
    topic_info t;
    ISS_TRY(t.id, r.u32(field_path(field, "id")));
    ISS_TRY(t.created_at, r.u64(field_path(field, "created_at")));
    ISS_TRY(t.partitions_count, r.u32(field_path(field, "partitions_count")));
    ISS_TRY(t.message_expiry, r.u64(field_path(field, "message_expiry")));
    ISS_TRY(t.compression, r.u8(field_path(field, "compression")));
    ISS_TRY(t.max_topic_size, r.u64(field_path(field, "max_topic_size")));
    ISS_TRY(t.replication_factor, r.u8(field_path(field, "replication_factor")));
    ISS_TRY(t.size_bytes, r.u64(field_path(field, "size_bytes")));
    ISS_TRY(t.messages_count, r.u64(field_path(field, "messages_count")));
    auto name = r.name(field_path(field, "name"));
    if (!name) return name.error();
    t.name.assign(*name);
    return t;
}

result<partition_info> read_partition_info(reader& r, std::string_view field) {
    partition_info p;
    ISS_TRY(p.id, r.u32(field_path(field, "id")));
    ISS_TRY(p.created_at, r.u64(field_path(field, "created_at")));
    ISS_TRY(p.segments_count, r.u32(field_path(field, "segments_count")));
    ISS_TRY(p.current_offset, r.u64(field_path(field, "current_offset")));
    ISS_TRY(p.size_bytes, r.u64(field_path(field, "size_bytes")));
    ISS_TRY(p.messages_count, r.u64(field_path(field, "messages_count")));
    return p;
}

result<stream_details> read_stream_details(reader& r, std::string_view field) {
    stream_details d;
    ISS_TRY(d.stream, read_stream_info(r, field));
    if (r.remaining() / 52 < d.stream.topics_count)
        return iss::error{errc::truncated, field_path(field, "topics (fewer bytes than topics_count needs)")};
    d.topics.reserve(d.stream.topics_count);
    for (std::uint32_t i = 0; i < d.stream.topics_count; ++i) {
        auto t = read_topic_info(r, field_path(field, "topics", i));
        if (!t) return t.error();
        d.topics.push_back(std::move(*t));
    }
    return d;
}

result<topic_details> read_topic_details(reader& r, std::string_view field) {
    topic_details d;
    ISS_TRY(d.topic, read_topic_info(r, field));
    if (r.remaining() / 40 < d.topic.partitions_count)
        return iss::error{errc::truncated, field_path(field, "partitions (fewer bytes than partitions_count needs)")};
    d.partitions.reserve(d.topic.partitions_count);
    for (std::uint32_t i = 0; i < d.topic.partitions_count; ++i) {
        auto p = read_partition_info(r, field_path(field, "partitions", i));
        if (!p) return p.error();
        d.partitions.push_back(*p);
    }
    return d;
}

result<consumer_group_info> read_consumer_group_info(reader& r, std::string_view field) {
    consumer_group_info g;
    ISS_TRY(g.id, r.u32(field_path(field, "id")));
    ISS_TRY(g.partitions_count, r.u32(field_path(field, "partitions_count")));
    ISS_TRY(g.members_count, r.u32(field_path(field, "members_count")));
    auto name = r.name(field_path(field, "name"));
    if (!name) return name.error();
    g.name.assign(*name);
    return g;
}

result<consumer_group_details> read_consumer_group_details(reader& r, std::string_view field) {
    consumer_group_details d;
    ISS_TRY(d.group, read_consumer_group_info(r, field));
    if (r.remaining() / 8 < d.group.members_count)
        return iss::error{errc::truncated, field_path(field, "members (fewer bytes than members_count needs)")};
    d.members.reserve(d.group.members_count);
    for (std::uint32_t i = 0; i < d.group.members_count; ++i) {
        const std::string mf = field_path(field, "members", i);
        consumer_group_member m;
        ISS_TRY(m.id, r.u32(field_path(mf, "id")));
        std::uint32_t n = 0;
        ISS_TRY(n, read_count(r, field_path(mf, "partitions_count"), 4));
        m.partitions.reserve(n);
        for (std::uint32_t k = 0; k < n; ++k) {
            auto p = r.u32(field_path(mf, "partitions", k));
            if (!p) return p.error();
            m.partitions.push_back(*p);
        }
        d.members.push_back(std::move(m));
    }
    return d;
}

result<client_details> read_client_details(reader& r, std::string_view field) {
    client_details c;
    ISS_TRY(c.client_id, r.u32(field_path(field, "client_id")));
    ISS_TRY(c.user_id, r.u32(field_path(field, "user_id")));
    ISS_TRY(c.transport, r.u8(field_path(field, "transport")));
    auto addr = r.u32_text(field_path(field, "address"), 255);
    if (!addr) return addr.error();
    c.address.assign(*addr);
    std::uint32_t n = 0;
    ISS_TRY(n, read_count(r, field_path(field, "consumer_groups_count"), 12));
    c.consumer_groups.reserve(n);
    for (std::uint32_t i = 0; i < n; ++i) {
        const std::string gf = field_path(field, "consumer_groups", i);
        client_group_ref g;
        ISS_TRY(g.stream_id, r.u32(field_path(gf, "stream_id")));
        ISS_TRY(g.topic_id, r.u32(field_path(gf, "topic_id")));
        ISS_TRY(g.group_id, r.u32(field_path(gf, "group_id")));
        c.consumer_groups.push_back(g);
    }
    return c;
}

result<consumer_offset_info> read_consumer_offset_info(reader& r, std::string_view field) {
    consumer_offset_info o;
    ISS_TRY(o.partition_id, r.u32(field_path(field, "partition_id")));
    ISS_TRY(o.current_offset, r.u64(field_path(field, "current_offset")));
    ISS_TRY(o.stored_offset, r.u64(field_path(field, "stored_offset")));
    return o;
}

}  // namespace iss::proto

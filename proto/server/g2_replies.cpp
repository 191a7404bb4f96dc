// SPDX-License-Identifier: Apache-2.0
// The G2 reply writers of the server side (the test broker): Register, SyncConsumerGroup and
// the stream and topic records (docs/protocol.md §8). Target proto_server: the daemon never
// links it.
#include "proto/g2_codec.hpp"
#include "proto/g2_commands.hpp"
#include "proto/records.hpp"

namespace iss::proto::g2 {

using detail::put_name;
using detail::put_options;

result<void> append_register_reply(byte_buffer& body, const register_reply& r) {
    append_result_ok(body);
    writer w{body};
    w.u32(r.user_id);
    w.u64(r.session);
    w.u32(r.server_protocol_version);
    return put_name(w, r.server_version, "register_reply.server_version");
}

void append_sync_reply(byte_buffer& body, const sync_reply& s) {
    writer w{body};
    w.u64(s.generation);
    w.u32(static_cast<std::uint32_t>(s.partitions.size()));
    for (auto p : s.partitions) w.u32(p);
}

result<void> append_g2_stream_info(writer& w, const stream_info& s) {
    w.u32(s.id);
    w.u64(s.created_at);
    w.u32(s.topics_count);
    w.u64(s.size_bytes);
    w.u64(s.messages_count);
    if (auto r = put_name(w, s.name, "stream.name"); !r) return r;
    return put_options(w, {});
}

result<void> append_g2_topic_info(writer& w, const topic_info& t) {
    w.u32(t.id);
    w.u64(t.created_at);
    w.u32(t.partitions_count);
    w.u64(t.message_expiry);
    w.u8(t.compression);
    w.u64(t.max_topic_size);
    w.u64(t.size_bytes);
    w.u64(t.messages_count);
    if (auto r = put_name(w, t.name, "topic.name"); !r) return r;
    (void)put_options(w, {});
    return put_options(w, {});
}

result<void> append_stream_details(byte_buffer& body, const stream_details& s) {
    writer w{body};
    stream_info head = s.stream;
    head.topics_count = static_cast<std::uint32_t>(s.topics.size());
    if (auto r = append_g2_stream_info(w, head); !r) return r;
    for (const auto& t : s.topics)
        if (auto r = append_g2_topic_info(w, t); !r) return r;
    return {};
}

result<void> append_topic_details(byte_buffer& body, const topic_details& t) {
    writer w{body};
    topic_info head = t.topic;
    head.partitions_count = static_cast<std::uint32_t>(t.partitions.size());
    if (auto r = append_g2_topic_info(w, head); !r) return r;
    for (const auto& p : t.partitions) append_partition_info(w, p);
    return {};
}

}  // namespace iss::proto::g2

// SPDX-License-Identifier: Apache-2.0
#include "iggy/g2_groups.hpp"

#include "iggy/session.hpp"

namespace iss::iggy {

net::awaitable<result<bool>> g2_groups::sync(session& s, const identifier& stream, const identifier& topic,
                                             const identifier& group, assignment& a) {
    const request req = proto::g2::sync_consumer_group_request{stream, topic, group};
    auto reply = co_await s.call(req, reply_slot::general);
    if (!reply) co_return reply.error();
    auto d = proto::g2::decode_sync_reply(*reply);
    if (!d) co_return iss::error{errc::protocol_error, d.error().message()};
    a.synced = true;
    a.cursor = 0;
    if (!*d) {
        a.partitions.clear();
        co_return false;  // not a member
    }
    if ((*d)->generation != a.generation || (*d)->partitions != a.partitions)
        log_.info({log::kv("stream", proto::field_text(stream)), log::kv("topic", proto::field_text(topic)),
                   log::kv("group", proto::field_text(group)), log::kv("generation", (*d)->generation),
                   log::kv("partitions", (*d)->partitions.size())},
                  "group assignment (SyncConsumerGroup)");
    a.generation = (*d)->generation;
    a.partitions = std::move((*d)->partitions);
    co_return true;
}

iss::error g2_groups::not_a_member(const session& s, const identifier& stream, const identifier& topic,
                                   const identifier& group, assignment& a) {
    a.synced = false;
    if (s.has_joined(stream, topic, group))
        log_.warn({log::kv("stream", proto::field_text(stream)), log::kv("topic", proto::field_text(topic)),
                   log::kv("group", proto::field_text(group))},
                  "SyncConsumerGroup: the server no longer counts this client as a member of the group; join again");
    return iss::error{make_error_code(proto::server_errc::consumer_group_member_not_found),
                      fmt::format("SyncConsumerGroup: not a member of consumer group {}", proto::to_string(group))};
}

net::awaitable<result<poll_batch>> g2_groups::poll(session& s, poll_args a, proto::g2::poll_options o,
                                                   proto::poll_reply& out) {
    const bool group = a.who.kind == proto::consumer_kind::group;
    const std::string key =
        proto::to_string(a.stream) + "/" + proto::to_string(a.topic) + "/" + proto::to_string(a.who.id);
    for (int attempt = 0; attempt < 2; ++attempt) {
        std::optional<std::uint32_t> pid = a.partition;
        if (group && !pid) {
            auto& as = by_group_[key];
            if (!as.synced || as.cursor >= as.partitions.size()) {
                auto synced = co_await sync(s, a.stream, a.topic, a.who.id, as);
                if (!synced) co_return synced.error();
                if (!*synced) co_return not_a_member(s, a.stream, a.topic, a.who.id, as);
            }
            if (as.partitions.empty()) co_return poll_batch{0, 0, {}};  // member with no partitions: park
            pid = as.partitions[as.cursor++];
        }
        const request req =
            proto::poll_messages_request{a.who, a.stream, a.topic, pid, a.strategy, a.count, a.auto_commit};
        auto reply = co_await s.call(req, reply_slot::poll);
        if (!reply) {
            // 5006: not a member (any more): the assignment held is void; sync at the next poll.
            if (group && is_server_error(reply.error(), proto::server_errc::consumer_group_member_not_found))
                by_group_[key].synced = false;
            co_return reply.error();
        }
        if (auto d = proto::g2::decode_batch_poll_reply(*reply, out, o); !d)
            co_return iss::error{errc::protocol_error, d.error().message()};
        if (group && out.partition_id == 0xffffffffu) {
            // Not ours (any more): sync again and retry once.
            by_group_[key].synced = false;
            if (a.partition) co_return poll_batch{*a.partition, 0, {}};
            continue;
        }
        co_return poll_batch{out.partition_id, out.current_offset, std::span<const proto::message_view>{out.messages}};
    }
    co_return poll_batch{0, 0, {}};
}

}  // namespace iss::iggy

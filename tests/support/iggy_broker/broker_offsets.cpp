// SPDX-License-Identifier: Apache-2.0
#include "iggy_broker/broker_internal.hpp"

namespace iss::broker {

// ---- offsets

res<none> broker_state::store_offset(std::uint32_t client_id, const consumer& c, const ident& s, const ident& t,
                                     std::optional<std::uint32_t> partition_id, std::uint64_t offset) {
    topic* to = nullptr;
    std::optional<state::resolved> member;
    std::uint32_t pid = 0;
    if (auto st = s_->offset_partition(client_id, c, s, t, partition_id, to, member, pid)) return {st};
    partition& p = to->partitions[pid];
    if (p.log->count() == 0 || offset > p.current_offset()) return {code::invalid_offset};
    if (c.kind == 2) {
        p.group_offsets[member->gid] = offset;
        state::maybe_complete(*to, *to->groups.get(member->gid), member->slot, pid);
    } else {
        p.consumer_offsets[state::consumer_key(c.id)] = offset;
    }
    s_->save_meta();
    return {};
}

std::optional<offset_info> broker_state::get_offset(const consumer& c, const ident& s, const ident& t,
                                                    std::optional<std::uint32_t> partition_id) const {
    const topic* to = s_->lookup_topic(s, t);
    if (!to) return std::nullopt;
    const std::uint32_t pid = partition_id.value_or(0);
    if (pid >= to->partitions.size()) return std::nullopt;
    const partition& p = to->partitions[pid];
    if (c.kind == 2) {
        auto gid = state::find_group(*to, c.id);
        if (!gid) return std::nullopt;
        auto it = p.group_offsets.find(*gid);
        if (it == p.group_offsets.end()) return std::nullopt;
        return offset_info{pid, p.current_offset(), it->second};
    }
    auto it = p.consumer_offsets.find(state::consumer_key(c.id));
    if (it == p.consumer_offsets.end()) return std::nullopt;
    return offset_info{pid, p.current_offset(), it->second};
}

res<none> broker_state::delete_offset(std::uint32_t client_id, const consumer& c, const ident& s, const ident& t,
                                      std::optional<std::uint32_t> partition_id) {
    topic* to = nullptr;
    std::optional<state::resolved> member;
    std::uint32_t pid = 0;
    if (auto st = s_->offset_partition(client_id, c, s, t, partition_id, to, member, pid)) return {st};
    partition& p = to->partitions[pid];
    auto& offsets = c.kind == 2 ? p.group_offsets : p.consumer_offsets;
    const std::uint32_t key = c.kind == 2 ? member->gid : state::consumer_key(c.id);
    if (!offsets.erase(key)) return {code::consumer_offset_not_found};
    s_->save_meta();
    return {};
}

}  // namespace iss::broker

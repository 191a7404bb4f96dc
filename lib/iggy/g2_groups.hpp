// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// G2 consumer-group polls (docs/protocol.md §8.7): a G2 server does not pick a partition for
/// a group poll, the member does. `SyncConsumerGroup` gives the member's partitions; the client
/// polls them round robin with an explicit partition, syncing again when the assignment is
/// unknown, after each full round (partitions gained in a rebalance are not pushed), after a
/// 5006, and when a reply says the partition is not ours any more (partition 0xFFFFFFFF, then
/// the poll is retried once). A member with no partitions gets an empty batch (partition 0).
/// A sync that says "not a member" fails the poll with 5006 ConsumerGroupMemberNotFound, as a
/// G1 server answers a non-member's group poll, so the caller joins again.

#include "common/log.hpp"
#include "iggy/transport.hpp"
#include "proto/g2_batch.hpp"
#include "proto/poll.hpp"

#include <map>
#include <string>
#include <vector>

namespace iss::iggy {

class g2_groups {
public:
    explicit g2_groups(log::logger& log) : log_{log} {}

    /// Forgets every assignment (a new session, a join or a leave).
    void clear() noexcept { by_group_.clear(); }

    /// PollMessages over G2 (`a.partition` nullopt on a group consumer: the rule above).
    /// Decodes into `out` (the views of the batch point into the poll slot's buffer).
    net::awaitable<result<poll_batch>> poll(session& s, poll_args a, proto::g2::poll_options o, proto::poll_reply& out);

private:
    struct assignment {
        bool synced = false;
        std::uint64_t generation = 0;
        std::vector<std::uint32_t> partitions;
        std::size_t cursor = 0;
    };
    /// SyncConsumerGroup into `a`: false = not a member.
    net::awaitable<result<bool>> sync(session& s, const identifier& stream, const identifier& topic,
                                      const identifier& group, assignment& a);
    iss::error not_a_member(const session& s, const identifier& stream, const identifier& topic,
                            const identifier& group, assignment& a);

    log::logger& log_;
    std::map<std::string, assignment> by_group_;  // by "stream/topic/group"
};

}  // namespace iss::iggy

// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The resume point with an Iceberg table (the Iceberg issue's "Restart"): at start, or on
/// gaining a partition, a writer polls from the larger of Iggy's stored offset and the
/// table's. The table can be ahead: a crash after the table commit and before the offset was
/// stored in Iggy (invariant 7 orders them so); polling from Iggy's offset then would hand
/// the step objects the table holds (harmless, the plan finds them covered) and re-read their
/// messages for nothing.
///
/// A decorator of the Iggy offset store: `store_offset` passes through; `load_offset` asks
/// Iggy and loads the partition's table, whose current snapshot's summary
/// (`iggy-s3-sink.offsets`) gives the NEXT offset the table holds, N; the answer is the
/// larger of Iggy's offset and N - 1 (both are "last consumed"). A table that does not exist
/// yet holds nothing. A catalog that cannot answer makes the load `retryable` (the router
/// tries again), never a guess.
///
/// The topic's generation (issue 36): a topic deleted and created again starts its offsets at
/// 0 again, and Iggy deletes the stored offsets with it; the table's offsets then belong to the
/// old topic, and resuming after them would silently skip the new topic's first messages. So
/// the summary also records, per stream and topic, the creation time (GetTopic `created_at`)
/// of the topic its offsets are of (`iggy-s3-sink.topics`), and `load_offset` asks GetTopic for
/// the current one. Different: the answer is an offset reset (`offset_result::reset`, naming
/// the table, both creation times and what to do), for every partition of the topic (the
/// table's other offsets of it are the old topic's too): the consumer stops the partition as
/// `iggy.on_offset_reset: fail` does. A summary without the key (a table written before it)
/// keeps the resume point as it was. The creation time learnt is kept in `topic_generations`
/// for the table step to record with the partition's next commit.

#include "iceberg/catalog.hpp"
#include "pipeline/ports.hpp"

#include <functional>
#include <map>
#include <optional>

namespace iss::pipeline {

/// The creation time (GetTopic `created_at`, µs) of the topic each partition's writer reads,
/// as the resume point learnt it when the writer was made: what the table step records in
/// `iggy-s3-sink.topics` with the partition's offsets. Not thread-safe (the event loop's).
class topic_generations {
public:
    void bind(const partition_ref& p, std::uint64_t created_at) { of_[p] = created_at; }
    /// nullopt: not learnt (no writer of `p` was made through the resume point).
    [[nodiscard]] std::optional<std::uint64_t> of(const partition_ref& p) const {
        const auto it = of_.find(p);
        return it == of_.end() ? std::nullopt : std::optional{it->second};
    }

private:
    std::map<partition_ref, std::uint64_t> of_;
};

class iceberg_resume_offsets final : public offset_store {
public:
    /// \param inner Iggy's offset store (outlives this)
    /// \param topics Iggy's topics: GetTopic's `created_at` (outlives this)
    /// \param generations where the creation times learnt are kept (outlives this)
    /// \param table_for the table of a source partition (as the table step names it)
    iceberg_resume_offsets(offset_store& inner, message_source& topics, topic_generations& generations,
                           iceberg::catalog_client& catalog,
                           std::function<iceberg::table_ident(const partition_ref&)> table_for)
        : inner_{inner},
          topics_{topics},
          generations_{generations},
          catalog_{catalog},
          table_for_{std::move(table_for)} {}

    task<offset_result> store_offset(const partition_ref& p, std::uint64_t offset) override {
        return inner_.store_offset(p, offset);
    }
    task<offset_result> load_offset(const partition_ref& p) override;

private:
    offset_store& inner_;
    message_source& topics_;
    topic_generations& generations_;
    iceberg::catalog_client& catalog_;
    std::function<iceberg::table_ident(const partition_ref&)> table_for_;
};

}  // namespace iss::pipeline

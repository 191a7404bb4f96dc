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

#include "iceberg/catalog.hpp"
#include "pipeline/ports.hpp"

#include <functional>

namespace iss::pipeline {

class iceberg_resume_offsets final : public offset_store {
public:
    /// \param inner Iggy's offset store (outlives this)
    /// \param table_for the table of a source partition (as the table step names it)
    iceberg_resume_offsets(offset_store& inner, iceberg::catalog_client& catalog,
                           std::function<iceberg::table_ident(const partition_ref&)> table_for)
        : inner_{inner}, catalog_{catalog}, table_for_{std::move(table_for)} {}

    task<offset_result> store_offset(const partition_ref& p, std::uint64_t offset) override {
        return inner_.store_offset(p, offset);
    }
    task<offset_result> load_offset(const partition_ref& p) override;

private:
    offset_store& inner_;
    iceberg::catalog_client& catalog_;
    std::function<iceberg::table_ident(const partition_ref&)> table_for_;
};

}  // namespace iss::pipeline

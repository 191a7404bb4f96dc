// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Consumer lag per partition (`iggy-s3-sink lag`): pure arithmetic and rendering.
///
/// Iggy's partition record gives the newest offset (`current_offset`, 0 when empty) and the
/// number of messages; `current_offset` alone cannot tell an empty partition from one with a
/// single message at offset 0, so `messages_count` decides. The stored consumer offset is
/// the last consumed message.
/// - empty partition: lag 0;
/// - nothing stored yet: every message is lag (`messages_count`);
/// - otherwise: `current_offset - stored` (0 when the stored offset is at or past the head).

#include "pipeline/types.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace iss::pipeline {

struct lag_row {
    partition_ref partition;
    std::uint64_t messages_count = 0;
    std::uint64_t head = 0;                  ///< current_offset (meaningless when messages_count == 0)
    std::optional<std::uint64_t> committed;  ///< stored consumer offset
    std::uint64_t lag = 0;
    /// With an Iceberg table (`iceberg` set): whether the row has one, and the last offset its
    /// current snapshot holds (the summary's `iggy-s3-sink.offsets` minus one; nullopt: none).
    bool table = false;
    std::optional<std::uint64_t> table_committed;
};

/// Fills `lag` from the other fields (see the file comment).
[[nodiscard]] std::uint64_t compute_lag(std::uint64_t messages_count, std::uint64_t head,
                                        std::optional<std::uint64_t> committed) noexcept;
/// Column table: STREAM TOPIC PARTITION HEAD COMMITTED LAG, `-` for none, and a total line;
/// with table rows a TABLE column after COMMITTED (the table's committed offset).
[[nodiscard]] std::string render_lag_table(const std::vector<lag_row>& rows);
/// `{"partitions":[{"stream":..,"topic":..,"partition":0,"messages":..,"head":..|null,
/// "committed":..|null,"lag":..}],"total_lag":..}` on one line; table rows also have
/// `"table_committed":..|null`.
[[nodiscard]] std::string render_lag_json(const std::vector<lag_row>& rows);

}  // namespace iss::pipeline

// SPDX-License-Identifier: Apache-2.0
// How `verify` (cmd_verify.cpp) recognises a partition's objects by their keys: the key
// template's stem around the first offset, and an Iceberg data file's source partition from
// its name. Pure functions over the key namer and key strings.
#pragma once

#include "pipeline/ports.hpp"
#include "pipeline/types.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace iss::app {

/// A partition's keys: `before` + the zero-padded first offset + `after`.
struct key_stem {
    pipeline::partition_ref partition;
    std::string before;
    std::string after;
};

/// The stem of `p`'s keys under `namer`. `topic_created`: the topic's creation time, for
/// `{topic_created}` in the key: only the current topic's objects are judged against its
/// committed offset (those of a topic deleted and created again, iggy.on_offset_reset:
/// earliest, have another generation in their keys).
[[nodiscard]] key_stem stem_of(const pipeline::key_namer& namer, const pipeline::partition_ref& p,
                               std::uint64_t topic_created);

/// True when `key` is one of `s`'s keys (the middle is all digits).
[[nodiscard]] bool matches(const key_stem& s, std::string_view key);

/// The source partition a data file of topic `t` holds, from its name
/// (`<stream>+<topic>+<partition>+<first offset:020>.parquet`, lib/pipeline/adapters/iceberg_key_namer.hpp);
/// nullopt for a file of another name (another writer's, or another topic's).
[[nodiscard]] std::optional<std::uint32_t> data_file_partition(std::string_view key, const pipeline::topic_ref& t);

}  // namespace iss::app

// SPDX-License-Identifier: Apache-2.0
// `verify` with `iceberg` set (cmd_verify.cpp): what the tables hold for the configured topics.
// Each distinct table of the selected topics is read once (several topics may share one:
// `iceberg.table: everything`, or `{topic}` across streams): its current snapshot's manifest
// list and manifests (from the store) give the data files, its summary's
// `iggy-s3-sink.offsets` the committed offsets. A data file is attributed by its name
// (`<stream>+<topic>+<partition>+<first offset:020>.parquet`, verify_keys.hpp) to a configured
// topic of that table; a file of a configured topic that --stream/--topic leave out is not
// read; a file of no configured topic (another writer's append) is a note, not a problem:
// verify's claim is about this sink's offsets.
#pragma once

#include "config/config.hpp"
#include "daemon/iceberg_run.hpp"
#include "pipeline/adapters/iceberg_plan.hpp"
#include "pipeline/types.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace iss::app {

/// What --stream, --topic and --partition select (unset: all).
struct table_selection {
    std::optional<std::string> stream, topic;
    std::optional<std::uint32_t> partition;
    [[nodiscard]] bool selects(const pipeline::topic_ref& t) const {
        return (!stream || *stream == t.stream) && (!topic || *topic == t.topic);
    }
};

/// One data file of a selected partition: where it is and its manifest row count.
struct table_data_file {
    pipeline::partition_ref p;
    std::string bucket, key;
    std::int64_t rows = 0;
};

struct tables_read {
    bool any_source = false;  ///< a configured topic matched the selection
    std::size_t tables = 0;   ///< distinct tables read
    std::size_t listed = 0;   ///< data files in their current snapshots
    /// Per selected partition the summaries name: the committed offset (the summary's next
    /// offset minus one; nullopt for 0).
    std::map<pipeline::partition_ref, std::optional<std::uint64_t>> committed;
    std::vector<table_data_file> files;  ///< of the selected partitions (a file listed twice: twice)
    std::vector<std::string> foreign;    ///< `s3://` paths of data files no configured topic wrote
    std::vector<std::string> problems;   ///< a table that does not exist, a --partition no table names
};

/// Reads the tables of the selected topics. Errors: the exit code after saying why on stderr
/// (69: the catalog or the store cannot be read).
boost::asio::awaitable<std::variant<int, tables_read>> read_tables(table_reader& tables,
                                                                   pipeline::s3_table_files& store,
                                                                   const config::sink_config& cfg,
                                                                   const table_selection& sel);

}  // namespace iss::app

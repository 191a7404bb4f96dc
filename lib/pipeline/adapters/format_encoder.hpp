// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The production encoders: `format::writer` (json_lines / json_array / raw / csv / parquet /
/// avro, gzip / zstd) behind
/// the pipeline's `record_encoder` port. Reads the `proto::message_view` the Iggy adapter put
/// in `message::view`; with `verify_checksum`, a message whose XXH3 checksum does not match
/// is a bad message (servers with encryption at rest may not match: iggy.verify_checksum).
///
/// With an Iceberg table schema (`iceberg` set; the format is Parquet), each encoder also
/// gathers the object's column statistics (lib/iceberg/stats.hpp: value, null and NaN counts,
/// lower and upper bounds from the rows it writes; column sizes from the Parquet writer's
/// column chunks) and gives them at `finish` as `stats()`: an `iceberg_object_stats`, which
/// the table step puts into the object's manifest entry (iceberg_plan.hpp).

#include "format/writer.hpp"
#include "iceberg/stats.hpp"
#include "pipeline/ports.hpp"

#include <optional>

namespace iss::pipeline {

/// The column statistics of one object as written (`record_encoder::stats()`).
struct iceberg_object_stats final : object_stats {
    iceberg::column_stats columns;  ///< by the table schema's field ids
};

class format_encoders final : public encoder_factory {
public:
    /// \param stats_schema the Iceberg table's schema (its field ids key the statistics);
    ///        nullopt: no statistics are gathered
    format_encoders(format::writer_options o, bool verify_checksum,
                    std::optional<iceberg::table_schema> stats_schema = std::nullopt)
        : o_{std::move(o)}, verify_{verify_checksum}, stats_schema_{std::move(stats_schema)} {}
    [[nodiscard]] std::unique_ptr<record_encoder> make() const override;
    [[nodiscard]] std::string content_type() const override { return std::string{format::content_type(o_)}; }
    [[nodiscard]] std::uint64_t state_bytes() const override { return format::codec_memory(o_); }
    [[nodiscard]] std::string extension() const { return format::extension(o_); }

private:
    format::writer_options o_;
    bool verify_;
    std::optional<iceberg::table_schema> stats_schema_;
};

}  // namespace iss::pipeline

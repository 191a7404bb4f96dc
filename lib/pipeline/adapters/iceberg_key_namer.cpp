// SPDX-License-Identifier: Apache-2.0
// The Iceberg table's key namer (iceberg_key_namer.hpp).
#include "pipeline/adapters/iceberg_key_namer.hpp"

#include "common/error.hpp"

#include <fmt/format.h>

namespace iss::pipeline {

iceberg_key_namer::iceberg_key_namer(std::vector<format::column> cols, const iceberg::partition_spec& spec,
                                     iceberg::s3_location table)
    : spec_{spec}, table_{std::move(table)}, reader_{std::move(cols)} {}

std::string iceberg_key_namer::file_name(const partition_ref& p, std::uint64_t first_offset) const {
    return fmt::format("{}+{}+{}+{:020}.parquet", p.stream, p.topic, p.partition, first_offset);
}

object_key iceberg_key_namer::key(const partition_ref& p, std::uint64_t first_offset) const {
    object_key k{iceberg::data_key(table_, "", file_name(p, first_offset))};
    values_.try_emplace(k.get());
    return k;
}

result<std::vector<iceberg::value>> iceberg_key_namer::row_values(const partition_ref& p, const message& m) const {
    if (!m.view)
        return iss::error{iss::errc::invalid_argument,
                          fmt::format("offset {}: no decoded message to read the partition columns from", m.offset)};
    auto row = reader_.read(*m.view, p.stream, p.topic, p.partition);
    if (!row) return row.error();
    return spec_.values(*row);
}

result<encoded_partition> iceberg_key_namer::encode(const partition_ref& p, const message& m) const {
    if (spec_.fields.empty()) return encoded_partition{};
    auto v = row_values(p, m);
    if (!v) return v.error();
    return encoded_partition{spec_.path(*v), std::nullopt};
}

object_key iceberg_key_namer::key_for(const partition_ref& p, const message& first) const {
    if (spec_.fields.empty()) return key(p, first.offset);
    // encode() accepted this message before it opened the object: the row reads.
    auto v = row_values(p, first);
    if (!v) return key(p, first.offset);
    object_key k{iceberg::data_key(table_, spec_.path(*v), file_name(p, first.offset))};
    values_.insert_or_assign(k.get(), std::move(*v));
    return k;
}

std::optional<std::vector<iceberg::value>> iceberg_key_namer::values_of(const object_key& k) const {
    const auto it = values_.find(k.get());
    if (it == values_.end()) return std::nullopt;
    return it->second;
}

}  // namespace iss::pipeline

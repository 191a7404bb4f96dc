// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Avro object container files (Avro 1.11 specification, "Object Container Files"), the
/// framing only: the header (magic, file metadata, sync marker) and the data blocks (object
/// count, byte size, the serialized objects after the codec, the sync marker). The datums
/// themselves are encoded by libavro (avro-c). Used by the Avro record writer (avro.cpp) and
/// by lib/iceberg for manifests and manifest lists (written, and read back from the catalog's
/// table).
///
/// Deterministic: the sync marker is derived from the schema text (XXH3-128), so the same
/// datums give the same file, byte for byte.

#include "common/error.hpp"
#include "format/table.hpp"

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct avro_value;  // libavro's avro_value_t (<avro/value.h>)

namespace iss::format::avro_ocf {

/// Appends the binary encoding of one libavro value (one datum of a block) to `out`. Throws
/// std::runtime_error with libavro's message when libavro fails (a bug: the value was built
/// from checked rows). Used by the Avro writer and lib/iceberg's manifests.
void append_datum(std::string& out, ::avro_value& v);

using sync_marker = std::array<char, 16>;

/// An Avro `long`: zigzag, then a base-128 varint.
void put_long(std::string& out, std::int64_t v);
/// Avro `bytes` / `string`: the length as a long, then the bytes.
void put_bytes(std::string& out, std::string_view b);
/// Reads a long from the front of `in` (consumed); false when `in` ends first or it is too long.
[[nodiscard]] bool get_long(std::string_view& in, std::int64_t& v) noexcept;

/// The sync marker of a file with this schema text.
[[nodiscard]] sync_marker make_sync(std::string_view schema_json);

/// Appends the header: "Obj" 0x01, the metadata map (`avro.schema`, `avro.codec`, then
/// `extra` in order), the sync marker.
void write_header(std::string& out, std::string_view schema_json, avro_codec codec, const sync_marker& sync,
                  std::span<const std::pair<std::string, std::string>> extra = {});

/// Appends one data block holding `count` serialized datums (`datums`, already encoded),
/// compressed by `codec` (`deflate`: raw RFC 1951; `snappy`: then the CRC-32 of the
/// uncompressed bytes, big-endian). `scratch` is reused between calls.
void write_block(std::string& out, std::uint64_t count, std::string_view datums, avro_codec codec,
                 const sync_marker& sync, std::string& scratch);

/// A container file read back: its metadata and every block's datums, decompressed and
/// concatenated (decode them with the writer schema, `metadata_value("avro.schema")`).
struct file {
    std::vector<std::pair<std::string, std::string>> metadata;
    std::string datums;
    std::uint64_t count = 0;
    /// The value of a metadata key; empty when absent.
    [[nodiscard]] std::string_view metadata_value(std::string_view key) const noexcept;
};

/// Reads a container file (codecs null, deflate, snappy). common::errc::parse_error naming
/// what is wrong (magic, a truncated block, a sync marker that does not match, an unknown codec).
[[nodiscard]] result<file> read(std::string_view bytes);

}  // namespace iss::format::avro_ocf

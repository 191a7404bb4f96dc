// SPDX-License-Identifier: Apache-2.0
// The Parquet footer: FileMetaData in the Thrift compact protocol (apache/parquet-format
// src/main/thrift/parquet.thrift: FileMetaData, SchemaElement, RowGroup, ColumnChunk,
// ColumnMetaData, Statistics; LogicalTypes.md for the converted and logical types).
#include "format/parquet_internal.hpp"
#include "format/thrift_compact.hpp"

namespace iss::format::parquet_detail {

namespace {

using thrift::compact_writer;
using thrift::ttype;

std::int32_t codec_id(parquet_codec c) {
    switch (c) {
        case parquet_codec::none: return 0;
        case parquet_codec::snappy: return 1;
        case parquet_codec::gzip: return 2;
        case parquet_codec::zstd: return 6;
    }
    return 0;
}

void write_stat_value(compact_writer& w, std::int16_t id, const chunk_meta& c, bool is_max) {
    std::string v;
    switch (c.pt) {
        case ptype::boolean: v += static_cast<char>(is_max ? c.st.imax : c.st.imin); break;
        case ptype::int32: put_le<std::int32_t>(v, static_cast<std::int32_t>(is_max ? c.st.imax : c.st.imin)); break;
        case ptype::int64: put_le<std::int64_t>(v, is_max ? c.st.imax : c.st.imin); break;
        case ptype::float32:
        case ptype::float64: {
            // parquet.thrift ColumnOrder: a zero bound is written as -0.0 (min) and +0.0 (max).
            double d = is_max ? c.st.dmax : c.st.dmin;
            if (d == 0) d = is_max ? 0.0 : -0.0;
            if (c.pt == ptype::float32) put_le<float>(v, static_cast<float>(d));
            else put_le<double>(v, d);
            break;
        }
        case ptype::byte_array: v = is_max ? c.st.smax : c.st.smin; break;
    }
    w.binary(id, v);
}

void write_schema_element(compact_writer& w, const column& c, const std::vector<column>& cols,
                          const std::vector<leaf>& leaves, const std::vector<std::size_t>& leaf_of,
                          const parquet_options& o) {
    const auto rep = c.nullable ? repetition::optional : repetition::required;
    const auto index = static_cast<std::size_t>(&c - cols.data());
    const parquet_field_id ids = index < o.field_ids.size() ? o.field_ids[index] : parquet_field_id{};
    // SchemaElement.field_id (9), between converted_type (6) and logicalType (10): the
    // compact protocol writes a struct's fields in increasing id order.
    const auto field_id = [&](std::int32_t id) {
        if (id > 0) w.i32(9, id);
    };
    if (c.type == column_type::map) {
        // LogicalTypes.md "Maps": <rep> group <name> (MAP) { repeated group key_value
        // { required binary key (STRING); optional binary value (STRING); } }
        w.begin_elem_struct();
        w.i32(3, static_cast<std::int32_t>(rep));
        w.binary(4, c.name);
        w.i32(5, 1);
        w.i32(6, ct_map);
        field_id(ids.id);
        w.begin_struct(10);
        w.begin_struct(2);
        w.end_struct();
        w.end_struct();
        w.end_struct();
        w.begin_elem_struct();
        w.i32(3, static_cast<std::int32_t>(repetition::repeated));
        w.binary(4, "key_value");
        w.i32(5, 2);
        w.end_struct();
        for (int k = 0; k < 2; ++k) {
            w.begin_elem_struct();
            w.i32(1, static_cast<std::int32_t>(ptype::byte_array));
            w.i32(3, static_cast<std::int32_t>(k == 0 ? repetition::required : repetition::optional));
            w.binary(4, k == 0 ? "key" : "value");
            w.i32(6, ct_utf8);
            field_id(k == 0 ? ids.key_id : ids.value_id);
            w.begin_struct(10);
            w.begin_struct(1);
            w.end_struct();
            w.end_struct();
            w.end_struct();
        }
        return;
    }
    const leaf& l = leaves[leaf_of[index]];
    w.begin_elem_struct();
    w.i32(1, static_cast<std::int32_t>(l.type));
    w.i32(3, static_cast<std::int32_t>(rep));
    w.binary(4, c.name);
    // converted_type (6) and logicalType (10, a union: one field set).
    const auto logical = [&](std::int32_t converted, std::int16_t union_field, auto&& body) {
        w.i32(6, converted);
        field_id(ids.id);
        w.begin_struct(10);
        w.begin_struct(union_field);
        body();
        w.end_struct();
        w.end_struct();
    };
    switch (c.type) {
        case column_type::string: logical(ct_utf8, 1, [] {}); break;
        case column_type::json: logical(ct_json, 12, [] {}); break;
        case column_type::date: logical(ct_date, 6, [] {}); break;
        case column_type::timestamp_ms:
        case column_type::timestamp_us: {
            const bool ms = c.type == column_type::timestamp_ms;
            logical(ms ? ct_ts_millis : ct_ts_micros, 8, [&] {
                w.boolean(1, true);  // isAdjustedToUTC
                w.begin_struct(2);   // TimeUnit union
                w.begin_struct(ms ? 1 : 2);
                w.end_struct();
                w.end_struct();
            });
            break;
        }
        default: field_id(ids.id); break;
    }
    w.end_struct();
}

}  // namespace

void write_file_metadata(std::string& out, const std::vector<column>& cols, const std::vector<leaf>& leaves,
                         const std::vector<std::size_t>& leaf_of, const std::vector<row_group_meta>& groups,
                         const parquet_options& o) {
    compact_writer w{out};
    w.i32(1, 1);  // version
    std::size_t elements = 1;
    for (const auto& c : cols) elements += c.type == column_type::map ? 4 : 1;
    w.begin_list(2, ttype::structure, elements);
    w.begin_elem_struct();
    w.binary(4, "schema");
    w.i32(5, static_cast<std::int32_t>(cols.size()));
    w.end_struct();
    for (const auto& c : cols) write_schema_element(w, c, cols, leaves, leaf_of, o);
    std::int64_t rows = 0;
    for (const auto& g : groups) rows += g.num_rows;
    w.i64(3, rows);
    w.begin_list(4, ttype::structure, groups.size());
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
        const row_group_meta& g = groups[gi];
        w.begin_elem_struct();
        w.begin_list(1, ttype::structure, g.chunks.size());
        for (const chunk_meta& c : g.chunks) {
            w.begin_elem_struct();
            w.i64(2, c.dictionary_page_offset.value_or(c.data_page_offset));  // file_offset
            w.begin_struct(3);
            w.i32(1, c.type);
            w.begin_list(2, ttype::i32, c.encodings.size());
            for (auto e : c.encodings) w.elem_i32(e);
            w.begin_list(3, ttype::binary, c.path->size());
            for (const auto& p : *c.path) w.elem_binary(p);
            w.i32(4, codec_id(o.codec));
            w.i64(5, c.num_values);
            w.i64(6, c.uncompressed);
            w.i64(7, c.compressed);
            w.i64(9, c.data_page_offset);
            if (c.dictionary_page_offset) w.i64(11, *c.dictionary_page_offset);
            w.begin_struct(12);  // Statistics
            w.i64(3, c.st.nulls);
            if (c.st.any && (c.pt != ptype::byte_array || c.st.strings_ok)) {
                write_stat_value(w, 5, c, true);   // max_value
                write_stat_value(w, 6, c, false);  // min_value
            }
            w.end_struct();
            w.end_struct();  // ColumnMetaData
            w.end_struct();  // ColumnChunk
        }
        w.i64(2, g.total_byte_size);
        w.i64(3, g.num_rows);
        w.i64(5, g.file_offset);
        w.i64(6, g.total_compressed);
        if (gi <= 32'767) w.i16(7, static_cast<std::int16_t>(gi));  // ordinal
        w.end_struct();
    }
    w.binary(6, o.created_by);
    w.begin_list(7, ttype::structure, leaves.size());
    for (std::size_t i = 0; i < leaves.size(); ++i) {
        w.begin_elem_struct();
        w.begin_struct(1);  // TYPE_ORDER
        w.end_struct();
        w.end_struct();
    }
    w.end_struct();
}

}  // namespace iss::format::parquet_detail

// SPDX-License-Identifier: Apache-2.0
// Avro object container framing (avro_container.hpp cites the specification).
#include "format/avro_container.hpp"

#include "format/compressor.hpp"

#include <avro.h>
#include <snappy-c.h>
#include <xxhash.h>
#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace iss::format::avro_ocf {

namespace {

error parse_error(std::string what) { return error{iss::errc::parse_error, "avro container: " + std::move(what)}; }

bool get_bytes(std::string_view& in, std::string_view& out) {
    std::int64_t n = 0;
    if (!get_long(in, n) || n < 0 || static_cast<std::uint64_t>(n) > in.size()) return false;
    out = in.substr(0, static_cast<std::size_t>(n));
    in.remove_prefix(static_cast<std::size_t>(n));
    return true;
}

bool inflate_raw(std::string_view in, std::string& out) {
    z_stream z{};
    if (inflateInit2(&z, -15) != Z_OK) return false;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    char buf[64 * 1024];
    int rc = Z_OK;
    while (rc == Z_OK) {
        z.next_out = reinterpret_cast<Bytef*>(buf);
        z.avail_out = sizeof buf;
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(buf, sizeof buf - z.avail_out);
        if (rc == Z_BUF_ERROR && z.avail_in == 0) break;
    }
    inflateEnd(&z);
    return rc == Z_STREAM_END;
}

}  // namespace

void append_datum(std::string& out, ::avro_value& v) {
    const auto check = [](int rc) {
        if (rc != 0) throw std::runtime_error{std::string{"avro: "} + avro_strerror()};
    };
    std::size_t size = 0;
    check(avro_value_sizeof(&v, &size));
    const std::size_t at = out.size();
    out.resize(at + size);
    avro_writer_t w = avro_writer_memory(out.data() + at, static_cast<int64_t>(size));
    const int rc = avro_value_write(w, &v);
    avro_writer_free(w);
    check(rc);
}

void put_long(std::string& out, std::int64_t v) {
    auto z = (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
    while (z >= 0x80) {
        out += static_cast<char>((z & 0x7F) | 0x80);
        z >>= 7;
    }
    out += static_cast<char>(z);
}

void put_bytes(std::string& out, std::string_view b) {
    put_long(out, static_cast<std::int64_t>(b.size()));
    out.append(b);
}

bool get_long(std::string_view& in, std::int64_t& v) noexcept {
    std::uint64_t z = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (in.empty()) return false;
        const auto b = static_cast<unsigned char>(in.front());
        in.remove_prefix(1);
        z |= static_cast<std::uint64_t>(b & 0x7F) << shift;
        if ((b & 0x80) == 0) {
            v = static_cast<std::int64_t>((z >> 1) ^ (~(z & 1) + 1));
            return true;
        }
    }
    return false;
}

sync_marker make_sync(std::string_view schema_json) {
    const XXH128_hash_t h = XXH3_128bits(schema_json.data(), schema_json.size());
    sync_marker s{};
    std::memcpy(s.data(), &h.high64, 8);
    std::memcpy(s.data() + 8, &h.low64, 8);
    return s;
}

void write_header(std::string& out, std::string_view schema_json, avro_codec codec, const sync_marker& sync,
                  std::span<const std::pair<std::string, std::string>> extra) {
    out.append("Obj\x01", 4);
    put_long(out, static_cast<std::int64_t>(2 + extra.size()));  // one map block, then the end (0)
    put_bytes(out, "avro.schema");
    put_bytes(out, schema_json);
    put_bytes(out, "avro.codec");
    put_bytes(out, codec == avro_codec::deflate ? "deflate" : codec == avro_codec::snappy ? "snappy" : "null");
    for (const auto& [k, v] : extra) {
        put_bytes(out, k);
        put_bytes(out, v);
    }
    put_long(out, 0);
    out.append(sync.data(), sync.size());
}

void write_block(std::string& out, std::uint64_t count, std::string_view datums, avro_codec codec,
                 const sync_marker& sync, std::string& scratch) {
    std::string_view data = datums;
    switch (codec) {
        case avro_codec::null: break;
        case avro_codec::deflate: {
            zlib_deflate(datums, scratch, 6, -15);  // raw deflate (RFC 1951), as the spec asks
            data = scratch;
            break;
        }
        case avro_codec::snappy: {
            std::size_t n = snappy_max_compressed_length(datums.size());
            scratch.resize(n + 4);
            if (snappy_compress(datums.data(), datums.size(), scratch.data(), &n) != SNAPPY_OK) std::abort();
            const auto crc = static_cast<std::uint32_t>(
                crc32(0, reinterpret_cast<const Bytef*>(datums.data()), static_cast<uInt>(datums.size())));
            for (int b = 0; b < 4; ++b)
                scratch[n + static_cast<std::size_t>(b)] = static_cast<char>(crc >> (24 - 8 * b));
            scratch.resize(n + 4);
            data = scratch;
            break;
        }
    }
    put_long(out, static_cast<std::int64_t>(count));
    put_bytes(out, data);
    out.append(sync.data(), sync.size());
}

std::string_view file::metadata_value(std::string_view key) const noexcept {
    for (const auto& [k, v] : metadata)
        if (k == key) return v;
    return {};
}

result<file> read(std::string_view in) {
    if (in.size() < 4 || in.substr(0, 4) != std::string_view{"Obj\x01", 4}) return parse_error("no Obj\\x01 magic");
    in.remove_prefix(4);
    file f;
    for (;;) {
        std::int64_t n = 0;
        if (!get_long(in, n)) return parse_error("truncated metadata");
        if (n == 0) break;
        if (n < 0) {  // a negative count is followed by the block's byte size
            std::int64_t size = 0;
            if (!get_long(in, size)) return parse_error("truncated metadata");
            n = -n;
        }
        for (std::int64_t i = 0; i < n; ++i) {
            std::string_view k, v;
            if (!get_bytes(in, k) || !get_bytes(in, v)) return parse_error("truncated metadata");
            f.metadata.emplace_back(std::string{k}, std::string{v});
        }
    }
    if (in.size() < 16) return parse_error("no sync marker");
    const std::string_view sync = in.substr(0, 16);
    in.remove_prefix(16);
    const std::string_view codec = f.metadata_value("avro.codec");
    if (!codec.empty() && codec != "null" && codec != "deflate" && codec != "snappy")
        return parse_error("codec " + std::string{codec} + " is not supported (null, deflate, snappy)");
    while (!in.empty()) {
        std::int64_t count = 0;
        std::string_view data;
        if (!get_long(in, count) || count < 0 || !get_bytes(in, data) || in.size() < 16)
            return parse_error("truncated block");
        if (in.substr(0, 16) != sync) return parse_error("a block's sync marker differs from the header's");
        in.remove_prefix(16);
        if (codec == "deflate") {
            if (!inflate_raw(data, f.datums)) return parse_error("a deflate block does not inflate");
        } else if (codec == "snappy") {
            if (data.size() < 4) return parse_error("a snappy block is too short");
            std::size_t n = 0;
            if (snappy_uncompressed_length(data.data(), data.size() - 4, &n) != SNAPPY_OK)
                return parse_error("a snappy block does not uncompress");
            const std::size_t at = f.datums.size();
            f.datums.resize(at + n);
            if (snappy_uncompress(data.data(), data.size() - 4, f.datums.data() + at, &n) != SNAPPY_OK)
                return parse_error("a snappy block does not uncompress");
        } else {
            f.datums.append(data);
        }
        f.count += static_cast<std::uint64_t>(count);
    }
    return f;
}

}  // namespace iss::format::avro_ocf

// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The compression stage between a record writer and the part buffer: bytes in, compressed
/// bytes appended to the caller's output, streamed (memory does not grow with the object).
///
/// `gzip` is deflate with gzip headers and trailers (RFC 1952), from ISA-L's igzip at levels
/// 1..3 and libdeflate at 4..12: the input is cut
/// into blocks of 256 KiB, each compressed as one gzip member, and the members follow each
/// other; a series of members is a valid `.gz` file (RFC 1952 §2.2), which gzip, zcat,
/// Python's gzip, DuckDB and Spark read as one stream. The object is a valid `.gz` file: the writer gives it the extension `.gz` and Content-Type
/// `application/gzip`, and NO `Content-Encoding`, so that browsers and `aws s3 cp` keep the
/// bytes as they are instead of unpacking them on download. `zstd` is one zstd frame per
/// object (`.zst`, `application/zstd`), streamed the same way.

#include "common/error.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace iss::format {

enum class compression : std::uint8_t { none, gzip, zstd };

/// One compressed stream (one object). Not thread-safe; one per open object.
class compressor {
public:
    virtual ~compressor() = default;
    /// Compresses `in`, appending whatever output is ready to `out` (may be nothing: the
    /// codec buffers).
    virtual void write(std::string_view in, std::string& out) = 0;
    /// Ends the stream: appends the rest and the trailer. The compressor is then `reset`.
    virtual void finish(std::string& out) = 0;
    /// Starts a new stream (next object), reusing the codec's memory.
    virtual void reset() = 0;
    /// Block codecs (gzip, zstd): the codec's input buffer, for a caller that formats its next
    /// input straight into it instead of into a buffer of its own (saves one copy); then it
    /// calls `staged`. nullptr: use `write`. The caller may cut back what it appended
    /// before calling `staged` (a record that failed half-way).
    virtual std::string* staging() { return nullptr; }
    /// After appending to `staging()`: compresses whatever is due into `out`.
    virtual void staged(std::string& out) { (void)out; }
    /// Bytes of memory this compressor holds now: its input block and, for zstd, its context
    /// as allocated (`ZSTD_sizeof_CCtx`: small until the first block is compressed, then the
    /// level's window and match tables: at most `zstd_compressor_memory(level)`).
    [[nodiscard]] virtual std::uint64_t memory() const noexcept = 0;
};

/// A gzip compressor; `level` 1 (fast) .. 12 (small, slow): 1..3 ISA-L igzip's levels 1..3,
/// 4..12 libdeflate's; 1..9 trade speed for size as zlib's same numbers do (each compresses
/// at least about as well as zlib's, several times faster; measured in compressor.cpp); the
/// default 6. Out-of-range levels are clamped.
[[nodiscard]] std::unique_ptr<compressor> make_gzip_compressor(int level = 6);
/// A zstd compressor; `level` 1 (fast) .. 19 (small), zstd's default 3.
[[nodiscard]] std::unique_ptr<compressor> make_zstd_compressor(int level = 3);

/// `in` deflated by zlib in one call, replacing `out`: `window_bits` 31 a gzip member (Parquet's
/// GZIP pages), -15 raw deflate (Avro's `deflate` blocks); `level` 1..9. zlib fails only on a
/// broken state or no memory: the process stops with a message.
void zlib_deflate(std::string_view in, std::string& out, int level, int window_bits);

/// Bytes of memory one compressor of `make_gzip_compressor(level)` holds at most: its input
/// block, 512 KiB once a record has been formatted past the 256 KiB a member takes (the
/// deflate state is per thread, not per compressor).
[[nodiscard]] std::uint64_t gzip_compressor_memory(int level = 6) noexcept;
/// Bytes of memory one compressor of `make_zstd_compressor(level)` holds at most: once it has
/// compressed a first full block of a frame, until it is destroyed: its input block (256 KiB
/// once a record has been formatted past the 128 KiB a block takes) and its context
/// (`ZSTD_estimateCStreamSize`: the window and match tables of the level; libzstd 1.5.4,
/// with the block: 1.6 MiB at level 1, 3.7 MiB at 3, 17.0 MiB at 9, 89.8 MiB at 19). A
/// frame that ends before its first full block sizes a small context for its known length.
[[nodiscard]] std::uint64_t zstd_compressor_memory(int level = 3) noexcept;

}  // namespace iss::format

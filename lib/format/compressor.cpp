// SPDX-License-Identifier: Apache-2.0
#include "format/compressor.hpp"

#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <zlib.h>
// For ZSTD_estimateCStreamSize (zstd_compressor_memory): in zstd.h's "advanced" section,
// exported by the shared library (Debian's libzstd1) and unchanged since zstd 1.3.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

namespace iss::format {

namespace {

/// The codecs fail only on a broken state or no memory: both are bugs or fatal here.
[[noreturn]] void zlib_fatal(const char* what, int rc) {
    std::fprintf(stderr, "iggy-s3-sink: fatal: %s failed (%d)\n", what, rc);
    std::abort();
}

/// Input bytes per gzip member: large enough that the members' headers, trailers and fresh
/// Huffman tables cost nothing measurable (deflate's window is 32 KiB anyway), small enough
/// that an open object holds little.
constexpr std::size_t gzip_block = 256 * 1024;

/// The block codecs' `write`: appends `in` to the block being gathered (`pending`, at most
/// `block` bytes), calling `staged()` (which compresses a full block) each time it fills.
template <class Codec>
void gather(Codec& codec, std::string& pending, std::size_t block, std::string_view in, std::string& out) {
    while (!in.empty()) {
        const std::size_t take = std::min(in.size(), block - std::min(block, pending.size()));
        pending.append(in.substr(0, take));
        in.remove_prefix(take);
        codec.staged(out);
    }
}

/// One gzip member of `in` appended to `out` with ISA-L's igzip (levels 1..3): one deflate
/// call over the whole block, the output grown while igzip asks for room. The stream and its
/// level buffer (about 420 KiB together) are kept per thread and level.
void isal_gzip_member(int level, std::string_view in, std::string& out) {
    struct state {
        isal_zstream z{};
        std::vector<std::uint8_t> level_buf;
    };
    thread_local std::array<std::unique_ptr<state>, 4> per_thread;
    auto& slot = per_thread.at(static_cast<std::size_t>(level));
    if (!slot) {
        slot = std::make_unique<state>();
        slot->level_buf.resize(level == 1   ? ISAL_DEF_LVL1_DEFAULT
                               : level == 2 ? ISAL_DEF_LVL2_DEFAULT
                                            : ISAL_DEF_LVL3_DEFAULT);
    }
    // (A member is 256 KiB plus one record; igzip counts in 32 bits.)
    if (in.size() > std::numeric_limits<std::uint32_t>::max() / 2) zlib_fatal("isal_deflate: member too large", 0);
    isal_zstream& z = slot->z;
    isal_deflate_init(&z);
    z.level = static_cast<std::uint32_t>(level);
    z.level_buf = slot->level_buf.data();
    z.level_buf_size = static_cast<std::uint32_t>(slot->level_buf.size());
    z.gzip_flag = IGZIP_GZIP;
    z.flush = NO_FLUSH;
    z.end_of_stream = 1;
    z.next_in = reinterpret_cast<std::uint8_t*>(const_cast<char*>(in.data()));  // igzip does not write input
    z.avail_in = static_cast<std::uint32_t>(in.size());
    std::size_t room = in.size() + in.size() / 8 + ISAL_DEF_MAX_HDR_SIZE + 64;  // stored blocks' worst case fits
    for (;;) {
        const std::size_t start = out.size();
        out.resize(start + room);
        z.next_out = reinterpret_cast<std::uint8_t*>(out.data() + start);
        z.avail_out = static_cast<std::uint32_t>(room);
        const int rc = isal_deflate(&z);
        out.resize(start + room - z.avail_out);
        if (rc != COMP_OK) zlib_fatal("isal_deflate", rc);
        if (z.internal_state.state == ZSTATE_END) return;
        room = 64 * 1024;  // igzip stopped for room (not expected with the bound above): give it more
    }
}

/// gzip from whole blocks (no streaming state): input is gathered in blocks of `gzip_block`
/// bytes and each block becomes one gzip member (RFC 1952 §2.2: a gzip file is a series of
/// members; gzip, zcat, Python's gzip, zlib's inflate with gzip detection, DuckDB and Spark
/// read them as one stream). Levels 1..3 use ISA-L's igzip (its levels 1..3), 4..12
/// libdeflate's same level: on the benchmark's JSON (tests/bench/e2e_bench.py payloads,
/// 256 KiB members, one core of the development machine) igzip 1 wrote 0.290 of the input at
/// 515 MB/s where zlib's level 1 wrote 0.305 at 132 MB/s and libdeflate's 0.282 at 259 MB/s;
/// igzip 2 0.287 at 531 MB/s (zlib 2: 0.301), igzip 3 0.283 at 296 MB/s (zlib 3: 0.286,
/// libdeflate 3: 137 MB/s). So each level still compresses at least about as well as zlib's
/// same number. The compressor itself holds no state between calls, so one codec state per
/// thread and level serves every open object.
class gzip_compressor final : public compressor {
public:
    explicit gzip_compressor(int level) : level_{std::clamp(level, 1, 12)} { pending_.reserve(gzip_block); }

    void write(std::string_view in, std::string& out) override { gather(*this, pending_, gzip_block, in, out); }

    std::string* staging() override { return &pending_; }
    void staged(std::string& out) override {
        if (pending_.size() >= gzip_block) flush_member(out);
    }
    [[nodiscard]] std::uint64_t memory() const noexcept override { return pending_.capacity(); }

    void finish(std::string& out) override {
        // A stream with no member at all is not a gzip file: an empty object gets an empty member.
        if (!pending_.empty() || members_ == 0) flush_member(out);
        reset();
    }

    void reset() override {
        pending_.clear();
        members_ = 0;
    }

private:
    void flush_member(std::string& out) {
        if (level_ <= 3) isal_gzip_member(level_, pending_, out);
        else libdeflate_gzip_member(level_, pending_, out);
        pending_.clear();
        ++members_;
    }

    static void libdeflate_gzip_member(int level, std::string_view in, std::string& out) {
        libdeflate_compressor* c = compressor_for(level);
        const std::size_t bound = libdeflate_gzip_compress_bound(c, in.size());
        const std::size_t start = out.size();
        out.resize(start + bound);
        const std::size_t n = libdeflate_gzip_compress(c, in.data(), in.size(), out.data() + start, bound);
        if (n == 0) zlib_fatal("libdeflate_gzip_compress", 0);  // cannot happen with the bound's room
        out.resize(start + n);
    }

    /// One libdeflate compressor per thread and level (4..12), made on first use.
    static libdeflate_compressor* compressor_for(int level) {
        struct cache {
            std::array<libdeflate_compressor*, 13> c{};
            cache() = default;
            cache(const cache&) = delete;
            cache& operator=(const cache&) = delete;
            ~cache() {
                for (auto* p : c)
                    if (p != nullptr) libdeflate_free_compressor(p);
            }
        };
        thread_local cache per_thread;
        auto*& slot = per_thread.c.at(static_cast<std::size_t>(level));
        if (slot == nullptr) slot = libdeflate_alloc_compressor(level);
        if (slot == nullptr) zlib_fatal("libdeflate_alloc_compressor", level);
        return slot;
    }

    int level_;
    std::string pending_;
    std::uint64_t members_ = 0;
};

/// zstd through the streaming API, one frame per object. Records are gathered in a block of
/// zstd's own input size (`ZSTD_CStreamInSize`, 128 KiB) and the block is compressed in one
/// call, so the output room (`ZSTD_CStreamOutSize`) is grown once per block, not once per
/// record (growing a std::string zero-fills the room: per 1 KiB record that was a 128 KiB
/// memset, the largest single cost of a zstd object in the benchmark's profile).
class zstd_compressor final : public compressor {
public:
    explicit zstd_compressor(int level) : cctx_{ZSTD_createCCtx()}, block_{ZSTD_CStreamInSize()} {
        if (cctx_ == nullptr) zlib_fatal("ZSTD_createCCtx", 0);
        check(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, level), "set level");
        check(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1), "set checksum");
        pending_.reserve(block_);
    }
    ~zstd_compressor() override { ZSTD_freeCCtx(cctx_); }
    zstd_compressor(const zstd_compressor&) = delete;
    zstd_compressor& operator=(const zstd_compressor&) = delete;

    void write(std::string_view in, std::string& out) override { gather(*this, pending_, block_, in, out); }
    std::string* staging() override { return &pending_; }
    [[nodiscard]] std::uint64_t memory() const noexcept override {
        return pending_.capacity() + ZSTD_sizeof_CCtx(cctx_);
    }
    void staged(std::string& out) override {
        if (pending_.size() < block_) return;
        run(pending_, out, ZSTD_e_continue);
        pending_.clear();
    }
    void finish(std::string& out) override {
        run(pending_, out, ZSTD_e_end);
        reset();
    }
    void reset() override {
        pending_.clear();
        check(ZSTD_CCtx_reset(cctx_, ZSTD_reset_session_only), "reset");
    }

private:
    static void check(std::size_t rc, const char* what) {
        if (ZSTD_isError(rc) != 0) {
            std::fprintf(stderr, "iggy-s3-sink: fatal: zstd %s failed: %s\n", what, ZSTD_getErrorName(rc));
            std::abort();
        }
    }
    void run(std::string_view in, std::string& out, ZSTD_EndDirective mode) {
        ZSTD_inBuffer input{in.data(), in.size(), 0};
        for (;;) {
            // Room for the whole block at once (its bound), at least zstd's own output size.
            const std::size_t room = std::max(ZSTD_CStreamOutSize(), ZSTD_compressBound(in.size() - input.pos));
            const std::size_t start = out.size();
            out.resize(start + room);
            ZSTD_outBuffer output{out.data() + start, room, 0};
            const std::size_t left = ZSTD_compressStream2(cctx_, &output, &input, mode);
            check(left, "compressStream2");
            out.resize(start + output.pos);
            // continue: done once all input is taken; end: done once nothing is left to flush.
            if (mode == ZSTD_e_end ? left == 0 : input.pos == input.size) return;
        }
    }

    ZSTD_CCtx* cctx_;
    std::size_t block_;
    std::string pending_;
};

}  // namespace

std::unique_ptr<compressor> make_gzip_compressor(int level) { return std::make_unique<gzip_compressor>(level); }
std::unique_ptr<compressor> make_zstd_compressor(int level) { return std::make_unique<zstd_compressor>(level); }

// The input block's capacity: a record is formatted into it (staging) before the full block
// is compressed, so the string grows once past the block, to twice its size.
std::uint64_t gzip_compressor_memory(int /*level*/) noexcept { return 2 * gzip_block; }

std::uint64_t zstd_compressor_memory(int level) noexcept {
    // The context's workspace for a frame of unknown size (what the streaming API compresses)
    // at this level, as ZSTD_sizeof_CCtx reports it after the first block, and the block.
    return ZSTD_estimateCStreamSize(level) + 2 * ZSTD_CStreamInSize();
}

void zlib_deflate(std::string_view in, std::string& out, int level, int window_bits) {
    z_stream z{};
    if (const int rc = deflateInit2(&z, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY); rc != Z_OK)
        zlib_fatal("deflateInit2", rc);
    out.resize(deflateBound(&z, in.size()) + 32);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    if (const int rc = deflate(&z, Z_FINISH); rc != Z_STREAM_END) zlib_fatal("deflate", rc);
    out.resize(z.total_out);
    deflateEnd(&z);
}

}  // namespace iss::format

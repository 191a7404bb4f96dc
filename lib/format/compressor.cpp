#include "format/compressor.hpp"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace iss::format {

namespace {

/// zlib fails only on a broken stream state or no memory: both are bugs or fatal here.
[[noreturn]] void zlib_fatal(const char* what, int rc) {
    std::fprintf(stderr, "iggy-s3-sink: fatal: zlib %s failed (%d)\n", what, rc);
    std::abort();
}

class gzip_compressor final : public compressor {
public:
    explicit gzip_compressor(int level) {
        // windowBits 15 + 16: a gzip header and trailer instead of zlib's (RFC 1952).
        const int rc = deflateInit2(&z_, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
        if (rc != Z_OK) zlib_fatal("deflateInit2", rc);
    }
    ~gzip_compressor() override { deflateEnd(&z_); }
    gzip_compressor(const gzip_compressor&) = delete;
    gzip_compressor& operator=(const gzip_compressor&) = delete;

    void write(std::string_view in, std::string& out) override {
        if (in.empty()) return;
        run(in, out, Z_NO_FLUSH);
    }

    void finish(std::string& out) override {
        run({}, out, Z_FINISH);
        reset();
    }

    void reset() override {
        const int rc = deflateReset(&z_);
        if (rc != Z_OK) zlib_fatal("deflateReset", rc);
    }

private:
    void run(std::string_view in, std::string& out, int flush) {
        z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
        z_.avail_in = static_cast<uInt>(in.size());
        for (;;) {
            // Room for what deflate may produce: its bound for the input, at least 4 KiB.
            const std::size_t room = std::max<std::size_t>(deflateBound(&z_, z_.avail_in) / 2, 4096);
            const std::size_t start = out.size();
            out.resize(start + room);
            z_.next_out = reinterpret_cast<Bytef*>(out.data() + start);
            z_.avail_out = static_cast<uInt>(room);
            const int rc = deflate(&z_, flush);
            out.resize(start + room - z_.avail_out);
            if (rc == Z_STREAM_END) return;
            if (rc != Z_OK && rc != Z_BUF_ERROR) zlib_fatal("deflate", rc);
            // Done when all input is consumed and deflate did not fill the room we gave it.
            if (flush != Z_FINISH && z_.avail_in == 0 && z_.avail_out != 0) return;
        }
    }

    z_stream z_{};
};

class zstd_compressor final : public compressor {
public:
    explicit zstd_compressor(int level) : cctx_{ZSTD_createCCtx()} {
        if (cctx_ == nullptr) zlib_fatal("ZSTD_createCCtx", 0);
        check(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, level), "set level");
        check(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1), "set checksum");
    }
    ~zstd_compressor() override { ZSTD_freeCCtx(cctx_); }
    zstd_compressor(const zstd_compressor&) = delete;
    zstd_compressor& operator=(const zstd_compressor&) = delete;

    void write(std::string_view in, std::string& out) override {
        if (!in.empty()) run(in, out, ZSTD_e_continue);
    }
    void finish(std::string& out) override {
        run({}, out, ZSTD_e_end);
        reset();
    }
    void reset() override { check(ZSTD_CCtx_reset(cctx_, ZSTD_reset_session_only), "reset"); }

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
            const std::size_t room = ZSTD_CStreamOutSize();
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
};

}  // namespace

std::unique_ptr<compressor> make_gzip_compressor(int level) { return std::make_unique<gzip_compressor>(level); }
std::unique_ptr<compressor> make_zstd_compressor(int level) { return std::make_unique<zstd_compressor>(level); }

}  // namespace iss::format

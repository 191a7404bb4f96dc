// SPDX-License-Identifier: Apache-2.0
// Writes a gzip (or, with a second argument `zstd`, a zstd) json_lines object to argv[1], and
// the same records uncompressed to argv[1] + ".plain", for the CTest checks that independent
// readers (gzip -t / zcat / Python's gzip / DuckDB; zstd -t) give back exactly those bytes. The
// gzip object is several members (one per 256 KiB of input); a second argument that is a
// number is the gzip level (1..3: ISA-L igzip, else libdeflate; default 6).
#include "format/writer.hpp"

#include <cstdio>
#include <fstream>
#include <string>

int main(int argc, char** argv) {
    if (argc != 2 && argc != 3) {
        std::fprintf(stderr, "usage: gzip_sample OUT.jsonl.gz [LEVEL] | OUT.jsonl.zst zstd\n");
        return 2;
    }
    namespace proto = iss::proto;
    iss::format::writer_options o;
    const bool zstd = argc == 3 && std::string{argv[2]} == "zstd";
    o.compression = zstd ? iss::format::compression::zstd : iss::format::compression::gzip;
    if (argc == 3 && !zstd) o.level = std::stoi(argv[2]);
    iss::format::writer w{o};
    iss::format::writer plain_writer{iss::format::writer_options{}};
    std::string out, plain;
    w.begin(out);
    plain_writer.begin(plain);
    for (std::uint64_t i = 0; i < 5000; ++i) {
        const std::string payload = "{\"n\": " + std::to_string(i) + ", \"text\": \"h\xc3\xa9llo\", \"pad\": \"" +
                                    std::string(i % 200, 'p') + "\"}";
        proto::byte_buffer buf;
        proto::message_fields f;
        f.offset = i;
        f.timestamp = 1'796'000'523'000'004ULL + i;
        f.payload = proto::as_bytes(payload);
        if (!proto::append_message(buf, f, true)) return 1;
        auto m = proto::decode_message(buf);
        if (!m || !w.append(*m, {"app", "requests", 0}, out) || !plain_writer.append(*m, {"app", "requests", 0}, plain))
            return 1;
    }
    w.finish(out);
    plain_writer.finish(plain);
    std::ofstream{argv[1], std::ios::binary} << out;
    std::ofstream{std::string{argv[1]} + ".plain", std::ios::binary} << plain;
    return 0;
}

// Writes a gzip (or, with a second argument `zstd`, a zstd) json_lines object to argv[1], for
// the CTest checks with `gzip -t` / `zstd -t` (independent readers of the format).
#include "format/writer.hpp"

#include <cstdio>
#include <fstream>
#include <string>

int main(int argc, char** argv) {
    if (argc != 2 && argc != 3) {
        std::fprintf(stderr, "usage: gzip_sample OUT.jsonl.gz | OUT.jsonl.zst zstd\n");
        return 2;
    }
    namespace proto = iss::proto;
    iss::format::writer_options o;
    o.compression = argc == 3 && std::string{argv[2]} == "zstd" ? iss::format::compression::zstd
                                                                 : iss::format::compression::gzip;
    iss::format::writer w{o};
    std::string out;
    w.begin(out);
    for (std::uint64_t i = 0; i < 5000; ++i) {
        const std::string payload = "{\"n\": " + std::to_string(i) + ", \"text\": \"h\xc3\xa9llo\"}";
        proto::byte_buffer buf;
        proto::message_fields f;
        f.offset = i;
        f.timestamp = 1'796'000'523'000'004ULL + i;
        f.payload = proto::as_bytes(payload);
        if (!proto::append_message(buf, f, true)) return 1;
        auto m = proto::decode_message(buf);
        if (!m || !w.append(*m, {"app", "requests", 0}, out)) return 1;
    }
    w.finish(out);
    std::ofstream{argv[1], std::ios::binary} << out;
    return 0;
}

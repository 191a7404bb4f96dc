// SPDX-License-Identifier: Apache-2.0
// Micro-benchmark of proto/ (issue 3): poll replies of 1000 x 1 KiB messages. Wall-clock
// timing is fine here: this is a benchmark, not a test.
// Usage: bench_proto [seconds per measurement, default 1].
#include "proto/commands.hpp"
#include "proto/framing.hpp"
#include "proto/poll.hpp"
#include "proto/send.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

namespace p = iss::proto;
using bench_clock = std::chrono::steady_clock;

namespace {

double seconds_per_run = 1.0;
volatile std::size_t sink = 0;  // keeps results alive

// Runs `f` in growing batches until `seconds_per_run` have passed; returns calls per second.
template <class F>
double rate(F&& f) {
    std::uint64_t calls = 0;
    std::uint64_t batch = 1;
    const auto start = bench_clock::now();
    double elapsed = 0;
    while (elapsed < seconds_per_run) {
        for (std::uint64_t i = 0; i < batch; ++i) f();
        calls += batch;
        batch *= 2;
        elapsed = std::chrono::duration<double>(bench_clock::now() - start).count();
    }
    return static_cast<double>(calls) / elapsed;
}

void report(const char* what, double replies_per_s, std::size_t messages, std::size_t bytes) {
    fmt::print("{:<48} {:>10.0f} replies/s {:>12.3e} messages/s {:>7.2f} GB/s\n", what, replies_per_s,
               replies_per_s * static_cast<double>(messages), replies_per_s * static_cast<double>(bytes) / 1e9);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1) seconds_per_run = std::atof(argv[1]);
    if (seconds_per_run <= 0) seconds_per_run = 1.0;

    constexpr std::size_t count = 1000;
    constexpr std::size_t payload_size = 1024;
    std::string payload(payload_size, 'x');
    for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>('a' + i % 26);
    p::byte_buffer headers;
    (void)p::append_user_header(headers, p::header_kind::string, p::as_bytes("content-type"), p::header_kind::string,
                                p::as_bytes("application/json"));

    // A whole reply frame, as the server sends it: status, length, payload.
    p::byte_buffer frame;
    const std::size_t start = p::begin_reply(frame);
    p::poll_reply_writer w{frame};
    w.begin(0, 1'000'000 + count - 1);
    for (std::size_t i = 0; i < count; ++i) {
        p::message_fields f;
        f.id = i + 1;
        f.offset = 1'000'000 + i;
        f.timestamp = 1767225600000000ULL;
        f.origin_timestamp = 1767225600000000ULL - 5;
        f.payload = p::as_bytes(payload);
        f.user_headers = i % 2 == 0 ? p::bytes_view{headers} : p::bytes_view{};
        if (!w.add(f)) return 1;
    }
    w.finish();
    p::finish_reply(frame, start);
    const p::bytes_view reply_payload = p::bytes_view{frame}.subspan(8);
    fmt::print("poll reply: {} messages of {} B payload, {} B frame\n", count, payload_size, frame.size());

    report("decode_poll_reply + iterate (views)", rate([&] {
               auto r = p::decode_poll_reply(reply_payload);
               std::size_t s = 0;
               for (const auto& m : *r) s += m.payload.size() + m.offset;
               sink = sink + s;
           }),
           count, frame.size());

    p::poll_reply reused;
    report("decode_poll_reply_into (vector reused)", rate([&] {
               (void)p::decode_poll_reply_into(reply_payload, reused);
               sink = sink + reused.messages.size();
           }),
           count, frame.size());

    report("decode + verify XXH3-64 checksums", rate([&] {
               auto r = p::decode_poll_reply(reply_payload, {.verify_checksums = true});
               sink = sink + r->size();
           }),
           count, frame.size());

    p::frame_assembler assembler{p::frame_direction::reply};
    report("frame_assembler (64 KiB reads) + decode", rate([&] {
               std::size_t pos = 0;
               while (pos < frame.size()) {
                   const std::size_t n = std::min<std::size_t>(65536, frame.size() - pos);
                   assembler.feed(p::bytes_view{frame}.subspan(pos, n));
                   pos += n;
               }
               auto f = assembler.next_reply();
               auto r = p::decode_poll_reply(p::ok_payload(**f).value());
               sink = sink + r->size();
           }),
           count, frame.size());

    std::vector<p::message_fields> msgs(count);
    for (std::size_t i = 0; i < count; ++i) {
        msgs[i].id = i + 1;
        msgs[i].origin_timestamp = 1767225600000000ULL;
        msgs[i].payload = p::as_bytes(payload);
    }
    p::byte_buffer out;
    const auto stream = p::identifier::named("orders");
    const auto topic = p::identifier::numeric(0);
    const auto part = p::partitioning::balanced();
    (void)p::append_send_messages(out, stream, topic, part, msgs);
    const std::size_t send_size = out.size();
    report("append_send_messages (one buffer, reused)", rate([&] {
               out.clear();
               (void)p::append_send_messages(out, stream, topic, part, msgs);
               sink = sink + out.size();
           }),
           count, send_size);
    return 0;
}

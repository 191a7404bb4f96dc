// SPDX-License-Identifier: Apache-2.0
// libFuzzer target over the G2 codecs of proto/ (Iggy 0.9+, 256-byte consensus header): frames
// through the G2 frame assembler, request frames and bodies (server side), server frames
// (replies and evictions), batch poll replies, SendMessages batches, and the reply bodies the
// client reads (Register, SyncConsumerGroup, Stream/Topic records, send confirmations, consumer
// group and offset replies, result sections).
//
// Input: byte 0 picks the mode, byte 1 the split point for the assembler, the rest is data:
//   0 a frame stream (split vs whole, each frame as request and as server frame)
//   1 one body given to every body decoder
// Properties checked besides "no crash, no out-of-bounds read, no undefined behaviour":
// - a frame stream fed in two pieces yields the same frames as fed whole;
// - a decoded request that our encoder accepts re-encodes to a frame that decodes to the same
//   request; a server frame re-encodes to one with the same header and body;
// - reply bodies decode -> encode -> decode to the same value; a SendMessages batch re-encoded
//   (checksums recomputed) decodes to the same messages;
// - polled messages pass their checksum and their views stay inside the body.
// Built by scripts/fuzz (tests/fuzz/README.md).
#include "proto/framing.hpp"
#include "proto/g2_batch.hpp"
#include "proto/g2_commands.hpp"
#include "proto/g2_framing.hpp"
#include "proto/message.hpp"
#include "proto/poll.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace p = iss::proto;

namespace {

namespace g2 = iss::proto::g2;

// decode -> encode -> decode gives the same value, where our encoder accepts the value.
template <class Decode, class Encode>
void body_roundtrip(p::bytes_view body, Decode decode, Encode encode) {
    auto first = decode(body);
    if (!first) return;
    p::byte_buffer out;
    if (!encode(out, *first)) return;
    auto again = decode(p::bytes_view{out});
    ISS_FUZZ_CHECK(again.has_value());
    ISS_FUZZ_CHECK(*again == *first);
}

void batch_poll(p::bytes_view data, bool producer_fields) {
    p::poll_reply pr;
    g2::poll_options o;
    o.verify_checksums = true;
    o.producer_fields = producer_fields;
    if (!g2::decode_batch_poll_reply(data, pr, o)) return;
    const auto* lo = data.data();
    const auto* hi = data.data() + data.size();
    for (const auto& m : pr.messages) {
        ISS_FUZZ_CHECK(m.checksum_ok());
        ISS_FUZZ_CHECK(m.raw.data() >= lo && m.raw.data() + m.raw.size() <= hi);
        ISS_FUZZ_CHECK(m.payload.data() >= lo && m.payload.data() + m.payload.size() <= hi);
        ISS_FUZZ_CHECK(m.user_headers.data() >= lo && m.user_headers.data() + m.user_headers.size() <= hi);
        std::vector<p::header_view> hs;
        (void)p::decode_user_headers(m.user_headers, hs);
    }
}

void g2_bodies(p::bytes_view data) {
    batch_poll(data, false);
    batch_poll(data, true);
    g2::send_messages_batch_view v;
    if (g2::decode_send_messages(data, v)) {
        // A batch the server accepted re-encodes (checksums recomputed) to one it accepts again.
        std::vector<p::message_fields> fs;
        for (const auto& m : v.messages) fs.push_back({m.id, 0, 0, m.origin_timestamp, m.payload, m.user_headers});
        const g2::send_messages_request again{v.stream, v.topic, v.part, fs};
        p::byte_buffer frame;
        const auto h = g2::session_state{1}.next(static_cast<std::uint32_t>(p::command::send_messages));
        if (g2::append_request(frame, h, again)) {
            auto f = g2::decode_request_frame(p::bytes_view{frame});
            ISS_FUZZ_CHECK(f.has_value());
            g2::send_messages_batch_view w;
            ISS_FUZZ_CHECK(g2::decode_send_messages(f->body, w).has_value());
            ISS_FUZZ_CHECK(w.messages.size() == v.messages.size());
            for (std::size_t i = 0; i < v.messages.size(); ++i)
                ISS_FUZZ_CHECK(w.messages[i].id == v.messages[i].id &&
                               std::ranges::equal(w.messages[i].payload, v.messages[i].payload) &&
                               std::ranges::equal(w.messages[i].user_headers, v.messages[i].user_headers));
        }
    }
    body_roundtrip(data, g2::decode_register_reply, [](p::byte_buffer& b, const g2::register_reply& r) {
        return g2::append_register_reply(b, r).has_value();
    });
    body_roundtrip(data, g2::decode_sync_reply, [](p::byte_buffer& b, const std::optional<g2::sync_reply>& r) {
        if (r) g2::append_sync_reply(b, *r);
        return true;
    });
    body_roundtrip(data, g2::decode_topic_reply, [](p::byte_buffer& b, const std::optional<p::topic_details>& t) {
        return !t || g2::append_topic_details(b, *t).has_value();
    });
    body_roundtrip(data, g2::decode_stream_reply, [](p::byte_buffer& b, const std::optional<p::stream_details>& s) {
        return !s || g2::append_stream_details(b, *s).has_value();
    });
    body_roundtrip(data, g2::decode_send_reply, [](p::byte_buffer& b, const std::vector<g2::send_confirmation>& c) {
        if (c.empty()) return false;  // count 0 is its own form (accepted, offsets unknown)
        g2::append_send_reply(b, c);
        return true;
    });
    (void)g2::decode_consumer_group_reply(data);
    (void)g2::decode_consumer_offset_reply(data);
    if (auto r = g2::decode_result_framed(data); r) {
        ISS_FUZZ_CHECK(r->data() >= data.data() && r->data() + r->size() == data.data() + data.size());
    }
    (void)g2::decode_client_version(data);
    (void)g2::decode_register_user(data);
    (void)g2::decode_register_pat(data);
}

// Frames through the assembler, split at `cut`; every request decoded re-encodes to bytes
// that decode to the same request; server frames decode without crashing.
std::vector<p::byte_buffer> g2_frames(p::bytes_view data, std::size_t cut) {
    std::vector<p::byte_buffer> out;
    g2::frame_assembler a{1u << 20};
    auto drain = [&] {
        for (;;) {
            auto f = a.next();
            if (!f || !*f) return;
            out.emplace_back((*f)->begin(), (*f)->end());
        }
    };
    a.feed(data.first(cut));
    drain();
    a.feed(data.subspan(cut));
    drain();
    return out;
}

// A server frame (reply or eviction) re-encodes to the same bytes' meaning.
void g2_server_frame(p::bytes_view frame) {
    auto f = g2::decode_server_frame(frame);
    if (!f) return;
    p::byte_buffer again;
    if (f->is_eviction()) {
        g2::append_eviction(again, f->eviction());
    } else {
        g2::append_reply(again, f->reply(), f->body);
    }
    auto f2 = g2::decode_server_frame(p::bytes_view{again});
    ISS_FUZZ_CHECK(f2.has_value());
    ISS_FUZZ_CHECK(f2->header == f->header);
    ISS_FUZZ_CHECK(std::ranges::equal(f2->body, f->body));
    if (!f->is_eviction()) g2_bodies(f->body);
}

void g2_request_roundtrip(p::bytes_view frame) {
    g2_server_frame(frame);
    auto f = g2::decode_request_frame(frame);
    if (!f) return;
    auto req = g2::decode_request(f->header, f->body);
    if (!req) return;
    p::byte_buffer again;
    bool encoded = false;
    std::visit(
        [&](const auto& r) {
            using T = std::decay_t<decltype(r)>;
            if constexpr (std::is_same_v<T, g2::send_messages_batch_view>) {
                std::vector<p::message_fields> fs;
                for (const auto& m : r.messages)
                    fs.push_back({m.id, 0, 0, m.origin_timestamp, m.payload, m.user_headers});
                encoded = g2::append_request(again, f->header, g2::send_messages_request{r.stream, r.topic, r.part, fs})
                              .has_value();
            } else {
                encoded = g2::append_request(again, f->header, r).has_value();
            }
        },
        *req);
    if (!encoded) return;
    auto f2 = g2::decode_request_frame(p::bytes_view{again});
    ISS_FUZZ_CHECK(f2.has_value());
    auto req2 = g2::decode_request(f2->header, f2->body);
    ISS_FUZZ_CHECK(req2.has_value());
    if (!std::holds_alternative<g2::send_messages_batch_view>(*req)) ISS_FUZZ_CHECK(*req2 == *req);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    if (size < 2) return 0;
    const unsigned mode = bytes[0] % 2;
    const p::bytes_view data{reinterpret_cast<const std::byte*>(bytes + 2), size - 2};
    const std::size_t cut = data.empty() ? 0 : bytes[1] % (data.size() + 1);
    if (mode == 0) {
        const auto split = g2_frames(data, cut);
        const auto whole = g2_frames(data, data.size());
        ISS_FUZZ_CHECK(split == whole);
        for (const auto& f : whole) g2_request_roundtrip(p::bytes_view{f});
    } else {
        g2_bodies(data);
    }
    return 0;
}

// libFuzzer target over the proto/ decoders (issue 3): request and reply frames through the
// frame assembler, every request and reply decoder, user headers, SendMessages, poll replies.
// Built with clang++ -fsanitize=fuzzer,address,undefined by scripts/fuzz-proto (its own build
// dir); run by the CTest test fuzz.proto with a fixed seed and a bounded time.
//
// G2 (issue 9): target 5 = G2 frames (split vs whole, request decode -> re-encode -> decode),
// target 6 = G2 bodies (batch poll replies with checksums, SendMessages batches, login/sync/
// topic/stream/send replies).
// Input: byte 0 picks the target, byte 1 the split point for the assembler, the rest is data.
// Properties checked besides "no crash, no out-of-bounds read": a decoded request that our
// encoder accepts re-encodes to bytes that decode to the same request, and feeding a frame
// stream in two pieces yields the same frames as feeding it whole.
#include "proto/commands.hpp"
#include "proto/framing.hpp"
#include "proto/message.hpp"
#include "proto/poll.hpp"
#include "proto/send.hpp"
#include "proto/g2_commands.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace p = iss::proto;

namespace {

void check(bool ok) {
    if (!ok) std::abort();
}

void roundtrip(const p::request& req) {
    p::byte_buffer frame;
    bool encoded = false;
    std::visit(
        [&](const auto& r) {
            using T = std::decay_t<decltype(r)>;
            if constexpr (std::is_same_v<T, p::send_messages_view>) {
                std::vector<p::message_fields> fs;
                for (const auto& m : r.messages) fs.push_back({m.id, 0, 0, m.origin_timestamp, m.payload, m.user_headers});
                encoded = p::append_send_messages(frame, r.stream, r.topic, r.part, fs).has_value();
            } else {
                encoded = p::append_request(frame, r).has_value();
            }
        },
        req);
    if (!encoded) return;  // e.g. an empty messages key: the server accepts it, our encoder does not
    auto again = p::decode_request(p::load_le<std::uint32_t>(frame.data() + 4), p::bytes_view{frame}.subspan(8));
    check(again.has_value());
    if (std::holds_alternative<p::send_messages_view>(req)) {
        const auto& a = std::get<p::send_messages_view>(req);
        const auto& b = std::get<p::send_messages_view>(*again);
        check(a.stream == b.stream && a.topic == b.topic && a.part == b.part && a.messages.size() == b.messages.size());
        for (std::size_t i = 0; i < a.messages.size(); ++i)
            check(a.messages[i].id == b.messages[i].id &&
                  a.messages[i].payload.size() == b.messages[i].payload.size() &&
                  a.messages[i].user_headers.size() == b.messages[i].user_headers.size());
    } else {
        check(*again == req);
    }
}

std::vector<std::string> requests(p::bytes_view data, std::size_t cut) {
    p::frame_assembler a{p::frame_direction::request, p::frame_limits{.max_send_payload = 1 << 20}};
    std::vector<std::string> seen;
    for (auto piece : {data.first(cut), data.subspan(cut)}) {
        a.feed(piece);
        for (;;) {
            auto f = a.next_request();
            if (!f) {
                seen.push_back("error:" + f.error().detail());
                return seen;
            }
            if (!*f) break;
            seen.push_back(std::to_string((*f)->code) + ":" + std::to_string((*f)->payload.size()));
            auto r = p::decode_request((*f)->code, (*f)->payload);
            if (r) {
                roundtrip(*r);
            } else {
                const auto status = p::server_status_for_decode_error(r.error());
                check(status != 0);
            }
        }
    }
    return seen;
}

void every_reply_decoder(p::bytes_view payload) {
    (void)p::decode_empty_reply(payload);
    (void)p::decode_user_id_reply(payload);
    (void)p::decode_get_me_reply(payload);
    (void)p::decode_get_stream_reply(payload);
    (void)p::decode_get_streams_reply(payload);
    (void)p::decode_create_stream_reply(payload);
    (void)p::decode_get_topic_reply(payload);
    (void)p::decode_get_topics_reply(payload);
    (void)p::decode_create_topic_reply(payload);
    (void)p::decode_get_consumer_group_reply(payload);
    (void)p::decode_get_consumer_groups_reply(payload);
    (void)p::decode_create_consumer_group_reply(payload);
    (void)p::decode_get_consumer_offset_reply(payload);
    auto poll = p::decode_poll_reply(payload, {.verify_checksums = true});
    if (poll) {
        std::size_t n = 0;
        std::vector<p::header_view> hs;
        for (const auto& m : *poll) {
            check(m.raw.size() == 64 + m.payload.size() + m.user_headers.size());
            check(m.checksum_ok());
            (void)p::decode_user_headers(m.user_headers, hs);
            ++n;
        }
        check(n == poll->size());
    }
}

void replies(p::bytes_view data, std::size_t cut) {
    p::frame_assembler a{p::frame_direction::reply, p::frame_limits{.max_reply_payload = 1 << 20}};
    for (auto piece : {data.first(cut), data.subspan(cut)}) {
        a.feed(piece);
        for (;;) {
            auto f = a.next_reply();
            if (!f || !*f) break;
            if (auto payload = p::ok_payload(**f)) every_reply_decoder(*payload);
        }
    }
}

void headers(p::bytes_view data) {
    p::header_reader r{data};
    for (;;) {
        auto h = r.next();
        if (!h || !*h) break;
        const p::header_view v = **h;
        check(v.key.data() >= data.data() && v.value.data() + v.value.size() <= data.data() + data.size());
        auto key = p::decode_header_value(v.key_kind, v.key);
        auto value = p::decode_header_value(v.value_kind, v.value);
        if (key && value) {
            // Typed values re-encode to their bytes.
            p::byte_buffer kb;
            p::append_header_value_bytes(kb, *value);
            check(kb.size() == v.value.size());
        }
    }
}

// ---- G2 (issue 9) ----------------------------------------------------------------------------

namespace g2 = iss::proto::g2;

// G2 frames through the assembler, split at `cut`; every request decoded re-encodes to bytes
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

void g2_request_roundtrip(p::bytes_view frame) {
    (void)g2::decode_server_frame(frame);
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
                for (const auto& m : r.messages) fs.push_back({m.id, 0, 0, m.origin_timestamp, m.payload, m.user_headers});
                encoded = g2::append_request(again, f->header, g2::send_messages_request{r.stream, r.topic, r.part, fs})
                              .has_value();
            } else {
                encoded = g2::append_request(again, f->header, r).has_value();
            }
        },
        *req);
    if (!encoded) return;
    auto f2 = g2::decode_request_frame(p::bytes_view{again});
    check(f2.has_value());
    auto req2 = g2::decode_request(f2->header, f2->body);
    check(req2.has_value());
    if (!std::holds_alternative<g2::send_messages_batch_view>(*req)) check(*req2 == *req);
}

void g2_bodies(p::bytes_view data) {
    p::poll_reply pr;
    g2::poll_options o;
    o.verify_checksums = true;
    (void)g2::decode_batch_poll_reply(data, pr, o);
    o.producer_fields = true;
    (void)g2::decode_batch_poll_reply(data, pr, o);
    for (const auto& m : pr.messages) (void)m.checksum_ok();
    g2::send_messages_batch_view v;
    (void)g2::decode_send_messages(data, v);
    (void)g2::decode_register_reply(data);
    (void)g2::decode_sync_reply(data);
    (void)g2::decode_topic_reply(data);
    (void)g2::decode_stream_reply(data);
    (void)g2::decode_send_reply(data);
    (void)g2::decode_result_framed(data);
    (void)g2::decode_client_version(data);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    if (size < 2) return 0;
    const unsigned target = bytes[0] % 7;
    const p::bytes_view data{reinterpret_cast<const std::byte*>(bytes + 2), size - 2};
    const std::size_t cut = data.empty() ? 0 : bytes[1] % (data.size() + 1);
    switch (target) {
        case 0: {
            // Split or whole: the same frames (up to the first error).
            const auto split = requests(data, cut);
            const auto whole = requests(data, data.size());
            check(split == whole);
            break;
        }
        case 1: replies(data, cut); break;
        case 2: headers(data); break;
        case 3: {
            p::send_messages_view v;
            if (auto r = p::decode_send_messages(data, v); r) roundtrip(p::request{v});
            break;
        }
        case 4: {
            every_reply_decoder(data);
            (void)p::decode_message(data);
            break;
        }
        case 5: {
            const auto split = g2_frames(data, cut);
            const auto whole = g2_frames(data, data.size());
            check(split == whole);
            for (const auto& f : whole) g2_request_roundtrip(p::bytes_view{f});
            break;
        }
        case 6: g2_bodies(data); break;
    }
    return 0;
}

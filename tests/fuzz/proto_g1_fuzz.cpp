// SPDX-License-Identifier: Apache-2.0
// libFuzzer target over the G1 codecs of proto/ (Iggy 0.8 framing): request and reply frames
// through the frame assembler, every request decoder, every client-side reply decoder, user
// headers, SendMessages bodies and poll replies (with checksum verification).
//
// Input: byte 0 picks the mode, byte 1 the split point for the assembler, the rest is data:
//   0 request frames (server side)      1 reply frames (client side)   2 user-header blocks
//   3 a SendMessages payload            4 one reply payload given to every reply decoder
// Properties checked besides "no crash, no out-of-bounds read, no undefined behaviour":
// - a request stream fed in two pieces yields the same frames (and the same first error) as
//   fed whole;
// - a decoded request that our encoder accepts re-encodes to bytes that decode to the same
//   request; a decode error maps to a non-zero server status;
// - every reply value decoded re-encodes (the server-side encoder) to a payload that decodes to
//   the same value;
// - poll replies: each message's raw bytes are header + payload + user headers, the checksums
//   verified, the decoded count matches, and decode_poll_reply_into agrees with
//   decode_poll_reply;
// - user headers: views stay inside the block and typed values re-encode to their size.
// Built by scripts/fuzz (tests/fuzz/README.md).
#include "proto/commands.hpp"
#include "proto/framing.hpp"
#include "proto/message.hpp"
#include "proto/poll.hpp"
#include "proto/send.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace p = iss::proto;

namespace {

void roundtrip(const p::request& req) {
    p::byte_buffer frame;
    bool encoded = false;
    std::visit(
        [&](const auto& r) {
            using T = std::decay_t<decltype(r)>;
            if constexpr (std::is_same_v<T, p::send_messages_view>) {
                std::vector<p::message_fields> fs;
                for (const auto& m : r.messages)
                    fs.push_back({m.id, 0, 0, m.origin_timestamp, m.payload, m.user_headers});
                encoded = p::append_send_messages(frame, r.stream, r.topic, r.part, fs).has_value();
            } else {
                encoded = p::append_request(frame, r).has_value();
            }
        },
        req);
    if (!encoded) return;  // e.g. an empty messages key: the server accepts it, our encoder does not
    auto again = p::decode_request(p::load_le<std::uint32_t>(frame.data() + 4), p::bytes_view{frame}.subspan(8));
    ISS_FUZZ_CHECK(again.has_value());
    if (std::holds_alternative<p::send_messages_view>(req)) {
        const auto& a = std::get<p::send_messages_view>(req);
        const auto& b = std::get<p::send_messages_view>(*again);
        ISS_FUZZ_CHECK(a.stream == b.stream && a.topic == b.topic && a.part == b.part &&
                       a.messages.size() == b.messages.size());
        for (std::size_t i = 0; i < a.messages.size(); ++i)
            ISS_FUZZ_CHECK(a.messages[i].id == b.messages[i].id &&
                           a.messages[i].payload.size() == b.messages[i].payload.size() &&
                           a.messages[i].user_headers.size() == b.messages[i].user_headers.size());
    } else {
        ISS_FUZZ_CHECK(*again == req);
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
                ISS_FUZZ_CHECK(status != 0);
            }
        }
    }
    return seen;
}

// The payload of a whole OK reply frame built by a server-side encoder.
p::bytes_view reply_payload(const p::byte_buffer& frame) {
    ISS_FUZZ_CHECK(frame.size() >= 8);
    ISS_FUZZ_CHECK(p::load_le<std::uint32_t>(frame.data()) == 0);
    ISS_FUZZ_CHECK(p::load_le<std::uint32_t>(frame.data() + 4) == frame.size() - 8);
    return p::bytes_view{frame}.subspan(8);
}

// decode -> encode -> decode gives the same value (for values our encoder accepts: it refuses
// names the 0.8 server never sends, e.g. empty ones).
template <class Decode, class Encode>
void reply_roundtrip(p::bytes_view payload, Decode decode, Encode encode) {
    auto first = decode(payload);
    if (!first) return;
    p::byte_buffer frame;
    if (!encode(frame, *first)) return;
    auto again = decode(reply_payload(frame));
    ISS_FUZZ_CHECK(again.has_value());
    ISS_FUZZ_CHECK(*again == *first);
}

template <class T>
bool ok(const iss::result<T>& r) {
    return r.has_value();
}

void every_reply_decoder(p::bytes_view payload) {
    (void)p::decode_empty_reply(payload);
    reply_roundtrip(payload, p::decode_user_id_reply, [](p::byte_buffer& f, std::uint32_t id) {
        p::append_user_id_reply(f, id);
        return true;
    });
    reply_roundtrip(payload, p::decode_get_me_reply, [](p::byte_buffer& f, const p::client_details& c) {
        p::append_get_me_reply(f, c);
        return true;
    });
    reply_roundtrip(payload, p::decode_get_stream_reply,
                    [](p::byte_buffer& f, const std::optional<p::stream_details>& s) {
                        if (!s) {
                            p::append_empty_reply(f);
                            return true;
                        }
                        return ok(p::append_stream_reply(f, *s));
                    });
    reply_roundtrip(payload, p::decode_get_streams_reply, [](p::byte_buffer& f, const std::vector<p::stream_info>& s) {
        return ok(p::append_streams_reply(f, s));
    });
    reply_roundtrip(payload, p::decode_create_stream_reply,
                    [](p::byte_buffer& f, const p::stream_details& s) { return ok(p::append_stream_reply(f, s)); });
    reply_roundtrip(payload, p::decode_get_topic_reply,
                    [](p::byte_buffer& f, const std::optional<p::topic_details>& t) {
                        if (!t) {
                            p::append_empty_reply(f);
                            return true;
                        }
                        return ok(p::append_topic_reply(f, *t));
                    });
    reply_roundtrip(payload, p::decode_get_topics_reply, [](p::byte_buffer& f, const std::vector<p::topic_info>& t) {
        return ok(p::append_topics_reply(f, t));
    });
    reply_roundtrip(payload, p::decode_create_topic_reply,
                    [](p::byte_buffer& f, const p::topic_details& t) { return ok(p::append_topic_reply(f, t)); });
    reply_roundtrip(payload, p::decode_get_consumer_group_reply,
                    [](p::byte_buffer& f, const std::optional<p::consumer_group_details>& g) {
                        if (!g) {
                            p::append_empty_reply(f);
                            return true;
                        }
                        return ok(p::append_consumer_group_reply(f, *g));
                    });
    reply_roundtrip(payload, p::decode_get_consumer_groups_reply,
                    [](p::byte_buffer& f, const std::vector<p::consumer_group_info>& g) {
                        return ok(p::append_consumer_groups_reply(f, g));
                    });
    reply_roundtrip(
        payload, p::decode_create_consumer_group_reply,
        [](p::byte_buffer& f, const p::consumer_group_details& g) { return ok(p::append_consumer_group_reply(f, g)); });
    reply_roundtrip(payload, p::decode_get_consumer_offset_reply,
                    [](p::byte_buffer& f, const std::optional<p::consumer_offset_info>& o) {
                        p::append_consumer_offset_reply(f, o);
                        return true;
                    });
    auto poll = p::decode_poll_reply(payload, {.verify_checksums = true});
    if (poll) {
        std::size_t n = 0;
        std::vector<p::header_view> hs;
        for (const auto& m : *poll) {
            ISS_FUZZ_CHECK(m.raw.size() == 64 + m.payload.size() + m.user_headers.size());
            ISS_FUZZ_CHECK(m.checksum_ok());
            (void)p::decode_user_headers(m.user_headers, hs);
            ++n;
        }
        ISS_FUZZ_CHECK(n == poll->size());
    }
    p::poll_reply into;
    auto r = p::decode_poll_reply_into(payload, into, {.verify_checksums = true});
    ISS_FUZZ_CHECK(r.has_value() == poll.has_value());
    if (r) {
        ISS_FUZZ_CHECK(into.partition_id == poll->partition_id && into.current_offset == poll->current_offset);
        ISS_FUZZ_CHECK(into.messages.size() == poll->size());
        std::size_t i = 0;
        for (const auto& m : *poll) {
            ISS_FUZZ_CHECK(into.messages[i].raw.data() == m.raw.data() && into.messages[i].raw.size() == m.raw.size());
            ++i;
        }
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
        ISS_FUZZ_CHECK(v.key.data() >= data.data() && v.value.data() + v.value.size() <= data.data() + data.size());
        auto key = p::decode_header_value(v.key_kind, v.key);
        auto value = p::decode_header_value(v.value_kind, v.value);
        if (key && value) {
            // Typed values re-encode to their bytes.
            p::byte_buffer kb;
            p::append_header_value_bytes(kb, *value);
            ISS_FUZZ_CHECK(kb.size() == v.value.size());
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    if (size < 2) return 0;
    const unsigned mode = bytes[0] % 5;
    const p::bytes_view data{reinterpret_cast<const std::byte*>(bytes + 2), size - 2};
    const std::size_t cut = data.empty() ? 0 : bytes[1] % (data.size() + 1);
    switch (mode) {
        case 0: {
            const auto split = requests(data, cut);
            const auto whole = requests(data, data.size());
            ISS_FUZZ_CHECK(split == whole);
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
    }
    return 0;
}

// SPDX-License-Identifier: Apache-2.0
// Seeded property tests (docs/architecture.md §7: randomness is seeded and the seed printed): random
// requests and poll replies survive encode -> random splits -> assembler -> decode unchanged.
// PROTO_TEST_SEED overrides the seed.
#include "proto/commands.hpp"
#include "proto/poll.hpp"
#include "test_util.hpp"

#include "catch2_compat.hpp"

#include <cstdlib>
#include <iostream>
#include <random>

using namespace iss::proto;
using proto_test::view;

namespace {

std::uint64_t test_seed() {
    static const std::uint64_t seed = [] {
        const char* s = std::getenv("PROTO_TEST_SEED");
        const std::uint64_t v = s != nullptr ? std::strtoull(s, nullptr, 10) : 20261130;
        std::cout << "proto property tests: seed " << v << " (PROTO_TEST_SEED)\n";
        return v;
    }();
    return seed;
}

struct gen {
    std::mt19937_64 rng;
    std::uint64_t u64() { return rng(); }
    std::uint32_t u32() { return static_cast<std::uint32_t>(rng()); }
    std::size_t below(std::size_t n) { return static_cast<std::size_t>(rng() % n); }
    bool coin() { return (rng() & 1) != 0; }
    std::string text(std::size_t min, std::size_t max) {
        std::string s(min + below(max - min + 1), 'a');
        for (auto& c : s) c = static_cast<char>('a' + below(26));
        return s;
    }
    identifier id() { return coin() ? identifier::numeric(u32()) : identifier::named(text(1, 40)); }
    std::optional<std::uint32_t> partition() { return coin() ? std::optional<std::uint32_t>{u32()} : std::nullopt; }
    consumer cons() { return coin() ? consumer::single(id()) : consumer::group(id()); }
    polling_strategy strategy() { return {static_cast<polling_kind>(1 + below(5)), u64()}; }

    request any_request() {
        switch (below(12)) {
            case 0: return ping_request{};
            case 1: return login_user_request{text(1, 50), text(0, 100), text(0, 20), text(0, 20)};
            case 2: return login_with_token_request{text(1, 255)};
            case 3: return poll_messages_request{cons(), id(), id(), partition(), strategy(), u32(), coin()};
            case 4: return store_consumer_offset_request{cons(), id(), id(), partition(), u64()};
            case 5: return get_consumer_offset_request{cons(), id(), id(), partition()};
            case 6: return join_consumer_group_request{id(), id(), id()};
            case 7: return leave_consumer_group_request{id(), id(), id()};
            case 8:
                return create_topic_request{id(),        u32() % 1001, static_cast<std::uint8_t>(1 + below(2)),
                                            u64(),       u64(),        static_cast<std::uint8_t>(below(4)),
                                            text(1, 255)};
            case 9: return get_topic_request{id(), id()};
            case 10: return create_consumer_group_request{id(), id(), text(1, 255)};
            default: return get_consumer_group_request{id(), id(), id()};
        }
    }
};

}  // namespace

TEST_CASE("random request streams, split at random points, decode to what was encoded", "[proto][property]") {
    gen g{std::mt19937_64{test_seed()}};
    for (int round = 0; round < 200; ++round) {
        std::vector<request> sent;
        byte_buffer stream;
        const std::size_t n = 1 + g.below(8);
        for (std::size_t i = 0; i < n; ++i) {
            sent.push_back(g.any_request());
            std::visit(
                [&](const auto& r) {
                    using T = std::decay_t<decltype(r)>;
                    if constexpr (!std::is_same_v<T, send_messages_view>)
                        REQUIRE(append_request(stream, r).has_value());
                },
                sent.back());
        }
        frame_assembler a{frame_direction::request};
        std::vector<request> got;
        std::size_t pos = 0;
        while (pos < stream.size()) {
            const std::size_t k = std::min(stream.size() - pos, 1 + g.below(64));
            a.feed(bytes_view{stream}.subspan(pos, k));
            pos += k;
            while (auto f = a.next_request().value()) got.push_back(decode_request(f->code, f->payload).value());
        }
        REQUIRE(got.size() == sent.size());
        for (std::size_t i = 0; i < sent.size(); ++i) CHECK(got[i] == sent[i]);
    }
}

TEST_CASE("random poll replies decode to the messages written, split at random points", "[proto][property]") {
    gen g{std::mt19937_64{test_seed() + 1}};
    for (int round = 0; round < 100; ++round) {
        const std::size_t count = g.below(20);
        std::vector<std::string> payloads;
        std::vector<byte_buffer> headers;
        for (std::size_t i = 0; i < count; ++i) {
            payloads.push_back(g.text(0, 300));
            byte_buffer h;
            for (std::size_t k = g.below(4); k > 0; --k) {
                const std::string key = g.text(1, 10);
                const std::uint64_t v = g.u64();
                REQUIRE(append_user_header(h, header_kind::string, as_bytes(key), header_kind::uint64,
                                           bytes_view{reinterpret_cast<const std::byte*>(&v), 8})
                            .has_value());
            }
            headers.push_back(std::move(h));
        }
        byte_buffer frame;
        const std::size_t start = begin_reply(frame);
        poll_reply_writer w{frame};
        const std::uint32_t partition = g.u32();
        w.begin(partition, 1000 + count);
        for (std::size_t i = 0; i < count; ++i)
            REQUIRE(w.add({g.u64(), 1000 + i, 1767225600000000ULL, g.u64(), as_bytes(payloads[i]), view(headers[i])})
                        .has_value());
        w.finish();
        finish_reply(frame, start);

        frame_assembler a{frame_direction::reply};
        std::size_t pos = 0;
        std::optional<reply_frame> f;
        while (!f) {
            REQUIRE(pos < frame.size());
            const std::size_t k = std::min(frame.size() - pos, 1 + g.below(256));
            a.feed(bytes_view{frame}.subspan(pos, k));
            pos += k;
            f = a.next_reply().value();
        }
        CHECK(pos == frame.size());
        auto r = decode_poll_reply(ok_payload(*f).value(), {.verify_checksums = true});
        REQUIRE(r.has_value());
        CHECK(r->partition_id == partition);
        REQUIRE(r->size() == count);
        std::size_t i = 0;
        for (const auto& m : *r) {
            CHECK(m.offset == 1000 + i);
            CHECK(as_text(m.payload) == payloads[i]);
            CHECK(validate_user_headers(m.user_headers).has_value());
            CHECK(proto_test::to_hex(m.user_headers) == proto_test::to_hex(view(headers[i])));
            ++i;
        }
    }
}

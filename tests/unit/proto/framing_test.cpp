// SPDX-License-Identifier: Apache-2.0
#include "proto/framing.hpp"

#include "proto/commands.hpp"
#include "test_util.hpp"

#include "catch2_compat.hpp"

using namespace iss::proto;
using proto_test::from_hex;
using proto_test::to_hex;
using proto_test::view;

namespace {

// Feeds `stream` to a fresh assembler in pieces of the given sizes, collecting frames as hex.
std::vector<std::string> collect_requests(bytes_view stream, std::size_t split) {
    frame_assembler a{frame_direction::request};
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos < stream.size()) {
        const std::size_t n = std::min(split, stream.size() - pos);
        a.feed(stream.subspan(pos, n));
        pos += n;
        for (;;) {
            auto f = a.next_request();
            REQUIRE(f.has_value());
            if (!*f) break;
            out.push_back(std::to_string((*f)->code) + ":" + to_hex((*f)->payload));
        }
    }
    CHECK(a.buffered() == 0);
    return out;
}

}  // namespace

TEST_CASE("command codes and names", "[proto][framing]") {
    CHECK(static_cast<std::uint32_t>(command::poll_messages) == 100);
    CHECK(command_name(command::store_consumer_offset) == "StoreConsumerOffset");
    CHECK(command_name(606) == "SyncConsumerGroup");  // G2 only: named, but not a G1 command
    CHECK_FALSE(is_known_command(606));               // SyncConsumerGroup does not exist in 0.8.0
    CHECK(command_name(40) == "LoginRegister");
    CHECK_FALSE(is_known_command(40));
    CHECK(command_name(7) == "Unknown");
    CHECK(is_known_command(605));
}

TEST_CASE("request frames: length counts the code, not itself (ping capture)", "[proto][framing]") {
    byte_buffer b;
    REQUIRE(append_request(b, ping_request{}).has_value());
    CHECK(to_hex(view(b)) == "0400000001000000");
}

TEST_CASE("reply frames: status, length, payload; errors have no payload (V1 replies)", "[proto][framing]") {
    byte_buffer ok;
    append_user_id_reply(ok, 0);
    CHECK(to_hex(view(ok)) == "000000000400000000000000");
    byte_buffer bad;
    append_error_reply(bad, 42);
    CHECK(to_hex(view(bad)) == "2a00000000000000");

    frame_assembler a{frame_direction::reply};
    a.feed(view(bad));
    auto f = a.next_reply();
    REQUIRE(f.has_value());
    REQUIRE(f->has_value());
    CHECK_FALSE((*f)->ok());
    auto p = ok_payload(**f);
    REQUIRE(p.has_error());
    CHECK(p.error() == server_errc::invalid_credentials);
    CHECK(p.error().message().find("InvalidCredentials") != std::string::npos);
}

TEST_CASE("a stream of requests split at every byte boundary gives the same frames", "[proto][framing][split]") {
    byte_buffer stream;
    REQUIRE(append_request(stream, ping_request{}).has_value());
    REQUIRE(append_request(stream, login_user_request{"iggy", "iggy", "0.10.0", ""}).has_value());
    poll_messages_request poll{consumer::group(identifier::named("sink")),
                               identifier::numeric(1),
                               identifier::numeric(0),
                               0u,
                               polling_strategy::next(),
                               100,
                               false};
    REQUIRE(append_request(stream, poll).has_value());
    REQUIRE(append_request(stream, logout_user_request{}).has_value());
    const auto whole = collect_requests(view(stream), stream.size());
    REQUIRE(whole.size() == 4);
    CHECK(whole[0] == "1:");
    CHECK(whole[3] == "39:");
    for (std::size_t split = 1; split < stream.size(); ++split) {
        INFO("split " << split);
        CHECK(collect_requests(view(stream), split) == whole);
    }
    // Two-piece splits at every boundary.
    for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
        frame_assembler a{frame_direction::request};
        std::vector<std::string> got;
        for (auto piece : {bytes_view{stream}.first(cut), bytes_view{stream}.subspan(cut)}) {
            a.feed(piece);
            while (auto f = a.next_request().value()) got.push_back(std::to_string(f->code) + ":" + to_hex(f->payload));
        }
        CHECK(got == whole);
    }
}

TEST_CASE("replies read into the assembler directly with prepare/commit and bytes_wanted", "[proto][framing][split]") {
    byte_buffer stream;
    append_user_id_reply(stream, 7);
    append_empty_reply(stream);
    append_error_reply(stream, 3007);
    frame_assembler a{frame_direction::reply};
    std::size_t pos = 0;
    std::vector<std::uint32_t> statuses;
    std::vector<std::size_t> sizes;
    while (pos < stream.size()) {
        const std::size_t want = a.bytes_wanted();
        REQUIRE(want > 0);
        const std::size_t n = std::min({want, std::size_t{3}, stream.size() - pos});
        auto space = a.prepare(n);
        std::memcpy(space.data(), stream.data() + pos, n);
        a.commit(n);
        pos += n;
        while (auto f = a.next_reply().value()) {
            statuses.push_back(f->status);
            sizes.push_back(f->payload.size());
        }
    }
    CHECK(statuses == std::vector<std::uint32_t>{0, 0, 3007});
    CHECK(sizes == std::vector<std::size_t>{4, 0, 0});
}

TEST_CASE("exchange_storage hands the buffer of the last reply over; the bytes after it go on in the new one",
          "[proto][framing]") {
    byte_buffer stream;
    append_user_id_reply(stream, 7);
    append_user_id_reply(stream, 9);
    frame_assembler a{frame_direction::reply};
    // The first reply whole and three bytes of the second.
    a.feed(bytes_view{stream}.first(12 + 3));
    auto first = a.next_reply().value();
    REQUIRE(first);
    const bytes_view payload = first->payload;
    CHECK(to_hex(payload) == "07000000");
    byte_buffer fresh(64, std::byte{0xee});
    const byte_buffer owned = a.exchange_storage(std::move(fresh));
    // The handed-over buffer still holds the first reply where its view points, whatever the
    // assembler does next.
    CHECK(payload.data() >= owned.data());
    CHECK(payload.data() + payload.size() <= owned.data() + owned.size());
    a.feed(bytes_view{stream}.subspan(15));
    auto second = a.next_reply().value();
    REQUIRE(second);
    CHECK(to_hex(second->payload) == "09000000");
    CHECK(to_hex(payload) == "07000000");
    CHECK(a.buffered() == 12);  // the second reply, until the next call
    CHECK_FALSE(a.next_reply().value());
    CHECK(a.buffered() == 0);
}

TEST_CASE("oversized and undersized frames stop the assembler with an error naming the length",
          "[proto][framing][hostile]") {
    {
        frame_assembler a{frame_direction::request};
        a.feed(view(from_hex("03000000 01000000")));  // length 3 < 4
        auto f = a.next_request();
        REQUIRE(f.has_error());
        CHECK(f.error() == errc::invalid_length);
        CHECK(f.error().detail().rfind("request.length", 0) == 0);
        a.feed(view(from_hex("04000000 01000000")));
        CHECK(a.next_request().has_error());  // stays failed: the stream is out of step
    }
    {
        // 10 MiB + 1 byte of control payload (length counts the code).
        frame_assembler a{frame_direction::request};
        byte_buffer h;
        writer w{h};
        w.u32(static_cast<std::uint32_t>(max_control_payload + 1 + 4));
        w.u32(200);
        a.feed(view(h));
        auto f = a.next_request();
        REQUIRE(f.has_error());
        CHECK(f.error() == errc::limit_exceeded);
        CHECK(f.error().detail().find("10 MiB") != std::string::npos);
    }
    {
        // Exactly 10 MiB is fine (the assembler waits for the bytes).
        frame_assembler a{frame_direction::request};
        byte_buffer h;
        writer w{h};
        w.u32(static_cast<std::uint32_t>(max_control_payload + 4));
        w.u32(200);
        a.feed(view(h));
        auto f = a.next_request();
        REQUIRE(f.has_value());
        CHECK_FALSE(f->has_value());
        CHECK(a.bytes_wanted() == max_control_payload);
    }
    {
        // SendMessages has its own (caller-given) limit.
        frame_assembler a{frame_direction::request, frame_limits{.max_send_payload = 100}};
        a.feed(view(from_hex("69000000 65000000")));  // payload 101
        auto f = a.next_request();
        REQUIRE(f.has_error());
        CHECK(f.error().detail().find("SendMessages") != std::string::npos);
    }
    {
        frame_assembler a{frame_direction::reply, frame_limits{.max_reply_payload = 16}};
        a.feed(view(from_hex("00000000 11000000")));
        auto f = a.next_reply();
        REQUIRE(f.has_error());
        CHECK(f.error() == errc::limit_exceeded);
        CHECK(f.error().detail().rfind("reply.length", 0) == 0);
    }
}

TEST_CASE("the session transcript splits into its frames at any boundary", "[proto][framing][split][fixture]") {
    // Every C>S frame of transcript-session.txt, concatenated, then re-split.
    const std::string text = proto_test::read_text(proto_test::g1_dir() / "transcript-session.txt");
    byte_buffer requests;
    std::size_t count = 0;
    std::size_t pos = 0;
    while ((pos = text.find("C>S #", pos)) != std::string::npos) {
        const std::size_t line = text.find('\n', pos) + 1;
        const std::size_t end = text.find('\n', line);
        const auto frame = from_hex(text.substr(line, end - line));
        requests.insert(requests.end(), frame.begin(), frame.end());
        ++count;
        pos = end;
    }
    REQUIRE(count >= 8);
    const auto whole = collect_requests(view(requests), requests.size());
    CHECK(whole.size() == count);
    for (std::size_t split = 1; split <= 64; ++split) CHECK(collect_requests(view(requests), split) == whole);
}

TEST_CASE("a reply stream split at every byte boundary gives the same replies", "[proto][framing][split]") {
    byte_buffer stream;
    append_user_id_reply(stream, 0);
    append_error_reply(stream, 42);
    REQUIRE(append_topic_reply(stream, topic_details{{0, 1, 0, 2, 1, 3, 1, 4, 5, "t"}, {{0, 1, 1, 6, 2048, 7}}})
                .has_value());
    append_consumer_offset_reply(stream, std::nullopt);
    auto collect = [&](std::size_t split) {
        frame_assembler a{frame_direction::reply};
        std::vector<std::string> out;
        for (std::size_t pos = 0; pos < stream.size(); pos += split) {
            a.feed(bytes_view{stream}.subspan(pos, std::min(split, stream.size() - pos)));
            while (auto f = a.next_reply().value()) out.push_back(std::to_string(f->status) + ":" + to_hex(f->payload));
        }
        CHECK(a.buffered() == 0);
        return out;
    };
    const auto whole = collect(stream.size());
    REQUIRE(whole.size() == 4);
    CHECK(whole[1] == "42:");
    CHECK(whole[3] == "0:");
    for (std::size_t split = 1; split < stream.size(); ++split) CHECK(collect(split) == whole);
}

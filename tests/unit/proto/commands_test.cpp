// SPDX-License-Identifier: Apache-2.0
#include "proto/commands.hpp"

#include "proto/poll.hpp"
#include "test_util.hpp"

#include "catch2_compat.hpp"

#include <filesystem>
#include <limits>
#include <map>
#include <set>

using namespace iss::proto;
using proto_test::from_hex;
using proto_test::to_hex;
using proto_test::view;

namespace {

template <class R>
std::string frame_hex(const R& req) {
    byte_buffer b;
    auto r = append_request(b, req);
    REQUIRE(r.has_value());
    return to_hex(view(b));
}

// Decodes a whole request frame (header checked) into the request variant.
request decode_frame(const byte_buffer& frame) {
    frame_assembler a{frame_direction::request};
    a.feed(view(frame));
    auto f = a.next_request();
    REQUIRE(f.has_value());
    REQUIRE(f->has_value());
    CHECK(a.buffered() == (*f)->payload.size() + 8);
    auto r = decode_request((*f)->code, (*f)->payload);
    if (!r) FAIL(r.error().message());
    return *r;
}

constexpr std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();

}  // namespace

TEST_CASE("V1 LoginUser encodes to the 32 bytes of docs/protocol.md", "[proto][commands][vector]") {
    CHECK(frame_hex(login_user_request{"iggy", "iggy", "0.10.0", ""}) ==
          "1c000000"
          "26000000"
          "0469676779"
          "0469676779"
          "06000000302e31302e30"
          "00000000");
    byte_buffer ok;
    append_user_id_reply(ok, 0);
    CHECK(to_hex(view(ok)) ==
          "00000000"
          "04000000"
          "00000000");
    CHECK(decode_user_id_reply(bytes_view{ok}.subspan(8)).value() == 0);
}

TEST_CASE("Rust login_user wire_layout_no_optionals, as data", "[proto][commands]") {
    byte_buffer b;
    writer w{b};
    REQUIRE(encode_body(w, login_user_request{"u", "p", "", ""}).has_value());
    CHECK(to_hex(view(b)) ==
          "0175"
          "0170"
          "00000000"
          "00000000");
    // Both u32 length fields are required: without them the server answers 3.
    auto r = decode_request(38, view(from_hex("0175 0170")));
    REQUIRE(r.has_error());
    CHECK(r.error() == errc::truncated);
    CHECK(r.error().detail() == "login_user.version");
    CHECK(server_status_for_decode_error(r.error()) == 3);
    // An empty username is a validation error (4).
    r = decode_request(38, view(from_hex("00 0170 00000000 00000000")));
    REQUIRE(r.has_error());
    CHECK(server_status_for_decode_error(r.error()) == 4);
}

TEST_CASE("V2 PollMessages encodes to the 46 bytes of docs/protocol.md", "[proto][commands][vector]") {
    poll_messages_request p{consumer::group(identifier::named("sink")),
                            identifier::numeric(1),
                            identifier::numeric(0),
                            0u,
                            polling_strategy::next(),
                            100,
                            false};
    const std::string v2 =
        "2a000000"
        "64000000"
        "02"
        "020473696e6b"
        "010401000000"
        "010400000000"
        "0100000000"
        "050000000000000000"
        "64000000"
        "00";
    CHECK(frame_hex(p) == v2);
    CHECK(std::get<poll_messages_request>(decode_frame(from_hex(v2))) == p);
}

TEST_CASE("Go TestSerialize_TcpFetchMessagesRequest, as data", "[proto][commands]") {
    poll_messages_request p{consumer::single(identifier::numeric(42)),
                            identifier::named("test_stream_id"),
                            identifier::named("test_topic_id"),
                            123u,
                            polling_strategy::first(),
                            100,
                            true};
    byte_buffer b;
    writer w{b};
    REQUIRE(encode_body(w, p).has_value());
    CHECK(to_hex(view(b)) ==
          "01"
          "01042a000000"
          "020e746573745f73747265616d5f6964"
          "020d746573745f746f7069635f6964"
          "017b000000"
          "030000000000000000"
          "64000000"
          "01");
}

TEST_CASE("Rust poll_messages partition_none_encodes_zero_bytes, as data", "[proto][commands]") {
    poll_messages_request p{consumer::single(identifier::numeric(1)),
                            identifier::numeric(1),
                            identifier::numeric(1),
                            std::nullopt,
                            polling_strategy::first(),
                            1,
                            false};
    byte_buffer b;
    writer w{b};
    REQUIRE(encode_body(w, p).has_value());
    // consumer (7) + stream (6) + topic (6), then the 5-byte partition: flag 0 and a zero u32.
    CHECK(to_hex(view(b)) ==
          "01010401000000"
          "010401000000"
          "010401000000"
          "0000000000"
          "030000000000000000"
          "01000000"
          "00");
}

TEST_CASE("V4 StoreConsumerOffset and its GetConsumerOffset replies", "[proto][commands][vector]") {
    store_consumer_offset_request s{consumer::group(identifier::named("sink")), identifier::numeric(1),
                                    identifier::numeric(0), 0u, 5};
    const std::string v4 =
        "24000000"
        "79000000"
        "02020473696e6b"
        "010401000000"
        "010400000000"
        "0100000000"
        "0500000000000000";
    CHECK(frame_hex(s) == v4);
    CHECK(std::get<store_consumer_offset_request>(decode_frame(from_hex(v4))) == s);

    byte_buffer reply;
    append_consumer_offset_reply(reply, consumer_offset_info{0, 5, 5});
    CHECK(to_hex(view(reply)) ==
          "00000000"
          "14000000"
          "00000000"
          "0500000000000000"
          "0500000000000000");
    auto o = decode_get_consumer_offset_reply(bytes_view{reply}.subspan(8));
    REQUIRE(o.has_value());
    REQUIRE(o->has_value());
    CHECK(**o == consumer_offset_info{0, 5, 5});

    byte_buffer none;
    append_consumer_offset_reply(none, std::nullopt);
    CHECK(to_hex(view(none)) == "0000000000000000");
    auto n = decode_get_consumer_offset_reply(bytes_view{none}.subspan(8));
    REQUIRE(n.has_value());
    CHECK_FALSE(n->has_value());  // not found: distinct from an error
}

TEST_CASE("Rust create_consumer_group wire_compat_byte_layout and offset_encoding, as data", "[proto][commands]") {
    byte_buffer b;
    writer w{b};
    REQUIRE(encode_body(w, create_consumer_group_request{identifier::numeric(1), identifier::numeric(2), "grp"})
                .has_value());
    CHECK(to_hex(view(b)) ==
          "010401000000"
          "010402000000"
          "03677270");

    store_consumer_offset_request s{consumer::single(identifier::numeric(1)), identifier::numeric(1),
                                    identifier::numeric(1), 0u, 0x0102030405060708ULL};
    byte_buffer f;
    REQUIRE(append_request(f, s).has_value());
    CHECK(std::get<store_consumer_offset_request>(decode_frame(f)).offset == 0x0102030405060708ULL);
}

TEST_CASE("every request capture decodes to the values of its .txt and re-encodes to its bytes",
          "[proto][commands][fixture]") {
    const auto dir = proto_test::g1_dir() / "requests";
    const auto test_stream = identifier::named("test-stream");
    const auto test_topic = identifier::named("test-topic");
    const auto test_group = identifier::named("test-group");
    // The values each .txt names, restated. Every value is given, so each one re-encodes.
    std::map<std::string, request> expected = {
        {"ping", ping_request{}},
        {"login_user", login_user_request{"iggy", "iggy", "", ""}},
        {"login_user_with_version", login_user_request{"iggy", "iggy", "0.10.0", ""}},
        {"login_with_personal_access_token", login_with_token_request{"iggy-pat-0123456789abcdef"}},
        {"create_topic", create_topic_request{identifier::numeric(1), 3, 1, 0, 0, 1, "new-topic"}},
        {"get_consumer_offset_single", get_consumer_offset_request{consumer::single(identifier::numeric(0)),
                                                                   identifier::numeric(1), identifier::numeric(0), 1u}},
        {"store_consumer_offset_single",
         store_consumer_offset_request{consumer::single(identifier::numeric(0)), identifier::numeric(1),
                                       identifier::numeric(0), 1u, 6}},
        {"join_consumer_group", join_consumer_group_request{test_stream, test_topic, test_group}},
        {"leave_consumer_group", leave_consumer_group_request{test_stream, test_topic, test_group}},
        {"poll_messages_group_next_autocommit_false",
         poll_messages_request{consumer::group(test_group), identifier::numeric(1), identifier::numeric(0),
                               std::nullopt, polling_strategy::next(), 10, false}},
        {"poll_messages_single_offset_autocommit_false",
         poll_messages_request{consumer::single(identifier::numeric(0)), identifier::numeric(1), identifier::numeric(0),
                               1u, polling_strategy::at_offset(5), 10, false}},
    };
    const std::set<std::string> send_captures = {"send_messages_balanced", "send_messages_messages_key",
                                                 "send_messages_partition_id"};
    std::size_t seen = 0;
    for (const auto& entry : std::filesystem::directory_iterator{dir}) {
        if (entry.path().extension() != ".hex") continue;
        const std::string name = entry.path().stem().string();
        INFO(name);
        ++seen;
        if (send_captures.count(name) != 0) continue;  // send_test.cpp
        const auto bytes = proto_test::read_hex_file(entry.path());
        auto it = expected.find(name);
        REQUIRE(it != expected.end());  // a new capture needs its expected values here
        const request got = decode_frame(bytes);
        CHECK(request_code(got) == request_code(it->second));
        CHECK(got == it->second);
        byte_buffer again;
        std::visit(
            [&](const auto& req) {
                using T = std::decay_t<decltype(req)>;
                if constexpr (!std::is_same_v<T, send_messages_view>) REQUIRE(append_request(again, req).has_value());
            },
            it->second);
        CHECK(to_hex(view(again)) == to_hex(view(bytes)));
    }
    CHECK(seen == expected.size() + send_captures.size());
}

TEST_CASE("the get_topic reply fixture decodes with the server's layout", "[proto][commands][fixture]") {
    const auto frame = proto_test::read_hex_file(proto_test::g1_dir() / "responses" / "get_topic.hex");
    frame_assembler a{frame_direction::reply};
    a.feed(view(frame));
    auto f = a.next_reply().value();
    REQUIRE(f.has_value());
    auto t = decode_get_topic_reply(ok_payload(*f).value());
    REQUIRE(t.has_value());
    REQUIRE(t->has_value());
    const topic_details& d = **t;
    CHECK(d.topic.id == 0);
    CHECK(d.topic.name == "test-topic");
    CHECK(d.topic.created_at == 1767225600000000ULL);
    CHECK(d.topic.partitions_count == 3);
    // parsed.json (Node SDK 0.8.0) misreads these two; the server layout gives:
    CHECK(d.topic.message_expiry == u64_max);
    CHECK(d.topic.compression == 1);
    CHECK(d.topic.max_topic_size == u64_max);
    CHECK(d.topic.replication_factor == 1);
    CHECK(d.topic.size_bytes == 4096);
    CHECK(d.topic.messages_count == 12);
    REQUIRE(d.partitions.size() == 3);
    const partition_info want[] = {{0, 1767225600000000ULL, 1, 6, 2048, 7},
                                   {1, 1767225600000000ULL, 1, 3, 1024, 4},
                                   {2, 1767225600000000ULL, 1, 0, 1024, 1}};
    for (std::size_t i = 0; i < 3; ++i) CHECK(d.partitions[i] == want[i]);
    // And the server-side encoder writes the same bytes.
    byte_buffer again;
    REQUIRE(append_topic_reply(again, d).has_value());
    CHECK(to_hex(view(again)) == to_hex(view(frame)));
}

TEST_CASE("the get_consumer_offset reply fixture", "[proto][commands][fixture]") {
    const auto frame = proto_test::read_hex_file(proto_test::g1_dir() / "responses" / "get_consumer_offset_single.hex");
    auto o = decode_get_consumer_offset_reply(bytes_view{frame}.subspan(8));
    REQUIRE(o.has_value());
    REQUIRE(o->has_value());
    CHECK(**o == consumer_offset_info{1, 6, 5});
}

TEST_CASE("every frame of the session transcript decodes, both directions", "[proto][commands][fixture]") {
    const std::string text = proto_test::read_text(proto_test::g1_dir() / "transcript-session.txt");
    std::size_t pos = 0;
    std::uint32_t last_code = 0;
    std::size_t requests = 0, replies = 0;
    while (true) {
        const std::size_t c = text.find("C>S #", pos);
        const std::size_t s = text.find("S>C #", pos);
        if (c == std::string::npos && s == std::string::npos) break;
        const bool is_request = s == std::string::npos || (c != std::string::npos && c < s);
        const std::size_t at = is_request ? c : s;
        const std::size_t line = text.find('\n', at) + 1;
        const std::size_t end = text.find('\n', line);
        const auto frame = from_hex(text.substr(line, end - line));
        pos = end;
        INFO(text.substr(at, line - at));
        if (is_request) {
            const request r = decode_frame(frame);
            last_code = static_cast<std::uint32_t>(request_code(r));
            ++requests;
            continue;
        }
        ++replies;
        frame_assembler a{frame_direction::reply};
        a.feed(view(frame));
        auto f = a.next_reply().value();
        REQUIRE(f.has_value());
        auto payload = ok_payload(*f);
        REQUIRE(payload.has_value());
        switch (static_cast<command>(last_code)) {
            case command::login_user: CHECK(decode_user_id_reply(*payload).value() == 0); break;
            case command::get_stream: {
                auto st = decode_get_stream_reply(*payload).value();
                REQUIRE(st.has_value());
                CHECK(st->stream.name == "test-stream");
                CHECK(st->stream.id == 1);
                REQUIRE(st->topics.size() == 1);
                CHECK(st->topics[0].name == "test-topic");
                CHECK(st->topics[0].compression == 1);
                break;
            }
            case command::get_topic: CHECK(decode_get_topic_reply(*payload).value()->partitions.size() == 3); break;
            case command::poll_messages: {
                auto p = decode_poll_reply(*payload, {.verify_checksums = true});
                REQUIRE(p.has_value());
                CHECK(p->partition_id == 0);
                CHECK(p->size() == 2);
                break;
            }
            default: CHECK(decode_empty_reply(*payload).has_value()); break;
        }
    }
    CHECK(requests == replies);
    CHECK(requests >= 8);
}

TEST_CASE("not-found replies decode to nullopt or empty lists, never to an error", "[proto][commands]") {
    const bytes_view empty{};
    CHECK_FALSE(decode_get_stream_reply(empty).value().has_value());
    CHECK_FALSE(decode_get_topic_reply(empty).value().has_value());
    CHECK_FALSE(decode_get_consumer_group_reply(empty).value().has_value());
    CHECK_FALSE(decode_get_consumer_offset_reply(empty).value().has_value());
    CHECK(decode_get_streams_reply(empty).value().empty());
    CHECK(decode_get_topics_reply(empty).value().empty());
    CHECK(decode_get_consumer_groups_reply(empty).value().empty());
    // Where a record is required, an empty payload is an error.
    CHECK(decode_create_stream_reply(empty).has_error());
    CHECK(decode_user_id_reply(empty).has_error());
}

TEST_CASE("records round-trip through the server encoders and client decoders", "[proto][commands]") {
    stream_details s{{3, 1767225600000000ULL, 0, 4096, 12, "orders"},
                     {{0, 1, 2, u64_max, 1, u64_max, 1, 2048, 7, "a"}, {1, 2, 1, 1000, 2, 5ULL << 30, 1, 0, 0, "b"}}};
    byte_buffer b;
    REQUIRE(append_stream_reply(b, s).has_value());
    auto got = decode_get_stream_reply(bytes_view{b}.subspan(8)).value();
    REQUIRE(got.has_value());
    s.stream.topics_count = 2;
    CHECK(*got == s);

    const std::vector<stream_info> streams = {{0, 1, 0, 0, 0, "x"}, {1, 2, 1, 3, 4, "y"}};
    b.clear();
    REQUIRE(append_streams_reply(b, streams).has_value());
    CHECK(decode_get_streams_reply(bytes_view{b}.subspan(8)).value() == streams);

    const std::vector<topic_info> topics = {{0, 1, 2, 3, 2, 5, 1, 6, 7, "t"}};
    b.clear();
    REQUIRE(append_topics_reply(b, topics).has_value());
    CHECK(decode_get_topics_reply(bytes_view{b}.subspan(8)).value() == topics);

    consumer_group_details g{{0, 6, 2, "sink"}, {{0, {0, 1, 2, 5}}, {1, {3, 4}}}};
    b.clear();
    REQUIRE(append_consumer_group_reply(b, g).has_value());
    CHECK(decode_get_consumer_group_reply(bytes_view{b}.subspan(8)).value() == g);

    const std::vector<consumer_group_info> groups = {{0, 6, 2, "sink"}, {1, 6, 0, "other"}};
    b.clear();
    REQUIRE(append_consumer_groups_reply(b, groups).has_value());
    CHECK(decode_get_consumer_groups_reply(bytes_view{b}.subspan(8)).value() == groups);

    client_details me{123456, 1, 1, "127.0.0.1:54321", {{1, 0, 0}, {2, 3, 4}}};
    b.clear();
    append_get_me_reply(b, me);
    CHECK(decode_get_me_reply(bytes_view{b}.subspan(8)).value() == me);

    // CreateConsumerGroup replies with a group without members.
    b.clear();
    REQUIRE(append_consumer_group_reply(b, consumer_group_details{{0, 3, 0, "g"}, {}}).has_value());
    CHECK(decode_create_consumer_group_reply(bytes_view{b}.subspan(8)).value().group.name == "g");

    // A name the protocol cannot carry is refused and nothing is written.
    b.clear();
    CHECK(append_streams_reply(b, std::vector<stream_info>{{0, 0, 0, 0, 0, ""}}).error() == errc::invalid_length);
    CHECK(b.empty());
}

TEST_CASE("every request type round-trips, and every truncation of it is an error", "[proto][commands][hostile]") {
    const auto s = identifier::named("orders");
    const auto t = identifier::numeric(0);
    const auto g = identifier::named("sink");
    const std::vector<request> all = {
        ping_request{},
        get_me_request{},
        login_user_request{"iggy", "secret", "0.10.0", "ctx"},
        logout_user_request{},
        login_with_token_request{"tok"},
        poll_messages_request{consumer::group(g), s, t, std::nullopt, polling_strategy::at_timestamp(99), 1000, true},
        get_consumer_offset_request{consumer::single(identifier::named("c")), s, t, 2u},
        store_consumer_offset_request{consumer::group(g), s, t, 2u, 77},
        delete_consumer_offset_request{consumer::group(g), s, t, std::nullopt},
        get_stream_request{s},
        get_streams_request{},
        create_stream_request{"orders"},
        delete_stream_request{s},
        get_topic_request{s, t},
        get_topics_request{s},
        create_topic_request{s, 3, 2, u64_max, u64_max, 0, "topic"},
        delete_topic_request{s, t},
        create_partitions_request{s, t, 5},
        delete_partitions_request{s, t, 1},
        get_consumer_group_request{s, t, g},
        get_consumer_groups_request{s, t},
        create_consumer_group_request{s, t, "sink"},
        delete_consumer_group_request{s, t, g},
        join_consumer_group_request{s, t, g},
        leave_consumer_group_request{s, t, g},
    };
    std::set<command> codes;
    for (const auto& req : all) {
        const command code = request_code(req);
        INFO(command_name(code));
        codes.insert(code);
        byte_buffer frame;
        std::visit(
            [&](const auto& r) {
                using T = std::decay_t<decltype(r)>;
                if constexpr (!std::is_same_v<T, send_messages_view>) REQUIRE(append_request(frame, r).has_value());
            },
            req);
        CHECK(decode_frame(frame) == req);
        const bytes_view payload = bytes_view{frame}.subspan(8);
        for (std::size_t n = 0; n < payload.size(); ++n) {
            auto r = decode_request(static_cast<std::uint32_t>(code), payload.first(n));
            CHECK(r.has_error());
        }
        // Extra bytes after the body are ignored, as by the server.
        byte_buffer longer{payload.begin(), payload.end()};
        longer.push_back(std::byte{0x55});
        CHECK(decode_request(static_cast<std::uint32_t>(code), view(longer)).value() == req);
    }
    CHECK(codes.size() == all.size());
    auto unknown = decode_request(606, {});
    REQUIRE(unknown.has_error());
    CHECK(unknown.error() == errc::unexpected_code);
    CHECK(server_status_for_decode_error(unknown.error()) == 3);
}

TEST_CASE("encoders refuse names the protocol cannot carry and leave the buffer unchanged", "[proto][commands]") {
    byte_buffer b;
    CHECK(append_request(b, create_stream_request{""}).error() == errc::invalid_length);
    CHECK(append_request(b, create_stream_request{std::string(256, 'a')}).error() == errc::invalid_length);
    CHECK(append_request(b, login_user_request{"", "p", "", ""}).error() == errc::invalid_length);
    CHECK(append_request(b, login_user_request{"u", std::string(256, 'p'), "", ""}).error() == errc::invalid_length);
    CHECK(append_request(b, get_stream_request{identifier::named("")}).error() == errc::invalid_length);
    CHECK(b.empty());
    const auto e = append_request(b, get_stream_request{identifier::named("")}).error();
    CHECK(e.detail().rfind("stream_id", 0) == 0);
}

TEST_CASE("hostile record replies name the field and never read past the end", "[proto][commands][hostile]") {
    // A topic claiming 1 000 000 partitions in a 60-byte reply.
    byte_buffer b;
    REQUIRE(append_topic_reply(b, topic_details{{0, 1, 0, 0, 1, 0, 1, 0, 0, "t"}, {}}).has_value());
    byte_buffer payload{b.begin() + 8, b.end()};
    store_le<std::uint32_t>(payload.data() + 12, 1'000'000);
    auto t = decode_get_topic_reply(view(payload));
    REQUIRE(t.has_error());
    CHECK(t.error() == errc::truncated);
    CHECK(t.error().detail().rfind("topic.partitions", 0) == 0);
    // Trailing bytes after a record.
    payload = byte_buffer{b.begin() + 8, b.end()};
    payload.push_back(std::byte{0});
    CHECK(decode_get_topic_reply(view(payload)).error() == errc::inconsistent);
    // Every truncation of a full stream reply.
    stream_details s{{3, 1, 0, 4096, 12, "orders"}, {{0, 1, 2, 3, 1, 4, 1, 5, 6, "a"}}};
    b.clear();
    REQUIRE(append_stream_reply(b, s).has_value());
    const bytes_view full = bytes_view{b}.subspan(8);
    for (std::size_t n = 1; n < full.size(); ++n) CHECK(decode_get_stream_reply(full.first(n)).has_error());
    // A GetMe reply whose address length lies.
    b.clear();
    append_get_me_reply(b, client_details{1, 2, 1, "127.0.0.1:1", {}});
    payload = byte_buffer{b.begin() + 8, b.end()};
    store_le<std::uint32_t>(payload.data() + 9, 0xffffffffu);
    auto me = decode_get_me_reply(view(payload));
    REQUIRE(me.has_error());
    CHECK(me.error().detail() == "client.address");
}

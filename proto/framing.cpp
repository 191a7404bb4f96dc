// SPDX-License-Identifier: Apache-2.0
#include "proto/framing.hpp"

#include "proto/g2_framing.hpp"

#include <string>

namespace iss::proto {

namespace {

/// The G1 names (the codes of `command`); empty for any other code.
std::string_view g1_command_name(std::uint32_t code) noexcept {
    switch (static_cast<command>(code)) {
        case command::ping: return "Ping";
        case command::get_me: return "GetMe";
        case command::login_user: return "LoginUser";
        case command::logout_user: return "LogoutUser";
        case command::login_with_personal_access_token: return "LoginWithPersonalAccessToken";
        case command::poll_messages: return "PollMessages";
        case command::send_messages: return "SendMessages";
        case command::get_consumer_offset: return "GetConsumerOffset";
        case command::store_consumer_offset: return "StoreConsumerOffset";
        case command::delete_consumer_offset: return "DeleteConsumerOffset";
        case command::get_stream: return "GetStream";
        case command::get_streams: return "GetStreams";
        case command::create_stream: return "CreateStream";
        case command::delete_stream: return "DeleteStream";
        case command::get_topic: return "GetTopic";
        case command::get_topics: return "GetTopics";
        case command::create_topic: return "CreateTopic";
        case command::delete_topic: return "DeleteTopic";
        case command::create_partitions: return "CreatePartitions";
        case command::delete_partitions: return "DeletePartitions";
        case command::get_consumer_group: return "GetConsumerGroup";
        case command::get_consumer_groups: return "GetConsumerGroups";
        case command::create_consumer_group: return "CreateConsumerGroup";
        case command::delete_consumer_group: return "DeleteConsumerGroup";
        case command::join_consumer_group: return "JoinConsumerGroup";
        case command::leave_consumer_group: return "LeaveConsumerGroup";
    }
    return {};
}

}  // namespace

std::string_view command_name(std::uint32_t code) noexcept {
    if (const auto g1 = g1_command_name(code); !g1.empty()) return g1;
    // The codes only the G2 line has (docs/protocol.md §8.2; proto/g2_framing.hpp).
    switch (code) {
        case g2::code::login_register: return "LoginRegister";
        case g2::code::login_register_with_pat: return "LoginRegisterWithPat";
        case g2::code::sync_consumer_group: return "SyncConsumerGroup";
        case g2::code::create_user: return "CreateUser";
        default: return "Unknown";
    }
}

bool is_known_command(std::uint32_t code) noexcept { return !g1_command_name(code).empty(); }

std::ostream& operator<<(std::ostream& os, command c) {
    return os << command_name(c) << " (" << static_cast<std::uint32_t>(c) << ")";
}

std::size_t begin_request(byte_buffer& out, command code) {
    const std::size_t start = out.size();
    writer w{out};
    w.u32(0);
    w.u32(static_cast<std::uint32_t>(code));
    return start;
}

void finish_request(byte_buffer& out, std::size_t start) noexcept {
    store_le<std::uint32_t>(out.data() + start, static_cast<std::uint32_t>(out.size() - start - 4));
}

result<bytes_view> ok_payload(const reply_frame& f) {
    if (f.status != 0) return iss::error{server_error(f.status)};
    return f.payload;
}

std::size_t frame_assembler::bytes_wanted() const noexcept {
    const bytes_view b = buf_.pending();
    const std::size_t have = b.size();
    if (have < 8) return 8 - have;
    std::size_t total;
    if (dir_ == frame_direction::request) {
        total = 4 + std::size_t{load_le<std::uint32_t>(b.data())};
        if (total < 8) return 1;
    } else {
        total = 8 + std::size_t{load_le<std::uint32_t>(b.data() + 4)};
    }
    return have >= total ? 0 : total - have;
}

result<std::optional<std::size_t>> frame_assembler::header_payload_size() {
    const bytes_view b = buf_.advance();
    if (buf_.failure()) return *buf_.failure();
    if (b.size() < 8) return std::optional<std::size_t>{};
    std::size_t payload;
    if (dir_ == frame_direction::request) {
        const auto len = load_le<std::uint32_t>(b.data());
        const auto code = load_le<std::uint32_t>(b.data() + 4);
        if (len < 4) return buf_.fail(iss::error{errc::invalid_length, "request.length (below 4)"});
        payload = len - 4;
        const bool send = code == static_cast<std::uint32_t>(command::send_messages);
        const std::size_t cap = send ? limits_.max_send_payload : limits_.max_control_payload;
        if (payload > cap)
            return buf_.fail(
                iss::error{errc::limit_exceeded, send ? "request.length (SendMessages payload over its limit)"
                                                      : "request.length (control frame payload over 10 MiB)"});
    } else {
        payload = load_le<std::uint32_t>(b.data() + 4);
        if (payload > limits_.max_reply_payload)
            return buf_.fail(iss::error{errc::limit_exceeded, "reply.length (over max_reply_payload)"});
    }
    if (b.size() - 8 < payload) return std::optional<std::size_t>{};
    return std::optional<std::size_t>{payload};
}

result<std::optional<request_frame>> frame_assembler::next_request() {
    auto n = header_payload_size();
    if (!n) return n.error();
    if (!*n) return std::optional<request_frame>{};
    const bytes_view f = buf_.take(8 + **n);
    return std::optional<request_frame>{request_frame{load_le<std::uint32_t>(f.data() + 4), f.subspan(8)}};
}

result<std::optional<reply_frame>> frame_assembler::next_reply() {
    auto n = header_payload_size();
    if (!n) return n.error();
    if (!*n) return std::optional<reply_frame>{};
    const bytes_view f = buf_.take(8 + **n);
    return std::optional<reply_frame>{reply_frame{load_le<std::uint32_t>(f.data()), f.subspan(8)}};
}

}  // namespace iss::proto

// SPDX-License-Identifier: Apache-2.0
// Every command code the client sends, on either wire line, has its name in
// `iggy_s3_sink_iggy_requests_total{command}` (proto::command_name), never "Unknown".
#include "iggy/transport.hpp"
#include "proto/commands.hpp"
#include "proto/g2_batch.hpp"
#include "proto/g2_commands.hpp"

#include "catch2_compat.hpp"

#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace {

namespace proto = iss::proto;

/// The code a request of type R is counted under (lib/iggy/transport.hpp, transport_context::count).
template <class R>
std::uint32_t code_of() {
    if constexpr (std::is_same_v<R, iss::iggy::send_request>)
        return static_cast<std::uint32_t>(proto::command::send_messages);
    else return static_cast<std::uint32_t>(R::code);
}

template <class... R>
std::vector<std::uint32_t> codes_of(std::type_identity<std::variant<R...>>) {
    return {code_of<R>()...};
}

}  // namespace

TEST_CASE("every command code the client sends has a name on both wire lines", "[iggy][metrics]") {
    // After the login: every request the client sends (iggy::request); G2 sends the same
    // codes through its own structs (g2_transport.cpp, to_g2), listed here too.
    auto codes = codes_of(std::type_identity<iss::iggy::request>{});
    for (const auto c :
         {proto::g2::code_of<proto::g2::store_offset_request>(), proto::g2::code_of<proto::g2::delete_offset_request>(),
          proto::g2::code_of<proto::g2::create_stream_request>(), proto::g2::code_of<proto::g2::create_topic_request>(),
          proto::g2::code_of<proto::g2::send_messages_request>(),
          proto::g2::code_of<proto::g2::sync_consumer_group_request>()})
        codes.push_back(c);
    // The logins and the logout: G1 (g1_transport.cpp) and G2 (g2_transport.cpp, Register).
    codes.push_back(code_of<proto::login_user_request>());
    codes.push_back(code_of<proto::login_with_token_request>());
    codes.push_back(code_of<proto::logout_user_request>());
    codes.push_back(code_of<proto::g2::register_request>());
    codes.push_back(code_of<proto::g2::register_pat_request>());
    REQUIRE(codes.size() >= 30);
    for (const auto c : codes) {
        INFO("command code " << c);
        CHECK(proto::command_name(c) != "Unknown");
    }
    // The ones only G2 has, by name (the G2 transport counts them so).
    CHECK(proto::command_name(proto::g2::code::login_register) == "LoginRegister");
    CHECK(proto::command_name(proto::g2::code::login_register_with_pat) == "LoginRegisterWithPat");
    CHECK(proto::command_name(proto::g2::code::sync_consumer_group) == "SyncConsumerGroup");
}

// SPDX-License-Identifier: Apache-2.0
// The G2 transport's eviction mapping (lib/iggy/g2_transport.hpp): each reason becomes the
// error a caller classifies, and the session-ending statuses.
#include "iggy/g2_transport.hpp"

#include "catch2_compat.hpp"

using namespace iss;
using iggy::outcome;
using reason = proto::g2::eviction_reason;

namespace {
iss::error evicted(reason r, std::uint32_t max = 0, std::uint32_t min = 0) {
    proto::g2::eviction_header h;
    h.reason = r;
    h.server_protocol_version = max;
    h.server_protocol_version_min = min;
    return iggy::eviction_error(h);
}
}  // namespace

TEST_CASE("credential evictions become the G1 auth codes: never retried", "[iggy][g2][evict]") {
    CHECK(iggy::server_code(evicted(reason::invalid_credentials)) == 42u);
    CHECK(iggy::server_code(evicted(reason::invalid_token)) == 53u);
    CHECK(iggy::server_code(evicted(reason::user_inactive)) == 47u);
    for (auto r : {reason::invalid_credentials, reason::invalid_token, reason::user_inactive})
        CHECK(iggy::classify(evicted(r)) == outcome::fail);
}

TEST_CASE("the version gate is 14003 with the server's window in the detail", "[iggy][g2][evict]") {
    const auto e = evicted(reason::incompatible_protocol, proto::g2::protocol_0_12_0, proto::g2::protocol_0_12_0);
    CHECK(iggy::server_code(e) == 14003u);
    CHECK(iggy::classify(e) == outcome::fail);
    CHECK(e.detail().find("0.12.0 to 0.12.0") != std::string::npos);
}

TEST_CASE("a dead session is 30 StaleClient: reconnect, log in, re-join", "[iggy][g2][evict]") {
    for (auto r : {reason::stale_client, reason::no_session, reason::session_too_low, reason::session_release_mismatch,
                   reason::session_error}) {
        CHECK(iggy::server_code(evicted(r)) == 30u);
        CHECK(iggy::classify(evicted(r)) == outcome::retry);
    }
}

TEST_CASE("other evictions are protocol errors (retried on a new connection)", "[iggy][g2][evict]") {
    for (auto r : {reason::malformed_login, reason::invalid_request_body, reason::client_release_too_low}) {
        const auto e = evicted(r);
        CHECK(e == iggy::errc::protocol_error);
        CHECK(iggy::classify(e) == outcome::retry);
        CHECK(e.detail().find(std::string{proto::g2::eviction_reason_name(r)}) != std::string::npos);
    }
}

TEST_CASE("8, 30 and 100 end the session; other statuses do not", "[iggy][error]") {
    for (std::uint32_t s : {8u, 30u, 100u}) CHECK(iggy::ends_session(s));
    for (std::uint32_t s : {0u, 1u, 42u, 57u, 5006u}) CHECK_FALSE(iggy::ends_session(s));
}

// SPDX-License-Identifier: Apache-2.0
// iss::iggy error classification (lib/iggy/error.hpp): the outcome every caller acts on.
#include "iggy/error.hpp"

#include "proto/error.hpp"

#include "catch2_compat.hpp"

using namespace iss;
using iggy::outcome;

namespace {
iss::error server(std::uint32_t code) { return iss::error{proto::server_error(code)}; }
}  // namespace

TEST_CASE("server errors carry Iggy's code and name", "[iggy][error]") {
    CHECK(iggy::server_code(server(42)) == 42u);
    CHECK(iggy::describe(server(42)) == "InvalidCredentials (42)");
    CHECK(iggy::describe(server(3022)).find("3022") != std::string::npos);
    CHECK_FALSE(iggy::server_code(iss::error{iggy::errc::timeout}).has_value());
}

TEST_CASE("authentication errors are final, never retried", "[iggy][error]") {
    for (std::uint32_t code : {40u, 41u, 42u, 43u, 44u, 47u, 53u, 54u}) {
        CHECK(iggy::is_auth_code(code));
        CHECK(iggy::classify(server(code)) == outcome::fail);
    }
    CHECK_FALSE(iggy::is_auth_code(30));
}

TEST_CASE("transport failures, Disconnected and StaleClient are retried", "[iggy][error]") {
    CHECK(iggy::classify(iss::error{iggy::errc::connection_failed}) == outcome::retry);
    CHECK(iggy::classify(iss::error{iggy::errc::connection_lost}) == outcome::retry);
    CHECK(iggy::classify(iss::error{iggy::errc::timeout}) == outcome::retry);
    CHECK(iggy::classify(iss::error{iggy::errc::protocol_error}) == outcome::retry);
    // A rejected certificate waits for a renewed one in `run` (client_options::retry_rejected_certificate).
    CHECK(iggy::classify(iss::error{iggy::errc::certificate_rejected}) == outcome::retry);
    CHECK(iggy::classify(server(8)) == outcome::retry);
    CHECK(iggy::classify(server(30)) == outcome::retry);
    CHECK(iggy::classify(iss::error{iggy::errc::closed}) == outcome::fail);
    CHECK(iggy::classify(iss::error{iggy::errc::invalid_request}) == outcome::fail);
}

TEST_CASE("missing entities are not_found; ownership and offset errors fail", "[iggy][error]") {
    for (std::uint32_t code : {20u, 1009u, 2010u, 3007u, 5000u})
        CHECK(iggy::classify(server(code)) == outcome::not_found);
    for (std::uint32_t code : {3u, 4u, 3021u, 3022u, 4100u, 5006u, 1012u})
        CHECK(iggy::classify(server(code)) == outcome::fail);
}

// SPDX-License-Identifier: Apache-2.0
// The login negotiation: feed what each login came to, check what the session is told to do.
#include "proto/negotiation.hpp"

#include "catch2_compat.hpp"

using namespace iss::proto;
using kind = login_result::kind;
using step = negotiation_step;

namespace {

login_result result_of(kind k) { return login_result{k, {}}; }

login_result evicted(g2::eviction_reason reason, std::uint32_t server_max = 0, std::uint32_t server_min = 0) {
    login_result r{kind::evicted, {}};
    r.eviction.reason = reason;
    r.eviction.server_protocol_version = server_max;
    r.eviction.server_protocol_version_min = server_min;
    return r;
}

login_result window(std::uint32_t major, std::uint32_t minor) {
    const auto v = g2::pack_version(major, minor, 0);
    return evicted(g2::eviction_reason::incompatible_protocol, v, v);
}

const negotiation_action proceed_g1{step::proceed, wire_protocol::g1_0_8, false};

}  // namespace

TEST_CASE("a configured G1 client logs in with G1 and never switches", "[proto][negotiation]") {
    negotiation n{wire_protocol::g1_0_8};
    n.begin();
    CHECK(n.plan() == login_plan{wire_protocol::g1_0_8, 0, false});
    CHECK(n.on_login(result_of(kind::logged_in)) == proceed_g1);
    // Refused (e.g. 42): returned, no new connection.
    CHECK(n.on_login(result_of(kind::refused)) == negotiation_action{step::fail, wire_protocol::g1_0_8, false});
    CHECK_FALSE(n.detected());
}

TEST_CASE("a configured G2 client sends its own version and does not follow a window", "[proto][negotiation]") {
    SECTION("0.9 sends 0.11.0") {
        negotiation n{wire_protocol::g2_0_9};
        CHECK(n.plan() == login_plan{wire_protocol::g2_0_9, g2::protocol_0_11_0, false});
        CHECK(n.on_login(result_of(kind::logged_in)) ==
              negotiation_action{step::proceed, wire_protocol::g2_0_9, false});
        // An Eviction 14 naming 0.12: configured, so the error is returned.
        CHECK(n.on_login(window(0, 12)) == negotiation_action{step::fail, wire_protocol::g2_0_9, false});
        // No G2 answer: not probing, so no fallback to G1.
        CHECK(n.on_login(result_of(kind::no_g2_answer)) ==
              negotiation_action{step::fail, wire_protocol::g2_0_9, false});
        CHECK(n.plan().protocol == wire_protocol::g2_0_9);
    }
    SECTION("0.10 sends 0.12.0") {
        negotiation n{wire_protocol::g2_0_10};
        CHECK(n.plan() == login_plan{wire_protocol::g2_0_10, g2::protocol_0_12_0, false});
        CHECK(n.on_login(window(0, 11)) == negotiation_action{step::fail, wire_protocol::g2_0_10, false});
    }
}

TEST_CASE("auto against a G2 0.9 server: the probe's Register is accepted", "[proto][negotiation]") {
    negotiation n{wire_protocol::automatic};
    n.begin();
    CHECK(n.plan() == login_plan{wire_protocol::g2_0_9, g2::protocol_0_11_0, true});
    CHECK(n.on_login(result_of(kind::logged_in)) == negotiation_action{step::proceed, wire_protocol::g2_0_9, true});
    CHECK(n.detected() == wire_protocol::g2_0_9);
    // Later connects log in with what was found, without probing.
    n.begin();
    CHECK(n.plan() == login_plan{wire_protocol::g2_0_9, g2::protocol_0_11_0, false});
    CHECK(n.on_login(result_of(kind::logged_in)) == negotiation_action{step::proceed, wire_protocol::g2_0_9, false});
    // A G2 server that stops answering later is not taken for a G1 one.
    CHECK(n.on_login(result_of(kind::no_g2_answer)) == negotiation_action{step::fail, wire_protocol::g2_0_9, false});
    CHECK(n.detected() == wire_protocol::g2_0_9);
}

TEST_CASE("auto against a G1 server: no G2 answer means a new connection in G1", "[proto][negotiation]") {
    negotiation n{wire_protocol::automatic};
    n.begin();
    CHECK(n.on_login(result_of(kind::no_g2_answer)) ==
          negotiation_action{step::reconnect, wire_protocol::g1_0_8, true});
    CHECK(n.detected() == wire_protocol::g1_0_8);
    CHECK(n.plan() == login_plan{wire_protocol::g1_0_8, 0, false});
    CHECK(n.on_login(result_of(kind::logged_in)) == proceed_g1);
    // The next connect goes straight to G1.
    n.begin();
    CHECK(n.plan() == login_plan{wire_protocol::g1_0_8, 0, false});
}

TEST_CASE("auto: a refused probe (not an absent G2 server) is returned", "[proto][negotiation]") {
    negotiation n{wire_protocol::automatic};
    CHECK(n.on_login(result_of(kind::refused)) == negotiation_action{step::fail, wire_protocol::g2_0_9, false});
    CHECK_FALSE(n.detected());
    CHECK(n.plan().probe);
}

TEST_CASE("auto: the version window of an Eviction 14 picks 0.9 or 0.10", "[proto][negotiation]") {
    SECTION("window 0.12 -> 0.10 (protocol 0.12.0)") {
        negotiation n{wire_protocol::automatic};
        CHECK(n.on_login(window(0, 12)) == negotiation_action{step::reconnect, wire_protocol::g2_0_10, true});
        CHECK(n.detected() == wire_protocol::g2_0_10);
        CHECK(n.plan() == login_plan{wire_protocol::g2_0_10, g2::protocol_0_12_0, false});
        CHECK(n.on_login(result_of(kind::logged_in)) ==
              negotiation_action{step::proceed, wire_protocol::g2_0_10, false});
    }
    SECTION("window 0.11 from 0.10 -> back to 0.9") {
        negotiation n{wire_protocol::automatic};
        REQUIRE(n.on_login(window(0, 12)).step == step::reconnect);
        CHECK(n.on_login(window(0, 11)) == negotiation_action{step::reconnect, wire_protocol::g2_0_9, true});
        CHECK(n.plan() == login_plan{wire_protocol::g2_0_9, g2::protocol_0_11_0, false});
    }
    SECTION("the window names the version just sent: nothing to move to") {
        negotiation n{wire_protocol::automatic};
        CHECK(n.on_login(window(0, 11)) == negotiation_action{step::fail, wire_protocol::g2_0_9, false});
        CHECK_FALSE(n.detected());
    }
    SECTION("a window this client does not speak (0.13, or major 1) is returned") {
        negotiation n{wire_protocol::automatic};
        CHECK(n.on_login(window(0, 13)) == negotiation_action{step::fail, wire_protocol::g2_0_9, false});
        CHECK(n.on_login(window(1, 12)) == negotiation_action{step::fail, wire_protocol::g2_0_9, false});
        CHECK(n.on_login(window(0, 10)) == negotiation_action{step::fail, wire_protocol::g2_0_9, false});
        CHECK_FALSE(n.detected());
        CHECK(n.plan().probe);
    }
    SECTION("the window is read from the server's newest version, not its oldest") {
        negotiation n{wire_protocol::automatic};
        auto r =
            evicted(g2::eviction_reason::incompatible_protocol, g2::pack_version(0, 12, 3), g2::pack_version(0, 11, 0));
        CHECK(n.on_login(r) == negotiation_action{step::reconnect, wire_protocol::g2_0_10, true});
    }
}

TEST_CASE("auto: evictions other than IncompatibleProtocol are returned, never followed", "[proto][negotiation]") {
    using R = g2::eviction_reason;
    for (auto reason : {R::invalid_credentials, R::invalid_token, R::user_inactive, R::stale_client, R::no_session,
                        R::malformed_login, R::session_error}) {
        negotiation n{wire_protocol::automatic};
        // A window in the header of another reason is ignored.
        CHECK(n.on_login(evicted(reason, g2::protocol_0_12_0, g2::protocol_0_12_0)) ==
              negotiation_action{step::fail, wire_protocol::g2_0_9, false});
        CHECK_FALSE(n.detected());
    }
}

TEST_CASE("switches are bounded per connect and the count restarts with the next", "[proto][negotiation]") {
    negotiation n{wire_protocol::automatic};
    n.begin();
    CHECK(n.on_login(window(0, 12)).step == step::reconnect);  // 1
    CHECK(n.on_login(window(0, 11)).step == step::reconnect);  // 2
    static_assert(negotiation::max_switches == 2);
    // A third switch in the same connect: the error is returned (what was found is kept).
    CHECK(n.on_login(window(0, 12)) == negotiation_action{step::fail, wire_protocol::g2_0_9, true});
    CHECK(n.detected() == wire_protocol::g2_0_10);
    n.begin();
    CHECK(n.on_login(window(0, 11)) == negotiation_action{step::reconnect, wire_protocol::g2_0_9, true});
}

TEST_CASE("protocol names", "[proto][negotiation]") {
    CHECK(wire_protocol_name(wire_protocol::g1_0_8) == "0.8 (G1)");
    CHECK(wire_protocol_name(wire_protocol::g2_0_9) == "0.9 (G2, protocol 0.11.0)");
    CHECK(wire_protocol_name(wire_protocol::g2_0_10) == "0.10 (G2, protocol 0.12.0, provisional)");
    CHECK(wire_protocol_name(wire_protocol::automatic) == "auto");
    CHECK(is_g2(wire_protocol::g2_0_10));
    CHECK_FALSE(is_g2(wire_protocol::automatic));
}

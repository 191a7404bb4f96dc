// SPDX-License-Identifier: Apache-2.0
// libFuzzer target over the protocol negotiation (proto/negotiation.hpp) fed by what servers
// answer to a login. Each login's answer is bytes from the input, read the way the client's
// transports read them (lib/iggy/g1_transport.cpp, lib/iggy/g2_transport.cpp `login`):
// - a G2 plan: the first 8 bytes decide G1 or G2 (`detect_generation`) when probing; then the
//   G2 frame assembler, `decode_server_frame`, an Eviction's header (its version window) or the
//   Register reply (`decode_register_reply`);
// - a G1 plan: the G1 reply assembler, `ok_payload`, `decode_user_id_reply`.
// What that comes to (logged in, no G2 answer, evicted, refused) goes to `negotiation::on_login`.
//
// Input: byte 0 picks `iggy.protocol` (0.8, 0.9, 0.10, auto); then per login a 16-bit length
// and that many answer bytes (an empty answer = the server closed or stayed silent), until the
// input ends; a connect (`begin()`) starts at byte 1 and again after every proceed or fail.
// Properties (besides "no crash, no undefined behaviour"):
// - a plan never says `automatic`; it probes only for `auto` before anything was found;
// - a configured protocol never reconnects and always reports itself;
// - a connect ends (proceed or fail) within `max_switches` + 1 logins;
// - proceed reports the protocol the login was sent in; reconnect is followed by a plan in the
//   protocol it names; `detected` is only said once something is known.
// Built by scripts/fuzz (tests/fuzz/README.md).
#include "proto/commands.hpp"
#include "proto/framing.hpp"
#include "proto/g2_commands.hpp"
#include "proto/g2_framing.hpp"
#include "proto/negotiation.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace p = iss::proto;
namespace g2 = iss::proto::g2;
using kind = p::login_result::kind;

namespace {

p::login_result g1_login(p::bytes_view answer) {
    if (answer.empty()) return {kind::refused};
    p::frame_assembler a{p::frame_direction::reply, p::frame_limits{}};
    a.feed(answer);
    auto f = a.next_reply();
    if (!f || !*f) return {kind::refused};
    auto payload = p::ok_payload(**f);
    if (!payload) return {kind::refused};
    if (!p::decode_user_id_reply(*payload)) return {kind::refused};
    return {kind::logged_in};
}

p::login_result g2_login(p::bytes_view answer, const p::login_plan& plan) {
    // Closed or silent: a probe takes it for "not a G2 server"; otherwise a failed login.
    if (answer.size() < 8) return {plan.probe ? kind::no_g2_answer : kind::refused};
    if (plan.probe && g2::detect_generation(answer.first(8)) == g2::wire_generation::g1) return {kind::no_g2_answer};
    g2::frame_assembler a;
    a.feed(answer);
    auto f = a.next();
    if (!f) return {kind::refused};
    if (!*f) return {plan.probe ? kind::no_g2_answer : kind::refused};  // the rest never came: a timeout
    auto frame = g2::decode_server_frame(**f);
    if (!frame) return {kind::refused};
    if (frame->is_eviction()) {
        const auto& e = frame->eviction();
        // What the transport logs about it: names, hints and versions of any value.
        ISS_FUZZ_CHECK(!g2::eviction_reason_name(e.reason).empty());
        ISS_FUZZ_CHECK(!g2::eviction_reason_hint(e.reason).empty());
        ISS_FUZZ_CHECK(!g2::version_text(e.server_protocol_version).empty());
        ISS_FUZZ_CHECK(!g2::version_text(e.server_protocol_version_min).empty());
        return {kind::evicted, e};
    }
    if (frame->reply().status != 0) return {kind::refused};
    auto r = g2::decode_register_reply(frame->body);
    if (!r) return {kind::refused};
    ISS_FUZZ_CHECK(r->session != 0);
    return {kind::logged_in};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    if (size < 1) return 0;
    constexpr p::wire_protocol choices[] = {p::wire_protocol::g1_0_8, p::wire_protocol::g2_0_9,
                                            p::wire_protocol::g2_0_10, p::wire_protocol::automatic};
    const p::wire_protocol configured = choices[bytes[0] % 4];
    p::negotiation n{configured};
    std::size_t pos = 1;
    bool connecting = false;
    int logins = 0;
    std::optional<p::wire_protocol> must_plan;
    while (pos + 2 <= size) {
        if (!connecting) {
            n.begin();
            connecting = true;
            logins = 0;
        }
        std::size_t len = bytes[pos] | (std::size_t{bytes[pos + 1]} << 8);
        pos += 2;
        len = std::min(len, size - pos);
        const p::bytes_view answer{reinterpret_cast<const std::byte*>(bytes + pos), len};
        pos += len;

        const auto plan = n.plan();
        ISS_FUZZ_CHECK(plan.protocol != p::wire_protocol::automatic);
        ISS_FUZZ_CHECK(plan.probe == (configured == p::wire_protocol::automatic && !n.detected()));
        ISS_FUZZ_CHECK(p::is_g2(plan.protocol) == (plan.g2_version != 0));
        if (configured != p::wire_protocol::automatic) ISS_FUZZ_CHECK(plan.protocol == configured);
        if (must_plan) ISS_FUZZ_CHECK(plan.protocol == *must_plan);
        must_plan.reset();

        const auto result = p::is_g2(plan.protocol) ? g2_login(answer, plan) : g1_login(answer);
        const auto action = n.on_login(result);
        ++logins;
        ISS_FUZZ_CHECK(logins <= p::negotiation::max_switches + 1);
        if (action.detected) ISS_FUZZ_CHECK(n.detected().has_value());
        if (configured != p::wire_protocol::automatic) {
            ISS_FUZZ_CHECK(action.step != p::negotiation_step::reconnect);
            ISS_FUZZ_CHECK(action.protocol == configured);
            ISS_FUZZ_CHECK(!n.detected());
        }
        switch (action.step) {
            case p::negotiation_step::proceed:
                ISS_FUZZ_CHECK(result.what == kind::logged_in);
                ISS_FUZZ_CHECK(action.protocol == plan.protocol);
                connecting = false;
                break;
            case p::negotiation_step::reconnect:
                ISS_FUZZ_CHECK(action.protocol != plan.protocol);
                must_plan = action.protocol;
                break;
            case p::negotiation_step::fail: connecting = false; break;
        }
    }
    return 0;
}

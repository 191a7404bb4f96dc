// SPDX-License-Identifier: Apache-2.0
#include "proto/negotiation.hpp"

namespace iss::proto {

std::string_view wire_protocol_name(wire_protocol p) noexcept {
    switch (p) {
        case wire_protocol::g1_0_8: return "0.8 (G1)";
        case wire_protocol::g2_0_9: return "0.9 (G2, protocol 0.11.0)";
        case wire_protocol::g2_0_10: return "0.10 (G2, protocol 0.12.0, provisional)";
        case wire_protocol::automatic: return "auto";
    }
    return "?";
}

std::ostream& operator<<(std::ostream& os, const login_plan& p) {
    return os << "login{" << wire_protocol_name(p.protocol) << ", version " << g2::version_text(p.g2_version)
              << (p.probe ? ", probe}" : "}");
}

std::ostream& operator<<(std::ostream& os, const negotiation_action& a) {
    const char* step = a.step == negotiation_step::proceed     ? "proceed"
                       : a.step == negotiation_step::reconnect ? "reconnect"
                                                               : "fail";
    return os << step << "{" << wire_protocol_name(a.protocol) << (a.detected ? ", detected}" : "}");
}

login_plan negotiation::plan() const noexcept {
    const wire_protocol w =
        configured_ != wire_protocol::automatic ? configured_ : detected_.value_or(wire_protocol::g2_0_9);
    const std::uint32_t version = w == wire_protocol::g2_0_10  ? g2::protocol_0_12_0
                                  : w == wire_protocol::g2_0_9 ? g2::protocol_0_11_0
                                                               : 0;
    return {w, version, configured_ == wire_protocol::automatic && !detected_};
}

negotiation_action negotiation::switch_to(wire_protocol next, wire_protocol tried) noexcept {
    if (switches_ >= max_switches) return {negotiation_step::fail, tried, true};
    ++switches_;
    return {negotiation_step::reconnect, next, true};
}

negotiation_action negotiation::on_login(const login_result& r) noexcept {
    const login_plan p = plan();
    switch (r.what) {
        case login_result::kind::logged_in:
            if (p.probe) detected_ = p.protocol;
            return {negotiation_step::proceed, p.protocol, p.probe};
        case login_result::kind::no_g2_answer:
            if (!p.probe) break;
            detected_ = wire_protocol::g1_0_8;
            return switch_to(wire_protocol::g1_0_8, p.protocol);
        case login_result::kind::evicted: {
            // The window an Eviction 14 names: only an `automatic` client follows it, and only
            // to a version this client speaks (major 0, minor 11 or 12).
            const auto& e = r.eviction;
            if (e.reason != g2::eviction_reason::incompatible_protocol || configured_ != wire_protocol::automatic)
                break;
            if ((e.server_protocol_version >> 20) != 0) break;
            const auto minor = (e.server_protocol_version >> 10) & 0x3ff;
            const std::optional<wire_protocol> next = minor == 12   ? std::optional{wire_protocol::g2_0_10}
                                                      : minor == 11 ? std::optional{wire_protocol::g2_0_9}
                                                                    : std::nullopt;
            if (!next || *next == p.protocol) break;
            detected_ = *next;
            return switch_to(*next, p.protocol);
        }
        case login_result::kind::refused: break;
    }
    return {negotiation_step::fail, p.protocol, false};
}

}  // namespace iss::proto

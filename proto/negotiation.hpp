// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Which Iggy wire protocol a connection speaks: the login negotiation as a sans-io state
/// machine. The client's session feeds it what each login came to and does what it answers.
///
/// The naive version asks the configuration and speaks that. It cannot serve
/// `iggy.protocol: auto`, where the answer to the first login decides: a G2 `Register`
/// (protocol 0.11.0) goes first; a G1-shaped answer, a close or silence means a 0.8 server
/// (log in again with LoginUser on a new connection); an Eviction 14 (IncompatibleProtocol)
/// names the server's accepted window (docs/protocol.md §8.4), and the client reconnects with
/// the version it names (0.12.0 = server 0.10, 0.11.0 = server 0.9). What was found is kept
/// for every later connect, so only the first connect probes. Switching is bounded
/// (`max_switches` per connect) so a server that keeps changing its mind cannot loop.
/// A configured protocol never switches: every failure is returned as it is.

#include "proto/g2_framing.hpp"

#include <cstdint>
#include <optional>
#include <ostream>
#include <string_view>

namespace iss::proto {

/// Which Iggy wire protocol a client speaks (config `iggy.protocol`; docs/architecture.md §4).
enum class wire_protocol {
    g1_0_8,     ///< G1 framing: Iggy server 0.8.x (and older)
    g2_0_9,     ///< G2 consensus framing, binary protocol 0.11.0: Iggy server 0.9.x
    g2_0_10,    ///< G2, binary protocol 0.12.0 with the bind secret: Iggy 0.10.x. PROVISIONAL
    automatic,  ///< detect at connect: a G2 Register first, G1 when the server answers G1 or
                ///< nothing within the detect timeout; Eviction 14 moves to the version it names
};
/// "0.8 (G1)", "0.9 (G2, protocol 0.11.0)", "0.10 (G2, protocol 0.12.0, provisional)", "auto".
std::string_view wire_protocol_name(wire_protocol p) noexcept;
/// True for the G2 protocols.
constexpr bool is_g2(wire_protocol p) noexcept { return p == wire_protocol::g2_0_9 || p == wire_protocol::g2_0_10; }

/// The login a new connection sends.
struct login_plan {
    wire_protocol protocol = wire_protocol::g1_0_8;  ///< never `automatic`
    std::uint32_t g2_version = 0;  ///< the packed binary protocol version a G2 Register sends; 0 for G1
    bool probe = false;            ///< `automatic` and nothing found yet: the answer decides the protocol
    friend bool operator==(const login_plan&, const login_plan&) = default;
};
std::ostream& operator<<(std::ostream& os, const login_plan& p);

/// What the login on one connection came to.
struct login_result {
    enum class kind {
        logged_in,     ///< the server accepted it (G1 user id, or a G2 Register reply)
        no_g2_answer,  ///< a G2 Register got a G1-shaped answer, a close, silence or an unreadable frame
        evicted,       ///< a G2 Register got an Eviction (`eviction` holds its header)
        refused,       ///< any other failure: a status, an unreadable reply, the client closing
    };
    kind what = kind::refused;
    g2::eviction_header eviction{};
};

/// What the session does next.
enum class negotiation_step {
    proceed,    ///< logged in: the connection speaks `protocol`; re-join and serve calls
    reconnect,  ///< close this connection, open a new one and log in per `plan()` (= `protocol`)
    fail,       ///< close this connection and return the login's error
};

struct negotiation_action {
    negotiation_step step = negotiation_step::fail;
    /// proceed: the protocol of the connection; reconnect: the next login's; fail: the one tried.
    wire_protocol protocol = wire_protocol::g1_0_8;
    /// This result settled what an `automatic` client speaks (said once in the log).
    bool detected = false;
    friend bool operator==(const negotiation_action&, const negotiation_action&) = default;
};
std::ostream& operator<<(std::ostream& os, const negotiation_action& a);

class negotiation {
public:
    /// Protocol switches (new connections in another protocol) allowed within one connect.
    static constexpr int max_switches = 2;

    explicit negotiation(wire_protocol configured) noexcept : configured_{configured} {}

    /// Starts one connect: the switch count restarts, what was found is kept.
    void begin() noexcept { switches_ = 0; }
    /// The login the next connection sends: the configured protocol, else the one found, else
    /// a G2 0.11.0 probe.
    [[nodiscard]] login_plan plan() const noexcept;
    /// Feeds the result of the login sent per `plan()`.
    negotiation_action on_login(const login_result& r) noexcept;

    [[nodiscard]] wire_protocol configured() const noexcept { return configured_; }
    /// `automatic`: what the server was found to speak, once known.
    [[nodiscard]] std::optional<wire_protocol> detected() const noexcept { return detected_; }

private:
    negotiation_action switch_to(wire_protocol next, wire_protocol tried) noexcept;

    wire_protocol configured_;
    std::optional<wire_protocol> detected_;
    int switches_ = 0;
};

}  // namespace iss::proto

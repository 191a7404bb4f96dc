// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The G2 side of the Iggy test broker (issue 9): a TEST DOUBLE of Iggy server 0.9.0's
/// consensus-framed TCP protocol (docs/protocol.md §8; docs/protocol.md §12.1), sans-io.
/// One `g2_connection` per TCP connection: feed it whole request frames (from
/// `proto::g2::frame_assembler`), it applies them to the shared `broker_state` and appends the
/// reply or eviction frame to `out`.
///
/// What it models (each rule cited to the fact sheets):
/// - Register (40/45, operation 1): `ClientVersionInfo` prefix, the minor-scoped version gate
///   (Eviction 14 with the window at bytes 144/148), username/password tried first, then the
///   token (Eviction 9 / 10), no decodable prefix (Eviction 15); G1 logins 38/44 inside a G2
///   frame: Eviction 15; the reply is result-framed `user_id | session | protocol | version`;
/// - before login only Ping is served; everything else gets status 40;
/// - a header that fails the server's field checks, an unknown operation: Eviction 4;
///   a session that is not the connection's: Eviction 1;
/// - result-framed replies for metadata ops and offset stores, raw payloads for the rest; a
///   rejection of a replicated operation (name taken, unknown group, not a member, ...) is
///   committed as 0.9's state machines do it: status 0, the code in the result section;
/// - rights of users other than root (users.hpp), checked once the ids resolve: reads and the
///   partition plane (poll, send, offsets) answer 41 in the reply header, metadata operations a
///   committed 41 (upstream core/server/src/dispatch/authz.rs);
/// - CreateConsumerGroup answers the new group's details (result-framed), GetConsumerGroups the
///   groups' records (what the apache-iggy 0.9.0 SDK decodes);
/// - CreateTopic applies its options block (compression, message expiry, max size; the
///   durability policies accepted; unknown key 4041, wrong value kind 4042); CreateUser (operation 141) as in G1 plus options;
///   GetClusterMetadata (12) after login;
/// - groups: Join/Leave replicated; SyncConsumerGroup answers the member's non-revoked
///   partitions (empty body = not a member); a group poll without a partition gets an empty
///   reply with partition 0, on a partition the member does not own one with 0xFFFFFFFF;
/// - the G2 message batch: checksums verified on send (4027/4039), one confirmation per batch
///   (stream, topic, partition, base offset); polls served as the stored batches: a slice keeps
///   the batch's base offset and origin, so frames carry the producer's deltas and checksums
///   (batch boundaries are not persisted: after a `--data` restart each old message is its
///   own batch);
/// - fault injection: the first `transient_not_committed` replicated/partition-plane requests
///   are answered with status 57 and NOT applied (a replay of the same request number then is);
///   a request number already applied in this session answers 59 (RequestAlreadyApplied).
/// - heartbeat (§8.3): every request after login refreshes it; once the heartbeat checker
///   (`--heartbeat`) or the SIGUSR1 control dropped the client (it left its groups), its next
///   request is answered with Eviction 13 (StaleClient) and the connection closes (the server
///   pushes the eviction; the double answers the next request with it, which a client that
///   was frozen sees the same way);
/// - membership lost without a session loss (the SIGUSR2 control): SyncConsumerGroup answers
///   "not a member" (empty body) and explicit group polls 5006, while the session stays valid.
/// Not modelled: TooManyConsumerOffsets, sessions surviving restarts, evicting only clients
/// that hold a group membership (the checker drops every silent client, as in G1).

#include "iggy_broker/admin_handler.hpp"
#include "iggy_broker/broker_state.hpp"
#include "proto/g2_commands.hpp"

#include <cstdint>
#include <set>
#include <string>

namespace iss::broker {

/// Settings of the G2 side.
struct g2_options {
    std::uint32_t protocol_version = proto::g2::protocol_0_11_0;  ///< the server's binary protocol
    std::string server_version = "0.9.0-test-broker";
    unsigned transient_not_committed = 0;  ///< answer the first N such requests with 57
};

/// Shared across connections (session numbers, fault budget).
struct g2_shared {
    explicit g2_shared(g2_options o, node_endpoints n = {})
        : opts{std::move(o)}, node{std::move(n)}, faults_left{opts.transient_not_committed} {}
    g2_options opts;
    node_endpoints node;  ///< what GetClusterMetadata reports
    std::uint64_t next_session = 1001;
    unsigned faults_left = 0;
};

/// One connection's G2 state.
class g2_connection {
public:
    g2_connection(broker_state& state, g2_shared& shared, std::uint32_t client_id)
        : state_{state}, shared_{shared}, client_id_{client_id} {}

    /// Handles one whole request frame; appends the reply (or eviction) to `out`. Returns false
    /// when the connection must be closed after writing `out` (an eviction).
    bool handle(proto::bytes_view frame, proto::byte_buffer& out);

private:
    bool evict(proto::byte_buffer& out, proto::u128 client, proto::g2::eviction_reason r);
    void reply(proto::byte_buffer& out, const proto::g2::request_header& h, std::uint32_t status,
               proto::bytes_view body);
    bool login(const proto::g2::request_header& h, proto::bytes_view body, proto::byte_buffer& out);

    broker_state& state_;
    g2_shared& shared_;
    std::uint32_t client_id_;
    std::uint64_t session_ = 0;
    std::set<std::uint64_t> applied_;  // request numbers of applied replicated requests
    proto::byte_buffer body_;
    std::vector<message_in> messages_;
};

}  // namespace iss::broker

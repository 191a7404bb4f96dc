// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Applies the Iggy test broker's administrative commands (admin_wire.hpp) to `broker_state`
/// with server 0.8.0's checks in its order (core/server/src/binary/handlers/{users,
/// personal_access_tokens,system,cluster,streams,topics} and shard/execution.rs at tag
/// server-0.8.0): authenticated (the caller checks: 40), then resolve the stream/topic
/// (1009/2010), then the permission (41), then the command's own checks. Sans-io; the G1
/// server (main.cpp) frames the reply, the G2 side (g2_handler.cpp) result-frames it.

#include "iggy_broker/admin_wire.hpp"
#include "iggy_broker/broker_state.hpp"

#include <cstdint>
#include <string>

namespace iss::broker {

/// What GetClusterMetadata reports about this process.
struct node_endpoints {
    std::string ip = "127.0.0.1";
    std::uint16_t tcp = 8090;
    std::uint16_t quic = 8080;       ///< not served by the double: 0.8.0's default port
    std::uint16_t http = 3000;       ///< idem
    std::uint16_t websocket = 8092;  ///< idem
};

/// An admin command's outcome: `status` 0 with `payload` (possibly empty), or an error code.
struct admin_reply {
    std::uint32_t status = 0;
    proto::byte_buffer payload;
};

/// Runs one decoded admin command for the logged-in `client_id`.
admin_reply handle_admin(broker_state& state, std::uint32_t client_id, const admin::request& req,
                         const node_endpoints& node);

/// The permission check of a non-admin command for the connection's user: resolves the
/// stream/topic names it can (an unknown one passes: the command reports it) and answers 41
/// when the user lacks the right, 0 otherwise (and for a connection that is not logged in:
/// the caller answers 40).
std::uint32_t authorize(const broker_state& state, std::uint32_t client_id, action a, const ident* stream = nullptr,
                        const ident* topic = nullptr);

}  // namespace iss::broker

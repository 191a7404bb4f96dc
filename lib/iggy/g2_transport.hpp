// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The G2 transport (Iggy server 0.9.x and 0.10.x; docs/protocol.md §8): 256-byte consensus
/// headers, frames read through `proto::g2::frame_assembler`, a `Register` login whose reply
/// gives the session that every later header carries, request numbers from
/// `proto::g2::session_state`, and:
/// - statuses 57 (TransientNotCommitted) and 58 (TransientNotAccepted) resend the IDENTICAL
///   frame (same session and request number: a 57 request's outcome is unknown, so it is only
///   ever replayed, never re-numbered) every `transient_retry_delay` within
///   `transient_retry_budget`; 59 (RequestAlreadyApplied) is success;
/// - an Eviction ends the connection and comes back as a classifiable error
///   (`eviction_error`);
/// - result-framed reply bodies are unwrapped;
/// - group polls follow `g2_groups.hpp`.
/// See `transport.hpp` for the interface.

#include "iggy/g2_groups.hpp"
#include "iggy/transport.hpp"
#include "proto/g2_batch.hpp"
#include "proto/g2_framing.hpp"
#include "proto/poll.hpp"

#include <random>

namespace iss::iggy {

/// An eviction as an error a caller can classify: credentials -> 42/53/47 (fail, never
/// retried), version gate -> 14003 with the server's window in the detail (fail), a dead
/// session -> 30 StaleClient (retry: reconnect, log in, re-join), the rest -> `protocol_error`
/// (retry on a new connection).
iss::error eviction_error(const proto::g2::eviction_header& e);

class g2_transport final : public transport {
public:
    explicit g2_transport(transport_context ctx);

    [[nodiscard]] proto::wire_protocol protocol() const noexcept override { return protocol_; }
    net::awaitable<login_outcome> login(connection& c, proto::login_plan plan) override;
    result<void> encode(proto::byte_buffer& out, const request& r) override;
    net::awaitable<result<proto::bytes_view>> exchange(connection& c, proto::bytes_view frame,
                                                       reply_slot slot) override;

    result<std::optional<proto::stream_details>> stream_reply(proto::bytes_view reply) override;
    result<proto::stream_details> created_stream(proto::bytes_view reply) override;
    result<std::optional<proto::topic_details>> topic_reply(proto::bytes_view reply) override;
    result<proto::topic_details> created_topic(proto::bytes_view reply) override;
    result<std::optional<proto::consumer_group_info>> created_group(proto::bytes_view reply) override;
    result<void> sent(proto::bytes_view reply) override;
    net::awaitable<result<poll_batch>> poll(session& s, poll_args a) override;
    void groups_changed() noexcept override { groups_.clear(); }

private:
    /// Builds the frame of `req` (header from the session's numbering) and remembers its
    /// command and operation for `exchange`.
    template <class Request>
    result<void> build(proto::byte_buffer& out, const Request& req);
    /// Writes `frame` and reads one whole frame into `slot`'s buffer. With `probe`, the first 8
    /// bytes are read first: a G1-shaped answer, a close or silence sets `g1_answer`.
    net::awaitable<result<proto::bytes_view>> roundtrip(connection& c, proto::bytes_view frame, reply_slot slot,
                                                        bool probe, bool& g1_answer);

    transport_context ctx_;
    proto::wire_protocol protocol_ = proto::wire_protocol::g2_0_9;
    proto::g2::session_state numbering_;
    proto::g2::operation last_op_ = proto::g2::operation::reserved;
    std::uint32_t last_code_ = 0;  // the command code of the last request built
    std::mt19937_64 rng_{std::random_device{}()};
    proto::g2::frame_assembler in_;
    proto::g2::frame_assembler poll_in_;
    proto::byte_buffer out_;  // the Register request
    proto::poll_reply poll_;
    poll_buffers poll_buffers_;  // each poll reply's buffer is handed over with its batch
    g2_groups groups_;
};

}  // namespace iss::iggy

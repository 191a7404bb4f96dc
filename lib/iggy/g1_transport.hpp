// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The G1 transport (Iggy server 0.8.x; docs/protocol.md §3): `[length][code]` requests,
/// `[status][length]` replies read through `proto::frame_assembler`, LoginUser or
/// LoginWithPersonalAccessToken. Statuses 8, 30 and 100 end the session (the server closes the
/// socket after them): the connection is closed and the session told. See `transport.hpp`.

#include "iggy/transport.hpp"
#include "proto/framing.hpp"
#include "proto/poll.hpp"

namespace iss::iggy {

class g1_transport final : public transport {
public:
    explicit g1_transport(transport_context ctx);

    [[nodiscard]] proto::wire_protocol protocol() const noexcept override { return proto::wire_protocol::g1_0_8; }
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

private:
    net::awaitable<result<proto::bytes_view>> exchange_uncounted(connection& c, proto::bytes_view frame,
                                                                 reply_slot slot);

    transport_context ctx_;
    proto::frame_assembler in_;       // replies other than polls
    proto::frame_assembler poll_in_;  // poll replies: each buffer is handed over with its batch
    proto::byte_buffer out_;          // the login request
    proto::poll_reply poll_;
    poll_buffers poll_buffers_;
};

}  // namespace iss::iggy

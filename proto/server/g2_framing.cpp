// SPDX-License-Identifier: Apache-2.0
// The G2 frames of the server side (the test broker): request headers decoded and checked,
// reply and eviction frames and result-framed bodies written (docs/protocol.md §8). Target
// proto_server: the daemon never links it.
#include "proto/g2_framing.hpp"

#include "proto/g2_codec.hpp"

#include <fmt/format.h>

namespace iss::proto::g2 {

using framing_codec::checked_size;

namespace {

void put_u128(std::byte* p, u128 v) noexcept { store_le(p, v); }

}  // namespace

std::size_t begin_reply(byte_buffer& out, const reply_header& h) {
    const std::size_t start = out.size();
    out.resize(start + header_size);
    std::byte* p = out.data() + start;
    store_le<std::uint32_t>(p + off::size, static_cast<std::uint32_t>(header_size));
    p[off::command] = static_cast<std::byte>(frame_kind::reply);
    put_u128(p + off::rp_request_checksum, h.request_checksum);
    put_u128(p + off::rp_context, h.context);
    put_u128(p + off::rp_client, h.client);
    store_le(p + off::rp_op, h.op);
    store_le(p + off::rp_commit, h.commit);
    store_le(p + off::rp_timestamp, h.timestamp);
    store_le(p + off::rp_request, h.request);
    p[off::rp_operation] = static_cast<std::byte>(h.operation_);
    store_le(p + off::rp_status, h.status);
    return start;
}

void append_reply(byte_buffer& out, const reply_header& h, bytes_view body) {
    const std::size_t start = begin_reply(out, h);
    out.insert(out.end(), body.begin(), body.end());
    (void)finish_frame(out, start);
}

void append_eviction(byte_buffer& out, const eviction_header& h) {
    const std::size_t start = out.size();
    out.resize(start + header_size);
    std::byte* p = out.data() + start;
    store_le<std::uint32_t>(p + off::size, static_cast<std::uint32_t>(header_size));
    p[off::command] = static_cast<std::byte>(frame_kind::eviction);
    put_u128(p + off::ev_client, h.client);
    store_le(p + off::ev_version, h.server_protocol_version);
    store_le(p + off::ev_version_min, h.server_protocol_version_min);
    p[off::ev_reason] = static_cast<std::byte>(h.reason);
}

result<request_header> decode_request_header(bytes_view frame) {
    auto size = checked_size(frame, frame_kind::request, "request");
    if (!size) return size.error();
    const std::byte* p = frame.data();
    request_header h;
    h.size = *size;
    h.client = load_le<u128>(p + off::rq_client);
    h.request_checksum = load_le<u128>(p + off::rq_request_checksum);
    h.timestamp = load_le<std::uint64_t>(p + off::rq_timestamp);
    h.request = load_le<std::uint64_t>(p + off::rq_request);
    h.op = static_cast<operation>(p[off::rq_operation]);
    h.session = load_le<std::uint64_t>(p + off::rq_session);
    h.user_id = load_le<std::uint32_t>(p + off::rq_user_id);
    h.code = load_le<std::uint32_t>(p + off::rq_code);
    return h;
}

result<void> validate_request_header(const request_header& h) {
    auto bad = [](std::string_view what) { return iss::error{errc::invalid_value, std::string{what}}; };
    if (h.client == 0) return bad("request.client (must be != 0)");
    if (h.op == operation::reserved) return bad("request.operation (Reserved)");
    if (h.op == operation::register_client) {
        if (h.session != 0) return bad("request.session (Register: must be 0)");
        if (h.request != 0) return bad("request.request (Register: must be 0)");
    } else if (h.op != operation::non_replicated) {
        if (h.session == 0) return bad("request.session (must be > 0 after Register)");
        if (h.request == 0) return bad("request.request (must be > 0 after Register)");
    }
    return {};
}

result<request_frame> decode_request_frame(bytes_view frame) {
    auto h = decode_request_header(frame);
    if (!h) return h.error();
    if (h->size != frame.size())
        return iss::error{errc::inconsistent, fmt::format("request.size ({} for {} bytes)", h->size, frame.size())};
    return request_frame{*h, frame.subspan(header_size)};
}

void append_result_ok(byte_buffer& out) {
    writer w{out};
    w.u32(0);
}

void append_result_error(byte_buffer& out, std::uint32_t c) {
    writer w{out};
    w.u32(1);
    w.u32(0);
    w.u32(c);
}

}  // namespace iss::proto::g2

// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// What the G2 command codecs share, the client's (`g2_commands.cpp`) and the server's
/// (`server/g2_requests.cpp`, `server/g2_replies.cpp`, target proto_server): names and option
/// blocks as G2 writes them, and the check that a body has no trailing bytes. Included by
/// those .cpp files only.

#include "proto/error.hpp"
#include "proto/wire.hpp"

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace iss::proto::g2::detail {

/// A u8-length name of 1..255 bytes.
inline result<void> put_name(writer& w, const std::string& s, std::string_view field) {
    if (s.empty() || s.size() > 255) return iss::error{errc::invalid_length, fmt::format("{} (1..255 bytes)", field)};
    w.u8(static_cast<std::uint8_t>(s.size()));
    w.text(s);
    return {};
}

/// An options block (u32 length, text); the sink sends none.
inline result<void> put_options(writer& w, std::string_view options) {
    w.u32(static_cast<std::uint32_t>(options.size()));
    w.text(options);
    return {};
}

/// `what (trailing bytes)` when `r` has bytes left.
inline result<void> no_trailing(const reader& r, std::string_view what) {
    if (!r.empty()) return iss::error{errc::inconsistent, fmt::format("{} (trailing bytes)", what)};
    return {};
}

}  // namespace iss::proto::g2::detail

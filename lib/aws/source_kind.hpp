// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `aws::source_kind`: which credentials source to use (config `s3.credentials.source`). A
/// header of its own, without Asio, so that lib/config can name the type it reads into.

#include <cstdint>
#include <string_view>

namespace iss::aws {

/// Which source to use: the chain, or one of its steps pinned.
enum class source_kind : std::uint8_t { automatic, static_keys, env, web_identity, profile, container, imds };
/// "auto", "static", "env", "web_identity", "profile", "container", "imds" (providers.cpp).
[[nodiscard]] std::string_view to_string(source_kind k) noexcept;

}  // namespace iss::aws

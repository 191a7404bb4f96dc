// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// What the credential providers (lib/aws/providers.cpp) and their STS calls
/// (lib/aws/sts.cpp) share: file and text helpers and the one way they send an HTTP request.
/// Internal to lib/aws.

#include "aws/providers.hpp"
#include "http/types.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace iss::aws::detail {

/// `s` without leading and trailing white space.
[[nodiscard]] std::string_view trim(std::string_view s);
/// ASCII case-insensitive equality.
[[nodiscard]] bool iequal(std::string_view a, std::string_view b);
/// Reads a whole file: nullopt when it does not exist; errc::bad_source (naming `role` and
/// the path) when it exists but cannot be read.
[[nodiscard]] result<std::optional<std::string>> read_file(const std::string& path, std::string_view role);
/// A token file's content, trimmed; errc::bad_source when missing, empty or more than one
/// line. Errors name the file, never the content.
[[nodiscard]] result<std::string> read_token(const std::string& path, std::string_view role);
/// `iggy-s3-sink-<unix seconds>` from `clk`: the role session name when none is configured.
[[nodiscard]] std::string default_session_name(const iss::clock& clk);
/// Sends `req` to `url` through the context's HTTP client within `timeout`; errc::bad_source
/// for a URL that does not parse, errc::fetch_failed (naming `what` and the endpoint) for a
/// transport failure; a cancellation throws `operation_aborted` (docs/architecture.md §8.4.5).
task<result<http::response>> send(const provider_context& ctx, std::string url, http::request req,
                                  std::chrono::milliseconds timeout, std::string_view what);
/// The request target of `url`: its path and query ("/" when empty).
[[nodiscard]] std::string target_of(std::string_view url);

}  // namespace iss::aws::detail

// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The admin server's request path without the socket: what a request (or a request that
/// cannot be read) is answered with. server.cpp reads with Beast's `request_parser` and calls
/// these; `respond` runs the same steps over bytes in memory (the fuzz target
/// tests/fuzz/admin_request_fuzz.cpp and the unit tests).
///
/// Answers (RFC 9110 §15):
/// - a parsed GET or HEAD of `/metrics`, `/healthz`, `/readyz`: see server.hpp; other paths 404,
///   other methods 405 with `Allow: GET, HEAD`;
/// - a request header larger than the limit: 431 Request Header Fields Too Large (RFC 6585 §5),
///   then the connection is closed;
/// - bytes that are not an HTTP/1.x request header (a bad method, target, version, header line,
///   or a body, which no admin path takes): 400 Bad Request, then the connection is closed.

#include "admin/server.hpp"

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iss::admin {

using admin_request = boost::beast::http::request<boost::beast::http::empty_body>;
using admin_response = boost::beast::http::response<boost::beast::http::string_body>;

/// The answer to a parsed request (keep-alive as the request asks).
[[nodiscard]] admin_response answer(const admin_request& req, const handlers& hs);

/// Why a request could not be read, as the server counts it.
enum class read_failure {
    header_too_large,  ///< 431 and close
    bad_request,       ///< 400 and close
    gone,              ///< EOF, reset, timeout, cancellation: close without an answer
};

/// Classifies an error of reading one request (Beast's `http::error` values from the parser,
/// `buffer_overflow` from a full read buffer, or a socket error).
[[nodiscard]] read_failure classify_read_error(const boost::system::error_code& ec);

/// The answer to a request that could not be read (431 or 400, `Connection: close`), or
/// nothing for `gone`.
[[nodiscard]] std::optional<admin_response> refusal(read_failure f);

/// Reads `bytes` as the server reads a connection's input (header limit `max_request_bytes`)
/// and returns what it would write, one string per answer: every complete request's, in order, up to
/// and including the first refusal or the first `Connection: close`. Input that ends inside a
/// request adds nothing for that request.
[[nodiscard]] std::vector<std::string> respond_each(std::string_view bytes, const handlers& hs,
                                                    std::size_t max_request_bytes);
/// respond_each's answers as one string (what goes down the socket).
[[nodiscard]] std::string respond(std::string_view bytes, const handlers& hs, std::size_t max_request_bytes);

}  // namespace iss::admin

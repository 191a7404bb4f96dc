// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The SigV4 test suite's text formats, for the `iggy-s3-sink sigv4` subcommand and the
/// data-driven tests: a request in `request.txt` form, a `context.json`, and the signed
/// request in `header-signed-request.txt` / `query-signed-request.txt` form
/// (tests/data/sigv4/README.md). Pure; the caller reads the files.
///
/// Target `sigv4_file` (links Boost.JSON); the signer itself (`sigv4`) does not need it.

#include "sigv4/signer.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iss::sigv4 {

/// A request in `request.txt` form:
///
///     METHOD <path-and-query> HTTP/1.1
///     Name:value          (value untrimmed; a line starting with SP/HT continues the previous one)
///
///     <body>
struct request_file {
    std::string method;
    std::string target;                     ///< as written (raw path, query as written)
    std::string version;                    ///< "HTTP/1.1"
    std::string path;                       ///< `target` before '?'
    std::optional<std::string> query;       ///< `target` after '?', as written
    std::vector<std::string> header_lines;  ///< raw lines, continuation lines included (reprinted verbatim)
    std::vector<owned_header> headers;      ///< parsed; continuation lines joined with one space
    std::string body;                       ///< bytes after the blank line
};

/// Parses `request.txt` text (LF or CRLF line ends). The target may contain spaces
/// (`/example space/`): method = first word, version = last word.
/// \return the request or `iss::errc::parse_error` naming the line.
[[nodiscard]] result<request_file> parse_request_file(std::string_view text);

/// Everything `context.json` says about how to sign.
struct signing_context {
    credentials creds;
    signing_params params;
    std::chrono::system_clock::time_point time;
    std::chrono::seconds expires{3600};  ///< `expiration_in_seconds` (query form)
    /// How the request-line path is given to the signer: `double_uri_encode` (absent = true, as
    /// the suite's harness ran it) means the harness fed the path as the wire path, which is
    /// then encoded once more -> `encoded`; `double_uri_encode: false` (the s3-docs examples)
    /// means the path is the raw key -> `raw`, encoded once. Either way the path as written gets
    /// exactly one UriEncode pass, as the suite README says.
    path_form form = path_form::encoded;
    std::string payload_sha256;  ///< `payload_sha256` key (s3-docs), empty if absent
};

/// Parses `context.json`. Keys: `credentials.{access_key_id, secret_access_key, token}`,
/// `region`, `service`, `timestamp` (`2015-08-30T12:36:00Z`), `normalize` (default false),
/// `double_uri_encode` (default true), `sign_body` (default false), `omit_session_token`
/// (default false), `expiration_in_seconds` (default 3600), and the s3-docs keys `payload`
/// (`signed` | `UNSIGNED-PAYLOAD` | `STREAMING-AWS4-HMAC-SHA256-PAYLOAD`, which adds
/// `x-amz-content-sha256` and overrides `sign_body`) and `payload_sha256`. Unknown keys are
/// ignored (the files carry documentation keys).
/// \return the context or `iss::errc::parse_error` naming the key.
[[nodiscard]] result<signing_context> parse_signing_context(std::string_view json);

/// How to print the signed request.
enum class output_form {
    /// The suite's `*-signed-request.txt`: request line as written, then the request's header
    /// lines as written, then the added headers; Authorization with ", "; presign parameters
    /// appended in the order Algorithm, Credential, Date, SignedHeaders, Expires,
    /// Security-Token, Signature.
    suite,
    /// The S3 documentation's form (s3-docs): encoded path on the request line, Authorization
    /// with ",", presign parameters in canonical (sorted) order followed by the signature.
    aws_docs,
};

/// The result of signing a request file.
struct file_signing_result {
    std::string signed_request;  ///< complete request text (ends with the body)
    std::string canonical_request;
    std::string string_to_sign;
    std::string signature;
    std::string authorization;  ///< header form only
    signing_key key;            ///< never print
    std::string amz_date;
    std::string scope;
};

/// Signs `req` as `ctx` says, in header form or (`query_form`) presigned query form.
/// Headers the signer adds itself that the file already carries (the s3-docs requests have
/// `x-amz-date` and `x-amz-content-sha256`) are checked against the context (same time; the
/// payload hash literal or `payload_sha256`), kept in place and not added twice; an
/// `Authorization` header is an error (`errc::reserved_header`).
[[nodiscard]] result<file_signing_result> sign_request_file(const request_file& req, const signing_context& ctx,
                                                            bool query_form, output_form form = output_form::suite);

}  // namespace iss::sigv4

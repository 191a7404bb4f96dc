// SPDX-License-Identifier: Apache-2.0
// `iggy-s3-sink sigv4`: signs a request given in the SigV4 test suite's request.txt form with
// the credentials, time and flags of a context.json, and prints the signed request. For
// debugging SignatureDoesNotMatch against a store: compare --verbose's canonical request with
// the one the store returns in its error body.
#include "daemon/commands.hpp"
#include "sigv4/request_file.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

namespace iss::app {

namespace {

void print_sigv4_help() {
    fmt::print(
        "Usage: iggy-s3-sink sigv4 --request FILE --context FILE [--query] [--verbose] [--doc-form]\n\n"
        "Signs the request in FILE (the SigV4 test suite's request.txt form: request line, Name:value\n"
        "headers, blank line, body; the path is raw, not percent-encoded) with the credentials, region,\n"
        "service, timestamp and flags of the context FILE (the suite's context.json keys: credentials,\n"
        "region, service, timestamp, normalize, double_uri_encode (default true), sign_body,\n"
        "omit_session_token, expiration_in_seconds; and payload, payload_sha256 for S3), and prints the\n"
        "signed request to stdout, in the form of the suite's header-signed-request.txt.\n\n"
        "Options:\n"
        "  --request FILE   the request to sign\n"
        "  --context FILE   context.json with credentials, time and signing flags\n"
        "  --query          presign instead: X-Amz-* query parameters (query-signed-request.txt form)\n"
        "  --verbose        also print the canonical request, string to sign and signature (stderr)\n"
        "  --doc-form       print as the AWS S3 documentation does (encoded path, ',' separators,\n"
        "                   presign parameters in sorted order)\n"
        "  --help           show this help\n\n"
        "S3 signs with normalize=false and double_uri_encode=false. The secret key is never printed;\n"
        "the canonical request shows a session token as sent.\n");
}

std::optional<std::string> read_file(const std::string& path) {
    std::ifstream in{path, std::ios::binary};
    if (!in) return std::nullopt;
    return std::string{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

}  // namespace

int run_sigv4(std::span<const std::string_view> args);

int run_sigv4(std::span<const std::string_view> args) {
    std::string request_path;
    std::string context_path;
    bool query_form = false;
    bool verbose = false;
    bool doc_form = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view a = args[i];
        if (a == "--help" || a == "-h") {
            print_sigv4_help();
            return exit_ok;
        }
        if (a == "--query") {
            query_form = true;
        } else if (a == "--verbose" || a == "-v") {
            verbose = true;
        } else if (a == "--doc-form") {
            doc_form = true;
        } else if ((a == "--request" || a == "--context") && i + 1 < args.size()) {
            (a == "--request" ? request_path : context_path) = std::string{args[++i]};
        } else {
            fmt::print(stderr, "iggy-s3-sink sigv4: unknown or incomplete option '{}'; see --help\n", a);
            return exit_usage;
        }
    }
    if (request_path.empty() || context_path.empty()) {
        fmt::print(stderr, "iggy-s3-sink sigv4: --request FILE and --context FILE are required; see --help\n");
        return exit_usage;
    }
    const auto request_text = read_file(request_path);
    if (!request_text) {
        fmt::print(stderr, "iggy-s3-sink sigv4: cannot read request file {}\n", request_path);
        return exit_failure;
    }
    const auto context_text = read_file(context_path);
    if (!context_text) {
        fmt::print(stderr, "iggy-s3-sink sigv4: cannot read context file {}\n", context_path);
        return exit_failure;
    }
    const auto req = sigv4::parse_request_file(*request_text);
    if (!req) {
        fmt::print(stderr, "iggy-s3-sink sigv4: {}: {}\n", request_path, req.error());
        return exit_failure;
    }
    const auto ctx = sigv4::parse_signing_context(*context_text);
    if (!ctx) {
        fmt::print(stderr, "iggy-s3-sink sigv4: {}: {}\n", context_path, ctx.error());
        return exit_failure;
    }
    const auto r = sigv4::sign_request_file(*req, *ctx, query_form,
                                            doc_form ? sigv4::output_form::aws_docs : sigv4::output_form::suite);
    if (!r) {
        fmt::print(stderr, "iggy-s3-sink sigv4: cannot sign: {}\n", r.error());
        return exit_failure;
    }
    if (verbose) {
        fmt::print(stderr,
                   "--- canonical request ({} form)\n{}\n--- string to sign\n{}\n--- signature\n{}\n--- signed request "
                   "(stdout)\n",
                   query_form ? "query" : "header", r->canonical_request, r->string_to_sign, r->signature);
        std::fflush(stderr);
    }
    // Exactly the bytes of the signed request: no final newline beyond what the body has.
    std::fwrite(r->signed_request.data(), 1, r->signed_request.size(), stdout);
    return std::fflush(stdout) == 0 ? exit_ok : exit_failure;
}

}  // namespace iss::app

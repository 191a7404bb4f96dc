// SPDX-License-Identifier: Apache-2.0
// `iggy-s3-sink sigv4`: signs a request given in the SigV4 test suite's request.txt form with
// the credentials, time and flags of a context.json, and prints the signed request. For
// debugging SignatureDoesNotMatch against a store: compare --verbose's canonical request with
// the one the store returns in its error body.
#include "daemon/cli.hpp"
#include "daemon/commands.hpp"
#include "sigv4/request_file.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>

namespace iss::app {

namespace {

struct sigv4_args {
    std::string request_path;
    std::string context_path;
    bool query_form = false;
    bool verbose = false;
    bool doc_form = false;
};

std::optional<std::string> read_file(const std::string& path) {
    std::ifstream in{path, std::ios::binary};
    if (!in) return std::nullopt;
    return std::string{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

int run_sigv4(const sigv4_args& a) {
    const auto& [request_path, context_path, query_form, verbose, doc_form] = a;
    const auto request_text = read_file(request_path);
    if (!request_text) {
        print_error("sigv4", "cannot read request file {}", request_path);
        return exit_failure;
    }
    const auto context_text = read_file(context_path);
    if (!context_text) {
        print_error("sigv4", "cannot read context file {}", context_path);
        return exit_failure;
    }
    const auto req = sigv4::parse_request_file(*request_text);
    if (!req) {
        print_error("sigv4", "{}: {}", request_path, req.error());
        return exit_failure;
    }
    const auto ctx = sigv4::parse_signing_context(*context_text);
    if (!ctx) {
        print_error("sigv4", "{}: {}", context_path, ctx.error());
        return exit_failure;
    }
    const auto r = sigv4::sign_request_file(*req, *ctx, query_form,
                                            doc_form ? sigv4::output_form::aws_docs : sigv4::output_form::suite);
    if (!r) {
        print_error("sigv4", "cannot sign: {}", r.error());
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

}  // namespace

command_main define_sigv4(CLI::App& sub) {
    auto a = std::make_shared<sigv4_args>();
    sub.add_option("--request", a->request_path, "the request to sign")->type_name("FILE")->required();
    sub.add_option("--context", a->context_path, "context.json with credentials, time and signing flags")
        ->type_name("FILE")
        ->required();
    sub.add_flag("--query", a->query_form, "presign instead: X-Amz-* query parameters (query-signed-request.txt form)");
    sub.add_flag("-v,--verbose", a->verbose, "also print the canonical request, string to sign and signature (stderr)");
    sub.add_flag("--doc-form", a->doc_form,
                 "print as the AWS S3 documentation does (encoded path, ',' separators, presign parameters in "
                 "sorted order)");
    set_help_text(sub,
                  "Signs the request in FILE (the SigV4 test suite's request.txt form: request line, Name:value\n"
                  "headers, blank line, body; the path is raw, not percent-encoded) with the credentials, region,\n"
                  "service, timestamp and flags of the context FILE (the suite's context.json keys: credentials,\n"
                  "region, service, timestamp, normalize, double_uri_encode (default true), sign_body,\n"
                  "omit_session_token, expiration_in_seconds; and payload, payload_sha256 for S3), and prints the\n"
                  "signed request to stdout, in the form of the suite's header-signed-request.txt.\n\n"
                  "S3 signs with normalize=false and double_uri_encode=false. The secret key is never printed;\n"
                  "the canonical request shows a session token as sent.",
                  "  0   signed\n  1   a file cannot be read or the request cannot be signed\n  64  usage error");
    return [a] { return run_sigv4(*a); };
}

}  // namespace iss::app

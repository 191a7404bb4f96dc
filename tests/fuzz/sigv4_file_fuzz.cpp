// SPDX-License-Identifier: Apache-2.0
// libFuzzer target over the SigV4 test suite's text formats (sigv4/request_file.hpp), which the
// `iggy-s3-sink sigv4` subcommand reads from user-given files: a request in `request.txt`
// form (`parse_request_file`, then its query through `parse_query`) and a `context.json`
// (`parse_signing_context`); each parsed request is signed (`sign_request_file`, header and
// presigned query form, suite and AWS-documentation output) with the suite's own context, and
// each parsed context signs the suite's `get-vanilla` request.
//
// Input: one file's text; both parsers get it.
// Properties (besides "no crash, no undefined behaviour, never throws"):
// - a parsed request printed back (request line, header lines as written, blank line, body)
//   parses to the same request; its query's parameters, encoded again, decode to the same ones;
// - signing is deterministic; a signed request parses as a request file again, carries the
//   request's header lines in order, then (header form) the Authorization it reports, or
//   (query form) its signature in the target; signatures are 64 lower-case hex digits;
// - a parsed context written back as context.json parses to the same context.
// Built by scripts/fuzz (tests/fuzz/README.md).
#include "sigv4/encoding.hpp"
#include "sigv4/request_file.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace s = iss::sigv4;

namespace {

// The suite's context (e.g. get-vanilla/context.json), with a session token.
const s::signing_context& suite_context() {
    static const s::signing_context ctx = [] {
        auto c = s::parse_signing_context(R"({"credentials": {"access_key_id": "AKIDEXAMPLE",
            "secret_access_key": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "token": "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267"},
            "expiration_in_seconds": 3600, "normalize": false, "region": "us-east-1", "service": "service",
            "sign_body": true, "timestamp": "2015-08-30T12:36:00Z"})");
        ISS_FUZZ_CHECK(c.has_value());
        return *c;
    }();
    return ctx;
}

const s::request_file& vanilla_request() {
    static const s::request_file req = [] {
        auto r = s::parse_request_file("GET / HTTP/1.1\nHost:example.amazonaws.com\n\n");
        ISS_FUZZ_CHECK(r.has_value());
        return *r;
    }();
    return req;
}

std::string print(const s::request_file& r) {
    // CRLF after the request line: a version ending in CR keeps it (the parser drops one CR).
    std::string out = r.method + " " + r.target + " " + r.version + "\r\n";
    for (const auto& l : r.header_lines) out += l + "\n";
    out += "\n";
    out += r.body;
    return out;
}

bool same(const s::request_file& a, const s::request_file& b) {
    if (a.method != b.method || a.target != b.target || a.version != b.version || a.path != b.path ||
        a.query != b.query || a.header_lines != b.header_lines || a.body != b.body ||
        a.headers.size() != b.headers.size())
        return false;
    for (std::size_t i = 0; i < a.headers.size(); ++i)
        if (a.headers[i].name != b.headers[i].name || a.headers[i].value != b.headers[i].value) return false;
    return true;
}

bool lower_hex64(std::string_view h) {
    return h.size() == 64 && h.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// `twice`: sign again and compare (signing is the costly part of this target, so only once
// per input).
void sign(const s::request_file& req, const s::signing_context& ctx, bool query, s::output_form form, bool twice) {
    auto a = s::sign_request_file(req, ctx, query, form);
    if (twice) {
        auto b = s::sign_request_file(req, ctx, query, form);
        ISS_FUZZ_CHECK(a.has_value() == b.has_value());
        if (a) ISS_FUZZ_CHECK(a->signed_request == b->signed_request && a->signature == b->signature);
    }
    if (!a) return;
    ISS_FUZZ_CHECK(lower_hex64(a->signature));
    // Header values from the context (region, token) may hold line breaks: then the text is
    // not a request file any more, and nothing below applies.
    if (ctx.creds.session_token.reveal().find_first_of("\r\n") != std::string::npos) return;
    auto again = s::parse_request_file(a->signed_request);
    ISS_FUZZ_CHECK(again.has_value());
    ISS_FUZZ_CHECK(again->header_lines.size() >= req.header_lines.size());
    for (std::size_t i = 0; i < req.header_lines.size(); ++i)
        ISS_FUZZ_CHECK(again->header_lines[i] == req.header_lines[i]);
    ISS_FUZZ_CHECK(again->body == req.body);
    if (query) {
        ISS_FUZZ_CHECK(again->target.find("X-Amz-Signature=" + a->signature) != std::string::npos);
    } else {
        ISS_FUZZ_CHECK(!again->headers.empty());
        ISS_FUZZ_CHECK(again->headers.back().name == "Authorization");
        ISS_FUZZ_CHECK(again->headers.back().value == a->authorization);
    }
}

void request_file(std::string_view text) {
    auto req = s::parse_request_file(text);
    if (!req) return;
    auto again = s::parse_request_file(print(*req));
    ISS_FUZZ_CHECK(again.has_value());
    ISS_FUZZ_CHECK(same(*again, *req));
    if (req->query) {
        // Decoded parameters, encoded again, decode to the same parameters.
        if (auto q = s::parse_query(*req->query)) {
            std::string wire;
            for (const auto& p : *q) {
                if (!wire.empty()) wire += '&';
                wire += s::uri_encode(p.name, false) + "=" + s::uri_encode(p.value, false);
            }
            auto back = s::parse_query(wire);
            ISS_FUZZ_CHECK(back.has_value() && back->size() == q->size());
            for (std::size_t i = 0; i < q->size(); ++i)
                ISS_FUZZ_CHECK((*back)[i].name == (*q)[i].name && (*back)[i].value == (*q)[i].value);
        }
    }
    const auto& ctx = suite_context();
    sign(*req, ctx, false, s::output_form::suite, true);
    sign(*req, ctx, true, s::output_form::suite, false);
    sign(*req, ctx, false, s::output_form::aws_docs, false);
}

std::string_view payload_name(s::payload_mode p) {
    switch (p) {
        case s::payload_mode::signed_payload: return "signed";
        case s::payload_mode::unsigned_payload: return s::unsigned_payload_literal;
        case s::payload_mode::streaming: return s::streaming_payload_literal;
    }
    return "signed";
}

void context(std::string_view text) {
    auto ctx = s::parse_signing_context(text);
    if (!ctx) return;
    sign(vanilla_request(), *ctx, false, s::output_form::suite, false);
    sign(vanilla_request(), *ctx, true, s::output_form::suite, false);

    const auto day = std::chrono::floor<std::chrono::days>(ctx->time);
    const std::chrono::year_month_day ymd{day};
    const std::chrono::hh_mm_ss hms{ctx->time - day};
    if (static_cast<int>(ymd.year()) < 0) return;  // "-001-..." is what %4d reads, not what we write
    boost::json::object o;
    o["credentials"] = {{"access_key_id", ctx->creds.access_key_id.get()},
                        {"secret_access_key", ctx->creds.secret_access_key.reveal()},
                        {"token", ctx->creds.session_token.reveal()}};
    o["region"] = ctx->params.region;
    o["service"] = ctx->params.service;
    o["timestamp"] = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", static_cast<int>(ymd.year()),
                                 static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                                 hms.hours().count(), hms.minutes().count(), hms.seconds().count());
    o["normalize"] = ctx->params.normalize_path;
    o["double_uri_encode"] = ctx->params.double_encode_path;
    o["omit_session_token"] = ctx->params.omit_session_token;
    if (ctx->params.payload == s::payload_mode::signed_payload) o["sign_body"] = ctx->params.add_content_sha256_header;
    else o["payload"] = payload_name(ctx->params.payload);
    o["payload_sha256"] = ctx->payload_sha256;
    o["expiration_in_seconds"] = ctx->expires.count();
    auto again = s::parse_signing_context(boost::json::serialize(o));
    ISS_FUZZ_CHECK(again.has_value());
    ISS_FUZZ_CHECK(again->creds.access_key_id.get() == ctx->creds.access_key_id.get() &&
                   again->creds.secret_access_key == ctx->creds.secret_access_key &&
                   again->creds.session_token == ctx->creds.session_token);
    ISS_FUZZ_CHECK(again->params.region == ctx->params.region && again->params.service == ctx->params.service);
    ISS_FUZZ_CHECK(again->time == ctx->time && again->expires == ctx->expires && again->form == ctx->form);
    ISS_FUZZ_CHECK(again->params.normalize_path == ctx->params.normalize_path &&
                   again->params.double_encode_path == ctx->params.double_encode_path &&
                   again->params.omit_session_token == ctx->params.omit_session_token &&
                   again->params.payload == ctx->params.payload &&
                   again->params.add_content_sha256_header == ctx->params.add_content_sha256_header);
    ISS_FUZZ_CHECK(again->payload_sha256 == ctx->payload_sha256);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    const std::string_view text{reinterpret_cast<const char*>(bytes), size};
    request_file(text);
    context(text);
    return 0;
}

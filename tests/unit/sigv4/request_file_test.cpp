// SPDX-License-Identifier: Apache-2.0
// Data-driven SigV4 tests over tests/data/sigv4 (docs/architecture.md §8.7.3): every case of AWS's
// suite in header and query form, every s3-docs example, the mode always from context.json.
#include "sigv4/request_file.hpp"

#include "sigv4/chunked.hpp"
#include "testdata.hpp"

#include <boost/json/parse.hpp>

#include "catch2_compat.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <sstream>

namespace sv = iss::sigv4;
namespace td = sigv4_testdata;

namespace {

struct loaded_case {
    sv::request_file req;
    sv::signing_context ctx;
};

loaded_case load(const std::filesystem::path& d) {
    auto req = sv::parse_request_file(td::read(d / "request.txt"));
    INFO(d.string());
    REQUIRE(req.has_value());
    auto ctx = sv::parse_signing_context(td::read(d / "context.json"));
    REQUIRE(ctx.has_value());
    return {std::move(*req), std::move(*ctx)};
}

// cases.tsv: header row, then one row per case.
std::map<std::string, std::map<std::string, std::string>> cases_tsv() {
    std::istringstream in{td::read(td::dir() / "cases.tsv")};
    std::string line;
    std::getline(in, line);
    std::vector<std::string> cols;
    std::istringstream hs{line};
    for (std::string c; std::getline(hs, c, '\t');) cols.push_back(c);
    std::map<std::string, std::map<std::string, std::string>> out;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        std::istringstream ls{line};
        std::map<std::string, std::string> row;
        std::size_t i = 0;
        for (std::string c; std::getline(ls, c, '\t') && i < cols.size(); ++i) row[cols[i]] = c;
        out[row["case"]] = row;
    }
    return out;
}

}  // namespace

TEST_CASE("every suite case signs byte for byte in header form", "[sigv4][suite]") {
    const auto cases = td::suite_cases();
    REQUIRE(cases.size() >= 38);
    for (const auto& name : cases) {
        DYNAMIC_SECTION(name) {
            const auto d = td::dir() / name;
            const auto c = load(d);
            auto r = sv::sign_request_file(c.req, c.ctx, false);
            REQUIRE(r.has_value());
            CHECK(r->canonical_request == td::read(d / "header-canonical-request.txt"));
            CHECK(r->string_to_sign == td::read(d / "header-string-to-sign.txt"));
            CHECK(r->signature == td::read(d / "header-signature.txt"));
            CHECK(r->signed_request == td::read(d / "header-signed-request.txt"));
        }
    }
}

TEST_CASE("every suite case signs byte for byte in query (presigned) form", "[sigv4][suite]") {
    for (const auto& name : td::suite_cases()) {
        DYNAMIC_SECTION(name) {
            const auto d = td::dir() / name;
            const auto c = load(d);
            auto r = sv::sign_request_file(c.req, c.ctx, true);
            REQUIRE(r.has_value());
            CHECK(r->canonical_request == td::read(d / "query-canonical-request.txt"));
            CHECK(r->string_to_sign == td::read(d / "query-string-to-sign.txt"));
            CHECK(r->signature == td::read(d / "query-signature.txt"));
            CHECK(r->signed_request == td::read(d / "query-signed-request.txt"));
        }
    }
}

TEST_CASE(
    "S3 path rules (no normalisation, single encoding) give the expected canonical request exactly where cases.tsv "
    "says so",
    "[sigv4][suite][s3]") {
    const auto table = cases_tsv();
    REQUIRE(table.size() == td::suite_cases().size());
    for (const auto& name : td::suite_cases()) {
        DYNAMIC_SECTION(name) {
            REQUIRE(table.count(name) == 1);
            const bool expect_same = table.at(name).at("s3_path_rules_give_expected") == "true";
            const auto d = td::dir() / name;
            auto c = load(d);
            // S3's path rules: the raw path encoded once, never normalised. Everything else
            // (service scope, sign_body, tokens) stays as the context says.
            c.ctx.params.normalize_path = false;
            c.ctx.params.double_encode_path = false;
            c.ctx.form = sv::path_form::raw;
            auto r = sv::sign_request_file(c.req, c.ctx, false);
            REQUIRE(r.has_value());
            CHECK((r->canonical_request == td::read(d / "header-canonical-request.txt")) == expect_same);
            CHECK((r->signature == td::read(d / "header-signature.txt")) == expect_same);
        }
    }
}

TEST_CASE("the *-normalized cases need generic-service mode: S3 mode changes their canonical URI", "[sigv4][suite]") {
    for (const std::string name :
         {"get-relative-normalized", "get-relative-relative-normalized", "get-slash-dot-slash-normalized",
          "get-slash-normalized", "get-slash-pointless-dot-normalized", "get-slashes-normalized"}) {
        DYNAMIC_SECTION(name) {
            auto c = load(td::dir() / name);
            REQUIRE(c.ctx.params.normalize_path);
            c.ctx.params.normalize_path = false;
            auto r = sv::sign_request_file(c.req, c.ctx, false);
            REQUIRE(r.has_value());
            CHECK(r->canonical_request != td::read(td::dir() / name / "header-canonical-request.txt"));
        }
    }
}

TEST_CASE("every s3-docs header example matches AWS's published values and documentation form", "[sigv4][s3-docs]") {
    for (const auto& name : td::s3_doc_examples()) {
        const auto d = td::dir() / "s3-docs" / name;
        if (!std::filesystem::exists(d / "header-signature.txt")) continue;
        DYNAMIC_SECTION(name) {
            const auto c = load(d);
            CHECK(c.ctx.params.service == "s3");
            CHECK_FALSE(c.ctx.params.normalize_path);
            CHECK_FALSE(c.ctx.params.double_encode_path);
            auto r = sv::sign_request_file(c.req, c.ctx, false, sv::output_form::aws_docs);
            REQUIRE(r.has_value());
            CHECK(r->canonical_request == td::read(d / "header-canonical-request.txt"));
            CHECK(sv::sha256_hex(r->canonical_request) == r->string_to_sign.substr(r->string_to_sign.rfind('\n') + 1));
            CHECK(r->string_to_sign == td::read(d / "header-string-to-sign.txt"));
            CHECK(r->signature == td::read(d / "header-signature.txt"));
            CHECK(sv::to_hex(r->key.bytes) == td::read(d / "signing-key.txt"));
            CHECK(r->authorization == td::read(d / "header-authorization.txt"));
            CHECK(r->signed_request == td::read(d / "header-signed-request.txt"));
            // The suite form carries the same values (", " separators).
            auto s = sv::sign_request_file(c.req, c.ctx, false);
            REQUIRE(s.has_value());
            CHECK(s->signature == r->signature);
            CHECK(s->signed_request.find("Signature=" + r->signature + "\n") != std::string::npos);
        }
    }
}

TEST_CASE("the s3-docs presigned URL example matches canonical request, signature and URL", "[sigv4][s3-docs]") {
    const auto d = td::dir() / "s3-docs" / "presigned-get-object";
    const auto c = load(d);
    CHECK(c.ctx.params.payload == sv::payload_mode::unsigned_payload);
    CHECK(c.ctx.expires == std::chrono::seconds{86400});
    auto r = sv::sign_request_file(c.req, c.ctx, true, sv::output_form::aws_docs);
    REQUIRE(r.has_value());
    CHECK(r->canonical_request == td::read(d / "query-canonical-request.txt"));
    CHECK(r->string_to_sign == td::read(d / "query-string-to-sign.txt"));
    CHECK(r->signature == td::read(d / "query-signature.txt"));
    CHECK(r->signed_request == td::read(d / "query-signed-request.txt"));
    // URL = https:// + Host + request target.
    const std::string& text = r->signed_request;
    const auto target = text.substr(4, text.find(" HTTP/1.1") - 4);
    CHECK("https://examplebucket.s3.amazonaws.com" + target == td::read(d / "query-signed-url.txt"));

    // The library API directly: the wire query appended to the encoded path.
    const sv::header hs[] = {{"Host", "examplebucket.s3.amazonaws.com"}};
    sv::request_view req;
    req.method = "GET";
    req.path = "/test.txt";
    req.headers = hs;
    sv::signing_params p;
    p.payload = sv::payload_mode::unsigned_payload;
    auto q = sv::presign(req, c.ctx.creds, p, c.ctx.time, std::chrono::seconds{86400});
    REQUIRE(q.has_value());
    CHECK(q->signature == td::read(d / "query-signature.txt"));
    CHECK(q->query.find("X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request") !=
          std::string::npos);
}

TEST_CASE("the s3-docs aws-chunked example: seed, chained chunk signatures, chunk headers, content length",
          "[sigv4][s3-docs][chunked]") {
    const auto d = td::dir() / "s3-docs" / "streaming-put-object";
    const auto c = load(d);
    REQUIRE(c.ctx.params.payload == sv::payload_mode::streaming);
    auto seed_file = sv::sign_request_file(c.req, c.ctx, false, sv::output_form::aws_docs);
    REQUIRE(seed_file.has_value());
    CHECK(seed_file->signed_request == td::read(d / "header-signed-request.txt"));

    // The library API directly, as lib/s3 uses it.
    const sv::header hs[] = {{"Host", "s3.amazonaws.com"},
                             {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
                             {"Content-Encoding", "aws-chunked"},
                             {"x-amz-decoded-content-length", "66560"},
                             {"Content-Length", "66824"}};
    sv::request_view req;
    req.method = "PUT";
    req.path = "/examplebucket/chunkObject.txt";
    req.headers = hs;
    sv::signing_params p;
    p.payload = sv::payload_mode::streaming;
    auto seed = sv::sign(req, c.ctx.creds, p, c.ctx.time);
    REQUIRE(seed.has_value());
    CHECK(seed->canonical_request == td::read(d / "header-canonical-request.txt"));
    CHECK(seed->signature == td::read(d / "header-signature.txt"));

    const auto chunks = boost::json::parse(td::read(d / "chunks.json")).as_object();
    CHECK(sv::aws_chunked_content_length(66560, 65536) ==
          static_cast<std::uint64_t>(chunks.at("content_length").as_int64()));
    sv::chunk_signer signer{*seed};
    std::string headers_text;
    std::string wire;
    int n = 0;
    for (const auto& ch : chunks.at("chunks").as_array()) {
        ++n;
        const auto& o = ch.as_object();
        const std::string data(static_cast<std::size_t>(o.at("size").as_int64()), 'a');
        CHECK(sv::sha256_hex(data) == std::string_view{o.at("data_sha256").as_string()});
        CHECK(signer.previous_signature() == std::string_view{o.at("previous_signature").as_string()});
        CHECK(signer.string_to_sign(sv::sha256_hex(data)) ==
              td::read(d / ("chunk-" + std::to_string(n) + "-string-to-sign.txt")));
        auto h = signer.chunk_header(data);
        REQUIRE(h.has_value());
        CHECK(signer.previous_signature() == td::read(d / ("chunk-" + std::to_string(n) + "-signature.txt")));
        CHECK(*h == std::string{o.at("chunk_header").as_string()} + "\r\n");
        headers_text += h->substr(0, h->size() - 2) + "\n";
        wire += *h + data + "\r\n";
    }
    CHECK(n == 3);
    CHECK(signer.finished());
    CHECK(signer.sign_chunk("x").error() == sv::errc::chunk_after_final);
    CHECK(headers_text == td::read(d / "chunk-headers.txt"));
    CHECK(wire.size() == 66824);
}

TEST_CASE("the session-token cases sign the token unless omit_session_token, and always send it", "[sigv4][suite]") {
    for (const std::string name :
         {"get-vanilla-with-session-token", "post-sts-header-before", "post-sts-header-after"}) {
        DYNAMIC_SECTION(name) {
            const auto c = load(td::dir() / name);
            REQUIRE_FALSE(c.ctx.creds.session_token.empty());
            auto r = sv::sign_request_file(c.req, c.ctx, false);
            REQUIRE(r.has_value());
            CHECK((r->canonical_request.find("x-amz-security-token") != std::string::npos) ==
                  !c.ctx.params.omit_session_token);
            CHECK(r->signed_request.find("X-Amz-Security-Token:" + c.ctx.creds.session_token.reveal() + "\n") !=
                  std::string::npos);
        }
    }
}

TEST_CASE("request.txt parsing keeps raw lines and joins folded values", "[sigv4][file]") {
    auto r = sv::parse_request_file("GET /a b/?x=1 HTTP/1.1\r\nHost:h\r\nMy:v1\r\n  v2\r\n\r\nbody\r\n");
    REQUIRE(r.has_value());
    CHECK(r->method == "GET");
    CHECK(r->path == "/a b/");
    CHECK(r->query.value() == "x=1");
    REQUIRE(r->headers.size() == 2);
    CHECK(r->headers[1].value == "v1 v2");
    CHECK(r->header_lines.size() == 3);
    CHECK(r->body == "body\r\n");
    CHECK(sv::parse_request_file("").has_error());
    CHECK(sv::parse_request_file("GET\n").has_error());
    CHECK(sv::parse_request_file("GET / HTTP/1.1\nnocolon\n").has_error());
    CHECK(sv::parse_request_file("GET / HTTP/1.1\n cont\n").has_error());
}

TEST_CASE("a folded header line of blanks only joins nothing (and does not throw)", "[sigv4][file]") {
    for (const char* text : {"GET / HTTP/1.1\nMy:v1\n   ", "GET / HTTP/1.1\nMy:v1\n \t\r\n\nbody"}) {
        auto r = sv::parse_request_file(text);
        REQUIRE(r.has_value());
        REQUIRE(r->headers.size() == 1);
        CHECK(r->headers[0].value == "v1 ");
        CHECK(r->header_lines.size() == 2);
    }
}

TEST_CASE("context.json parsing: defaults, s3-docs keys, errors", "[sigv4][file]") {
    auto c = sv::parse_signing_context(
        R"({"credentials":{"access_key_id":"A","secret_access_key":"S"},"region":"r","service":"s","timestamp":"2015-08-30T12:36:00Z"})");
    REQUIRE(c.has_value());
    CHECK(c->params.double_encode_path);
    CHECK(c->form == sv::path_form::encoded);
    CHECK_FALSE(c->params.normalize_path);
    CHECK_FALSE(c->params.add_content_sha256_header);
    CHECK(c->expires == std::chrono::seconds{3600});
    CHECK(sv::format_amz_date(c->time) == "20150830T123600Z");
    CHECK(sv::parse_signing_context("{").has_error());
    CHECK(
        sv::parse_signing_context(
            R"({"credentials":{"access_key_id":"A","secret_access_key":"S"},"region":"r","service":"s","timestamp":"2015-08-30 12:36:00"})")
            .has_error());
    CHECK(
        sv::parse_signing_context(
            R"({"credentials":{"access_key_id":"A","secret_access_key":"S"},"region":"r","service":"s","timestamp":"2015-08-30T12:36:00Z","payload":"bogus"})")
            .has_error());
    CHECK(sv::parse_signing_context(R"({"region":"r","service":"s","timestamp":"2015-08-30T12:36:00Z"})").has_error());
}

TEST_CASE("context.json: an expiration_in_seconds beyond 64-bit signed range is an error, not an exception",
          "[sigv4][file]") {
    const std::string head =
        R"({"credentials":{"access_key_id":"A","secret_access_key":"S"},"region":"r","service":"s","timestamp":"2015-08-30T12:36:00Z","expiration_in_seconds":)";
    auto big = sv::parse_signing_context(head + "18446744073709551615}");
    REQUIRE(big.has_error());
    CHECK(big.error().detail().find("expiration_in_seconds") != std::string::npos);
    auto max = sv::parse_signing_context(head + "9223372036854775807}");
    REQUIRE(max.has_value());
    CHECK(max->expires.count() == std::numeric_limits<std::int64_t>::max());
}

TEST_CASE("context.json: a timestamp the system clock cannot hold is an error", "[sigv4][file]") {
    const std::string head =
        R"({"credentials":{"access_key_id":"A","secret_access_key":"S"},"region":"r","service":"s","timestamp":")";
    CHECK(sv::parse_signing_context(head + "2262-04-10T00:00:00Z\"}").has_value());
    for (const char* t : {"4894-05-24T00:00:00Z", "1000-01-01T00:00:00Z"}) {
        auto c = sv::parse_signing_context(head + t + "\"}");
        REQUIRE(c.has_error());
        CHECK(c.error().detail().find("range") != std::string::npos);
    }
}

TEST_CASE("a request file that is already signed, or disagrees with the context, is refused", "[sigv4][file]") {
    auto ctx = sv::parse_signing_context(
        R"({"credentials":{"access_key_id":"A","secret_access_key":"S"},"region":"r","service":"s","timestamp":"2015-08-30T12:36:00Z"})");
    REQUIRE(ctx.has_value());
    auto signed_already = sv::parse_request_file("GET / HTTP/1.1\nHost:h\nAuthorization:x\n");
    CHECK(sv::sign_request_file(*signed_already, *ctx, false).error() == sv::errc::reserved_header);
    auto other_date = sv::parse_request_file("GET / HTTP/1.1\nHost:h\nX-Amz-Date:20990101T000000Z\n");
    CHECK(sv::sign_request_file(*other_date, *ctx, false).has_error());
    auto no_host = sv::parse_request_file("GET / HTTP/1.1\nRange:bytes=0-1\n");
    CHECK(sv::sign_request_file(*no_host, *ctx, false).error() == sv::errc::missing_host);
}

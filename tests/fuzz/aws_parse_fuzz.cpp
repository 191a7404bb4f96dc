// SPDX-License-Identifier: Apache-2.0
// libFuzzer target over the credential documents lib/aws parses (aws/parse.hpp): the shared
// config and credentials files (INI), the JSON answers of the container endpoint and IMDS,
// the STS AssumeRole / AssumeRoleWithWebIdentity answers and STS error documents, and the
// ISO 8601 times inside them.
//
// Input: one document; every parser gets it.
// Properties (besides "no crash, no undefined behaviour"):
// - INI: a parsed file, written back as `[section]` and `key = value` lines, parses to the same
//   sections, keys and values; errors never quote a line (they may hold a secret);
// - JSON and STS XML: the credentials and expiry found, written back as the same kind of
//   document, parse to the same credentials and expiry; a rejected document's error does not
//   depend on the secret access key's value;
// - times: `parse_iso8601(format_iso8601(t)) == t` for every time parsed (years 0..9999).
// Built by scripts/fuzz (tests/fuzz/README.md).
#include "aws/credentials.hpp"
#include "aws/parse.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace aws = iss::aws;

namespace {

bool same_keys(const aws::identity& a, const aws::identity& b) {
    return a.keys.access_key_id.get() == b.keys.access_key_id.get() &&
           a.keys.secret_access_key.reveal() == b.keys.secret_access_key.reveal() &&
           a.keys.session_token.reveal() == b.keys.session_token.reveal() && a.expiry == b.expiry;
}

// Within the years ISO 8601 writes with four digits (23:59:60 on 9999-12-31 is year 10000).
void time_roundtrip(aws::system_time t) {
    const std::string text = aws::format_iso8601(t);
    if (text.size() != 20) return;
    auto again = aws::parse_iso8601(text);
    ISS_FUZZ_CHECK(again.has_value() && *again == t);
}

void time_roundtrip(const aws::identity& id) {
    if (id.expiry) time_roundtrip(*id.expiry);
}

void ini(std::string_view text) {
    auto f = aws::parse_ini(text, "~/.aws/config");
    if (!f) {
        // "~/.aws/config line N: what": the line's text (maybe a key) is not in it.
        const std::string d = f.error().detail();
        ISS_FUZZ_CHECK(d.starts_with("~/.aws/config line "));
        return;
    }
    std::string out;
    for (const auto& [section, keys] : *f) {
        out += "[" + section + "]\n";
        for (const auto& [k, v] : keys) out += k + " = " + v + "\n";
    }
    auto again = aws::parse_ini(out, "written back");
    ISS_FUZZ_CHECK(again.has_value());
    ISS_FUZZ_CHECK(*again == *f);
}

void credentials_json(std::string_view text) {
    auto id = aws::parse_credentials_json(text, "container endpoint");
    if (!id) {
        boost::system::error_code ec;
        const auto v = boost::json::parse(text, ec);
        if (ec || !v.is_object()) return;
        // The error does not depend on the secret's value: the same document with another
        // secret of the same length fails with the same words (documents where another field
        // holds the secret's text are skipped: the error may quote those fields).
        boost::json::object o = v.as_object();
        auto* secret = o.if_contains("SecretAccessKey");
        if (secret == nullptr || !secret->is_string() || secret->as_string().empty()) return;
        const std::string key{secret->as_string()};
        for (const auto& [name, value] : o)
            if (name != "SecretAccessKey" && value.is_string() &&
                std::string_view{value.as_string()}.find(key) != std::string_view::npos)
                return;
        auto first = aws::parse_credentials_json(boost::json::serialize(o), "container endpoint");
        if (first) return;
        *secret = std::string(key.size(), key.front() == 'Z' ? 'Y' : 'Z');
        auto other = aws::parse_credentials_json(boost::json::serialize(o), "container endpoint");
        ISS_FUZZ_CHECK(!other);
        ISS_FUZZ_CHECK(first.error().detail() == other.error().detail());
        return;
    }
    time_roundtrip(*id);
    boost::json::object o;
    o["Code"] = "Success";
    o["AccessKeyId"] = id->keys.access_key_id.get();
    o["SecretAccessKey"] = id->keys.secret_access_key.reveal();
    o["Token"] = id->keys.session_token.reveal();
    if (id->expiry) o["Expiration"] = aws::format_iso8601(*id->expiry);
    auto again = aws::parse_credentials_json(boost::json::serialize(o), "written back");
    ISS_FUZZ_CHECK(again.has_value());
    ISS_FUZZ_CHECK(same_keys(*again, *id));
}

// XML text of `v`, with character references where a parser would change the text (CR, and
// whitespace-only values, which come only from CDATA sections).
std::string xml_text(std::string_view v) {
    const bool blank = !v.empty() && v.find_first_not_of(" \t\n") == std::string_view::npos;
    std::string out;
    for (char c : v) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '\r': out += "&#13;"; break;
            default:
                if (blank) out += "&#" + std::to_string(static_cast<unsigned char>(c)) + ";";
                else out += c;
        }
    }
    return out;
}

void sts(std::string_view text, std::string_view action) {
    auto id = aws::parse_sts_credentials(text, action);
    if (!id) return;
    ISS_FUZZ_CHECK(id->expiry.has_value());
    time_roundtrip(*id);
    const std::string a{action};
    const std::string doc =
        "<" + a + "Response><" + a + "Result><Credentials><AccessKeyId>" + xml_text(id->keys.access_key_id.get()) +
        "</AccessKeyId><SecretAccessKey>" + xml_text(id->keys.secret_access_key.reveal()) +
        "</SecretAccessKey><SessionToken>" + xml_text(id->keys.session_token.reveal()) + "</SessionToken><Expiration>" +
        aws::format_iso8601(*id->expiry) + "</Expiration></Credentials></" + a + "Result></" + a + "Response>";
    auto again = aws::parse_sts_credentials(doc, action);
    ISS_FUZZ_CHECK(again.has_value());
    ISS_FUZZ_CHECK(same_keys(*again, *id));
}

void sts_error(std::string_view text) {
    const auto e = aws::parse_sts_error(text);
    if (e.code.empty() && e.message.empty()) return;
    const auto again = aws::parse_sts_error("<ErrorResponse><Error><Code>" + xml_text(e.code) + "</Code><Message>" +
                                            xml_text(e.message) + "</Message></Error></ErrorResponse>");
    ISS_FUZZ_CHECK(again.code == e.code && again.message == e.message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    const std::string_view text{reinterpret_cast<const char*>(bytes), size};
    ini(text);
    credentials_json(text);
    sts(text, "AssumeRole");
    sts(text, "AssumeRoleWithWebIdentity");
    sts_error(text);
    if (size <= 40) {
        if (auto t = aws::parse_iso8601(text)) time_roundtrip(*t);
    }
    return 0;
}

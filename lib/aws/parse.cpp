// SPDX-License-Identifier: Apache-2.0
#include "aws/parse.hpp"

#include "aws/error.hpp"
#include "common/rfc3339.hpp"
#include "sigv4/encoding.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <pugixml.hpp>

#include <cctype>
#include <ctime>

namespace iss::aws {

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

std::string lower(std::string_view s) {
    std::string out{s};
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

}  // namespace

std::string identity::describe() const {
    std::string out = source;
    if (!detail.empty()) out += ", " + detail;
    if (expiry) out += ", expires " + format_iso8601(*expiry);
    else out += ", no expiry";
    return out;
}

task<result<signing_credentials>> fixed_source::current() { co_return signing_credentials{keys_, 1}; }
task<result<signing_credentials>> fixed_source::refresh_rejected(std::uint64_t) {
    co_return signing_credentials{keys_, 1};
}

std::string format_iso8601(system_time t) {
    std::string out;
    iss::append_rfc3339(out, std::chrono::floor<std::chrono::seconds>(t.time_since_epoch()).count(), 0, 0);
    return out;
}

result<system_time> parse_iso8601(std::string_view s) {
    // RFC 3339 (common/rfc3339.hpp) in UTC: AWS writes `Z`; the fraction (RGW's STS writes
    // nanoseconds) is dropped, an expiry is kept to the second.
    const auto t = parse_rfc3339(s);
    if (!t || t->offset_s != 0) return error{errc::bad_response, fmt::format("'{}' is not an ISO 8601 UTC time", s)};
    const std::chrono::seconds secs = std::chrono::floor<std::chrono::seconds>(std::chrono::microseconds{t->utc_us});
    // The system clock counts nanoseconds in 64 bits: a far-future expiry (after 2262-04-11)
    // would overflow it.
    using clock = std::chrono::system_clock;
    if (secs < std::chrono::ceil<std::chrono::seconds>(clock::time_point::min().time_since_epoch()) ||
        secs > std::chrono::floor<std::chrono::seconds>(clock::time_point::max().time_since_epoch()))
        return error{errc::bad_response, fmt::format("'{}' is outside the clock's range (years 1678 to 2261)", s)};
    return clock::time_point{secs};
}

result<ini_file> parse_ini(std::string_view text, std::string_view what) {
    ini_file out;
    std::string section;
    bool in_section = false;
    bool nested = false;  // inside an indented sub-property block ("s3 =\n  max_concurrent_requests = 2")
    std::size_t line_no = 0;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view raw = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        ++line_no;
        const bool indented = !raw.empty() && (raw.front() == ' ' || raw.front() == '\t');
        const std::string_view line = trim(raw);
        if (line.empty() || line.front() == '#' || line.front() == ';') continue;
        if (line.front() == '[') {
            nested = false;
            if (line.back() != ']')
                return error{errc::bad_source,
                             fmt::format("{} line {}: a section header must end with ']'", what, line_no)};
            section = std::string{trim(line.substr(1, line.size() - 2))};
            in_section = true;
            out[section];
            continue;
        }
        if (indented && nested) continue;
        const auto eq = line.find('=');
        if (eq == std::string_view::npos)
            return error{errc::bad_source, fmt::format("{} line {}: expected 'key = value'", what, line_no)};
        if (!in_section)
            return error{errc::bad_source, fmt::format("{} line {}: a key before any [section]", what, line_no)};
        const std::string key = lower(trim(line.substr(0, eq)));
        const std::string_view value = trim(line.substr(eq + 1));
        nested = value.empty();
        if (nested) continue;
        out[section][key] = std::string{value};
    }
    return out;
}

result<identity> parse_credentials_json(std::string_view body, std::string_view what) {
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(body, ec);
    if (ec || !v.is_object())
        return error{errc::bad_response, fmt::format("{}: the answer is not a JSON object", what)};
    const auto& o = v.as_object();
    auto str = [&](std::string_view k) -> std::string {
        const auto* p = o.if_contains(k);
        if (p == nullptr || !p->is_string()) return {};
        return std::string{p->as_string()};
    };
    if (const auto code = str("Code"); !code.empty() && code != "Success")
        return error{errc::bad_response, fmt::format("{}: Code {}: {}", what, code, str("Message"))};
    identity id;
    id.keys.access_key_id = access_key_id{str("AccessKeyId")};
    id.keys.secret_access_key = secret_access_key{str("SecretAccessKey")};
    id.keys.session_token = session_token{str("Token")};
    if (id.keys.access_key_id.get().empty() || id.keys.secret_access_key.empty())
        return error{errc::bad_response, fmt::format("{}: AccessKeyId or SecretAccessKey missing", what)};
    if (const auto exp = str("Expiration"); !exp.empty()) {
        auto t = parse_iso8601(exp);
        if (!t) return error{errc::bad_response, fmt::format("{}: Expiration: {}", what, t.error().detail())};
        id.expiry = *t;
    }
    return id;
}

std::string form_encode(const std::vector<std::pair<std::string, std::string>>& params) {
    std::string out;
    for (const auto& [n, v] : params) {
        if (!out.empty()) out += '&';
        out += sigv4::uri_encode(n, false);
        out += '=';
        out += sigv4::uri_encode(v, false);
    }
    return out;
}

result<identity> parse_sts_credentials(std::string_view body, std::string_view action) {
    pugi::xml_document doc;
    if (!doc.load_buffer(body.data(), body.size()))
        return error{errc::bad_response, fmt::format("STS {}: the answer is not XML", action)};
    const std::string resp_name = std::string{action} + "Response";
    const std::string result_name = std::string{action} + "Result";
    const auto result_node = doc.child(resp_name.c_str()).child(result_name.c_str());
    const auto c = result_node.child("Credentials");
    if (!c) return error{errc::bad_response, fmt::format("STS {}: no Credentials in the answer", action)};
    identity id;
    id.keys.access_key_id = access_key_id{c.child_value("AccessKeyId")};
    id.keys.secret_access_key = secret_access_key{c.child_value("SecretAccessKey")};
    id.keys.session_token = session_token{c.child_value("SessionToken")};
    if (id.keys.access_key_id.get().empty() || id.keys.secret_access_key.empty())
        return error{errc::bad_response, fmt::format("STS {}: AccessKeyId or SecretAccessKey missing", action)};
    auto t = parse_iso8601(c.child_value("Expiration"));
    if (!t) return error{errc::bad_response, fmt::format("STS {}: Expiration: {}", action, t.error().detail())};
    id.expiry = *t;
    const std::string arn = result_node.child("AssumedRoleUser").child_value("Arn");
    if (!arn.empty()) id.detail = "assumed " + arn;
    return id;
}

sts_error parse_sts_error(std::string_view body) {
    pugi::xml_document doc;
    if (!doc.load_buffer(body.data(), body.size())) return {};
    auto e = doc.child("ErrorResponse").child("Error");
    if (!e) e = doc.child("Error");  // S3-style documents (RGW's STS answers so)
    return {e.child_value("Code"), e.child_value("Message")};
}

}  // namespace iss::aws

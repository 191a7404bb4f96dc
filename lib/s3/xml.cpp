// SPDX-License-Identifier: Apache-2.0
#include "s3/xml.hpp"

#include "s3/error.hpp"
#include "sigv4/encoding.hpp"

#include <pugixml.hpp>

#include <charconv>
#include <limits>

namespace iss::s3 {

namespace {
bool load(pugi::xml_document& doc, std::string_view body) {
    return !body.empty() && doc.load_buffer(body.data(), body.size(), pugi::parse_default, pugi::encoding_utf8);
}
std::string text(const pugi::xml_node& n, const char* child) { return n.child(child).text().as_string(); }
std::uint64_t number(const pugi::xml_node& n, const char* child) {
    const std::string s = text(n, child);
    std::uint64_t v = 0;
    std::from_chars(s.data(), s.data() + s.size(), v);
    return v;
}
bool truthy(const pugi::xml_node& n, const char* child) { return text(n, child) == "true"; }
error bad(std::string what) { return error{errc::bad_response, std::move(what)}; }

/// The root element `name` of the S3 answer `body`, parsed into `doc`; errc::bad_response when
/// the body is not XML or has another root.
result<pugi::xml_node> root(pugi::xml_document& doc, std::string_view body, const char* name) {
    if (!load(doc, body)) return bad(name);
    auto r = doc.child(name);
    if (!r) return bad(std::string{name} + " missing");
    return r;
}
}  // namespace

std::optional<error_document> parse_error(std::string_view body) {
    pugi::xml_document doc;
    if (!load(doc, body)) return std::nullopt;
    auto e = doc.child("Error");
    if (!e) return std::nullopt;
    return error_document{text(e, "Code"), text(e, "Message"), text(e, "RequestId"), text(e, "Region"),
                          text(e, "Endpoint")};
}

result<std::string> parse_upload_id(std::string_view body) {
    pugi::xml_document doc;
    if (!load(doc, body)) return bad("InitiateMultipartUploadResult");
    std::string id = text(doc.child("InitiateMultipartUploadResult"), "UploadId");
    if (id.empty()) return bad("InitiateMultipartUploadResult has no UploadId");
    return id;
}

result<std::string> parse_complete_etag(std::string_view body) {
    pugi::xml_document doc;
    const auto r = root(doc, body, "CompleteMultipartUploadResult");
    if (!r) return r.error();
    return text(*r, "ETag");
}

result<list_parts_page> parse_list_parts(std::string_view body) {
    pugi::xml_document doc;
    const auto r = root(doc, body, "ListPartsResult");
    if (!r) return r.error();
    list_parts_page out;
    out.truncated = truthy(*r, "IsTruncated");
    out.next_marker = text(*r, "NextPartNumberMarker");
    for (auto p : r->children("Part")) {
        // S3 numbers parts 1..10000; a value beyond int is no part number: 0 (none), not a
        // wrapped negative that reads back as something else.
        const std::uint64_t n = number(p, "PartNumber");
        const int part = n <= static_cast<std::uint64_t>(std::numeric_limits<int>::max()) ? static_cast<int>(n) : 0;
        out.parts.push_back({part, text(p, "ETag"), number(p, "Size")});
    }
    return out;
}

result<list_uploads_page> parse_list_uploads(std::string_view body) {
    pugi::xml_document doc;
    const auto r = root(doc, body, "ListMultipartUploadsResult");
    if (!r) return r.error();
    list_uploads_page out;
    out.truncated = truthy(*r, "IsTruncated");
    out.next_key_marker = text(*r, "NextKeyMarker");
    out.next_upload_id_marker = text(*r, "NextUploadIdMarker");
    for (auto u : r->children("Upload")) out.uploads.push_back({text(u, "Key"), text(u, "UploadId")});
    return out;
}

result<list_objects_page> parse_list_objects_v2(std::string_view body) {
    pugi::xml_document doc;
    const auto r = root(doc, body, "ListBucketResult");
    if (!r) return r.error();
    const bool url = text(*r, "EncodingType") == "url";
    auto decode = [&](std::string s) -> result<std::string> {
        if (!url) return s;
        auto d = sigv4::percent_decode(s);
        if (!d) return bad("bad url-encoded key in ListBucketResult");
        return *d;
    };
    list_objects_page out;
    out.truncated = truthy(*r, "IsTruncated");
    out.next_continuation_token = text(*r, "NextContinuationToken");
    for (auto c : r->children("Contents")) {
        auto k = decode(text(c, "Key"));
        if (!k) return k.error();
        out.objects.push_back({std::move(*k), number(c, "Size"), text(c, "ETag"), text(c, "LastModified")});
    }
    for (auto p : r->children("CommonPrefixes")) {
        auto k = decode(text(p, "Prefix"));
        if (!k) return k.error();
        out.common_prefixes.push_back(std::move(*k));
    }
    return out;
}

result<std::vector<std::string>> parse_list_buckets(std::string_view body) {
    pugi::xml_document doc;
    const auto r = root(doc, body, "ListAllMyBucketsResult");
    if (!r) return r.error();
    std::vector<std::string> names;
    for (auto b : r->child("Buckets").children("Bucket")) names.push_back(text(b, "Name"));
    return names;
}

std::string xml_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

std::string complete_body(const std::vector<completed_part>& parts) {
    std::string out = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">";
    for (const auto& p : parts) {
        out += "<Part><PartNumber>" + std::to_string(p.number) + "</PartNumber><ETag>" + xml_escape(p.etag) + "</ETag>";
        if (!p.crc32c.empty()) out += "<ChecksumCRC32C>" + p.crc32c + "</ChecksumCRC32C>";
        out += "</Part>";
    }
    out += "</CompleteMultipartUpload>";
    return out;
}

}  // namespace iss::s3

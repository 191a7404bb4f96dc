// SPDX-License-Identifier: Apache-2.0
// libFuzzer target over what lib/s3 reads from an S3 server's answers: every XML body parser
// (s3/xml.hpp: Error documents, InitiateMultipartUpload, CompleteMultipartUpload, ListParts,
// ListMultipartUploads, ListObjectsV2 with and without url encoding, ListBuckets) and the
// encoded user-metadata values of a HEAD answer (`decode_metadata_value`).
//
// Input: one response body (or header value); every parser gets it.
// Properties (besides "no crash, no undefined behaviour"):
// - what a parser returns, written back as the same kind of document (values XML-escaped with
//   `xml_escape`, ListObjectsV2 keys url-encoded), parses to the same value;
// - the CompleteMultipartUpload body built from parsed parts (`complete_body`) is XML that
//   holds those parts, in order;
// - metadata: `decode_metadata_value(encode_metadata_value(v)) == v` for any bytes.
// Built by scripts/fuzz (tests/fuzz/README.md).
#include "s3/request.hpp"
#include "s3/xml.hpp"
#include "sigv4/encoding.hpp"
#include "tests/fuzz/fuzz_check.hpp"

#include <pugixml.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace s3 = iss::s3;

namespace {

// True when XML text written with `xml_escape` reads back as `v`: an XML parser turns CR into
// LF and drops whitespace-only text, so values that came from CDATA sections (the only way
// to get either past the parser) need character references instead.
bool plain_text(std::string_view v) {
    return v.find('\r') == std::string_view::npos &&
           (v.empty() || v.find_first_not_of(" \t\n") != std::string_view::npos);
}

std::string escape(std::string_view v) {
    if (plain_text(v)) return s3::xml_escape(v);
    std::string out;
    for (char c : v) {
        if (c == '\r' || c == ' ' || c == '\t' || c == '\n')
            out += "&#" + std::to_string(static_cast<unsigned char>(c)) + ";";
        else out += s3::xml_escape(std::string_view{&c, 1});
    }
    return out;
}

std::string element(std::string_view name, std::string_view value) {
    return "<" + std::string{name} + ">" + escape(value) + "</" + std::string{name} + ">";
}

std::string truncated(bool t) { return element("IsTruncated", t ? "true" : "false"); }

void error_document(std::string_view body) {
    auto e = s3::parse_error(body);
    if (!e) return;
    const std::string doc = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error>" + element("Code", e->code) +
                            element("Message", e->message) + element("RequestId", e->request_id) +
                            element("Region", e->region) + element("Endpoint", e->endpoint) + "</Error>";
    auto again = s3::parse_error(doc);
    ISS_FUZZ_CHECK(again.has_value());
    ISS_FUZZ_CHECK(again->code == e->code && again->message == e->message && again->request_id == e->request_id &&
                   again->region == e->region && again->endpoint == e->endpoint);
}

void multipart(std::string_view body) {
    if (auto id = s3::parse_upload_id(body)) {
        ISS_FUZZ_CHECK(!id->empty());
        auto again = s3::parse_upload_id("<InitiateMultipartUploadResult>" + element("UploadId", *id) +
                                         "</InitiateMultipartUploadResult>");
        ISS_FUZZ_CHECK(again.has_value() && *again == *id);
    }
    if (auto etag = s3::parse_complete_etag(body)) {
        auto again = s3::parse_complete_etag("<CompleteMultipartUploadResult>" + element("ETag", *etag) +
                                             "</CompleteMultipartUploadResult>");
        ISS_FUZZ_CHECK(again.has_value() && *again == *etag);
    }
}

void list_parts(std::string_view body) {
    auto page = s3::parse_list_parts(body);
    if (!page) return;
    std::string doc =
        "<ListPartsResult>" + truncated(page->truncated) + element("NextPartNumberMarker", page->next_marker);
    for (const auto& p : page->parts)
        doc += "<Part>" + element("PartNumber", std::to_string(p.number)) + element("ETag", p.etag) +
               element("Size", std::to_string(p.size)) + "</Part>";
    doc += "</ListPartsResult>";
    auto again = s3::parse_list_parts(doc);
    ISS_FUZZ_CHECK(again.has_value());
    ISS_FUZZ_CHECK(again->truncated == page->truncated && again->next_marker == page->next_marker);
    ISS_FUZZ_CHECK(again->parts.size() == page->parts.size());
    for (std::size_t i = 0; i < page->parts.size(); ++i)
        ISS_FUZZ_CHECK(again->parts[i].number == page->parts[i].number && again->parts[i].etag == page->parts[i].etag &&
                       again->parts[i].size == page->parts[i].size);

    // The Complete body for these parts holds them, in order (ETags as UploadPart returns
    // them: header values, never CR nor whitespace only).
    std::vector<s3::completed_part> done;
    for (const auto& p : page->parts)
        if (plain_text(p.etag)) done.push_back({p.number, p.etag, {}});
    const std::string complete = s3::complete_body(done);
    pugi::xml_document d;
    ISS_FUZZ_CHECK(d.load_buffer(complete.data(), complete.size()));
    std::size_t i = 0;
    for (auto part : d.child("CompleteMultipartUpload").children("Part")) {
        ISS_FUZZ_CHECK(i < done.size());
        ISS_FUZZ_CHECK(std::string_view{part.child("PartNumber").text().as_string()} == std::to_string(done[i].number));
        ISS_FUZZ_CHECK(std::string_view{part.child("ETag").text().as_string()} == done[i].etag);
        ++i;
    }
    ISS_FUZZ_CHECK(i == done.size());
}

void list_uploads(std::string_view body) {
    auto page = s3::parse_list_uploads(body);
    if (!page) return;
    std::string doc = "<ListMultipartUploadsResult>" + truncated(page->truncated) +
                      element("NextKeyMarker", page->next_key_marker) +
                      element("NextUploadIdMarker", page->next_upload_id_marker);
    for (const auto& u : page->uploads)
        doc += "<Upload>" + element("Key", u.key) + element("UploadId", u.upload_id) + "</Upload>";
    doc += "</ListMultipartUploadsResult>";
    auto again = s3::parse_list_uploads(doc);
    ISS_FUZZ_CHECK(again.has_value());
    ISS_FUZZ_CHECK(again->truncated == page->truncated && again->next_key_marker == page->next_key_marker &&
                   again->next_upload_id_marker == page->next_upload_id_marker);
    ISS_FUZZ_CHECK(again->uploads.size() == page->uploads.size());
    for (std::size_t i = 0; i < page->uploads.size(); ++i)
        ISS_FUZZ_CHECK(again->uploads[i].key == page->uploads[i].key &&
                       again->uploads[i].upload_id == page->uploads[i].upload_id);
}

void list_objects(std::string_view body) {
    auto page = s3::parse_list_objects_v2(body);
    if (!page) return;
    // Keys may hold any byte once decoded: written back url-encoded, as S3 does on request.
    auto key = [](std::string_view k) { return iss::sigv4::uri_encode(k, false); };
    std::string doc = "<ListBucketResult>" + element("EncodingType", "url") + truncated(page->truncated) +
                      element("NextContinuationToken", page->next_continuation_token);
    for (const auto& o : page->objects)
        doc += "<Contents>" + element("Key", key(o.key)) + element("Size", std::to_string(o.size)) +
               element("ETag", o.etag) + element("LastModified", o.last_modified) + "</Contents>";
    for (const auto& p : page->common_prefixes)
        doc += "<CommonPrefixes>" + element("Prefix", key(p)) + "</CommonPrefixes>";
    doc += "</ListBucketResult>";
    auto again = s3::parse_list_objects_v2(doc);
    ISS_FUZZ_CHECK(again.has_value());
    ISS_FUZZ_CHECK(again->truncated == page->truncated &&
                   again->next_continuation_token == page->next_continuation_token);
    ISS_FUZZ_CHECK(again->objects.size() == page->objects.size());
    for (std::size_t i = 0; i < page->objects.size(); ++i) {
        const auto& a = again->objects[i];
        const auto& b = page->objects[i];
        ISS_FUZZ_CHECK(a.key == b.key && a.size == b.size && a.etag == b.etag && a.last_modified == b.last_modified);
    }
    ISS_FUZZ_CHECK(again->common_prefixes == page->common_prefixes);
}

void list_buckets(std::string_view body) {
    auto names = s3::parse_list_buckets(body);
    if (!names) return;
    std::string doc = "<ListAllMyBucketsResult><Buckets>";
    for (const auto& n : *names) doc += "<Bucket>" + element("Name", n) + "</Bucket>";
    doc += "</Buckets></ListAllMyBucketsResult>";
    auto again = s3::parse_list_buckets(doc);
    ISS_FUZZ_CHECK(again.has_value() && *again == *names);
}

void metadata(std::string_view v) {
    (void)s3::decode_metadata_value(v);
    const std::string encoded = s3::encode_metadata_value(v);
    ISS_FUZZ_CHECK(s3::decode_metadata_value(encoded) == v);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    const std::string_view body{reinterpret_cast<const char*>(bytes), size};
    error_document(body);
    multipart(body);
    list_parts(body);
    list_uploads(body);
    list_objects(body);
    list_buckets(body);
    metadata(body);
    return 0;
}

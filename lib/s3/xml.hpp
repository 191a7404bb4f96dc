// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// S3 XML bodies (pugixml): error documents, multipart results, list results, and the
/// CompleteMultipartUpload request body. Pure; parse errors are `s3::errc::bad_response`.

#include "common/error.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iss::s3 {

/// An S3 `<Error>` document (https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html).
struct error_document {
    std::string code;  ///< "NoSuchKey"
    std::string message;
    std::string request_id;
    std::string region;    ///< AuthorizationHeaderMalformed / PermanentRedirect: the right region
    std::string endpoint;  ///< PermanentRedirect: the right endpoint
};
/// The error document in `body`, or nullopt when the body is empty or not an `<Error>`.
[[nodiscard]] std::optional<error_document> parse_error(std::string_view body);

/// InitiateMultipartUploadResult -> UploadId.
[[nodiscard]] result<std::string> parse_upload_id(std::string_view body);
/// CompleteMultipartUploadResult -> ETag (may be empty: RGW 16 sends `<ETag></ETag>`).
[[nodiscard]] result<std::string> parse_complete_etag(std::string_view body);

/// One part as ListParts reports it.
struct part_info {
    int number = 0;
    std::string etag;  ///< quotes kept
    std::uint64_t size = 0;
};
struct list_parts_page {
    std::vector<part_info> parts;
    bool truncated = false;
    std::string next_marker;  ///< NextPartNumberMarker
};
[[nodiscard]] result<list_parts_page> parse_list_parts(std::string_view body);

/// One in-progress multipart upload (ListMultipartUploads).
struct upload_info {
    std::string key;
    std::string upload_id;
};
struct list_uploads_page {
    std::vector<upload_info> uploads;
    bool truncated = false;
    std::string next_key_marker;
    std::string next_upload_id_marker;
};
[[nodiscard]] result<list_uploads_page> parse_list_uploads(std::string_view body);

/// One object of ListObjectsV2.
struct object_info {
    std::string key;
    std::uint64_t size = 0;
    std::string etag;
    std::string last_modified;
};
struct list_objects_page {
    std::vector<object_info> objects;
    std::vector<std::string> common_prefixes;
    bool truncated = false;
    std::string next_continuation_token;
};
/// ListBucketResult (V2). Keys and prefixes are percent-decoded when the response says
/// `<EncodingType>url</EncodingType>`.
[[nodiscard]] result<list_objects_page> parse_list_objects_v2(std::string_view body);

/// ListAllMyBucketsResult -> bucket names.
[[nodiscard]] result<std::vector<std::string>> parse_list_buckets(std::string_view body);

/// One part for CompleteMultipartUpload.
struct completed_part {
    int number = 0;
    std::string etag;    ///< as UploadPart returned it, quotes kept
    std::string crc32c;  ///< base64, when parts carry x-amz-checksum-crc32c
};
/// The CompleteMultipartUpload request body, parts in the given order.
[[nodiscard]] std::string complete_body(const std::vector<completed_part>& parts);

/// `s` with &, <, >, " escaped for XML text.
[[nodiscard]] std::string xml_escape(std::string_view s);

}  // namespace iss::s3

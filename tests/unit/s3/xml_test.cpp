// SPDX-License-Identifier: Apache-2.0
#include "s3/xml.hpp"

#include "catch2_compat.hpp"

using namespace iss;

TEST_CASE("an S3 error document gives code, message, request id and region", "[s3][xml]") {
    auto e = s3::parse_error(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>AuthorizationHeaderMalformed</Code>"
        "<Message>the region 'us-east-1' is wrong; expecting 'eu-west-1'</Message><Region>eu-west-1</Region>"
        "<RequestId>R1</RequestId></Error>");
    REQUIRE(e);
    CHECK(e->code == "AuthorizationHeaderMalformed");
    CHECK(e->region == "eu-west-1");
    CHECK(e->request_id == "R1");
    CHECK_FALSE(s3::parse_error(""));
    CHECK_FALSE(s3::parse_error("<ListBucketResult/>"));
    CHECK_FALSE(s3::parse_error("not xml"));
}

TEST_CASE("multipart results parse, with RGW's empty ETag", "[s3][xml]") {
    auto id = s3::parse_upload_id(
        "<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key><UploadId>2~abc</UploadId></"
        "InitiateMultipartUploadResult>");
    REQUIRE(id.has_value());
    CHECK(*id == "2~abc");
    auto etag = s3::parse_complete_etag("<CompleteMultipartUploadResult><ETag></ETag></CompleteMultipartUploadResult>");
    REQUIRE(etag.has_value());
    CHECK(etag->empty());
    auto parts = s3::parse_list_parts(
        "<ListPartsResult><IsTruncated>true</IsTruncated><NextPartNumberMarker>2</NextPartNumberMarker>"
        "<Part><PartNumber>1</PartNumber><ETag>\"a\"</ETag><Size>5242880</Size></Part>"
        "<Part><PartNumber>2</PartNumber><ETag>\"b\"</ETag><Size>10</Size></Part></ListPartsResult>");
    REQUIRE(parts.has_value());
    REQUIRE(parts->parts.size() == 2);
    CHECK(parts->parts[0].etag == "\"a\"");
    CHECK(parts->parts[0].size == 5242880);
    CHECK(parts->truncated);
    CHECK(parts->next_marker == "2");
}

TEST_CASE("ListObjectsV2 decodes url-encoded keys only when told so", "[s3][xml]") {
    auto page = s3::parse_list_objects_v2(
        "<ListBucketResult><EncodingType>url</EncodingType><IsTruncated>true</IsTruncated>"
        "<NextContinuationToken>tok</NextContinuationToken>"
        "<Contents><Key>a%20b%2Bc</Key><Size>3</Size><ETag>\"e\"</ETag></Contents>"
        "<CommonPrefixes><Prefix>d%2F</Prefix></CommonPrefixes></ListBucketResult>");
    REQUIRE(page.has_value());
    REQUIRE(page->objects.size() == 1);
    CHECK(page->objects[0].key == "a b+c");
    CHECK(page->common_prefixes.at(0) == "d/");
    CHECK(page->next_continuation_token == "tok");
    auto raw = s3::parse_list_objects_v2("<ListBucketResult><Contents><Key>a%20b</Key></Contents></ListBucketResult>");
    REQUIRE(raw.has_value());
    CHECK(raw->objects.at(0).key == "a%20b");
}

TEST_CASE("the Complete body lists parts in order with quoted ETags", "[s3][xml]") {
    const auto body = s3::complete_body({{1, "\"a\"", ""}, {2, "\"b\"", "AAAAAA=="}});
    CHECK(body.find("<Part><PartNumber>1</PartNumber><ETag>&quot;a&quot;</ETag></Part>") != std::string::npos);
    CHECK(body.find("<ChecksumCRC32C>AAAAAA==</ChecksumCRC32C>") != std::string::npos);
    CHECK(body.find("PartNumber>1") < body.find("PartNumber>2"));
}

TEST_CASE("ListBuckets gives the names", "[s3][xml]") {
    auto names = s3::parse_list_buckets(
        "<ListAllMyBucketsResult><Owner><ID>o</ID></Owner><Buckets><Bucket><Name>a-1</Name></Bucket>"
        "<Bucket><Name>b-2</Name></Bucket></Buckets></ListAllMyBucketsResult>");
    REQUIRE(names.has_value());
    CHECK(*names == std::vector<std::string>{"a-1", "b-2"});
}

TEST_CASE("a ListParts PartNumber beyond int reads as 0, not a wrapped negative", "[s3][xml]") {
    auto parts = s3::parse_list_parts(
        "<ListPartsResult><Part><PartNumber>6666666666</PartNumber><ETag>\"a\"</ETag><Size>1</Size></Part>"
        "<Part><PartNumber>7</PartNumber><ETag>\"b\"</ETag><Size>2</Size></Part></ListPartsResult>");
    REQUIRE(parts.has_value());
    REQUIRE(parts->parts.size() == 2);
    CHECK(parts->parts[0].number == 0);
    CHECK(parts->parts[1].number == 7);
}

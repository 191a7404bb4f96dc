// SPDX-License-Identifier: Apache-2.0
#include "s3/checksum.hpp"

#include "s3/request.hpp"

#include "catch2_compat.hpp"

#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include <vector>

using namespace iss;

TEST_CASE("crc32c matches the known answers", "[s3][checksum]") {
    CHECK(s3::crc32c("123456789") == 0xE3069283U);              // the standard check value
    CHECK(s3::crc32c(std::string(32, '\0')) == 0x8A9136AAU);    // RFC 3720 B.4: 32 bytes of zeros
    CHECK(s3::crc32c(std::string(32, '\xff')) == 0x62A8AB43U);  // RFC 3720 B.4: 32 bytes of 0xff
    std::string inc;
    for (int i = 0; i < 32; ++i) inc += static_cast<char>(i);
    CHECK(s3::crc32c(inc) == 0x46DD794EU);  // RFC 3720 B.4: incrementing
    CHECK(s3::crc32c("") == 0U);
}

TEST_CASE("crc32c over split views equals crc32c over the whole", "[s3][checksum]") {
    std::string data(100'003, 'x');
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 31 + 7);
    const std::vector<std::string_view> one{data};
    for (std::size_t cut : {0UL, 1UL, 7UL, 8UL, 9UL, 4096UL, 100'002UL}) {
        const std::vector<std::string_view> two{std::string_view{data}.substr(0, cut),
                                                std::string_view{data}.substr(cut)};
        CHECK(s3::crc32c_base64(two) == s3::crc32c_base64(one));
    }
    const std::vector<std::string_view> check{"123456789"};
    CHECK(s3::crc32c_base64(check) == "4waSgw==");  // base64 of big-endian E3 06 92 83
}

TEST_CASE("crc32c: the hardware path and the tables agree at every length and alignment", "[s3][checksum]") {
    std::string data(4'200, '\0');
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i * 2654435761U) >> 13);
    for (std::size_t off = 0; off < 9; ++off)
        for (std::size_t len : {0UL, 1UL, 7UL, 8UL, 15UL, 16UL, 63UL, 1000UL, 4'000UL}) {
            const auto v = std::string_view{data}.substr(off, len);
            CHECK(s3::crc32c(v) == s3::crc32c_portable(v));
            CHECK(s3::crc32c(v, 0xDEADBEEFU) == s3::crc32c_portable(v, 0xDEADBEEFU));
        }
    // Lengths around the three-stream blocks (3 x 4 KiB) of the hardware path, split at odd
    // places: every length from 12 280 to 12 300, several blocks plus tails, and a part.
    std::string big(3 * (1U << 20) + 77, '\0');
    std::uint64_t x = 88172645463325252ULL;
    for (auto& ch : big) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        ch = static_cast<char>(x);
    }
    for (std::size_t len = 12'280; len <= 12'300; ++len) {
        const auto v = std::string_view{big}.substr(3, len);
        CHECK(s3::crc32c(v, 0x12345678U) == s3::crc32c_portable(v, 0x12345678U));
    }
    for (std::size_t len : {24'576UL, 36'865UL, 100'003UL, big.size() - 5}) {
        const auto v = std::string_view{big}.substr(5, len);
        CHECK(s3::crc32c(v) == s3::crc32c_portable(v));
        const std::size_t cut = len / 3 + 1;  // as a part hasher sums it: in pieces
        CHECK(s3::crc32c(v.substr(cut), s3::crc32c(v.substr(0, cut))) == s3::crc32c_portable(v));
    }
    CHECK(s3::crc32c(std::string(3 * 4096, '\0')) == s3::crc32c_portable(std::string(3 * 4096, '\0')));
    CHECK(s3::crc32c_portable("123456789") == 0xE3069283U);
    CHECK(s3::crc32c_header_value(0xE3069283U) == "4waSgw==");
#if defined(__x86_64__)
    CHECK(s3::crc32c_hardware() == (__builtin_cpu_supports("sse4.2") != 0));
#elif defined(__aarch64__) && !defined(__clang__)
    CHECK(s3::crc32c_hardware() == ((getauxval(AT_HWCAP) & HWCAP_CRC32) != 0));
#endif
}

TEST_CASE("Content-MD5 is base64 of the MD5 digest", "[s3][checksum]") {
    const std::vector<std::string_view> empty{};
    CHECK(s3::content_md5(empty) == "1B2M2Y8AsgTpgAmY7PhCfg==");
    const std::vector<std::string_view> split{"The quick brown fox ", "jumps over the lazy dog"};
    CHECK(s3::content_md5(split) == "nhB9nTcrtoJr2B01QqQZ1g==");
}

TEST_CASE("metadata values: ASCII as is, anything else RFC 2047 encoded and decoded back", "[s3][metadata]") {
    CHECK(s3::encode_metadata_value("plain value 1") == "plain value 1");
    const std::string unicode = "caf\xc3\xa9 \xe2\x9c\x93";
    const auto enc = s3::encode_metadata_value(unicode);
    CHECK(enc.starts_with("=?UTF-8?B?"));
    CHECK(s3::decode_metadata_value(enc) == unicode);
    CHECK(s3::decode_metadata_value(s3::encode_metadata_value("tab\there")) == "tab\there");
    CHECK(s3::decode_metadata_value(s3::encode_metadata_value(" lead")) == " lead");
    CHECK(s3::decode_metadata_value("not=?encoded") == "not=?encoded");
    http::header_list h{{"X-Amz-Meta-Iggy-First-Offset", "10"}, {"x-amz-meta-note", enc}, {"ETag", "\"e\""}};
    auto m = s3::metadata_from_headers(h);
    REQUIRE(m.size() == 2);
    CHECK(m["iggy-first-offset"] == "10");
    CHECK(m["note"] == unicode);
}

TEST_CASE("a metadata value shaped like an encoded word reads back as written, not decoded", "[s3][metadata]") {
    // Sent unchanged, "=?UTF-8?B?w6kgbGFrZQ==?=" would read back as "\xc3\xa9 lake".
    for (const std::string v : {"=?UTF-8?B?w6kgbGFrZQ==?=", "=?utf-8?b?YQ==?=", "=?x?="}) {
        const auto enc = s3::encode_metadata_value(v);
        CHECK(enc != v);
        CHECK(s3::decode_metadata_value(enc) == v);
    }
    CHECK(s3::encode_metadata_value("=?not closed") == "=?not closed");
}

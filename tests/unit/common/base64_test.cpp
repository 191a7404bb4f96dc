// SPDX-License-Identifier: Apache-2.0
// The one base64 (common/base64.hpp): RFC 4648 §10's test vectors both ways, binary bytes,
// and what the decoder refuses.
#include "common/base64.hpp"

#include "catch2_compat.hpp"

#include <array>

namespace {
std::string b64(std::string_view s) {
    std::string out;
    iss::append_base64(out, std::as_bytes(std::span{s.data(), s.size()}));
    return out;
}
}  // namespace

TEST_CASE("base64 pads to a multiple of four", "[base64]") {
    CHECK(b64("") == "");
    CHECK(b64("f") == "Zg==");
    CHECK(b64("fo") == "Zm8=");
    CHECK(b64("foo") == "Zm9v");
    CHECK(b64("foobar") == "Zm9vYmFy");
    CHECK(b64("\xff\xfe\xfd") == "//79");
}

TEST_CASE("base64: RFC 4648 §10 vectors encode and decode back; appending keeps what was there", "[base64]") {
    const std::array<std::pair<std::string_view, std::string_view>, 7> vectors{{{"", ""},
                                                                                {"f", "Zg=="},
                                                                                {"fo", "Zm8="},
                                                                                {"foo", "Zm9v"},
                                                                                {"foob", "Zm9vYg=="},
                                                                                {"fooba", "Zm9vYmE="},
                                                                                {"foobar", "Zm9vYmFy"}}};
    for (const auto& [plain, encoded] : vectors) {
        INFO(plain);
        CHECK(iss::base64_encode(plain) == encoded);
        CHECK(iss::base64_decode(encoded) == std::string{plain});
    }
    std::string out = "prefix:";
    iss::append_base64(out, std::as_bytes(std::span{"foob", 4}));
    CHECK(out == "prefix:Zm9vYg==");
    const std::array<std::uint8_t, 4> be{0xE3, 0x06, 0x92, 0x83};  // CRC-32C of "123456789"
    CHECK(iss::base64_encode(be) == "4waSgw==");
}

TEST_CASE("base64: every byte value survives the round trip", "[base64]") {
    std::string all;
    for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
    for (std::size_t n : {0UL, 1UL, 2UL, 3UL, 255UL, 256UL}) {
        const std::string bytes = all.substr(0, n);
        const std::string enc = iss::base64_encode(bytes);
        CHECK(enc.size() == (n + 2) / 3 * 4);
        CHECK(iss::base64_decode(enc) == bytes);
    }
}

TEST_CASE("base64: the decoder takes only canonical RFC 4648 §4 text", "[base64]") {
    for (const char* bad : {"Zg", "Zg=", "Zg===", "Z===", "Zm9v\n", " Zm9v", "Zm9v ", "Zm=v", "Z=9v", "Zm9-", "Zm9_",
                            "Zm9vY*==", "===="}) {
        INFO(bad);
        CHECK(iss::base64_decode(bad) == std::nullopt);
    }
    // A 256-bit SSE-C key: 44 characters, one '='.
    const auto key = iss::base64_decode("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=");
    REQUIRE(key.has_value());
    CHECK(*key == "0123456789abcdef0123456789abcdef");
}

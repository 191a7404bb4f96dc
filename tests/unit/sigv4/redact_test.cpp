// SPDX-License-Identifier: Apache-2.0
#include "sigv4/redact.hpp"

#include "catch2_compat.hpp"

namespace sv = iss::sigv4;

TEST_CASE("redact_signing_text hides the session token, Authorization and presign secrets", "[sigv4][redact]") {
    const std::string cr =
        "GET\n/"
        "\nX-Amz-Credential=AK%2Fscope&X-Amz-Date=20150830T123600Z&X-Amz-Security-Token=TOKEN&X-Amz-Signature=abc\n"
        "host:h\nX-Amz-Security-Token:TOKEN\nauthorization:AWS4-HMAC-SHA256 Credential=AK/x, "
        "Signature=abc\n\nhost\nUNSIGNED-PAYLOAD";
    const std::string r = sv::redact_signing_text(cr);
    CHECK(r.find("TOKEN") == std::string::npos);
    CHECK(r.find("abc") == std::string::npos);
    CHECK(r.find("AK") == std::string::npos);
    CHECK(r ==
          "GET\n/\nX-Amz-Credential=****&X-Amz-Date=20150830T123600Z&X-Amz-Security-Token=****&X-Amz-Signature=****\n"
          "host:h\nX-Amz-Security-Token:****\nauthorization:****\n\nhost\nUNSIGNED-PAYLOAD");
    const std::string url = "GET /k?a=1&X-Amz-Signature=ff HTTP/1.1";
    CHECK(sv::redact_signing_text(url) == "GET /k?a=1&X-Amz-Signature=**** HTTP/1.1");
    CHECK(sv::redact_signing_text("no secrets here\n") == "no secrets here\n");
}

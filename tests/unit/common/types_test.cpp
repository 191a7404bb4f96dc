// SPDX-License-Identifier: Apache-2.0
#include "common/types.hpp"

#include "catch2_compat.hpp"

#include <sstream>

TEST_CASE("secrets print as **** through fmt and ostream", "[types][redaction]") {
    const iss::secret_access_key k{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"};
    CHECK(fmt::format("{}", k) == "****");
    CHECK(fmt::format("key={:>6}", k) == "key=  ****");
    std::ostringstream os;
    os << k;
    CHECK(os.str() == "****");
    CHECK(k.reveal() == "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY");
}

TEST_CASE("an empty secret prints as empty so 'not set' stays visible", "[types][redaction]") {
    const iss::session_token t;
    CHECK(t.empty());
    CHECK(fmt::format("[{}]", t) == "[]");
}

TEST_CASE("named types print their value and compare by it", "[types]") {
    const iss::bucket_name a{"lake"}, b{"lake"}, c{"other"};
    CHECK(fmt::format("{}", a) == "lake");
    CHECK(a == b);
    CHECK(a < c);
    CHECK(a() == "lake");
}

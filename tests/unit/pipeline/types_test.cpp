// SPDX-License-Identifier: Apache-2.0
#include "pipeline/types.hpp"

#include "pipeline/error.hpp"

#include "catch2_compat.hpp"

namespace pl = iss::pipeline;

TEST_CASE("object range round-trips through user metadata", "[pipeline][types]") {
    const pl::object_range r{42, 18'446'744'073'709'551'615ull, 7};
    pl::user_metadata m;
    for (auto& [k, v] : pl::to_user_metadata(r)) m[k] = v;
    CHECK(m.at("iggy-first-offset") == "42");
    CHECK(m.at("iggy-last-offset") == "18446744073709551615");
    CHECK(m.at("iggy-count") == "7");
    auto back = pl::from_user_metadata(m);
    REQUIRE(back.has_value());
    CHECK(*back == r);
}

TEST_CASE("missing or malformed range metadata is refused, naming the entry", "[pipeline][types]") {
    pl::user_metadata m{{"iggy-first-offset", "1"}, {"iggy-last-offset", "x"}, {"iggy-count", "1"}};
    auto r = pl::from_user_metadata(m);
    REQUIRE(r.has_error());
    CHECK(r.error() == pl::errc::bad_object_metadata);
    CHECK(r.error().detail().find("iggy-last-offset") != std::string::npos);
    m.erase("iggy-count");
    m["iggy-last-offset"] = "5";
    CHECK(pl::from_user_metadata(m).error().detail().find("iggy-count") != std::string::npos);
    m["iggy-count"] = "1";
    m["iggy-last-offset"] = "0";
    CHECK(pl::from_user_metadata(m).has_error());  // last < first
}

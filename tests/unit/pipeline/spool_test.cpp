// The spool file (lib/pipeline/spool.hpp): whole parts appended, mapped back where they lie.
#include "pipeline/spool.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <utility>

namespace pl = iss::pipeline;

TEST_CASE("spool: parts appended are mapped back byte for byte, at any offset", "[pipeline][spool]") {
    pl::spool s;
    std::string bytes;
    for (int i = 0; i < 20'000; ++i) bytes += static_cast<char>('a' + (i * 7) % 26);
    REQUIRE(s.append(std::string_view{bytes}.substr(0, 12'345)).has_value());
    REQUIRE(s.append(std::string_view{bytes}.substr(12'345)).has_value());
    CHECK(s.size() == bytes.size());
    // Offsets off the page size (parts of a size such as 5 000 000 bytes).
    for (std::uint64_t off : {0ull, 1ull, 4095ull, 4096ull, 4097ull, 12'345ull, 19'999ull}) {
        const std::size_t len = bytes.size() - off < 3'000 ? bytes.size() - off : 3'000;
        auto m = s.map(off, len);
        REQUIRE(m.has_value());
        CHECK(m->bytes() == std::string_view{bytes}.substr(off, len));
    }
    auto whole = s.map(0, bytes.size());
    REQUIRE(whole.has_value());
    pl::spool::mapping moved = std::move(*whole);
    CHECK(moved.bytes() == bytes);
    CHECK(whole->bytes().empty());
    // Beyond the end: an error naming the spool, not a short view.
    auto past = s.map(19'000, 2'000);
    REQUIRE_FALSE(past.has_value());
    CHECK(past.error().message().find("spool") != std::string::npos);
}

TEST_CASE("spool: after clear the file starts over", "[pipeline][spool]") {
    pl::spool s;
    REQUIRE(s.append("first object").has_value());
    s.clear();
    CHECK(s.size() == 0);
    CHECK_FALSE(s.map(0, 1).has_value());
    REQUIRE(s.append("second").has_value());
    auto m = s.map(0, 6);
    REQUIRE(m.has_value());
    CHECK(m->bytes() == "second");
}

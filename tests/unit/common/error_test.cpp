// SPDX-License-Identifier: Apache-2.0
#include "common/error.hpp"

#include "catch2_compat.hpp"

namespace demo {
enum class errc { truncated = 1, bad_kind };
inline const char* message(int ev) noexcept {
    switch (static_cast<errc>(ev)) {
        case errc::truncated: return "input ends before the field does";
        case errc::bad_kind: return "unknown kind";
    }
    return nullptr;
}
inline const boost::system::error_category& category() noexcept {
    static const iss::simple_category c{"demo", message};
    return c;
}
inline iss::error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), category()}; }
}  // namespace demo
template <>
struct boost::system::is_error_code_enum<demo::errc> : std::true_type {};

namespace {
iss::result<int> parse_positive(int v) {
    if (v <= 0) return iss::error{iss::errc::invalid_argument, "count"};
    return v;
}
}  // namespace

TEST_CASE("a module category names itself and explains each value", "[error]") {
    const iss::error_code ec = demo::make_error_code(demo::errc::truncated);
    CHECK(std::string{ec.category().name()} == "demo");
    CHECK(ec.message() == "input ends before the field does");
    CHECK(ec.category().message(99) == "demo error 99");
}

TEST_CASE("an error message puts the detail before the category's message", "[error]") {
    const iss::error e{demo::errc::bad_kind, "header.kind"};
    CHECK(e.message() == "header.kind: unknown kind");
    CHECK(fmt::format("{}", e) == "header.kind: unknown kind");
    CHECK(e == demo::errc::bad_kind);
    CHECK_FALSE(e == demo::errc::truncated);
    CHECK(iss::error{iss::errc::timeout}.message() == "deadline passed");
    // A detail built from another error's message that already ends with this one's: said once.
    const iss::error wrapped{demo::errc::bad_kind, "record 3: " + e.message()};
    CHECK(wrapped.message() == "record 3: header.kind: unknown kind");
}

TEST_CASE("result carries a value or an error, and value() on an error throws it", "[error]") {
    auto ok = parse_positive(3);
    REQUIRE(ok.has_value());
    CHECK(*ok == 3);
    auto bad = parse_positive(0);
    REQUIRE(bad.has_error());
    CHECK(bad.error() == iss::errc::invalid_argument);
    CHECK(bad.error().detail() == "count");
    CHECK_THROWS_AS(bad.value(), iss::error_exception);
    CHECK_THROWS_WITH(bad.value(), "count: invalid argument");
}

TEST_CASE("errors of different categories with the same value differ", "[error]") {
    const iss::error a{demo::errc::truncated};
    CHECK_FALSE(a == iss::errc::invalid_argument);  // both are value 1
}

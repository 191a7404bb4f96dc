// SPDX-License-Identifier: Apache-2.0
// Catch2 for every test, version 2 (Debian 12 ships 2.13) or 3 (Debian 13 ships 3.7): tests
// include this header, never Catch2's own, and read the same against both. It brings the whole
// framework (v2's single header, v3's catch_all.hpp) and, on v2, the v3 name of the substring
// matcher, so tests spell the matchers as v3 does:
//   Catch::Matchers::ContainsSubstring(s [, CaseSensitive]), Catch::Matchers::StartsWith(s)
// and, on v3, v2's global name `Approx` (v3 has only Catch::Approx), so tests write `Approx(x)`.
// ISS_CATCH2_MAJOR (2 or 3) is the major version tests/CMakeLists.txt found (cmake/dependencies.cmake).
#pragma once

#if ISS_CATCH2_MAJOR >= 3
#include <catch2/catch_all.hpp>

using Catch::Approx;
#else
#include <catch2/catch.hpp>

#include <string>

namespace Catch::Matchers {
// v3's name for v2's string Contains (in v3, Contains matches an element of a range).
inline StdString::ContainsMatcher ContainsSubstring(const std::string& s,
                                                    CaseSensitive::Choice cs = CaseSensitive::Yes) {
    return Contains(s, cs);
}
}  // namespace Catch::Matchers
#endif

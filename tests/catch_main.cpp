// SPDX-License-Identifier: Apache-2.0
// The one Catch2 main shared by every test binary (docs/architecture.md §7), for Catch2 2 or 3
// (tests/catch2_compat.hpp).
#if ISS_CATCH2_MAJOR >= 3
#include <catch2/catch_session.hpp>

int main(int argc, char* argv[]) { return Catch::Session().run(argc, argv); }
#else
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#endif

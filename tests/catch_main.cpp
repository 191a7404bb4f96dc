// The one Catch2 main shared by every test binary (design.md §6).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

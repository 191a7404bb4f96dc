// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Shared by the libFuzzer targets in this folder: a property check that says which property
/// broke and aborts, so libFuzzer keeps the input as a crash artifact (with the message on
/// stderr). Used for the properties stronger than "does not crash": round trips, split/whole
/// agreement, bounds of returned views.

#include <cstdio>
#include <cstdlib>

namespace iss::fuzz {

[[noreturn]] inline void property_failed(const char* what, const char* file, int line) {
    std::fprintf(stderr, "fuzz property failed: %s (%s:%d)\n", what, file, line);
    std::abort();
}

}  // namespace iss::fuzz

/// Aborts with the failed expression when `cond` is false.
#define ISS_FUZZ_CHECK(cond) ((cond) ? (void)0 : ::iss::fuzz::property_failed(#cond, __FILE__, __LINE__))

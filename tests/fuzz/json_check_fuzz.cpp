// SPDX-License-Identifier: Apache-2.0
// libFuzzer target over the JSON payload check (lib/format/json.cpp, `payload_checker`): the
// one-pass RFC 8259 grammar walk that decides whether a message's payload goes into a
// json_lines / json_array object or to the bad-message policy.
//
// Input: a payload, any bytes.
// Properties (besides "never throws, no crash, no undefined behaviour, no read past the
// payload", which ASan checks since the checker reads the payload in place):
// - it accepts exactly what simdjson's DOM parser accepts, except where they differ by design
//   (json.hpp): numbers of more than 15 digits or with an exponent of 3 digits or more, and
//   more than 1000 brackets and braces (nesting);
// - what it accepts comes out as simdjson::minify writes it, and checks again to itself;
// - what it refuses leaves the output as it was and says why.
// Built by scripts/fuzz (tests/fuzz/README.md).
#include "format/json.hpp"
#include "tests/fuzz/fuzz_check.hpp"
#include "tests/unit/format/json_reference.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // The payload in a buffer of exactly its size: ASan catches any read past it.
    const auto copy = std::make_unique<char[]>(size == 0 ? 1 : size);
    std::copy(data, data + size, copy.get());
    const std::string_view payload{copy.get(), size};

    static iss::format::json::payload_checker checker;
    static simdjson::dom::parser reference;
    std::string out = "x";
    const bool ours = checker.append_minified(payload, out);
    if (!ours) {
        ISS_FUZZ_CHECK(out == "x");
        ISS_FUZZ_CHECK(std::string_view{checker.last_error()}.size() > 0);
    } else {
        std::string again;
        ISS_FUZZ_CHECK(checker.append_minified(std::string_view{out}.substr(1), again));
        ISS_FUZZ_CHECK(again == std::string_view{out}.substr(1));
        ISS_FUZZ_CHECK(std::string_view{out}.substr(1) == iss::test::simdjson_minified(payload));
    }
    if (iss::test::differs_by_design(payload)) return 0;
    ISS_FUZZ_CHECK(ours == iss::test::simdjson_accepts(reference, payload));
    return 0;
}

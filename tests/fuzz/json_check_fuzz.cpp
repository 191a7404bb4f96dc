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

#include <simdjson.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace {

bool differs_by_design(std::string_view s) {
    if (std::count(s.begin(), s.end(), '[') + std::count(s.begin(), s.end(), '{') > 1000) return true;
    std::size_t run = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        run = s[i] >= '0' && s[i] <= '9' ? run + 1 : 0;
        if (run > 15) return true;
        if (s[i] == 'e' || s[i] == 'E') {
            std::size_t j = i + 1;
            if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
            std::size_t digits = 0;
            while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j, ++digits;
            if (digits >= 3) return true;
        }
    }
    return false;
}

}  // namespace

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
    }
    if (ours) {
        std::string minified(size, '\0');
        std::size_t n = 0;
        ISS_FUZZ_CHECK(simdjson::minify(payload.data(), size, minified.data(), n) == simdjson::SUCCESS);
        minified.resize(n);
        ISS_FUZZ_CHECK(std::string_view{out}.substr(1) == minified);
    }
    if (differs_by_design(payload)) return 0;
    const simdjson::padded_string padded{payload};
    simdjson::dom::element e;
    const bool theirs = reference.parse(padded).get(e) == simdjson::SUCCESS;
    ISS_FUZZ_CHECK(ours == theirs);
    return 0;
}

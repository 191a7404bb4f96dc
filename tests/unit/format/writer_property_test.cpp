// SPDX-License-Identifier: Apache-2.0
// Seeded random payloads through every payload mode: every json_lines line stays one valid
// JSON object, and a payload embedded as JSON means what the original text meant.
#include "format/writer.hpp"
#include "test_messages.hpp"

#include <boost/json.hpp>

#include "catch2_compat.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>

using namespace iss::format;
namespace proto = iss::proto;

namespace {

/// A JSON-ish text: valid documents, then random single-byte mutations of them.
std::string random_payload(std::mt19937_64& rng) {
    static const std::vector<std::string> seeds{
        "{\"a\": [1, 2.5, -3e-2, true, false, null], \"b\": {\"c\": \"d\\n\\u00e9\\\"\"}}",
        "[ ]",
        "{}",
        "\"str\"",
        "0",
        "-0.0e+1",
        "123456789012345678901234567890",
        "[[[[1]]]]",
        "{\"k\": \"\xc3\xa9\xf0\x9f\x98\x80\"}",
        "  [1 ,2 , 3 ]  ",
        "\"\\ud83d\\ude00\"",
        "true"};
    std::string s = seeds[rng() % seeds.size()];
    const int mutations = static_cast<int>(rng() % 4);
    static const char alphabet[] = "{}[]\",:0123456789-+.eE \\tnul\x00\x80\xff\xc3\xed";
    for (int i = 0; i < mutations && !s.empty(); ++i) {
        const std::size_t at = rng() % s.size();
        switch (rng() % 3) {
            case 0: s[at] = alphabet[rng() % (sizeof alphabet - 1)]; break;
            case 1: s.insert(at, 1, alphabet[rng() % (sizeof alphabet - 1)]); break;
            default: s.erase(at, 1);
        }
    }
    return s;
}

/// Equal JSON values; doubles within a relative 1e-14, since Boost.JSON's default (fast,
/// not always correctly rounded) number parsing can differ in the last bit between a value
/// on its own and the same text inside an object.
bool same(const boost::json::value& a, const boost::json::value& b) {
    if (a.is_number() && b.is_number() && (a.is_double() || b.is_double())) {
        const double x = a.to_number<double>();
        const double y = b.to_number<double>();
        return x == y || std::fabs(x - y) <= 1e-14 * std::max(std::fabs(x), std::fabs(y));
    }
    if (a.kind() != b.kind()) return a == b;
    if (a.is_array()) {
        const auto& x = a.as_array();
        const auto& y = b.as_array();
        if (x.size() != y.size()) return false;
        for (std::size_t i = 0; i < x.size(); ++i)
            if (!same(x[i], y[i])) return false;
        return true;
    }
    if (a.is_object()) {
        const auto& x = a.as_object();
        const auto& y = b.as_object();
        if (x.size() != y.size()) return false;
        for (const auto& kv : x) {
            const auto* other = y.if_contains(kv.key());
            if (other == nullptr || !same(kv.value(), *other)) return false;
        }
        return true;
    }
    return a == b;
}

}  // namespace

TEST_CASE("random payloads always give one valid JSON line per message", "[format][writer][property]") {
    // A new seed each run (printed on failure); ISS_TEST_SEED=N repeats a run.
    const char* fixed = std::getenv("ISS_TEST_SEED");
    const std::uint64_t seed = fixed != nullptr ? std::strtoull(fixed, nullptr, 10) : std::random_device{}();
    INFO("seed " << seed);
    std::mt19937_64 rng{seed};
    test::message_store store;
    for (auto mode : {payload_mode::automatic, payload_mode::json, payload_mode::string, payload_mode::base64}) {
        writer_options o;
        o.payload = mode;
        writer w{o};
        for (int i = 0; i < 3000; ++i) {
            const std::string payload = random_payload(rng);
            const auto m = store.make(static_cast<std::uint64_t>(i), payload);
            std::string out;
            w.begin(out);
            auto r = w.append(m, {"s", "t", 0}, out);
            w.finish(out);
            INFO("payload: " << payload);
            if (!r) {
                CHECK(mode == payload_mode::json);
                CHECK(out.empty());
                continue;
            }
            REQUIRE(!out.empty());
            CHECK(out.back() == '\n');
            CHECK(out.find('\n') == out.size() - 1);  // one line
            boost::system::error_code ec;
            const auto doc = boost::json::parse(out, ec);
            REQUIRE_FALSE(ec);
            const auto& embedded = doc.as_object().at("payload");
            // Where an independent parser reads the payload as JSON and the writer embedded it
            // as JSON, both must mean the same value.
            boost::system::error_code ec2;
            const auto original = boost::json::parse(payload, ec2);
            // (A payload the writer did not take as JSON is embedded as its text.)
            if (!ec2 && (mode == payload_mode::automatic || mode == payload_mode::json)) {
                const bool as_text = embedded.is_string() && embedded.as_string() == payload;
                CHECK((same(embedded, original) || as_text));
            }
        }
    }
}

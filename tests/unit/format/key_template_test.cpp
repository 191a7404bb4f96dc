// SPDX-License-Identifier: Apache-2.0
#include "format/key_template.hpp"

#include "catch2_compat.hpp"

#include <string>
#include <vector>

using iss::format::key_template;
using iss::format::key_values;
using iss::format::placeholder;

namespace {
const std::string default_key =
    "{prefix}/{stream}/{topic}/partition={partition}/{stream}+{topic}+{partition}+{start_offset:020}.{ext}";

bool mentions(const std::vector<std::string>& problems, std::string_view text) {
    for (const auto& p : problems)
        if (p.find(text) != std::string::npos) return true;
    return false;
}
}  // namespace

TEST_CASE("the default template renders the documented key", "[key_template]") {
    auto t = key_template::parse(default_key);
    REQUIRE(t.has_value());
    CHECK(t->render(key_values{"iggy", "app", "requests", 2, 42, "jsonl"}) ==
          "iggy/app/requests/partition=2/app+requests+2+00000000000000000042.jsonl");
    CHECK(t->uses(placeholder::stream));
    CHECK(t->uses(placeholder::ext));
}

TEST_CASE("an empty prefix leaves no leading or doubled slash", "[key_template]") {
    auto t = key_template::parse(default_key).value();
    CHECK(t.render(key_values{"", "app", "t", 0, 0, "json.gz"}) ==
          "app/t/partition=0/app+t+0+00000000000000000000.json.gz");
    CHECK(t.render(key_values{"a/b/", "s", "t", 1, 5, "bin"}) == "a/b/s/t/partition=1/s+t+1+00000000000000000005.bin");
    CHECK(t.render(key_values{"/lake", "s", "t", 1, 5, "bin"}) ==
          "lake/s/t/partition=1/s+t+1+00000000000000000005.bin");
    auto u = key_template::parse("{prefix}//{partition}/{start_offset}").value();
    CHECK(u.render(key_values{"", "s", "t", 3, 7, ""}) == "3/7");
}

TEST_CASE("stream and topic names are percent-encoded so they never add a path level", "[key_template]") {
    auto t = key_template::parse("{stream}/{topic}/{partition}-{start_offset}").value();
    CHECK(t.render(key_values{"", "a/b", "x y+z%", 1, 2, ""}) == "a%2Fb/x%20y%2Bz%25/1-2");
    CHECK(t.render(key_values{"", "..", ".", 1, 2, ""}) == "%2E%2E/%2E/1-2");
    CHECK(t.render(key_values{"", "a.b_c-D9", "..x", 1, 2, ""}) == "a.b_c-D9/..x/1-2");
    CHECK(t.render(key_values{"", "caf\xc3\xa9", "t", 1, 2, ""}) == "caf%C3%A9/t/1-2");
}

TEST_CASE("zero padding applies to numbers and never truncates", "[key_template]") {
    auto t = key_template::parse("{partition:04}/{start_offset:03}").value();
    CHECK(t.render(key_values{"", "", "", 7, 12345, ""}) == "0007/12345");
    CHECK(key_template::parse("{start_offset:020}").has_error());  // no {partition}
    auto bad_pad = key_template::check("{partition}/{start_offset:20}");
    CHECK(mentions(bad_pad, "must be 0 and a width"));
    auto str_pad = key_template::check("{stream:010}/{partition}/{start_offset}");
    CHECK(mentions(str_pad, "zero padding applies to {partition}, {start_offset} and {topic_created} only"));
}

TEST_CASE("literal braces are written doubled", "[key_template]") {
    auto t = key_template::parse("{{x}}/{partition}/{start_offset}").value();
    CHECK(t.render(key_values{}) == "{x}/0/0");
    CHECK(mentions(key_template::check("{partition}/{start_offset}/}"), "has no '{'"));
    CHECK(key_template::check("{partition}/{start_offset}/{oops") ==
          std::vector<std::string>{"unclosed `{` at column 28 (write `{{` for a literal brace)"});
    CHECK(mentions(key_template::check("{}{partition}/{start_offset}"), "empty placeholder"));
}

TEST_CASE("a lone '{' before a placeholder is reported as unclosed at its column, and nothing else", "[key_template]") {
    // Not "unknown placeholder {b/{partition}" followed by "must contain {partition}".
    CHECK(key_template::check("{prefix}/{b/{partition}/{start_offset}.{ext}") ==
          std::vector<std::string>{"unclosed `{` at column 10 (write `{{` for a literal brace)"});
    auto two = key_template::check("{{x/{/{partition}/{start_offset}{");
    CHECK(two == std::vector<std::string>{"unclosed `{` at column 5 (write `{{` for a literal brace)",
                                          "unclosed `{` at column 33 (write `{{` for a literal brace)"});
}

TEST_CASE("a template without partition or start offset is refused with the reason", "[key_template]") {
    auto p = key_template::check("{prefix}/{stream}/{start_offset}");
    REQUIRE(p.size() == 1);
    CHECK(mentions(p, "must contain {partition}"));
    p = key_template::check("{prefix}/{partition}");
    REQUIRE(p.size() == 1);
    CHECK(mentions(p, "must contain {start_offset}"));
}

TEST_CASE("placeholders a replay could render differently are refused and say why", "[key_template]") {
    CHECK(mentions(key_template::check("{partition}/{start_offset}-{end_offset}"), "where the object was cut"));
    CHECK(mentions(key_template::check("{partition}/{start_offset}/{now}"), "upload time differs on a replay"));
    CHECK(mentions(key_template::check("{partition}/{start_offset}/{day}"), "use {yyyy} {MM} {dd}"));
    CHECK(mentions(key_template::check("{partition}/{start_offset}/{uuid}"), "random part"));
    CHECK(mentions(key_template::check("{partition}/{start_offset}/{hostname}"), "differs between daemons"));
    CHECK(mentions(key_template::check("{partition}/{start_offset}/{colour}"), "unknown placeholder {colour}"));
}

TEST_CASE("every problem is reported at once and parse joins them", "[key_template]") {
    const auto p = key_template::check("{end_offset}/{uuid}/\x01");
    CHECK(p.size() == 5);  // three here, and both required placeholders missing
    auto r = key_template::parse("{end_offset}/{uuid}/\x01");
    REQUIRE(r.has_error());
    CHECK(r.error() == iss::format::errc::bad_key_template);
    CHECK(r.error().detail().find("; ") != std::string::npos);
}

TEST_CASE("{topic_created} renders the topic's generation, and must not run into another number", "[key_template]") {
    auto t = key_template::parse("{prefix}/{stream}/{topic}/{topic_created}/{partition}/{start_offset:020}.{ext}");
    REQUIRE(t.has_value());
    CHECK(t->uses(placeholder::topic_created));
    key_values v{"iggy", "app", "events", 1, 7, "jsonl"};
    v.topic_created = 1765100000123456;
    const auto old_key = t->render(v);
    CHECK(old_key == "iggy/app/events/1765100000123456/1/00000000000000000007.jsonl");
    v.topic_created = 1765100099000000;  // the topic created again: same partition and offset, another key
    CHECK(t->render(v) != old_key);
    CHECK(key_template::parse("{partition}/{start_offset}-{topic_created:020}").has_value());
    // Generation 12 at offset 3 and generation 1 at offset 23 would both render "123".
    CHECK(mentions(key_template::check("{partition}/{topic_created}{start_offset}"),
                   "{topic_created} and {start_offset} run together"));
    CHECK(mentions(key_template::check("{start_offset}/{partition}{topic_created}"),
                   "{partition} and {topic_created} run together"));
    CHECK(key_template::check("{partition}{start_offset}").empty());  // unchanged for the other numbers
}

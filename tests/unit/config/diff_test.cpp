// SPDX-License-Identifier: Apache-2.0
#include "config/config.hpp"
#include "test_env.hpp"

#include "catch2_compat.hpp"

#include <string>
#include <vector>

using namespace iss::config;

namespace {

sink_config load(const std::string& yaml, const std::string& password = "pw1") {
    auto l = parse(
        yaml, test::fixed_env(
                  {{"IGGY_PASSWORD", password}, {"AWS_ACCESS_KEY_ID", "AKID"}, {"AWS_SECRET_ACCESS_KEY", "secret"}}));
    REQUIRE(check(l).empty());
    return l.config;
}

using names = std::vector<std::string>;

}  // namespace

TEST_CASE("the same file read twice changes no section", "[config][diff]") {
    const std::string yaml = test::full_yaml;
    CHECK(changed_sections(load(yaml), load(yaml)).empty());
}

TEST_CASE("a change names only its own top-level section", "[config][diff]") {
    const std::string yaml = test::full_yaml;
    const auto base = load(yaml);
    auto c = base;
    c.rotation.max_records = 250;
    CHECK(changed_sections(base, c) == names{"rotation"});
    c = base;
    c.iggy.poll.messages = 500;  // a nested iggy.* key
    CHECK(changed_sections(base, c) == names{"iggy"});
    c = base;
    c.sources.front().topics.push_back("audit");
    CHECK(changed_sections(base, c) == names{"sources"});
    c = base;
    c.s3.tags["team"] = "data";
    c.log.level = iss::log::level::debug;
    CHECK(changed_sections(base, c) == names{"s3", "log"});
}

TEST_CASE("a changed secret counts although it prints as ****", "[config][diff]") {
    const std::string yaml = test::full_yaml;
    const auto a = load(yaml, "pw1");
    const auto b = load(yaml, "pw2");
    CHECK(to_yaml(a) == to_yaml(b));  // the printed form cannot tell them apart
    CHECK(changed_sections(a, b) == names{"iggy"});
}

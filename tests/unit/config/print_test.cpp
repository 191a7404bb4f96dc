// SPDX-License-Identifier: Apache-2.0
#include "config/config.hpp"
#include "test_env.hpp"

#include "catch2_compat.hpp"

#include <fstream>
#include <sstream>

using namespace iss::config;

TEST_CASE("the printed config redacts every secret", "[config][print]") {
    auto l = parse(test::full_yaml, test::full_env());
    l.config.s3.session_token = iss::session_token{"session-secret"};
    const std::string y = to_yaml(l.config);
    CHECK(y.find("iggy-secret") == std::string::npos);
    CHECK(y.find("wJalrXUtnFEMI") == std::string::npos);
    CHECK(y.find("session-secret") == std::string::npos);
    CHECK(y.find("password: \"****\"") != std::string::npos);
    CHECK(y.find("secret_access_key: \"****\"") != std::string::npos);
    CHECK(y.find("token: \"\"") != std::string::npos);  // unset stays visibly empty
    CHECK(y.find("access_key_id: \"AKIDEXAMPLE\"") != std::string::npos);
}

TEST_CASE("the printed config reads back to the same config", "[config][print]") {
    auto l = parse(test::full_yaml, test::full_env());
    l.config.sources.push_back(source_section{"other", {"t1"}, false, {0, 3}});
    l.config.s3.prefix = "has ${dollar} and \"quotes\"";
    l.config.format.separator = "\x1e";
    const std::string first = to_yaml(l.config);
    auto again = parse(first, test::fixed_env({}));
    INFO(first);
    std::string problems;
    for (const auto& p : again.problems) problems += to_string(p) + "\n";
    INFO(problems);
    REQUIRE(again.problems.empty());
    CHECK(again.config.s3.prefix == l.config.s3.prefix);
    CHECK(again.config.format.separator == "\x1e");
    CHECK(to_yaml(again.config) == first);
}

TEST_CASE("single-consumer mode prints consumer, group mode consumer_group", "[config][print]") {
    sink_config c;
    CHECK(to_yaml(c).find("consumer_group: \"s3-sink\"") != std::string::npos);
    CHECK(to_yaml(c).find("  consumer: ") == std::string::npos);
    c.iggy.consumer = "solo";
    CHECK(to_yaml(c).find("consumer_group:") == std::string::npos);
    CHECK(to_yaml(c).find("consumer: \"solo\"") != std::string::npos);
}

TEST_CASE("every key is described with type, default and help", "[config][print]") {
    const auto rows = describe();
    CHECK(rows.size() > 50);
    for (const auto& r : rows) {
        INFO(r.path);
        CHECK_FALSE(r.type.empty());
        CHECK_FALSE(r.default_text.empty());
        CHECK_FALSE(r.help.empty());
    }
    const auto md = describe_markdown();
    CHECK(md.find("| `s3.retry.deadline` | duration | `15s` |") != std::string::npos);
    CHECK(md.find("| `s3.secret_access_key` | string, secret | `env AWS_SECRET_ACCESS_KEY` |") != std::string::npos);
    CHECK(md.find("json_lines \\| json_array \\| raw") != std::string::npos);
}

TEST_CASE("docs/configuration.md is the generated reference: every key, once", "[config][print]") {
    std::ifstream in{std::string{ISS_SOURCE_DIR} + "/docs/configuration.md"};
    REQUIRE(in);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string page = ss.str();
    // Regenerate with `iggy-s3-sink check-config --help-config --markdown > docs/configuration.md`.
    CHECK(page == describe_page());
    for (const auto& r : describe()) {
        INFO(r.path);
        const std::string row = "| `" + r.path + "` |";
        const auto at = page.find(row);
        CHECK(at != std::string::npos);
        CHECK(page.find(row, at + 1) == std::string::npos);
    }
}

TEST_CASE("the reference has a section per top-level key and links the pages its help names", "[config][print]") {
    const auto sections = describe_sections();
    std::vector<std::string> names;
    for (const auto& s : sections) names.push_back(s.name);
    CHECK(names == std::vector<std::string>{"iggy", "sources", "s3", "format", "rotation", "memory", "performance",
                                            "naming", "delivery", "shutdown", "log", "admin", "iceberg"});
    const std::string page = describe_page();
    CHECK(page.find("### s3\n") != std::string::npos);
    CHECK(page.find("See [aws.md](aws.md).") != std::string::npos);
    CHECK(page.find("docs/aws.md") == std::string::npos);
    const std::string text = describe_text();
    CHECK(text.find("s3.retry.deadline  duration, default 15s\n    Bound on one operation") != std::string::npos);
    CHECK(text.find("See docs/aws.md.") != std::string::npos);
}

TEST_CASE("the example config in packaging/ is valid", "[config][print]") {
    auto l = load_file(std::string{ISS_SOURCE_DIR} + "/packaging/iggy-s3-sink.yaml", test::full_env());
    auto all = check(l);
    std::string s;
    for (const auto& p : all) s += to_string(p) + "\n";
    INFO(s);
    CHECK(all.empty());
}

// SPDX-License-Identifier: Apache-2.0
#include "common/log.hpp"

#include "common/journal.hpp"
#include "common/types.hpp"

#include "catch2_compat.hpp"
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

using namespace std::chrono_literals;
namespace lg = iss::log;

namespace {
const iss::clock::system_time t0 = iss::clock::system_time{1'795'999'323s} + 4us;  // 2026-11-30T...

struct capture {
    std::vector<std::string> lines;
    iss::manual_clock clock{t0};
    capture() {
        lg::set_sink([this](std::string_view l) { lines.emplace_back(l); });
        lg::set_clock(&clock);
    }
    ~capture() {
        lg::set_sink({});
        lg::set_clock(nullptr);
        lg::configure(lg::level::info, lg::output_format::text);
    }
};
}  // namespace

TEST_CASE("timestamps are RFC 3339 UTC with microseconds", "[log]") {
    CHECK(lg::format_rfc3339_micros(iss::clock::system_time{0s}) == "1970-01-01T00:00:00.000000Z");
    CHECK(lg::format_rfc3339_micros(t0) == "2026-11-30T00:42:03.000004Z");
}

TEST_CASE("text lines carry time, level, logger, message and fields", "[log]") {
    const std::vector<lg::field> ctx{{"bucket", "lake"}};
    const std::vector<lg::field> f{{"key", "a b"}, {"attempt", "2/10"}, {"empty", ""}};
    const lg::record r{t0, lg::level::warn, "s3", "retrying\nnow", ctx, f};
    CHECK(lg::format_record(r, lg::output_format::text) ==
          "2026-11-30T00:42:03.000004Z warn  s3: retrying now bucket=lake key=\"a b\" attempt=2/10 empty=\"\"");
}

TEST_CASE("JSON lines are valid JSON with escaped strings", "[log]") {
    const std::vector<lg::field> f{{"key", "q\"\\\x01\xff"}};
    const lg::record r{t0, lg::level::error, "iggy", "tab\there", {}, f};
    CHECK(lg::format_record(r, lg::output_format::json) ==
          "{\"ts\":\"2026-11-30T00:42:03.000004Z\",\"level\":\"error\",\"logger\":\"iggy\","
          "\"msg\":\"tab\\there\",\"key\":\"q\\\"\\\\\\u0001\xef\xbf\xbd\"}");
}

TEST_CASE("levels below the minimum are dropped; fields and context are emitted", "[log]") {
    capture cap;
    lg::configure(lg::level::info, lg::output_format::text);
    const lg::logger base{"pipeline"};
    const auto log = base.with({lg::kv("stream", "app"), lg::kv("partition", 3)});
    log.debug("not shown {}", 1);
    log.info({lg::kv("offset", 42)}, "uploaded {} records", 10);
    REQUIRE(cap.lines.size() == 1);
    CHECK(cap.lines[0] ==
          "2026-11-30T00:42:03.000004Z info  pipeline: uploaded 10 records stream=app partition=3 offset=42");
    lg::configure(lg::level::off, lg::output_format::text);
    log.error("silenced");
    CHECK(cap.lines.size() == 1);
}

TEST_CASE("a secret passed as a field is redacted in both formats", "[log][redaction]") {
    capture cap;
    const iss::secret_access_key secret{"SUPERSECRET"};
    lg::configure(lg::level::trace, lg::output_format::json);
    lg::logger{"s3"}.trace({lg::kv("secret", secret)}, "signing with {}", secret);
    lg::configure(lg::level::trace, lg::output_format::text);
    lg::logger{"s3"}.trace({lg::kv("secret", secret)}, "signing with {}", secret);
    REQUIRE(cap.lines.size() == 2);
    for (const auto& l : cap.lines) {
        CHECK(l.find("SUPERSECRET") == std::string::npos);
        CHECK(l.find("****") != std::string::npos);
    }
}

TEST_CASE("level and format names parse", "[log]") {
    CHECK(lg::parse_level("debug") == lg::level::debug);
    CHECK(lg::parse_level("warning") == lg::level::warn);
    CHECK_FALSE(lg::parse_level("loud").has_value());
    CHECK(lg::parse_format("json") == lg::output_format::json);
    CHECK_FALSE(lg::parse_format("xml").has_value());
}

TEST_CASE("JOURNAL_STREAM names stderr only when device and inode both match", "[log][journal]") {
    CHECK(lg::journal_stream_matches("8:12345", 8, 12345));
    CHECK_FALSE(lg::journal_stream_matches("8:12345", 8, 12346));  // stderr redirected elsewhere
    CHECK_FALSE(lg::journal_stream_matches("9:12345", 8, 12345));
    for (const char* bad : {"", ":", "8:", ":12345", "8", "8:12345x", "x8:12345", "-8:12345", "8:12:345"})
        CHECK_FALSE(lg::journal_stream_matches(bad, 8, 12345));
}

TEST_CASE("on the journal every line starts with its sd-daemon priority", "[log][journal]") {
    capture c;
    lg::configure(lg::level::trace, lg::output_format::text);
    const lg::logger log{"app"};
    lg::use_priority_prefixes(true);
    log.error("e");
    log.warn("w");
    log.info("i");
    log.debug("d");
    log.trace("t");
    CHECK(lg::stderr_prefix(lg::level::error) == "<3>");
    lg::use_priority_prefixes(false);
    log.error("plain");
    CHECK(lg::stderr_prefix(lg::level::error).empty());
    REQUIRE(c.lines.size() == 6);
    const std::vector<std::string> want{"<3>", "<4>", "<6>", "<7>", "<7>"};
    for (std::size_t i = 0; i < want.size(); ++i) {
        INFO(c.lines[i]);
        CHECK(c.lines[i].starts_with(want[i] + "2026-11-30T00:42:03.000004Z"));
    }
    CHECK(c.lines[5].starts_with("2026-11-30T00:42:03.000004Z error app: plain"));
}

TEST_CASE("stderr_is_journal compares JOURNAL_STREAM with stderr's own device and inode", "[log][journal]") {
    struct stat st = {};
    REQUIRE(::fstat(STDERR_FILENO, &st) == 0);
    const char* before = std::getenv("JOURNAL_STREAM");
    const std::string saved = before != nullptr ? before : "";
    ::setenv("JOURNAL_STREAM", fmt::format("{}:{}", st.st_dev, st.st_ino).c_str(), 1);
    CHECK(lg::stderr_is_journal());
    ::setenv("JOURNAL_STREAM", fmt::format("{}:{}", st.st_dev, st.st_ino + 1).c_str(), 1);
    CHECK_FALSE(lg::stderr_is_journal());
    ::unsetenv("JOURNAL_STREAM");
    CHECK_FALSE(lg::stderr_is_journal());
    if (before != nullptr) ::setenv("JOURNAL_STREAM", saved.c_str(), 1);
}

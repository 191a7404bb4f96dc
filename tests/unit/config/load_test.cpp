// SPDX-License-Identifier: Apache-2.0
#include "config/config.hpp"
#include "test_env.hpp"

#include "catch2_compat.hpp"

#include <algorithm>

using namespace iss::config;
using namespace std::chrono_literals;

namespace {
bool has_problem(const std::vector<problem>& ps, std::string_view path, std::string_view text) {
    return std::any_of(ps.begin(), ps.end(),
                       [&](const problem& p) { return p.path == path && p.message.find(text) != std::string::npos; });
}
std::string dump(const std::vector<problem>& ps) {
    std::string s;
    for (const auto& p : ps) s += to_string(p) + "\n";
    return s;
}
}  // namespace

TEST_CASE("the issue's example file loads with every value", "[config][load]") {
    auto l = parse(test::full_yaml, test::full_env());
    INFO(dump(l.problems));
    REQUIRE(l.problems.empty());
    const auto& c = l.config;
    CHECK(c.iggy.address == "127.0.0.1:8090");
    CHECK(c.iggy.password.reveal() == "iggy-secret");
    CHECK(c.iggy.token.empty());
    CHECK(c.iggy.consumer_group == "s3-sink");
    CHECK(c.iggy.group_mode());
    CHECK(c.iggy.poll.interval == 100ms);
    CHECK(c.iggy.max_response_bytes == 64 * mib);
    REQUIRE(c.sources.size() == 1);
    CHECK(c.sources[0].stream == "app");
    CHECK(c.sources[0].topics == std::vector<std::string>{"requests", "errors"});
    CHECK(c.sources[0].all_partitions);
    CHECK(c.s3.bucket.get() == "lake");
    CHECK(c.s3.secret_access_key.reveal() == "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
    CHECK(c.s3.part_size == 8 * mib);
    CHECK(c.s3.retry.deadline == 15s);
    CHECK(c.format.separator == "\n");
    CHECK(c.rotation.max_span == 10min);
    CHECK(c.delivery.dead_letter.topic == "s3-dead-letter");
    CHECK(c.log.level == iss::log::level::info);
    auto all = check(l);
    INFO(dump(all));
    CHECK(all.empty());
}

TEST_CASE("absent keys keep their defaults", "[config][load]") {
    auto l = parse(test::minimal_yaml(), test::fixed_env({}));
    INFO(dump(l.problems));
    REQUIRE(l.problems.empty());
    const sink_config d{};
    CHECK(l.config.s3.part_size == d.s3.part_size);
    CHECK(l.config.rotation.max_records == 10'000);
    CHECK(l.config.naming.key == d.naming.key);
    CHECK(l.config.format.type == iss::format::record_format::json_lines);
    CHECK(validate(l.config).empty());
}

TEST_CASE("secrets default to the standard environment variables", "[config][load]") {
    auto l = parse("sources: [{stream: a, topics: b}]\ns3: {bucket: lake}\n",
                   test::fixed_env({{"AWS_ACCESS_KEY_ID", "AK"},
                                    {"AWS_SECRET_ACCESS_KEY", "SK"},
                                    {"AWS_SESSION_TOKEN", "ST"},
                                    {"IGGY_PASSWORD", "PW"}}));
    REQUIRE(l.problems.empty());
    CHECK(l.config.s3.access_key_id.get() == "AK");
    CHECK(l.config.s3.secret_access_key.reveal() == "SK");
    CHECK(l.config.s3.session_token.reveal() == "ST");
    CHECK(l.config.iggy.password.reveal() == "PW");
    CHECK(l.config.sources[0].topics == std::vector<std::string>{"b"});
    // An explicit value wins over the environment, and an explicit access key id takes no
    // secret or session token of the environment's (other) identity.
    auto e = parse(
        "s3: {access_key_id: mine}\n",
        test::fixed_env({{"AWS_ACCESS_KEY_ID", "AK"}, {"AWS_SECRET_ACCESS_KEY", "SK"}, {"AWS_SESSION_TOKEN", "ST"}}));
    CHECK(e.config.s3.access_key_id.get() == "mine");
    CHECK(e.config.s3.secret_access_key.empty());
    CHECK(e.config.s3.session_token.empty());
    auto f = parse("s3: {access_key_id: mine, secret_access_key: '${SK}'}\n",
                   test::fixed_env({{"SK", "from-var"}, {"AWS_SESSION_TOKEN", "ST"}}));
    CHECK(f.config.s3.secret_access_key.reveal() == "from-var");
    CHECK(f.config.s3.session_token.empty());
}

TEST_CASE("with a token configured, IGGY_PASSWORD is neither required nor read", "[config][load]") {
    // The environment holds both (one Secret for several daemons, the shipped env file with a
    // password left in it): a token in the file wins, and the password variable is not read.
    std::vector<std::string> asked;
    const auto base = test::fixed_env({{"IGGY_PASSWORD", "PW"}, {"IGGY_TOKEN", "TOK"}});
    const env_lookup env = [&](std::string_view name) {
        asked.emplace_back(name);
        return base(name);
    };
    const std::string rest = "sources: [{stream: a, topics: b}]\ns3: {bucket: lake}\n";
    auto l = parse("iggy: {token: '${IGGY_TOKEN}'}\n" + rest, env);
    CHECK(check(l).empty());
    CHECK(l.config.iggy.token.reveal() == "TOK");
    CHECK(l.config.iggy.password.empty());
    CHECK(std::count(asked.begin(), asked.end(), "IGGY_PASSWORD") == 0);
    // A literal token likewise; and without IGGY_PASSWORD in the environment nothing is missing.
    asked.clear();
    auto lit = parse("iggy: {token: literal-token}\n" + rest, env);
    CHECK(check(lit).empty());
    CHECK(std::count(asked.begin(), asked.end(), "IGGY_PASSWORD") == 0);
    auto bare = parse("iggy: {token: literal-token}\n" + rest, test::fixed_env({}));
    CHECK(check(bare).empty());
    // A token that comes out empty (`${IGGY_TOKEN:-}` unset) is no token: the password is
    // taken from the environment as before.
    auto none = parse("iggy: {token: '${IGGY_TOKEN:-}'}\n" + rest, test::fixed_env({{"IGGY_PASSWORD", "PW"}}));
    CHECK(check(none).empty());
    CHECK(none.config.iggy.password.reveal() == "PW");
    // A password written in the file beside a token is still refused (one login).
    auto both = parse("iggy: {token: t, password: p}\n" + rest, test::fixed_env({}));
    CHECK(has_problem(check(both), "iggy.token", "not both"));
}

TEST_CASE("unknown keys are errors with a suggestion", "[config][load]") {
    auto l = parse("s3: {bucket: lake, part_sise: 8MiB}\nrotaton: {}\nformat: {colour: red}\n", test::fixed_env({}));
    INFO(dump(l.problems));
    CHECK(has_problem(l.problems, "s3.part_sise", "did you mean part_size?"));
    CHECK(has_problem(l.problems, "rotaton", "did you mean rotation?"));
    CHECK(has_problem(l.problems, "format.colour", "unknown key"));
    CHECK(l.config.s3.bucket.get() == "lake");
}

TEST_CASE("a duplicate key is an error, not a silent override", "[config][load]") {
    auto l = parse("s3:\n  bucket: a\n  bucket: b\n", test::fixed_env({}));
    CHECK(has_problem(l.problems, "s3.bucket", "duplicate key"));
    REQUIRE(!l.problems.empty());
    CHECK(l.problems[0].line == 3);
}

TEST_CASE("wrong types name the path, the value and the line", "[config][load]") {
    const char* yaml =
        "iggy:\n"
        "  poll: {messages: lots, interval: 30}\n"
        "  verify_checksum: maybe\n"
        "s3: {part_size: 8M, checksum: sha1, retry: [1, 2]}\n"
        "rotation: {max_records: -1}\n"
        "sources: {stream: a}\n";
    auto l = parse(yaml, test::fixed_env({}));
    INFO(dump(l.problems));
    CHECK(has_problem(l.problems, "iggy.poll.messages", "whole number"));
    CHECK(has_problem(l.problems, "iggy.poll.interval", "needs a unit"));
    CHECK(has_problem(l.problems, "iggy.verify_checksum", "true or false"));
    CHECK(has_problem(l.problems, "s3.part_size", "ambiguous"));
    CHECK(has_problem(l.problems, "s3.checksum", "one of auto, md5, crc32c, none"));
    CHECK(has_problem(l.problems, "s3.retry", "must be a mapping"));
    CHECK(has_problem(l.problems, "rotation.max_records", "whole number"));
    CHECK(has_problem(l.problems, "sources", "must be a list"));
    CHECK(l.problems.size() == 8);
    for (const auto& p : l.problems) CHECK(p.line > 0);
    CHECK(l.problems[0].line == 2);
}

TEST_CASE("an unset variable is reported with its path and name", "[config][load]") {
    auto l = parse("iggy: {password: '${IGGY_PASSWORD}'}\ns3: {bucket: '${BUCKET:-lake}'}\n", test::fixed_env({}));
    REQUIRE(l.problems.size() == 1);
    CHECK(l.problems[0].path == "iggy.password");
    CHECK(l.problems[0].message.find("IGGY_PASSWORD is not set") != std::string::npos);
    CHECK(l.config.s3.bucket.get() == "lake");
}

TEST_CASE("interpolated values are typed after replacement and never reparsed as YAML", "[config][load]") {
    auto l = parse("s3: {part_size: '${PS}', prefix: '${P}'}\n", test::fixed_env({{"PS", "16MiB"}, {"P", "a: b # c"}}));
    REQUIRE(l.problems.empty());
    CHECK(l.config.s3.part_size == 16 * mib);
    CHECK(l.config.s3.prefix == "a: b # c");
}

TEST_CASE("an unquoted ${VAR} inside a flow map says that the value must be quoted", "[config][load]") {
    auto l = parse("iggy: {address: \"127.0.0.1:8090\"}\nlog: {level: ${LOG_LEVEL}}\n",
                   test::fixed_env({{"LOG_LEVEL", "debug"}}));
    REQUIRE(l.problems.size() == 1);
    const auto& m = l.problems[0].message;
    CHECK(m.find("YAML syntax") != std::string::npos);
    CHECK(m.find("${LOG_LEVEL} on line 2 is inside a flow collection") != std::string::npos);
    CHECK(m.find("the value must be quoted (\"${LOG_LEVEL}\")") != std::string::npos);
    CHECK(l.problems[0].line == 2);
    // Quoted, it is read (and replaced) as usual; in block style it needs no quotes.
    auto q = parse("log: {level: \"${LOG_LEVEL}\"}\n", test::fixed_env({{"LOG_LEVEL", "debug"}}));
    CHECK(q.problems.empty());
    auto b = parse("log:\n  level: ${LOG_LEVEL}\n", test::fixed_env({{"LOG_LEVEL", "debug"}}));
    CHECK(b.problems.empty());
    // A syntax error elsewhere, with a quoted reference in a flow map: no such hint.
    auto other = parse("log: {level: \"${LOG_LEVEL}\"}\niggy:\n  address: [unclosed\n",
                       test::fixed_env({{"LOG_LEVEL", "debug"}}));
    REQUIRE(other.problems.size() == 1);
    CHECK(other.problems[0].message.find("must be quoted") == std::string::npos);
}

TEST_CASE("a quoted value left open is a syntax error that quotes nothing of the file", "[config][load]") {
    // yaml-cpp reads a quote never closed as running to the end of the file: the lines after it,
    // secrets among them, became iggy.address and its message printed them.
    const std::string yaml =
        "iggy:\n  address: \"iggy.internal:8090\n  username: iggy\n  password: ${IGGY_PASSWORD}\n"
        "s3:\n  bucket: lake\n  secret_access_key: wJalrXUtnFEMI-literal\n";
    auto l = parse(yaml, test::fixed_env({{"IGGY_PASSWORD", "Pr0dSecret-from-env"}}));
    REQUIRE(l.problems.size() == 1);
    const auto& m = l.problems[0].message;
    CHECK(m.find("YAML syntax") != std::string::npos);
    CHECK(m.find("starts on line 2 is never closed") != std::string::npos);
    CHECK(l.problems[0].line == 2);
    CHECK(m.find("Pr0dSecret") == std::string::npos);
    CHECK(m.find("wJalr") == std::string::npos);
    // Closed quotes, an apostrophe inside a word, '' inside single quotes, quotes in comments and
    // a multi-line quoted value that is closed: no such problem.
    auto ok = parse(
        "iggy:\n  address: \"127.0.0.1:8090\"  # it's \"here\n  username: 'it''s'\n"
        "s3:\n  prefix: don't\n  bucket: \"a\n    b\"\n",
        test::fixed_env({}));
    for (const auto& p : ok.problems) CHECK(p.message.find("never closed") == std::string::npos);
}

TEST_CASE("YAML syntax errors carry the line", "[config][load]") {
    auto l = parse("iggy:\n  address: [unclosed\n", test::fixed_env({}));
    REQUIRE(l.problems.size() == 1);
    CHECK(l.problems[0].message.find("YAML syntax") != std::string::npos);
    CHECK(l.problems[0].line >= 2);
    CHECK(check(l).size() == 1);  // no validation noise after a syntax error
    auto tabs = parse("iggy:\n\taddress: x\n", test::fixed_env({}));
    REQUIRE(tabs.problems.size() == 1);
    CHECK(tabs.problems[0].message.find("tabs") != std::string::npos);
    auto t = parse("- a\n- b\n", test::fixed_env({}));
    REQUIRE(t.problems.size() == 1);
    CHECK(t.problems[0].message.find("must be a mapping") != std::string::npos);
}

TEST_CASE("an empty file is all defaults (and then fails validation)", "[config][load]") {
    auto l = parse("", test::fixed_env({}));
    CHECK(l.problems.empty());
    CHECK_FALSE(validate(l.config).empty());
}

TEST_CASE("words YAML 1.1 would turn into booleans stay words", "[config][load]") {
    auto l = parse("s3: {conditional_writes: off, path_style: no}\nsources: [{stream: no, topics: [on, 007]}]\n",
                   test::fixed_env({}));
    INFO(dump(l.problems));
    REQUIRE(l.problems.empty());
    CHECK(l.config.s3.conditional_writes == iss::pipeline::conditional_writes::off);
    CHECK(l.config.s3.path_style == iss::s3::addressing::virtual_hosted);
    CHECK(l.config.sources[0].stream == "no");
    CHECK(l.config.sources[0].topics == std::vector<std::string>{"on", "007"});
}

TEST_CASE("consumer and consumer_group together are an error", "[config][load]") {
    auto l = parse("iggy: {consumer_group: g, consumer: c}\n", test::fixed_env({}));
    CHECK(has_problem(l.problems, "iggy.consumer", "not both"));
    auto single = parse("iggy: {consumer: c}\n", test::fixed_env({}));
    CHECK(single.problems.empty());
    CHECK_FALSE(single.config.iggy.group_mode());
}

TEST_CASE("partitions are all, a list, or one id", "[config][load]") {
    auto l = parse(
        "sources: [{stream: a, topics: t, partitions: [0, 2]}, {stream: b, topics: t, partitions: 3},"
        " {stream: c, topics: t, partitions: some}]\n",
        test::fixed_env({}));
    CHECK(l.config.sources[0].partitions == std::vector<std::uint32_t>{0, 2});
    CHECK_FALSE(l.config.sources[0].all_partitions);
    CHECK(l.config.sources[1].partitions == std::vector<std::uint32_t>{3});
    CHECK(has_problem(l.problems, "sources[2].partitions", "must be all or a list"));
}

TEST_CASE("check() places validation problems at the line of their key", "[config][load]") {
    auto l = parse(test::minimal_yaml() + "rotation:\n  max_records: 0\n", test::fixed_env({}));
    auto all = check(l);
    REQUIRE(all.size() == 1);
    CHECK(to_string(all[0]) == "rotation.max_records: must be > 0 (line 5)");
}

TEST_CASE("AWS access keys load: credentials source, assume_role, sse, tags and metadata maps", "[config][load]") {
    auto l = parse(
        "sources: [{stream: a, topics: b}]\n"
        "s3:\n  bucket: lake\n  credentials: {source: web_identity}\n"
        "  assume_role: {role_arn: 'arn:aws:iam::123:role/w', session_name: sink, external_id: x1, duration: 30m}\n"
        "  sts_endpoint: https://sts.eu-west-1.amazonaws.com\n  proxy: http://u:pw@proxy:3128\n"
        "  sse: {type: 'aws:kms', kms_key_id: k1, bucket_key_enabled: true}\n"
        "  storage_class: STANDARD_IA\n  acl: bucket-owner-full-control\n"
        "  tags: {team: data, env: prod}\n  metadata: {owner: sink}\n",
        test::fixed_env({}));
    INFO(dump(l.problems));
    REQUIRE(l.problems.empty());
    const auto& s = l.config.s3;
    CHECK(s.credentials.source == iss::aws::source_kind::web_identity);
    CHECK(s.assume_role.role_arn == "arn:aws:iam::123:role/w");
    CHECK(s.assume_role.duration == 30min);
    CHECK(s.proxy.reveal() == "http://u:pw@proxy:3128");
    CHECK(s.sse.type == iss::s3::sse_type::kms);
    CHECK(s.sse.bucket_key_enabled);
    CHECK(s.tags.at("team") == "data");
    CHECK(s.tags.size() == 2);
    CHECK(s.metadata.at("owner") == "sink");
    for (const auto& p : validate(l.config)) CHECK_FALSE(p.path.starts_with("s3."));  // (the file has no Iggy login)
    // The printer writes the maps back and hides the proxy URL (it may hold a password).
    const auto y = to_yaml(l.config);
    CHECK(y.find("tags: {\"env\": \"prod\", \"team\": \"data\"}") != std::string::npos);
    CHECK(y.find("pw") == std::string::npos);
    auto back = parse(y, test::fixed_env({}));
    CHECK(back.config.s3.tags == s.tags);
    auto bad = parse("s3: {tags: [a, b]}\n", test::fixed_env({}));
    REQUIRE(bad.problems.size() == 1);
    CHECK(bad.problems[0].path == "s3.tags");
}

TEST_CASE("keys taken from AWS_* variables are marked so the chain names them env", "[config][load]") {
    auto l =
        parse("s3: {bucket: lake}\n", test::fixed_env({{"AWS_ACCESS_KEY_ID", "AK"}, {"AWS_SECRET_ACCESS_KEY", "SK"}}));
    CHECK(l.config.s3.keys_from_env);
    auto f = parse("s3: {bucket: lake, access_key_id: AK, secret_access_key: SK}\n", test::fixed_env({}));
    CHECK_FALSE(f.config.s3.keys_from_env);
}

TEST_CASE("an access key whose variable comes out empty is an error, not the chain", "[config][load]") {
    // The packaged example reads ${AWS_ACCESS_KEY_ID}; an env file with `AWS_ACCESS_KEY_ID=`
    // must not quietly hand the choice to the credential chain.
    auto l = parse(
        "s3:\n  bucket: lake\n  access_key_id: ${AWS_ACCESS_KEY_ID}\n"
        "  secret_access_key: ${AWS_SECRET_ACCESS_KEY}\n  session_token: ${AWS_SESSION_TOKEN:-}\n",
        test::fixed_env({{"AWS_ACCESS_KEY_ID", ""}, {"AWS_SECRET_ACCESS_KEY", ""}}));
    INFO(dump(l.problems));
    CHECK(has_problem(l.problems, "s3.access_key_id", "is empty"));
    CHECK(has_problem(l.problems, "s3.secret_access_key", "is empty"));
    CHECK_FALSE(has_problem(l.problems, "s3.session_token", "is empty"));  // optional: empty is none
    const auto at = std::find_if(l.problems.begin(), l.problems.end(),
                                 [](const problem& p) { return p.path == "s3.access_key_id"; });
    REQUIRE(at != l.problems.end());
    CHECK(at->line == 3);
    // A literal "" means none (the printed effective config writes unset keys so), absent keys
    // are the chain's, and filled ones load.
    CHECK(parse("s3: {bucket: lake, access_key_id: \"\", secret_access_key: \"\"}\n", test::fixed_env({}))
              .problems.empty());
    CHECK(parse("s3: {bucket: lake}\n", test::fixed_env({{"AWS_ACCESS_KEY_ID", ""}})).problems.empty());
    CHECK(
        parse("s3: {bucket: lake, access_key_id: AK, secret_access_key: SK}\n", test::fixed_env({})).problems.empty());
}

TEST_CASE("a credential key read through ${VAR:-} with VAR unset is not given, so the chain finds a role",
          "[config][load]") {
    const std::string yaml =
        "s3:\n  bucket: lake\n  access_key_id: ${AWS_ACCESS_KEY_ID:-}\n"
        "  secret_access_key: ${AWS_SECRET_ACCESS_KEY:-}\n  session_token: ${AWS_SESSION_TOKEN:-}\n";
    // IRSA: only the web identity variables are set.
    auto irsa = parse(yaml, test::fixed_env({{"AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/secrets/token"},
                                             {"AWS_ROLE_ARN", "arn:aws:iam::111122223333:role/sink"}}));
    INFO(dump(irsa.problems));
    CHECK(irsa.problems.empty());
    CHECK_FALSE(irsa.set_paths.contains("s3.access_key_id"));
    CHECK_FALSE(irsa.set_paths.contains("s3.secret_access_key"));
    CHECK(irsa.config.s3.access_key_id.get().empty());
    for (const auto& p : validate(irsa.config)) CHECK_FALSE(p.path.starts_with("s3."));  // (no sources here)
    // An env file line `AWS_ACCESS_KEY_ID=` reads the same way through `:-`.
    CHECK(parse(yaml, test::fixed_env({{"AWS_ACCESS_KEY_ID", ""}, {"AWS_SECRET_ACCESS_KEY", ""}})).problems.empty());
    // Given keys still load, and half a pair is still refused by validation.
    auto keys = parse(yaml, test::fixed_env({{"AWS_ACCESS_KEY_ID", "AK"}, {"AWS_SECRET_ACCESS_KEY", "SK"}}));
    CHECK(keys.problems.empty());
    CHECK(keys.config.s3.access_key_id.get() == "AK");
    CHECK(keys.config.s3.secret_access_key.reveal() == "SK");
    auto half = parse(yaml, test::fixed_env({{"AWS_ACCESS_KEY_ID", "AK"}}));
    CHECK(half.problems.empty());
    CHECK(has_problem(validate(half.config), "s3.secret_access_key", "is required"));
    // A value with a required reference stays the mistake it was.
    auto mixed = parse("s3: {bucket: lake, access_key_id: \"${AWS_ACCESS_KEY_ID:-}${KEY_SUFFIX}\"}\n",
                       test::fixed_env({{"KEY_SUFFIX", ""}}));
    CHECK(has_problem(mixed.problems, "s3.access_key_id", "is empty"));
}

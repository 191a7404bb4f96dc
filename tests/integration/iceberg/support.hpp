// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the Iceberg integration tests share: the fixture's env file, a coroutine runner, the
// table's summary offsets, and a small commit plan standing in for lib/iceberg's metadata
// builders (it names its manifest list, which the catalog does not read, and merges the
// parent's summary offsets, which is what the commit loop's decisions rest on).
#include "iceberg/catalog_commit.hpp"
#include "tests/support/fixture_env.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <random>

namespace iss::test::iceberg_support {

using namespace iss::iceberg;
namespace net = boost::asio;
namespace json = boost::json;

inline const std::map<std::string, std::string>& cat() {
    static const auto env = iss::test::fixture_env("ICEBERG_DIR", "iceberg");
    return env;
}

inline std::uint32_t random32() {
    static std::mt19937_64 rng{std::random_device{}()};
    return static_cast<std::uint32_t>(rng());
}

template <class T>
T run(net::io_context& ioc, std::function<net::awaitable<T>()> task) {
    std::optional<T> out;
    std::exception_ptr err;
    net::co_spawn(ioc, task(), [&](std::exception_ptr e, T v) {
        err = e;
        if (!e) out = std::move(v);
        ioc.stop();
    });
    ioc.restart();
    ioc.run();
    if (err) std::rethrow_exception(err);
    return std::move(*out);
}

inline const json::object* current_snapshot(const json::object& md) {
    const auto* cur = md.if_contains("current-snapshot-id");
    if (cur == nullptr || !cur->is_int64() || cur->as_int64() == -1) return nullptr;
    for (const auto& s : md.at("snapshots").as_array())
        if (s.at("snapshot-id").as_int64() == cur->as_int64()) return &s.as_object();
    return nullptr;
}

// The current snapshot's iggy-s3-sink.offsets ("stream/topic/partition" -> next offset).
inline std::map<std::string, std::int64_t> table_offsets(const loaded_table& t) {
    std::map<std::string, std::int64_t> out;
    const auto md = json::parse(t.metadata_json).as_object();
    const auto* snap = current_snapshot(md);
    if (snap == nullptr) return out;
    const auto* v = snap->at("summary").as_object().if_contains("iggy-s3-sink.offsets");
    if (v == nullptr) return out;
    const json::value parsed = json::parse(v->as_string());
    for (const auto& [k, n] : parsed.as_object()) out[std::string{k}] = n.as_int64();
    return out;
}

inline std::size_t snapshot_count(const loaded_table& t) {
    return json::parse(t.metadata_json).at("snapshots").as_array().size();
}

// One batch: partition `part` of the table now holds offsets up to `next` - 1.
class test_plan final : public batch_plan {
public:
    test_plan(table_ident t, std::string part, std::int64_t next) : t_{std::move(t)}, next_{{std::move(part), next}} {}
    test_plan(table_ident t, std::map<std::string, std::int64_t> next) : t_{std::move(t)}, next_{std::move(next)} {}

    task<result<built_commit>> build(const loaded_table& base) override {
        ++builds;
        auto offsets = table_offsets(base);  // every partition of the parent's summary, merged
        for (const auto& [part, n] : next_) offsets[part] = n;
        json::object off;
        for (const auto& [k, n] : offsets) off[k] = n;
        const auto md = json::parse(base.metadata_json).as_object();
        const std::int64_t seq = md.at("last-sequence-number").as_int64() + 1;
        const std::int64_t id = (static_cast<std::int64_t>(random32()) << 20) | builds;
        const std::string list = fmt::format("{}/metadata/snap-{}-1-test.avro", base.location, id);
        json::object snap{
            {"snapshot-id", id},
            {"sequence-number", seq},
            {"timestamp-ms",
             std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
                 .count()},
            {"manifest-list", list},
            {"summary", json::object{{"operation", "append"}, {"iggy-s3-sink.offsets", json::serialize(off)}}},
            {"schema-id", 0}};
        json::value parent = nullptr;
        if (base.current_snapshot_id) {
            snap["parent-snapshot-id"] = *base.current_snapshot_id;
            parent = *base.current_snapshot_id;
        }
        json::array ns;
        for (const auto& l : t_.ns) ns.emplace_back(l);
        json::object body{
            {"identifier", json::object{{"namespace", ns}, {"name", t_.name}}},
            {"requirements",
             json::array{json::object{{"type", "assert-table-uuid"}, {"uuid", base.table_uuid}},
                         json::object{{"type", "assert-ref-snapshot-id"}, {"ref", "main"}, {"snapshot-id", parent}}}},
            {"updates",
             json::array{
                 json::object{{"action", "add-snapshot"}, {"snapshot", snap}},
                 json::object{
                     {"action", "set-snapshot-ref"}, {"ref-name", "main"}, {"type", "branch"}, {"snapshot-id", id}}}}};
        built_commit b;
        b.files.push_back({list, "manifest list bytes"});
        b.body = json::serialize(body);
        co_return b;
    }

    result<bool> covered_by(const loaded_table& table) override {
        const auto offsets = table_offsets(table);
        for (const auto& [part, n] : next_) {
            const auto it = offsets.find(part);
            if (it == offsets.end() || it->second < n) return false;
        }
        return true;
    }

    unsigned builds = 0;

private:
    table_ident t_;
    std::map<std::string, std::int64_t> next_;
};

}  // namespace iss::test::iceberg_support

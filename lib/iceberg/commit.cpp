// SPDX-License-Identifier: Apache-2.0
// The snapshot, the CommitTableRequest and the decision after a failed commit (commit.hpp
// cites the spec and the REST catalog's OpenAPI document).
#include "iceberg/commit.hpp"

#include "iceberg/error.hpp"

#include <boost/json.hpp>

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <charconv>
#include <set>

namespace iss::iceberg {

namespace json = boost::json;

namespace {

error bad(std::string what) { return error{errc::bad_metadata, std::move(what)}; }

std::optional<std::int64_t> get_int(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (v == nullptr) return std::nullopt;
    if (v->is_int64()) return v->as_int64();
    if (v->is_uint64() && v->as_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
        return static_cast<std::int64_t>(v->as_uint64());
    return std::nullopt;
}

std::string get_string(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v != nullptr && v->is_string() ? std::string{v->as_string()} : std::string{};
}

std::int64_t summary_int(const snapshot_info* s, const std::string& key) {
    if (s == nullptr) return 0;
    const auto it = s->summary.find(key);
    if (it == s->summary.end()) return 0;
    std::int64_t v = 0;
    std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
    return v;
}

result<snapshot_info> parse_snapshot(const json::value& v) {
    if (!v.is_object()) return bad("a snapshot is not an object");
    const auto& o = v.as_object();
    snapshot_info s;
    const auto id = get_int(o, "snapshot-id");
    if (!id) return bad("a snapshot has no snapshot-id");
    s.snapshot_id = *id;
    s.parent_snapshot_id = get_int(o, "parent-snapshot-id");
    s.sequence_number = get_int(o, "sequence-number").value_or(0);
    s.timestamp_ms = get_int(o, "timestamp-ms").value_or(0);
    s.manifest_list = get_string(o, "manifest-list");
    if (const auto* sum = o.if_contains("summary"); sum != nullptr && sum->is_object())
        for (const auto& [k, val] : sum->as_object())
            if (val.is_string()) s.summary[std::string{k}] = std::string{val.as_string()};
    return s;
}

/// The snapshot id of an attempt: XXH3-64 of the table uuid, the parent and the file paths,
/// as a positive long.
std::int64_t snapshot_id_of(const table_state& t, std::span<const pending_file> files) {
    std::string key = t.table_uuid;
    key += '\n';
    key += t.main_snapshot_id ? fmt::format("{}", *t.main_snapshot_id) : std::string{"-"};
    for (const auto& f : files) {
        key += '\n';
        key += f.file.file_path;
    }
    const auto id = static_cast<std::int64_t>(XXH3_64bits(key.data(), key.size()) & 0x7FFF'FFFF'FFFF'FFFFULL);
    return id == 0 ? 1 : id;
}

}  // namespace

std::string offsets_json(const offset_map& m) {
    json::object root;
    for (const auto& [p, next] : m) {
        auto& stream = root[p.stream];
        if (!stream.is_object()) stream = json::object{};
        auto& topic = stream.as_object()[p.topic];
        if (!topic.is_object()) topic = json::object{};
        topic.as_object()[fmt::format("{}", p.partition)] = next;
    }
    return json::serialize(root);
}

result<offset_map> parse_offsets(std::string_view text) {
    boost::system::error_code ec;
    const json::value v = json::parse(text, ec);
    if (ec || !v.is_object()) return bad(fmt::format("{} is not a JSON object", offsets_key));
    offset_map out;
    for (const auto& [stream, topics] : v.as_object()) {
        if (!topics.is_object())
            return bad(fmt::format("{}: stream {} is not an object", offsets_key, std::string_view{stream}));
        for (const auto& [topic, parts] : topics.as_object()) {
            if (!parts.is_object())
                return bad(fmt::format("{}: topic {} is not an object", offsets_key, std::string_view{topic}));
            for (const auto& [part, next] : parts.as_object()) {
                std::uint32_t id = 0;
                const auto [end, err] = std::from_chars(part.data(), part.data() + part.size(), id);
                if (err != std::errc{} || end != part.data() + part.size() || !(next.is_uint64() || next.is_int64()) ||
                    (next.is_int64() && next.as_int64() < 0))
                    return bad(fmt::format("{}: {}/{}/{} is not a partition id with an offset", offsets_key,
                                           std::string_view{stream}, std::string_view{topic}, std::string_view{part}));
                out[{std::string{stream}, std::string{topic}, id}] = next.to_number<std::uint64_t>();
            }
        }
    }
    return out;
}

offset_map merge_offsets(const offset_map& a, const offset_map& b) {
    offset_map out = a;
    for (const auto& [p, next] : b) {
        auto& slot = out[p];
        slot = std::max(slot, next);
    }
    return out;
}

std::string topics_json(const topic_created_map& m) {
    json::object root;
    for (const auto& [t, created] : m) {
        auto& stream = root[t.first];
        if (!stream.is_object()) stream = json::object{};
        stream.as_object()[t.second] = created;
    }
    return json::serialize(root);
}

result<topic_created_map> parse_topics(std::string_view text) {
    boost::system::error_code ec;
    const json::value v = json::parse(text, ec);
    if (ec || !v.is_object()) return bad(fmt::format("{} is not a JSON object", topics_key));
    topic_created_map out;
    for (const auto& [stream, topics] : v.as_object()) {
        if (!topics.is_object())
            return bad(fmt::format("{}: stream {} is not an object", topics_key, std::string_view{stream}));
        for (const auto& [topic, created] : topics.as_object()) {
            if (!(created.is_uint64() || created.is_int64()) || (created.is_int64() && created.as_int64() < 0))
                return bad(fmt::format("{}: {}/{} is not a creation time", topics_key, std::string_view{stream},
                                       std::string_view{topic}));
            out[{std::string{stream}, std::string{topic}}] = created.to_number<std::uint64_t>();
        }
    }
    return out;
}

const snapshot_info* table_state::find(std::int64_t id) const noexcept {
    for (const auto& s : snapshots)
        if (s.snapshot_id == id) return &s;
    return nullptr;
}

const snapshot_info* table_state::main() const noexcept { return main_snapshot_id ? find(*main_snapshot_id) : nullptr; }

bool table_state::on_main(std::int64_t id) const noexcept {
    std::set<std::int64_t> seen;  // a cycle in foreign metadata must not loop
    for (const snapshot_info* s = main(); s != nullptr && seen.insert(s->snapshot_id).second;
         s = s->parent_snapshot_id ? find(*s->parent_snapshot_id) : nullptr)
        if (s->snapshot_id == id) return true;
    return false;
}

const snapshot_info* table_state::offsets_snapshot() const noexcept {
    // The newest snapshot on main's ancestry that carries the key: another writer's append on
    // top of ours has a summary of its own and does not carry ours forward, yet the data files
    // ours recorded are still in the table. (At most every snapshot once: no loop on a cycle.)
    const snapshot_info* s = main();
    for (std::size_t hops = 0; s != nullptr && hops <= snapshots.size(); ++hops) {
        if (s->summary.count(std::string{offsets_key})) return s;
        s = s->parent_snapshot_id ? find(*s->parent_snapshot_id) : nullptr;
    }
    return nullptr;
}

result<offset_map> table_state::committed_offsets() const {
    const snapshot_info* s = offsets_snapshot();
    if (s == nullptr) return offset_map{};
    return parse_offsets(s->summary.at(std::string{offsets_key}));
}

result<topic_created_map> table_state::committed_topics() const {
    const snapshot_info* s = offsets_snapshot();
    if (s == nullptr) return topic_created_map{};
    const auto it = s->summary.find(std::string{topics_key});
    if (it == s->summary.end()) return topic_created_map{};
    return parse_topics(it->second);
}

result<table_state> parse_table_metadata(std::string_view text) {
    boost::system::error_code ec;
    const json::value root = json::parse(text, ec);
    if (ec || !root.is_object()) return bad("the table metadata is not a JSON object");
    const json::object* md = &root.as_object();
    if (const auto* inner = md->if_contains("metadata"); inner != nullptr) {
        if (!inner->is_object()) return bad("LoadTableResult.metadata is not an object");
        md = &inner->as_object();
    }
    table_state t;
    t.format_version = static_cast<int>(get_int(*md, "format-version").value_or(1));
    if (t.format_version < 2)
        return bad(
            fmt::format("format-version {}: only tables of format version 2 or later are written", t.format_version));
    t.table_uuid = get_string(*md, "table-uuid");
    if (t.table_uuid.empty()) return bad("table-uuid is missing");
    t.location = get_string(*md, "location");
    while (t.location.ends_with('/')) t.location.pop_back();
    if (t.location.empty()) return bad("location is missing");
    t.last_sequence_number = get_int(*md, "last-sequence-number").value_or(0);
    t.last_updated_ms = get_int(*md, "last-updated-ms").value_or(0);
    if (const auto* props = md->if_contains("properties"); props != nullptr && props->is_object())
        for (const auto& [k, v] : props->as_object())
            if (v.is_string()) t.properties.emplace(std::string{k}, std::string{v.as_string()});
    if (const auto* snaps = md->if_contains("snapshots"); snaps != nullptr && snaps->is_array())
        for (const auto& s : snaps->as_array()) {
            auto r = parse_snapshot(s);
            if (!r) return r.error();
            t.snapshots.push_back(std::move(*r));
        }
    const auto* refs = md->if_contains("refs");
    const json::value* main_ref =
        refs != nullptr && refs->is_object() ? refs->as_object().if_contains("main") : nullptr;
    if (main_ref != nullptr && main_ref->is_object()) {
        t.main_snapshot_id = get_int(main_ref->as_object(), "snapshot-id");
    } else if (const auto cur = get_int(*md, "current-snapshot-id"); cur && *cur >= 0) {
        t.main_snapshot_id = cur;  // metadata without refs: main is the current snapshot
    }
    if (t.main_snapshot_id && t.main() == nullptr)
        return bad(fmt::format("main points at snapshot {}, which is not in snapshots", *t.main_snapshot_id));
    t.current_schema_id = static_cast<int>(get_int(*md, "current-schema-id").value_or(0));
    t.default_spec_id = static_cast<int>(get_int(*md, "default-spec-id").value_or(0));
    if (const auto* schemas = md->if_contains("schemas"); schemas != nullptr && schemas->is_array())
        for (const auto& s : schemas->as_array()) {
            if (!s.is_object() || get_int(s.as_object(), "schema-id").value_or(-1) != t.current_schema_id) continue;
            if (const auto* fields = s.as_object().if_contains("fields"); fields != nullptr && fields->is_array())
                for (const auto& f : fields->as_array())
                    if (f.is_object())
                        t.schema_fields.emplace_back(static_cast<int>(get_int(f.as_object(), "id").value_or(0)),
                                                     get_string(f.as_object(), "name"));
        }
    if (const auto* specs = md->if_contains("partition-specs"); specs != nullptr && specs->is_array())
        for (const auto& s : specs->as_array())
            if (s.is_object() && get_int(s.as_object(), "spec-id").value_or(-1) == t.default_spec_id)
                if (const auto* f = s.as_object().if_contains("fields")) t.default_spec_fields = json::serialize(*f);
    return t;
}

std::vector<std::string> check_table_matches(const table_state& t, const table_schema& schema,
                                             const partition_spec& spec) {
    std::vector<std::string> out;
    for (const auto& f : schema.fields) {
        const auto it = std::find_if(t.schema_fields.begin(), t.schema_fields.end(),
                                     [&](const auto& p) { return p.second == f.name; });
        if (it == t.schema_fields.end())
            out.push_back(fmt::format("the table has no column `{}` (format.schema has it)", f.name));
        else if (it->first != f.id)
            out.push_back(fmt::format("column `{}` has field id {} in the table, {} here", f.name, it->first, f.id));
    }
    boost::system::error_code ec;
    const json::value have = json::parse(t.default_spec_fields.empty() ? "[]" : t.default_spec_fields, ec);
    const json::value want = json::parse(spec.fields_json());
    const auto key = [](const json::value& a) {
        std::vector<std::string> k;
        if (a.is_array())
            for (const auto& f : a.as_array())
                if (f.is_object())
                    k.push_back(fmt::format("{}:{}:{}", get_string(f.as_object(), "name"),
                                            get_string(f.as_object(), "transform"),
                                            get_int(f.as_object(), "source-id").value_or(0)));
        return k;
    };
    if (ec || key(have) != key(want))
        out.push_back(fmt::format("the table's partition spec {} differs from iceberg.partition_by's {}",
                                  t.default_spec_fields, spec.fields_json()));
    return out;
}

result<commit_plan> plan_commit(const commit_input& in) {
    const table_state& t = *in.table;
    const snapshot_info* parent = t.main();
    auto parent_offsets = t.committed_offsets();
    if (!parent_offsets) return parent_offsets.error();
    auto topics = t.committed_topics();
    if (!topics) return topics.error();
    for (const auto& [topic, created] : in.topics_created) (*topics)[topic] = created;
    commit_plan p;
    p.snapshot_id = snapshot_id_of(t, in.files);
    p.parent_snapshot_id = t.main_snapshot_id;
    p.sequence_number = t.last_sequence_number + 1;
    std::vector<data_file> files;
    std::int64_t records = 0, bytes = 0;
    std::set<std::string> partitions;
    for (const auto& f : in.files) {
        const auto next = in.next_offsets.find(f.source);
        if (next == in.next_offsets.end() || f.last_offset >= next->second)
            return error{
                errc::bad_batch,
                fmt::format(
                    "{} ends at offset {} of {}/{}/{}, not below the batch's commit point {}", f.file.file_path,
                    f.last_offset, f.source.stream, f.source.topic, f.source.partition,
                    next == in.next_offsets.end() ? std::string{"(none given)"} : fmt::format("{}", next->second))};
        files.push_back(f.file);
        records += f.file.record_count;
        bytes += f.file.file_size_in_bytes;
        partitions.insert(in.spec->path(f.file.partition));
    }
    p.offsets = merge_offsets(*parent_offsets, in.next_offsets);
    p.manifest = write_manifest(*in.schema, *in.spec, files);
    p.manifest_path = fmt::format("{}/metadata/iggy-{}-m0.avro", t.location, p.snapshot_id);
    std::vector<manifest_file> list{new_manifest_entry(*in.spec, files, p.manifest_path,
                                                       static_cast<std::int64_t>(p.manifest.size()), p.snapshot_id,
                                                       p.sequence_number)};
    list.insert(list.end(), in.parent_manifests.begin(), in.parent_manifests.end());
    p.manifest_list = write_manifest_list(p.snapshot_id, p.parent_snapshot_id, p.sequence_number, list);
    p.manifest_list_path = fmt::format("{}/metadata/snap-{}-iggy.avro", t.location, p.snapshot_id);

    json::object summary{{"operation", "append"},
                         {"added-data-files", fmt::format("{}", files.size())},
                         {"added-records", fmt::format("{}", records)},
                         {"added-files-size", fmt::format("{}", bytes)},
                         {"changed-partition-count", fmt::format("{}", partitions.size())}};
    const auto total = [&](const char* key, std::int64_t added) {
        summary[key] = fmt::format("{}", summary_int(parent, key) + added);
    };
    total("total-records", records);
    total("total-files-size", bytes);
    total("total-data-files", static_cast<std::int64_t>(files.size()));
    total("total-delete-files", 0);
    total("total-position-deletes", 0);
    total("total-equality-deletes", 0);
    summary[offsets_key] = offsets_json(p.offsets);
    if (!topics->empty()) summary[topics_key] = topics_json(*topics);
    // timestamps must not go back along main nor before the table's last change, whatever
    // this host's clock says
    const std::int64_t ts =
        std::max({in.now_ms, parent != nullptr ? parent->timestamp_ms + 1 : in.now_ms, t.last_updated_ms + 1});
    json::object snap{{"snapshot-id", p.snapshot_id},
                      {"sequence-number", p.sequence_number},
                      {"timestamp-ms", ts},
                      {"manifest-list", p.manifest_list_path},
                      {"summary", std::move(summary)},
                      {"schema-id", in.schema->schema_id}};
    if (p.parent_snapshot_id) snap["parent-snapshot-id"] = *p.parent_snapshot_id;
    p.snapshot_json = json::serialize(snap);
    json::array ns;
    for (const auto& l : in.namespace_levels) ns.emplace_back(l);
    json::object assert_ref{{"type", "assert-ref-snapshot-id"}, {"ref", "main"}};
    assert_ref["snapshot-id"] = p.parent_snapshot_id ? json::value(*p.parent_snapshot_id) : json::value(nullptr);
    json::object body{{"identifier", json::object{{"namespace", std::move(ns)}, {"name", in.table_name}}},
                      {"requirements", json::array{json::object{{"type", "assert-table-uuid"}, {"uuid", t.table_uuid}},
                                                   std::move(assert_ref)}},
                      {"updates", json::array{json::object{{"action", "add-snapshot"}, {"snapshot", std::move(snap)}},
                                              json::object{{"action", "set-snapshot-ref"},
                                                           {"ref-name", "main"},
                                                           {"type", "branch"},
                                                           {"snapshot-id", p.snapshot_id}}}}};
    p.request_body = json::serialize(body);
    return p;
}

decision decide(const table_state& reloaded, std::span<const pending_file> batch, std::int64_t attempted_snapshot_id) {
    decision d;
    if (reloaded.on_main(attempted_snapshot_id)) return d;  // applied: the answer was lost
    auto held = reloaded.committed_offsets();
    if (!held) {
        d.what = decision::kind::overlap;
        d.detail = held.error().detail();
        return d;
    }
    for (const auto& f : batch) {
        const auto it = held->find(f.source);
        const std::uint64_t next = it == held->end() ? 0 : it->second;
        if (f.last_offset < next) continue;  // the table holds it (committed by us or another owner)
        if (f.first_offset >= next) {
            d.remaining.push_back(f);
            continue;
        }
        d.what = decision::kind::overlap;
        d.detail =
            fmt::format("{} holds offsets {}..{} of {}/{}/{}, and the table already holds up to {}", f.file.file_path,
                        f.first_offset, f.last_offset, f.source.stream, f.source.topic, f.source.partition, next - 1);
        d.remaining.clear();
        return d;
    }
    d.what = d.remaining.empty() ? decision::kind::done : decision::kind::rebuild;
    return d;
}

}  // namespace iss::iceberg
